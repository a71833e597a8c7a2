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


# --- issue 20, point 7: values that stand for numbers convert; the config classes import --------

def test_numbers_convert_like_sympy_values():
    assert float(parse("$0.5$")[0]) == 0.5
    assert float(parse("so \\boxed{\\frac{1}{2}}")[0]) == 0.5
    assert float(parse("\\boxed{2\\sqrt{2}}")[0]) == pytest.approx(2 * 2 ** 0.5)
    assert float(parse("\\boxed{50\\%}")[0]) == 0.5
    assert float(parse("\\boxed{-\\pi}")[0]) == pytest.approx(-3.141592653589793)
    assert int(parse("The final answer is $12$.")[0]) == 12
    assert int(parse("\\boxed{7/2}")[0]) == 3  # truncates, as int(sympy.Rational(7, 2))
    assert int(parse("\\boxed{123456789012345678901234567890}")[0]) == 123456789012345678901234567890
    assert complex(parse("\\boxed{3+4i}")[0]) == complex(3, 4)
    assert complex(parse("\\boxed{2}")[0]) == complex(2, 0)
    assert float(parse("\\boxed{30^\\circ}")[0]) == 30.0  # degrees as their number, as math-verify
    # Answers that are not numbers refuse, as sympy sets, intervals and symbols do.
    for text in ["\\boxed{(1, 2]}", "\\boxed{\\{1, 2\\}}", "\\boxed{x + 1}", "\\boxed{\\text{red}}"]:
        with pytest.raises(TypeError, match="number"):
            float(parse(text)[0])
    with pytest.raises(TypeError, match="complex"):
        float(parse("\\boxed{3+4i}")[0])


def test_config_classes_import_and_map(recwarn):
    from rlverify.compat import (ExprExtractionConfig, LatexExtractionConfig, LatexNormalizationConfig,
                                 StringExtractionConfig)

    unmarked = "We add them up and get $7$"
    # math-verify's default reads answers without an anchor, and the last number.
    assert parse(unmarked)[1] == "7"
    assert parse(unmarked, extraction_config=[LatexExtractionConfig(), ExprExtractionConfig()])[1] == "7"
    # Anchored only: an unmarked text has no answer; a marked one still does.
    strict = [LatexExtractionConfig(try_extract_without_anchor=False)]
    assert parse(unmarked, extraction_config=strict) == []
    assert parse("The final answer is $7$.", extraction_config=strict)[1] == "7"
    assert parse("we counted 17 of them", extraction_config=[ExprExtractionConfig()])[1] == "17"
    assert parse("I pick (B).", extraction_config=[StringExtractionConfig()]) != []
    assert len(recwarn) == 0  # nothing to warn about with the defaults
    # What does not map is accepted, with one warning per setting.
    config = [LatexExtractionConfig(boxed_match_priority=0,
                                    normalization_config=LatexNormalizationConfig(equations=True))]
    with pytest.warns(UserWarning, match="boxed_match_priority"):
        parse("so \\boxed{5}", extraction_config=config)
    with warnings_recorded() as again:
        assert parse("so \\boxed{5}", extraction_config=config)[1] == "5"
    assert not [w for w in again if "boxed_match_priority" in str(w.message)]


def warnings_recorded():
    import warnings

    class Recorder(warnings.catch_warnings):
        def __enter__(self):
            log = super().__enter__()
            warnings.simplefilter("always")
            return log

    return Recorder(record=True)


def test_math_verify_code_runs_with_one_line_changed():
    """Code written against math-verify 0.9.0, with its import line switched."""
    from rlverify.compat import LatexExtractionConfig, StringExtractionConfig, parse as p, verify as v

    gold = p("$\\frac{1}{2}$", extraction_config=[LatexExtractionConfig()])
    answer = p("so the answer is \\boxed{0.5}", extraction_config=[LatexExtractionConfig(), StringExtractionConfig()],
               fallback_mode="first_match", extraction_mode="any_match", parsing_timeout=5)
    assert v(gold, answer, float_rounding=6, timeout_seconds=5) is True
    assert float(answer[0]) == float(gold[0]) == 0.5
