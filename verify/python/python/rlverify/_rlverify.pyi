"""Type stubs of the Rust core (re-exported by :mod:`rlverify`)."""

from typing import Literal, Optional, Sequence, Union, final

__version__: str
#: The keyword options every scoring function accepts (the flags of `rlverify score`).
OPTIONS: list[str]

Reward = Literal["binary", "signed"]
LastNumber = Literal["auto", "always", "never"]
Truncated = Literal["no-answer", "lenient"]
Extraction = Literal["strict", "lenient"]

@final
class Score:
    """The result of scoring one response (what a line of `rlverify score` says).

    Immutable; compares, hashes and pickles by value.
    """

    #: Whether the response's final answer equals the gold answer.
    correct: bool
    #: 1/0 (binary) or 1/-1 (signed), plus the format weight when ``format_reward`` is on and the
    #: response is well formed.
    reward: float
    #: ``"correct"``, ``"wrong"``, ``"no_answer"``, ``"ambiguous"`` (several candidates: a hedge),
    #: ``"unparsable"``, ``"limit"`` or ``"invalid_gold"`` (the gold cannot be read; never rewarded).
    status: str
    #: The answer extracted from the response, or None.
    extracted: Optional[str]
    #: The rule that decided the comparison (``"exact"``, ``"text"``, ...; ``"none"`` without answer).
    rule: str
    #: The cost bound that was hit when ``status == "limit"``, else None.
    limit: Optional[str]
    #: With ``format_reward``: whether the response is ``<think>..</think><answer>..</answer>``.
    format_ok: Optional[bool]
    #: The candidates of the final statement when it offers several (``"ambiguous"``), else empty.
    candidates: list[str]
    def __init__(
        self,
        correct: bool,
        reward: float,
        status: str,
        extracted: Optional[str] = None,
        rule: str = "none",
        limit: Optional[str] = None,
        format_ok: Optional[bool] = None,
        candidates: Sequence[str] = (),
    ) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

def score(
    gold: str,
    response: str,
    *,
    reward: Optional[Reward] = "binary",
    extract: Optional[Extraction] = "strict",
    last_number: Optional[LastNumber] = "auto",
    truncated: Optional[Truncated] = "no-answer",
    format_reward: Union[bool, float, None] = None,
) -> Score:
    """Score one response against one gold answer (a bare answer or a solution with ``\\boxed{}``).

    Raises ValueError naming the option on a bad option value, TypeError on an unknown option.
    """

def verify(
    gold: str,
    response: str,
    *,
    reward: Optional[Reward] = "binary",
    extract: Optional[Extraction] = "strict",
    last_number: Optional[LastNumber] = "auto",
    truncated: Optional[Truncated] = "no-answer",
    format_reward: Union[bool, float, None] = None,
) -> bool:
    """True when the response's final answer equals the gold answer."""

def extract(response: str, last_number: bool = False, extract: Optional[Extraction] = "strict") -> Optional[str]:
    """The final answer the verifier reads in a response, or None (end-of-turn tokens cut first)."""

def value(answer: str) -> Optional[tuple[float, float, Optional[str]]]:
    """The number an answer stands for: (real, imaginary, exact integer digits or None), or None."""

def score_batch(
    golds: Sequence[str],
    responses: Sequence[str],
    threads: Optional[int] = None,
    *,
    reward: Optional[Reward] = "binary",
    extract: Optional[Extraction] = "strict",
    last_number: Optional[LastNumber] = "auto",
    truncated: Optional[Truncated] = "no-answer",
    format_reward: Union[bool, float, None] = None,
) -> list[Score]:
    """Score ``responses[i]`` against ``golds[i]`` in parallel with the GIL released, in order.

    ``threads``: worker threads (default: all cores). Raises ValueError when the lengths differ.
    """
