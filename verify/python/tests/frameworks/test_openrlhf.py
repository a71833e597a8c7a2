"""OpenRLHF's own remote-reward client (openrlhf >= 0.10, `SingleTurnAgentExecutor`) against
`rlverify serve` and against the `.py` adapter. Skipped when openrlhf is not installed."""

import asyncio
from types import SimpleNamespace

import pytest

agent = pytest.importorskip("openrlhf.utils.agent", reason="openrlhf is not installed (verify/python/frameworks/venvs.sh)")
torch = pytest.importorskip("torch")

END = "<|im_end|>"


class CharTokenizer:
    """One token per character, so decoding keeps every special token, as OpenRLHF decodes."""

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        return {"input_ids": torch.tensor([[ord(c) for c in text]])}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(map(chr, ids))


class Engine:
    """Stands in for vLLM: answers each prompt with a given response."""

    def __init__(self, responses):
        self.responses = responses

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        text = self.responses["".join(map(chr, prompt_token_ids))]
        out = SimpleNamespace(token_ids=[ord(c) for c in text], text=text, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def rollout(remote, samples):
    """OpenRLHF's async rollout: `execute` for every sample at once. Returns the outputs."""
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=remote)
    engine = Engine({p: r for p, r, _ in samples})
    params = SimpleNamespace(max_tokens=4096, logprobs=None)

    async def run():
        return await asyncio.gather(*(executor.execute(p, g, params, 1 << 16, CharTokenizer(), engine)
                                      for p, _, g in samples))

    return asyncio.run(run())


def samples(n):
    out = []
    for k in range(n):
        prompt = f"<|im_start|>user\nProblem {k}: what is {k}+1? Answer in \\boxed{{}}.{END}\n<|im_start|>assistant\n"
        if k % 4 == 0:
            response, gold = f"so \\boxed{{{k + 1}}}{END}", str(k + 1)
        elif k % 4 == 1:
            response, gold = f"A: {k + 1}</s>", str(k + 1)
        elif k % 4 == 2:
            response, gold = f"\\boxed{{{k + 2}}}{END}\n<|im_start|>user\nnext\n\\boxed{{{k + 1}}}", str(k + 1)
        else:
            response, gold = f"\\boxed{{{k + 1}}}{END}", None  # no label
        out.append((prompt, response, gold))
    return out


def want(samples):
    return [1.0 if k % 4 in (0, 1) else 0.0 for k in range(len(samples))]


def reward_of(output):
    r = output["reward"]
    if r is None:
        return None
    return float(r[0]) if isinstance(r, (list, tuple)) else float(r.flatten()[0])


def test_remote_url_burst(serve):
    """A burst far beyond --max-in-flight: every sample gets its reward (none lost, none wrong)."""
    server = serve("--max-in-flight", "4")
    batch = samples(400)
    outputs = rollout(server.url + "/get_reward", batch)
    assert [reward_of(o) for o in outputs] == want(batch)
    # The logs OpenRLHF turns into tensors: one number per sample.
    assert all(len(v) == 1 for o in outputs for v in o["extra_logs"].values())
    assert [o["extra_logs"]["invalid_gold"][0] for o in outputs[:4]] == [0.0, 0.0, 0.0, 1.0]


def test_reward_func_file(tmp_path):
    path = tmp_path / "reward_func.py"
    path.write_text("from rlverify.openrlhf import reward_func\n")
    batch = samples(40)
    outputs = rollout(str(path), batch)
    assert [reward_of(o) for o in outputs] == want(batch)


def test_readme_flags_are_openrlhfs(tmp_path):
    """The READMEs' OpenRLHF command lines use flags the installed OpenRLHF defines (issue 20,
    point 2: `--remote_rm_url ... --label_key` is rejected by 0.10 and later)."""
    import pathlib
    import re

    import openrlhf

    source = (pathlib.Path(openrlhf.__file__).parent / "cli" / "train_ppo_ray.py").read_text(encoding="utf-8")
    defined = set(re.findall(r"add_argument\(\s*\"(--[\w.]+)\"", source))
    repo = pathlib.Path(__file__).resolve().parents[4]
    used = set()
    for readme in ["README.md", "verify/README.md", "verify/python/README.md"]:
        for line in (repo / readme).read_text(encoding="utf-8").splitlines():
            if "openrlhf.cli.train_ppo_ray" in line:
                command = line.split("openrlhf.cli.train_ppo_ray", 1)[1]
                used |= set(re.findall(r"(?<![\w-])(--[a-z_][\w.]*)", command))
    assert used, "no OpenRLHF command line in the READMEs"
    assert used <= defined, f"flags OpenRLHF {openrlhf.__version__ if hasattr(openrlhf, '__version__') else ''} lacks: {used - defined}"
