"""rlverify.compat: math-verify's parse/verify call shapes, and values that behave."""

import copy
import pickle

import pytest

import rlverify
from rlverify.compat import Answer, parse, verify

PAIRS = [
    ("$\\frac{1}{2}$", "so \\boxed{0.5}", True),
    ("$42$", "The final answer is $41$.", False),
    ("$x^2+2x+1$", "we get $\\boxed{(x+1)^2}$", True),
    ("$(1,2)$", "\\boxed{(1,2)}", True),
    ("$\\sqrt{2}$", "Answer: $\\frac{2}{\\sqrt{2}}$", True),
]


def test_parse_returns_a_list_like_math_verify():
    p = parse("so \\boxed{0.5}")
    assert isinstance(p, list) and len(p) == 2
    assert isinstance(p[0], Answer) and p[1] == "0.5" and str(p[0]) == "0.5"
    assert parse("no answer here, only words") == []
    assert parse("we counted 17 of them") [1] == "17"  # falls back to the last number, as math-verify


@pytest.mark.parametrize("gold, response, want", PAIRS)
def test_verify_gold_first(gold, response, want):
    assert verify(parse(gold), parse(response)) is want
    assert verify(parse(gold), parse(response), float_rounding=6, numeric_precision=15, strict=True,
                  timeout_seconds=5) is want
    assert verify(gold, response) is want  # plain strings, as math-verify accepts
    assert verify(parse(gold)[0], parse(response)[0]) is want
    assert verify(parse(gold), parse(response)) == rlverify.verify(gold, response)


def test_empty_parses_are_false():
    assert verify([], parse("\\boxed{1}")) is False
    assert verify(parse("$1$"), []) is False


def test_gold_is_first():
    # A truncated-looking target: gold and target are not interchangeable in general; here the
    # GSM8K last-number fallback applies only because the gold is a plain number.
    assert verify(parse("18"), parse("she keeps 18 apples in the end")) is True


def test_results_print_compare_hash_and_pickle():
    a, b = parse("so \\boxed{0.5}"), parse("so \\boxed{0.5}")
    assert a == b and hash(tuple(a)) == hash(tuple(b)) and len({a[0], b[0]}) == 1
    assert a != parse("so \\boxed{0.6}")
    assert str(a[0]) == "0.5" and "0.5" in repr(a)
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(a, protocol=proto)) == a
    assert copy.deepcopy(a) == a
    assert verify(pickle.loads(pickle.dumps(parse("$\\frac12$"))), pickle.loads(pickle.dumps(a)))


def test_errors():
    with pytest.raises(TypeError, match="str"):
        parse(3)
    with pytest.raises(ValueError, match="reward"):
        verify("1", "1", reward="ternary")


def test_agrees_with_math_verify_on_clear_cases():
    mv = pytest.importorskip("math_verify")
    for gold, response, want in PAIRS:
        assert mv.verify(mv.parse(gold), mv.parse(response)) is want
        assert verify(parse(gold), parse(response)) is want
