"""The baseline for `rlverify serve`: an OpenRLHF remote reward server written the usual way.

FastAPI + uvicorn, one process, `POST /get_reward` with `{"query", "prompts", "labels"}` answered
with `{"rewards", "scores", "extra_logs"}`; each response (the query after its prompt) is graded
with math-verify's `parse`/`verify`, the gold wrapped in `$...$`.

The handler is `async def`, so it runs on the main thread, where math-verify's `signal.alarm`
timeouts work (in a worker thread, as a plain `def` handler would run, they cannot).

    python -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install math-verify fastapi uvicorn
    /tmp/mv-venv/bin/python verify/bench/serve/mathverify_server.py --port 5001
"""

import argparse

import uvicorn
from fastapi import FastAPI, Request
from math_verify import parse, verify

app = FastAPI()


def grade(gold: str, response: str) -> float:
    try:
        return 1.0 if verify(parse(f"${gold}$"), parse(response)) else 0.0
    except Exception:  # math-verify raises on some inputs; a reward server must still answer
        return 0.0


@app.post("/get_reward")
async def get_reward(request: Request):
    data = await request.json()
    queries, prompts, labels = data["query"], data.get("prompts"), data["labels"]
    rewards = []
    for k, query in enumerate(queries):
        prompt = prompts[k] if prompts else ""
        response = query[len(prompt):] if query.startswith(prompt) else query
        rewards.append(grade(str(labels[k]), response))
    return {"rewards": rewards, "scores": rewards, "extra_logs": {"correct": rewards}}


@app.get("/health")
async def health():
    return {"status": "ok"}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5001)
    args = ap.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
