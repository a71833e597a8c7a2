#!/usr/bin/env python3
"""The training part of one RL step in PyTorch eager, on the CPU: what `train_step_bench` times in
rltrain, on the same model shape and batch, so the two can be compared side by side.

One step: forward over prompt + response tokens, log-softmax of the response tokens, a GRPO
clipped surrogate (eps 0.2) with +1/-1 advantages per row and per-token mean, backward, global
gradient-norm clip at 1.0, AdamW (lr 1e-6). Weights are random (timings do not depend on their
values); f32 weights, activations and optimizer states, the threads rltrain uses.

    python3 trainer/examples/torch_step.py --rows 4 --prompt-tokens 25 --tokens 128 --steps 3

Prints one JSON object per step (train wall and process CPU seconds, the RSS before the step and
the step's peak RSS: the high-water mark is reset just before it) and a summary line. Run it with
OMP_WAIT_POLICY=PASSIVE so idle OpenMP threads sleep instead of spinning into the CPU time. `scripts/step_compare.sh` runs it beside rltrain.
"""
import argparse
import json
import resource
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

# Model shapes (the public configs of these models), random weights.
SHAPES = {
    "smollm2-135m": (LlamaConfig, LlamaForCausalLM, dict(
        hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
        num_key_value_heads=3, vocab_size=49152, max_position_embeddings=8192, rope_theta=100000.0,
        rms_norm_eps=1e-5, tie_word_embeddings=True)),
    "qwen2-0.5b": (Qwen2Config, Qwen2ForCausalLM, dict(
        hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
        num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6,
        rms_norm_eps=1e-6, tie_word_embeddings=True)),
}


def status_mib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def peak_rss_mib():
    return status_mib("VmHWM:")


def reset_peak_rss():
    # Resets VmHWM to the current RSS (Linux >= 4.0).
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="smollm2-135m", choices=sorted(SHAPES))
    ap.add_argument("--rows", type=int, default=4)
    ap.add_argument("--prompt-tokens", type=int, default=25)
    ap.add_argument("--tokens", type=int, default=128, help="response tokens per row")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"])
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    config_cls, model_cls, kw = SHAPES[a.shape]
    model = model_cls(config_cls(**kw, attn_implementation=a.attn)).float().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6, foreach=True)
    seq = a.prompt_tokens + a.tokens
    ids = torch.randint(0, kw["vocab_size"], (a.rows, seq))
    adv = torch.tensor([1.0 if i % 2 == 0 else -1.0 for i in range(a.rows)]).unsqueeze(1)
    # The sampler's log-probs: any values near the policy's; a fixed random offset.
    old_shift = torch.randn(a.rows, a.tokens) * 0.01

    times, cpus, peaks = [], [], []
    process_peak = 0.0
    for step in range(a.steps):
        process_peak = max(process_peak, peak_rss_mib())
        rss_before = status_mib("VmRSS:")
        reset_peak_rss()
        c = cpu_s()
        t = time.perf_counter()
        logits = model(input_ids=ids).logits[:, a.prompt_tokens - 1:-1, :]
        targets = ids[:, a.prompt_tokens:]
        logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        ratio = torch.exp(logp - (logp.detach() + old_shift))
        surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv)
        loss = -surrogate.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del logits, logp, ratio, surrogate, loss
        times.append(time.perf_counter() - t)
        cpus.append(cpu_s() - c)
        peaks.append(peak_rss_mib())
        print(json.dumps({"step": step, "train_s": round(times[-1], 3), "train_cpu_s": round(cpus[-1], 3),
                          "rss_before_mib": round(rss_before), "train_peak_rss_mib": round(peaks[-1])}))
    process_peak = max(process_peak, max(peaks))
    steady = times[1:] or times
    steady_cpu = cpus[1:] or cpus
    print(json.dumps({
        "framework": f"torch {torch.__version__} eager CPU", "shape": a.shape, "rows": a.rows,
        "prompt_tokens": a.prompt_tokens, "tokens": a.tokens, "threads": a.threads,
        "first_train_s": round(times[0], 3), "steady_train_s": round(sum(steady) / len(steady), 3),
        "steady_train_cpu_s": round(sum(steady_cpu) / len(steady_cpu), 3),
        "train_peak_rss_mib": round(max(peaks)), "process_peak_rss_mib": round(process_peak),
    }))


if __name__ == "__main__":
    main()
