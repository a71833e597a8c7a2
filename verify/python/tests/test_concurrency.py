"""Threads, forked and spawned processes, the GIL, and the free-threaded build."""

import multiprocessing as mp
import os
import pathlib
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

import rlverify

CASES = [
    ("\\frac{1}{2}", "so \\boxed{0.5}", True),
    ("42", "The final answer is 41.", False),
    ("x^2+2x+1", "we get $\\boxed{(x+1)^2}$", True),
    ("\\sqrt{2}", "Answer: $\\frac{2}{\\sqrt{2}}$", True),
    ("(1,2)", "\\boxed{(2,1)}", False),
    ("18", "so she has 18 apples left", True),
]


def _grade_cases(_=None):
    """Run in a worker: single calls and a parallel batch (its pool is built in this process)."""
    single = [rlverify.verify(g, r) for g, r, _ in CASES]
    batch = [s.correct for s in rlverify.score_batch([g for g, _, _ in CASES] * 50, [r for _, r, _ in CASES] * 50, 2)]
    return single, batch, os.getpid()


EXPECTED = [c for _, _, c in CASES]


def test_many_python_threads():
    def work(k):
        g, r, want = CASES[k % len(CASES)]
        return rlverify.verify(g, r) == want and rlverify.score_batch([g] * 20, [r] * 20, 2)[7].correct == want

    with ThreadPoolExecutor(16) as ex:
        assert all(ex.map(work, range(2000)))


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_worker_processes(method):
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method on this platform")
    # Start the parent's pools first: a forked child inherits them without their threads.
    assert [s.correct for s in rlverify.score_batch([g for g, _, _ in CASES], [r for _, r, _ in CASES], 2)] == EXPECTED
    ctx = mp.get_context(method)
    with ProcessPoolExecutor(2, mp_context=ctx) as ex:
        futures = [ex.submit(_grade_cases) for _ in range(4)]
        results = [f.result(timeout=120) for f in futures]
    for single, batch, pid in results:
        assert pid != os.getpid()
        assert single == EXPECTED
        assert batch == EXPECTED * 50
    # Functions and scores travel between processes (pickled by reference / by value).
    with ProcessPoolExecutor(2, mp_context=ctx) as ex:
        scores = list(ex.map(rlverify.score, [g for g, _, _ in CASES], [r for _, r, _ in CASES], timeout=120))
    assert scores == [rlverify.score(g, r) for g, r, _ in CASES]


def _big_batch(n):
    golds = [str(i) for i in range(n)]
    responses = [f"We add up the terms, $\\frac{{{2 * i}}}{{2}} + 0.0$, so the answer is $\\boxed{{{i}}}$." for i in range(n)]
    return golds, responses


def test_other_python_threads_run_while_score_batch_works():
    """score_batch releases the GIL: a Python thread keeps counting in the middle of the call.

    With the GIL held, no Python code could run between the call's start and end (save a switch
    interval at either edge), so the middle third of the call would hold no samples at all.
    """
    golds, responses = _big_batch(2000)
    t = time.perf_counter()
    rlverify.score_batch(golds, responses, 1)
    per_item = (time.perf_counter() - t) / len(golds)
    n = max(2000, int(0.6 / max(per_item, 1e-7)))  # a call of about 0.6 s
    golds, responses = _big_batch(n)
    samples = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            samples.append(time.perf_counter())

    th = threading.Thread(target=count)
    th.start()
    try:
        time.sleep(0.05)
        t0 = time.perf_counter()
        scores = rlverify.score_batch(golds, responses, 1)
        t1 = time.perf_counter()
    finally:
        stop.set()
        th.join()
    assert all(s.correct for s in scores)
    third = (t1 - t0) / 3
    middle = [s for s in samples if t0 + third < s < t1 - third]
    assert t1 - t0 > 0.1, "the call was too short to tell"
    assert len(middle) > 100, f"{len(middle)} samples of the other thread in the middle third of a {t1 - t0:.2f}s call"


@pytest.mark.skipif(not pathlib.Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
def test_score_batch_runs_on_the_requested_worker_threads():
    """The threaded batch does the same work on more workers: the pool has that many threads,
    and every item comes back in order with the serial batch's verdict."""

    def workers():
        names = []
        for task in pathlib.Path("/proc/self/task").iterdir():
            try:
                names.append((task / "comm").read_text().strip())
            except OSError:
                pass
        return sum(1 for n in names if n.startswith("rlverify-"))

    golds, responses = _big_batch(3000)
    before = workers()
    serial = rlverify.score_batch(golds, responses, 1)
    assert workers() == before  # one thread: the calling thread does the work
    k = (os.cpu_count() or 1) + 11  # a pool size no other test asks for: a new pool of k threads
    threaded = rlverify.score_batch(golds, responses, k)
    assert threaded == serial
    assert workers() == before + k


def test_free_threaded_build_keeps_the_gil_off():
    if not hasattr(sys, "_is_gil_enabled"):
        pytest.skip("not Python 3.13+")
    if sys._is_gil_enabled() and "t" not in getattr(sys, "abiflags", ""):
        pytest.skip("not a free-threaded build")
    # Importing the extension (done above) must not have turned the GIL back on.
    assert not sys._is_gil_enabled()
    test_many_python_threads()
