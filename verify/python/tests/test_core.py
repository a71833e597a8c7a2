"""The core API: verify, score, extract, score_batch, options, Score objects, errors."""

import pickle

import pytest

import rlverify
from rlverify import Score


def test_done_check():
    assert rlverify.verify("1/2", "so \\boxed{0.5}") is True


def test_verify_and_score():
    assert rlverify.verify("\\frac{1}{2}", "The answer is $\\boxed{\\frac{2}{4}}$.")
    assert not rlverify.verify("42", "The final answer is 41.")
    s = rlverify.score("42", "The final answer is 41.")
    assert (s.correct, s.reward, s.status, s.extracted) == (False, 0.0, "wrong", "41")
    ok = rlverify.score("\\frac{1}{2}", "so \\boxed{0.5}")
    assert (ok.correct, ok.reward, ok.status, ok.extracted) == (True, 1.0, "correct", "0.5")
    assert ok.rule != "none" and ok.limit is None and ok.format_ok is None
    none = rlverify.score("3", "I do not know.")
    assert (none.status, none.extracted, none.rule) == ("no_answer", None, "none")


def test_extract():
    assert rlverify.extract("We get $x=2$, so \\boxed{2} and \\boxed{3}.") == "2, 3"
    assert rlverify.extract("nothing here at all, really nothing") is None
    assert rlverify.extract("we computed it and it is 17 apples", last_number=True) == "17"


def test_options_have_the_cli_defaults_and_names():
    # The verifier's table, then format_reward (a new option of the table joins with no edit here).
    assert rlverify.OPTIONS[:4] == ["reward", "extract", "last_number", "truncated"]
    assert rlverify.OPTIONS[-1] == "format_reward"
    wrong = "The final answer is 41."
    assert rlverify.score("42", wrong, reward="signed").reward == -1.0
    assert rlverify.score("42", wrong, reward="binary").reward == 0.0
    assert rlverify.score("42", wrong, reward=None) == rlverify.score("42", wrong)
    # last_number: with extract="lenient", the GSM8K fallback is on for a plain-number gold
    # (auto), off with never; strict extraction (the default) reads no answer into unmarked text.
    text = "Adding them up gives 18 apples in total"
    assert rlverify.score("18", text).status == "no_answer"
    assert rlverify.score("18", text, extract="lenient").correct
    assert not rlverify.score("18", text, last_number="never").correct
    assert rlverify.score("x+1", "so it is 5 then", last_number="always").extracted == "5"


def test_truncated_option():
    cut = "Let us compute. " + "We expand the product step by step and collect terms. " * 30 + "So $x = 5$ and then we divide by"
    assert rlverify.score("5", cut, last_number="never").status == "no_answer"
    assert rlverify.score("5", cut, last_number="never", truncated="lenient").correct
    assert rlverify.score("5", cut, last_number="never", truncated="no_answer").status == "no_answer"


def test_format_reward():
    good = "<think>2+2 is 4</think> <answer>4</answer>"
    bad = "4"
    s = rlverify.score("4", good, format_reward=True)
    assert (s.reward, s.format_ok) == (1.5, True)
    assert rlverify.score("4", bad, format_reward=True).format_ok is False
    assert rlverify.score("4", bad, format_reward=True).reward == 1.0
    assert rlverify.score("5", good, format_reward=0.2).reward == pytest.approx(0.2)
    assert rlverify.score("5", good, format_reward=0.2, reward="signed").reward == pytest.approx(-0.8)
    assert rlverify.score("4", good, format_reward=False).format_ok is None


@pytest.mark.parametrize(
    "option, value",
    [("reward", "ternary"), ("reward", 1), ("last_number", "sometimes"), ("truncated", "strict"),
     ("format_reward", "yes"), ("format_reward", float("nan")), ("format_reward", float("inf"))],
)
def test_bad_option_values_raise_value_error_naming_them(option, value):
    for call in (lambda: rlverify.score("1", "1", **{option: value}),
                 lambda: rlverify.verify("1", "1", **{option: value}),
                 lambda: rlverify.score_batch(["1"], ["1"], **{option: value})):
        with pytest.raises(ValueError, match=option):
            call()


def test_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="rewrad"):
        rlverify.score("1", "1", rewrad="signed")


def test_argument_errors():
    with pytest.raises(TypeError):
        rlverify.score(1, "1")
    with pytest.raises(TypeError):
        rlverify.score_batch("12", "12")  # strings are not lists of strings
    with pytest.raises(ValueError, match="length"):
        rlverify.score_batch(["1", "2"], ["1"])
    with pytest.raises(ValueError, match="threads"):
        rlverify.score_batch(["1"], ["1"], threads=0)
    with pytest.raises(ValueError, match="threads"):
        rlverify.score_batch(["1"], ["1"], threads=-3)


def test_hostile_inputs_finish():
    deep = "\\boxed{" + "(" * 100000 + "}"
    assert rlverify.score("1", deep).status in ("limit", "unparsable", "wrong", "no_answer")
    huge = "9" * 5000
    assert rlverify.score("2^{100000}", "\\boxed{2^{99999}}").status in ("wrong", "limit")
    assert rlverify.score(huge, "\\boxed{" + huge + "}").status in ("correct", "limit")
    assert rlverify.score("1", "\x00\ud7ff\U0010ffff \\boxed{1}").correct
    too_long = "a" * (5 << 20)
    s = rlverify.score("1", too_long)
    assert (s.status, s.limit) == ("limit", "response_too_long")


def test_lone_surrogates_are_rejected_cleanly():
    with pytest.raises(UnicodeEncodeError):
        rlverify.score("1", "\ud800")


def test_score_batch_keeps_order_and_matches_score():
    golds = [str(i) for i in range(500)]
    responses = [f"the answer is \\boxed{{{i if i % 3 else i + 1}}}" for i in range(500)]
    for threads in (None, 1, 2, 7):
        batch = rlverify.score_batch(golds, responses, threads=threads)
        assert [s.correct for s in batch] == [i % 3 != 0 for i in range(500)]
        assert batch == [rlverify.score(g, r) for g, r in zip(golds, responses)]
    assert rlverify.score_batch([], []) == []
    assert rlverify.score_batch(("1",), ("\\boxed{1}",), 1, reward="signed")[0].reward == 1.0


def test_score_objects_compare_hash_print_and_pickle():
    a = rlverify.score("42", "\\boxed{42}")
    b = rlverify.score("42", "the answer: $42$.")
    assert a == rlverify.score("42", "\\boxed{42}") and hash(a) == hash(rlverify.score("42", "\\boxed{42}"))
    assert len({a, rlverify.score("42", "\\boxed{42}")}) == 1
    assert a != rlverify.score("42", "\\boxed{41}")
    assert repr(a).startswith("Score(correct=True, reward=1.0, status='correct', extracted='42'")
    for s in (a, b, rlverify.score("4", "<think>x</think><answer>4</answer>", format_reward=True),
              rlverify.score("1", "a" * (5 << 20)), rlverify.score("1", "nothing")):
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickle.loads(pickle.dumps(s, protocol=proto)) == s
    made = Score(True, 1.0, "correct", "42", "exact")
    assert made.extracted == "42" and made.limit is None
    with pytest.raises(AttributeError):
        a.correct = False  # frozen


def test_version():
    assert isinstance(rlverify.__version__, str) and rlverify.__version__.count(".") == 2


def test_equal_scores_hash_equal():
    assert Score(False, 0.0, "wrong") == Score(False, -0.0, "wrong")
    assert hash(Score(False, 0.0, "wrong")) == hash(Score(False, -0.0, "wrong"))


def test_the_final_answer_contract():
    # A hedge offers two candidates: ambiguous, never rewarded, with both listed.
    hedged = rlverify.score("5", "The answer is $5$, or perhaps $6$.")
    assert (hedged.correct, hedged.status, hedged.candidates) == (False, "ambiguous", ["5", "6"])
    assert rlverify.score("5", "\\boxed{5 \\text{ or } 6}").status == "ambiguous"
    # No marker, no answer; the lenient reading is an explicit opt-in.
    gave_up = "I tried 3, 8 and 11 but could not finish."
    assert rlverify.score("11", gave_up).status == "no_answer"
    assert rlverify.score("11", gave_up, extract="lenient", last_number="always").correct
    # End-of-turn tokens as OpenRLHF sends them, and an unreadable gold.
    assert rlverify.verify("15", "A: 15</s>")
    assert rlverify.score("", "\\boxed{1}").status == "invalid_gold"
    with pytest.raises(ValueError, match="extract"):
        rlverify.score("1", "1", extract="loose")


def test_every_option_is_a_flag_of_the_cli_and_a_keyword_of_the_stub(rlverify_bin):
    """The keywords are the verifier's option table (`rlverify::options::config_options`, then
    `format_reward`): each is a flag of `rlverify score` with the same default, and each scoring
    function of `_rlverify.pyi` lists it with that default and the values the library takes. An
    option added in the verifier's table fails here until the stub has it."""
    import ast
    import pathlib
    import re
    import subprocess

    help_text = subprocess.run([rlverify_bin, "score", "--help"], check=True, capture_output=True, text=True).stdout
    stub_path = pathlib.Path(__file__).resolve().parents[1] / "python" / "rlverify" / "_rlverify.pyi"
    stub = ast.parse(stub_path.read_text(encoding="utf-8"))
    aliases = {
        node.targets[0].id: [e.value for e in node.value.slice.elts]
        for node in stub.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript)
        and getattr(node.value.value, "id", None) == "Literal"
    }
    functions = {node.name: node for node in stub.body if isinstance(node, ast.FunctionDef)}
    for option in rlverify.OPTIONS:
        flag = "--" + option.replace("_", "-")
        assert flag in help_text, f"rlverify score has no {flag}"
        if option == "format_reward":
            continue
        block = help_text[help_text.index(flag):]
        cli_default = re.search(r"\[default: ([^\]]+)\]", block).group(1)
        with pytest.raises(ValueError) as err:
            rlverify.score("1", "1", **{option: "no-such-value"})
        values = re.findall(r"'([^']+)'", str(err.value).split("got")[0])
        for name in ("score", "verify", "score_batch"):
            f = functions[name]
            keywords = {a.arg: (a, d) for a, d in zip(f.args.kwonlyargs, f.args.kw_defaults)}
            assert option in keywords, f"_rlverify.pyi: {name}() lacks {option}="
            arg, default = keywords[option]
            assert default.value == cli_default, f"{name}({option}=...): {default.value!r}, the CLI's {cli_default!r}"
            alias = arg.annotation.slice.id  # Optional[Alias]
            assert aliases[alias] == values, f"{alias} of _rlverify.pyi: {aliases[alias]}, the library's {values}"
    for name in ("score", "verify", "score_batch"):
        listed = [a.arg for a in functions[name].args.kwonlyargs]
        assert listed == rlverify.OPTIONS, f"_rlverify.pyi: {name}() lists {listed}"
