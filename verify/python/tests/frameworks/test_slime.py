"""slime's own remote reward client (`slime.rollout.rm_hub.batched_async_rm` with
`--rm-type remote_rm`) against `rlverify serve`. slime is not on PyPI: `SLIME_SRC` names a checkout
of THUDM/slime; skipped without it."""

import asyncio
import os
import sys
from types import SimpleNamespace

import pytest

SLIME_SRC = os.environ.get("SLIME_SRC")
if not SLIME_SRC:
    pytest.skip("SLIME_SRC (a checkout of THUDM/slime) is not set", allow_module_level=True)
sys.path.insert(0, SLIME_SRC)
rm_hub = pytest.importorskip("slime.rollout.rm_hub")
types = pytest.importorskip("slime.utils.types")


def test_batched_remote_rm(serve):
    server = serve()
    args = SimpleNamespace(custom_rm_path=None, rm_type="remote_rm", rm_url=server.url + "/slime")
    samples, want = [], []
    for k in range(300):
        prompt = [{"role": "user", "content": f"What is {k}+1?"}] if k % 2 else f"What is {k}+1?"
        if k % 3 == 0:
            response, label, reward = f"so \\boxed{{{k + 1}}}<|im_end|>", str(k + 1), 1.0
        elif k % 3 == 1:
            response, label, reward = f"\\boxed{{{k}}}<|im_end|>\\boxed{{{k + 1}}}", str(k + 1), 0.0
        else:
            response, label, reward = f"\\boxed{{{k + 1}}}", None, 0.0  # a sample without a label
        samples.append(types.Sample(prompt=prompt, response=response, label=label))
        want.append(reward)

    async def run():
        try:
            return await rm_hub.batched_async_rm(args, samples)
        finally:
            session = rm_hub._shared_session
            if session is not None:
                await session.close()
            rm_hub._shared_session = None

    assert asyncio.run(run()) == want
