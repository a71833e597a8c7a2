#!/usr/bin/env bash
# The train part of one RL step in rltrain beside the same step in PyTorch eager, on the CPU, in one
# run: same model shape, same rows and tokens (random responses, no rollout on either side), same
# threads.
#
# 1. SmolLM2-135M, f32, ROWS x TOKENS: rltrain's tables (plain, then with --recompute-activations),
#    then trainer/examples/torch_step.py's JSON lines; each gives the train part's wall and process
#    CPU seconds and its own peak RSS. The first step of each includes first-touch costs.
# 2. The Qwen2.5-0.5B shape, bf16, at each of QWEN_SHAPES (rows x positions, 128 of them prompt):
#    rltrain's train_step_bench beside shared/bench/torch_reference.py train --device cpu, one
#    process per shape and side, each under /usr/bin/time: the step's wall seconds (rltrain: its
#    train part; PyTorch: the median of its timed steps, after its two warm-up steps) and the whole
#    process's wall, CPU (user + sys) seconds and peak RSS (PyTorch's includes its warm-up steps
#    and the no-grad forward it takes first; rltrain runs QWEN_STEPS steps).
#
#   scripts/step_compare.sh                       # ROWS=4 TOKENS=128 STEPS=3 THREADS=2 QWEN_SHAPES=2x512,1x1024
#   QWEN_SHAPES= scripts/step_compare.sh          # the SmolLM2 part only
#   PYTHON=/path/to/python scripts/step_compare.sh   # default: .venv-torch/bin/python when present, else python3
# Needs torch and transformers for $PYTHON: python3 -m venv .venv-torch && .venv-torch/bin/pip install torch transformers
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
rows="${ROWS:-4}" tokens="${TOKENS:-128}" steps="${STEPS:-3}" threads="${THREADS:-2}"
qwen_shapes="${QWEN_SHAPES-2x512,1x1024}" qwen_steps="${QWEN_STEPS:-1}" qwen_prompt=128
python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x .venv-torch/bin/python ]; then python=.venv-torch/bin/python; else python=python3; fi
fi
reference="${REFERENCE:-$root/../shared/bench/torch_reference.py}"
cargo build --release -p rltrain --example train_step_bench
bench=target/release/examples/train_step_bench
shapes="$(for _ in $(seq "$steps"); do printf '%sx%s,' "$rows" "$tokens"; done)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== rltrain (embedded SmolLM2-135M weights, f32, $threads threads)"
RAYON_NUM_THREADS="$threads" "$bench" --no-rollout --shapes "${shapes%,}" --objective grpo
echo "== rltrain --recompute-activations"
RAYON_NUM_THREADS="$threads" "$bench" --no-rollout --recompute-activations --shapes "${shapes%,}" --objective grpo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== PyTorch eager (random weights of the same shape, f32, $threads threads)"
# The embedded model's chat prompt is 25 tokens long. Passive OpenMP waits: idle threads sleep
# instead of spinning into the CPU time.
OMP_WAIT_POLICY=PASSIVE "$python" trainer/examples/torch_step.py --rows "$rows" --prompt-tokens 25 --tokens "$tokens" --steps "$steps" \
  --threads "$threads"

# The whole process's wall, CPU and peak memory, on one line.
timed() { /usr/bin/time -f "process: %e s wall, %U s user + %S s sys CPU, %M KiB peak RSS" "$@"; }
for shape in ${qwen_shapes//,/ }; do
  batch="${shape%x*}" seq="${shape#*x}"
  response=$((seq - qwen_prompt))
  qsteps="$(for _ in $(seq "$qwen_steps"); do printf '%sx%s,' "$batch" "$response"; done)"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "== rltrain, Qwen2.5-0.5B shape (random weights), bf16, $batch x $seq ($qwen_prompt prompt + $response response), $threads threads"
  RAYON_NUM_THREADS="$threads" timed "$bench" --no-rollout --model random:qwen2-0.5b --dtype bf16 \
    --prompt-tokens "$qwen_prompt" --shapes "${qsteps%,}" --objective grpo
  echo "== PyTorch eager, torch_reference.py train --device cpu --batch $batch --seq $seq ($threads threads)"
  OMP_NUM_THREADS="$threads" OMP_WAIT_POLICY=PASSIVE timed "$python" "$reference" train --device cpu \
    --preset qwen2-0.5b --batch "$batch" --seq "$seq" --prompt "$qwen_prompt" --steps 1
done
