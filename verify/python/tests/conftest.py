"""Shared fixtures: the dev corpus (read-only, beside the repository) and the `rlverify` binary."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpora" / "real_generations_dev.jsonl"


def _missing(what: str):
    """Skip with a notice, or fail under CI where the shared folder must be there."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing (CI is set, so this is an error, not a skip)")
    pytest.skip(f"{what} is missing: skipped (set CI to make this an error)")


@pytest.fixture(scope="session")
def corpus_rows():
    if not CORPUS.is_file():
        _missing(str(CORPUS))
    with CORPUS.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def rlverify_bin():
    """The CLI: $RLVERIFY_BIN, else built with cargo from this checkout."""
    path = os.environ.get("RLVERIFY_BIN")
    if path:
        assert os.access(path, os.X_OK), f"RLVERIFY_BIN={path} is not an executable"
        return path
    if shutil.which("cargo") is None:
        _missing("cargo (to build the rlverify binary) and RLVERIFY_BIN")
    out = subprocess.run(
        ["cargo", "build", "-q", "-p", "rlverify", "--bin", "rlverify", "--message-format", "json"],
        cwd=REPO, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "rlverify":
            return msg["executable"]
    pytest.fail("cargo built no rlverify executable")


class Server:
    """A running `rlverify serve --port 0`: its base URL; stopped with SIGTERM at the end."""

    def __init__(self, binary, args):
        self.proc = subprocess.Popen([binary, "serve", "--port", "0", "-j", "2", "--quiet", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline().strip()
        if not first.startswith("listening on http://"):
            self.proc.kill()
            raise RuntimeError(f"rlverify serve did not start: {first!r} {self.proc.stderr.read()}")
        self.url = first[len("listening on "):]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def serve(rlverify_bin):
    """`serve(*flags)` starts an `rlverify serve` with these flags and returns it (`.url`)."""
    started = []

    def start(*args):
        server = Server(rlverify_bin, args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
