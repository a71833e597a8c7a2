"""The Python code blocks of verify/python/README.md run, and print what their comments say."""

import contextlib
import io
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_the_three_adapters():
    text = "\n".join(BLOCKS)
    for module in ("rlverify.verl", "rlverify.trl", "rlverify.openrlhf", "rlverify.compat"):
        assert f"from {module} import" in text


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{k}" for k in range(len(BLOCKS))])
def test_readme_block(block):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(README), "exec"), {"__name__": "__readme__"})
    printed = out.getvalue().splitlines()
    # A `print(...)` whose next line is `# <output>` (without "...") must print exactly that.
    lines = block.splitlines()
    expected = []
    for k, line in enumerate(lines):
        if line.startswith("print(") or " print(" in line:
            j = k + 1
            while j < len(lines) and lines[j].startswith((" ", "\t")):
                j += 1  # the continuation lines of a multi-line print
            nxt = lines[j] if j < len(lines) else ""
            expected.append(nxt[2:] if nxt.startswith("# ") and "..." not in nxt else None)
    assert len(printed) == len(expected)
    for want, got in zip(expected, printed):
        if want is not None:
            assert got == want
