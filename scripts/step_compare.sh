#!/usr/bin/env bash
# The train part of one RL step in rltrain beside the same step in PyTorch eager, on the CPU: same
# model shape (SmolLM2-135M), same rows and tokens (random responses, no rollout on either side),
# same threads, f32. Prints rltrain's tables (plain, then with --recompute-activations), then
# PyTorch's JSON lines; each gives the train part's wall and process CPU seconds and its own peak
# RSS. The first step of each includes first-touch costs, the rest are steady.
#
#   scripts/step_compare.sh                       # ROWS=4 TOKENS=128 STEPS=3 THREADS=2
#   PYTHON=/path/to/venv/bin/python scripts/step_compare.sh
# Needs torch and transformers for $PYTHON (pip install torch transformers).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
rows="${ROWS:-4}" tokens="${TOKENS:-128}" steps="${STEPS:-3}" threads="${THREADS:-2}"
python="${PYTHON:-python3}"
cargo build --release -p rltrain --example train_step_bench
shapes="$(for _ in $(seq "$steps"); do printf '%sx%s,' "$rows" "$tokens"; done)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== rltrain (embedded SmolLM2-135M weights, f32, $threads threads)"
RAYON_NUM_THREADS="$threads" target/release/examples/train_step_bench --no-rollout --shapes "${shapes%,}" --objective grpo
echo "== rltrain --recompute-activations"
RAYON_NUM_THREADS="$threads" target/release/examples/train_step_bench --no-rollout --recompute-activations \
  --shapes "${shapes%,}" --objective grpo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== PyTorch eager (random weights of the same shape, f32, $threads threads)"
# The embedded model's chat prompt is 25 tokens long. Passive OpenMP waits: idle threads sleep
# instead of spinning into the CPU time.
OMP_WAIT_POLICY=PASSIVE "$python" trainer/examples/torch_step.py --rows "$rows" --prompt-tokens 25 --tokens "$tokens" --steps "$steps" \
  --threads "$threads"
