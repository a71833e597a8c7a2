"""Every code block of the READMEs runs and shows what it says (issue 20, point 9).

- ``python``: executed; a ``print(...)`` whose next line is ``# <output>`` must print exactly that.
- ``console``: ``$ `` lines are commands (bash, from the repository root, with the ``rlverify``
  under test and this interpreter first on PATH); the lines after one are its exact output. A
  command must not fail with a usage error (exit status 2 or more; ``check`` exits 1 for "wrong").
  ``$ rlverify serve ... &`` starts a server for the rest of the block, on a free port that
  replaces ``5000`` in the later commands.
- ``jsonl``: every line is JSON.
- ``rust``: compiled by ``cargo test``: the block is marked ``<!-- ci: compiled in FILE -->`` and
  appears verbatim in FILE, a test of the workspace.
- ``text``: output shown by the prose, not code.

Any other block, or one that cannot run in CI, says why on the line before it:
``<!-- ci: skip: REASON -->``.
"""

import contextlib
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
READMES = ["README.md", "verify/README.md", "verify/python/README.md"]
FENCE = re.compile(r"^( *)```([\w,+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*ci:\s*(.*?)\s*-->\s*$")


def blocks():
    """(readme, line, language, marker, code) of every fenced block."""
    out = []
    for name in READMES:
        lines = (REPO / name).read_text(encoding="utf-8").splitlines()
        k = 0
        while k < len(lines):
            m = FENCE.match(lines[k])
            if not m or not m.group(2):
                k += 1
                continue
            indent, lang, start = m.group(1), m.group(2), k
            prev = next((lines[j] for j in range(k - 1, -1, -1) if lines[j].strip()), "")
            marker = MARKER.match(prev)
            k += 1
            body = []
            while k < len(lines) and lines[k].strip() != "```":
                body.append(lines[k][len(indent):] if lines[k].startswith(indent) else lines[k])
                k += 1
            out.append((name, start + 1, lang, marker.group(1) if marker else None, "\n".join(body) + "\n"))
            k += 1
    return out


BLOCKS = blocks()


def test_every_readme_has_blocks():
    assert {b[0] for b in BLOCKS} == set(READMES)
    text = "\n".join(code for _, _, lang, _, code in BLOCKS if lang == "python")
    for module in ("rlverify.verl", "rlverify.trl", "rlverify.openrlhf", "rlverify.compat"):
        assert f"from {module} import" in text


def run_python(code, where):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, where, "exec"), {"__name__": "__readme__"})
    printed = out.getvalue().splitlines()
    lines = code.splitlines()
    expected = []
    for k, line in enumerate(lines):
        if line.startswith("print(") or " print(" in line:
            j = k + 1
            while j < len(lines) and lines[j].startswith((" ", "\t")):
                j += 1  # the continuation lines of a multi-line print
            nxt = lines[j] if j < len(lines) else ""
            expected.append(nxt[2:] if nxt.startswith("# ") and "..." not in nxt else None)
    assert len(printed) == len(expected), printed
    for want, got in zip(expected, printed):
        if want is not None:
            assert got == want


def console_steps(code):
    """(command, expected output lines) of a ``$``-prompt block."""
    steps = []
    for line in code.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps and line.strip():
            steps[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"output before any command: {line!r}")
    return steps


def shell_env(tmp_path):
    env = dict(os.environ)
    rlverify_bin = os.environ.get("RLVERIFY_BIN") or shutil.which("rlverify")
    if not rlverify_bin:
        pytest.fail("no rlverify binary (set RLVERIFY_BIN)")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "rlverify").symlink_to(rlverify_bin)
    # This interpreter's own directory (a venv's python finds its packages from where it lies).
    python_dir = os.path.dirname(sys.executable)
    if not os.path.exists(os.path.join(python_dir, "python")):
        (bindir / "python").symlink_to(sys.executable)
    env["PATH"] = os.pathsep.join([str(bindir), python_dir, env.get("PATH", "")])
    return env


def run_console(code, tmp_path, corpus_needed):
    if "../shared/" in code and not (REPO.parent / "shared").is_dir():
        corpus_needed()
    env = shell_env(tmp_path)
    before = set(os.listdir(REPO))
    servers = []
    port = None
    try:
        for command, want in console_steps(code):
            if port:
                command = command.replace("localhost:5000", f"127.0.0.1:{port}").replace("127.0.0.1:5000", f"127.0.0.1:{port}")
            if command.split("#")[0].rstrip().endswith("&"):
                args = command.split("#")[0].rstrip()[:-1].strip()
                assert args.startswith("rlverify serve"), f"only `rlverify serve` runs in the background: {command}"
                args = re.sub(r"--port\s+5000", "--port 0", args) + " --quiet"
                proc = subprocess.Popen(["bash", "-c", f"exec {args}"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
                servers.append(proc)
                first = proc.stdout.readline().strip()
                assert first.startswith("listening on http://"), (first, proc.stderr.read())
                port = first.rsplit(":", 1)[1]
                continue
            done = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode < 2, f"{command}\nexit {done.returncode}\n{done.stderr}"
            if want:
                got = [line.rstrip() for line in done.stdout.splitlines() if line.strip()]
                assert got == [line.rstrip() for line in want], f"{command}\n{done.stderr}"
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait(timeout=30)
        for name in set(os.listdir(REPO)) - before:
            path = REPO / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def check_rust(marker, code):
    m = re.fullmatch(r"compiled in (\S+)", marker or "")
    assert m, "a rust block needs `<!-- ci: compiled in FILE -->` (a test that holds it verbatim) or a skip"
    source = (REPO / m.group(1)).read_text(encoding="utf-8")
    regions = re.findall(r"// README: begin\n(.*?)\n\s*// README: end", source, flags=re.S)
    assert any(textwrap.dedent(r).strip() == code.strip() for r in regions), f"not verbatim in {m.group(1)}"


@pytest.mark.parametrize("readme, line, lang, marker, code", BLOCKS, ids=[f"{b[0]}:{b[1]}" for b in BLOCKS])
def test_readme_block(readme, line, lang, marker, code, tmp_path):
    if marker and marker.startswith("skip:"):
        assert len(marker) > len("skip:") + 10, "a skip says why"
        pytest.skip(marker)
    if lang == "python":
        run_python(code, f"{readme}:{line}")
    elif lang == "console":
        run_console(code, tmp_path, lambda: pytest.skip("../shared is missing"))
    elif lang == "jsonl":
        for row in code.splitlines():
            if row.strip():
                json.loads(row)
    elif lang == "rust":
        check_rust(marker, code)
    elif lang == "text":
        pass
    else:
        pytest.fail(f"a `{lang}` block runs nowhere: make it a `console` block or say why it is skipped")
