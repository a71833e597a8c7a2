"""OpenRLHF's own remote-reward client (openrlhf >= 0.10, `SingleTurnAgentExecutor`) against
`rlverify serve` and against the `.py` adapter. Skipped when openrlhf is not installed."""

import asyncio
import importlib.util
import pathlib

import pytest

pytest.importorskip("openrlhf.utils.agent", reason="openrlhf is not installed (verify/python/frameworks/venvs.sh)")

REPO = pathlib.Path(__file__).resolve().parents[4]
END = "<|im_end|>"


def load_burst():
    """verify/bench/serve/openrlhf_burst.py: OpenRLHF's rollout with recorded responses."""
    spec = importlib.util.spec_from_file_location("openrlhf_burst", REPO / "verify/bench/serve/openrlhf_burst.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rollout(remote, samples):
    """Every sample at once through OpenRLHF's own client; the responses end as given."""
    return [out for out, _ in asyncio.run(load_burst().rollout(remote, samples, end=""))]


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
    import re

    import openrlhf

    source = (pathlib.Path(openrlhf.__file__).parent / "cli" / "train_ppo_ray.py").read_text(encoding="utf-8")
    defined = set(re.findall(r"add_argument\(\s*\"(--[\w.]+)\"", source))
    used = set()
    for readme in ["README.md", "verify/README.md", "verify/python/README.md"]:
        for line in (REPO / readme).read_text(encoding="utf-8").splitlines():
            if "openrlhf.cli.train_ppo_ray" in line:
                command = line.split("openrlhf.cli.train_ppo_ray", 1)[1]
                used |= set(re.findall(r"(?<![\w-])(--[a-z_][\w.]*)", command))
    assert used, "no OpenRLHF command line in the READMEs"
    assert used <= defined, f"flags OpenRLHF {openrlhf.__version__ if hasattr(openrlhf, '__version__') else ''} lacks: {used - defined}"
