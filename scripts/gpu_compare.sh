#!/usr/bin/env bash
# On a GPU machine: the engine's batched decoding and one RL training step beside PyTorch's
# (shared/bench/torch_reference.py), same random-weight model shape, bf16, one command.
#
# Build on the CPU machine first (stripped, gzipped binaries and a copy of the PyTorch reference
# land in target-cuda/carry, ~35 MB), then carry that folder to the GPU machine:
#   scripts/build_cuda.sh --example engine_bench
#   scripts/build_cuda.sh -p rltrain --example train_step_bench
# Then, there (with the session's device tool: carry `target-cuda/carry`):
#   scripts/gpu_compare.sh            # PRESET=qwen2-0.5b (default) | qwen2-1.5b | smollm2-135m
# Record the output in BENCHMARKS.md with the GPU's name (printed first).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
preset="${PRESET:-qwen2-0.5b}"
bin="${BIN:-$root/target-cuda/release/examples}"
ref="${TORCH_REFERENCE:-$root/../shared/bench/torch_reference.py}"
[[ -e "$ref" ]] || ref="$root/target-cuda/carry/torch_reference.py"
# The gzipped copies build_cuda.sh leaves in target-cuda/carry (what travels to a GPU machine).
if [[ ! -e "$bin/engine_bench" && -e "$root/target-cuda/carry/engine_bench.gz" ]]; then
  bin="$(mktemp -d)"
  for name in engine_bench train_step_bench; do
    gunzip -c "$root/target-cuda/carry/$name.gz" > "$bin/$name" && chmod +x "$bin/$name"
  done
fi
for f in "$bin/engine_bench" "$bin/train_step_bench" "$ref"; do
  [[ -e "$f" ]] || { echo "error: $f is missing (see the build commands at the top of $0)" >&2; exit 1; }
done
# The CUDA libraries of the machine's Python wheels (the binaries link against stubs).
nvidia_dir="$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null || true)"
if [[ -n "$nvidia_dir" ]]; then
  export LD_LIBRARY_PATH="$nvidia_dir/cu13/lib:$(ls -d "$nvidia_dir"/*/lib 2>/dev/null | tr '\n' ':')${LD_LIBRARY_PATH:-}"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

echo "== generation: greedy, 128-token prompts, 256 new tokens, EOS ignored"
"$bin/engine_bench" --model "random:$preset" --device cuda --dtype bf16 --prompt-tokens 128 --new-tokens 256 \
  --batch 1 --batch 8 --batch 32 --repeat 2
for b in 1 8 32; do python3 "$ref" generate --preset "$preset" --batch "$b" --prompt 128 --new 256; done

echo "== one RL step (ours: rollout of 8 x 1024 new tokens, then log-probs, GRPO loss, backward, AdamW;"
echo "   PyTorch: the training half on 8 sequences of 1024 tokens)"
"$bin/train_step_bench" --model "random:$preset" --device cuda --dtype bf16 --shapes 8x1024 --objective grpo
python3 "$ref" train --preset "$preset" --batch 8 --seq 1024 --steps 5
