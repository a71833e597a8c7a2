#!/usr/bin/env bash
# rlbench against a real OpenAI-compatible server: llama.cpp's server from PyPI (llama-cpp-python,
# built from source on install) serving the embedded GGUF model (SmolLM2-135M-Instruct Q4_1).
# Measures completion tokens/s at --concurrency 1, 4 and 16 against one server, and against two
# servers at once (--endpoint twice). Prints one line per configuration.
#
# Usage: scripts/bench_llamacpp.sh [LIMIT] [MAX_TOKENS]     (defaults: 16 gsm8k problems, 96 tokens)
# Env:   VENV (default /tmp/llamavenv), RLBENCH (default target/release/rlbench), THREADS per server (1)
set -euo pipefail

LIMIT="${1:-16}"
MAX_TOKENS="${2:-96}"
VENV="${VENV:-/tmp/llamavenv}"
RLBENCH="${RLBENCH:-target/release/rlbench}"
THREADS="${THREADS:-1}"
PORTS=(8301 8302)
MODEL_NAME=smollm2-135m

if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  python3 -m venv "$VENV"
  # Builds llama.cpp from source: minutes on a small machine.
  nice "$VENV/bin/pip" install --quiet 'llama-cpp-python[server]'
fi
model="$(scripts/fetch_model.sh)"
[[ -x "$RLBENCH" ]] || cargo build --release -p rlbench

work="$(mktemp -d /tmp/rlbench-llamacpp-XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for port in "${PORTS[@]}"; do
  "$VENV/bin/python" -m llama_cpp.server --model "$model" --model_alias "$MODEL_NAME" --host 127.0.0.1 \
    --port "$port" --n_threads "$THREADS" --n_ctx 2048 >"$work/server-$port.log" 2>&1 &
  pids+=("$!")
done
for port in "${PORTS[@]}"; do
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break
    sleep 1
  done
done

# CPU seconds (user + system) the servers have used so far.
server_cpu() {
  python3 - "${pids[@]}" <<'PY'
import os, sys
tck = os.sysconf("SC_CLK_TCK")
total = 0
for pid in sys.argv[1:]:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    total += (int(fields[11]) + int(fields[12])) / tck
print(total)
PY
}

run() { # NAME CONCURRENCY ENDPOINT...
  local name="$1" conc="$2"
  shift 2
  local args=()
  for e in "$@"; do args+=(--endpoint "$e"); done
  local start end cpu0 cpu1
  cpu0=$(server_cpu)
  start=$(date +%s.%N)
  "$RLBENCH" run --suite gsm8k --limit "$LIMIT" -k 1 --max-tokens "$MAX_TOKENS" --served-model "$MODEL_NAME" \
    "${args[@]}" --concurrency "$conc" --out "$work/$name" >"$work/$name.out" 2>"$work/$name.err"
  end=$(date +%s.%N)
  cpu1=$(server_cpu)
  python3 - "$work/$name" "$name" "$conc" "$start" "$end" "$(cut -d' ' -f1 /proc/loadavg)" "$cpu0" "$cpu1" <<'PY'
import json, sys
d, name, conc, start, end, load, cpu0, cpu1 = sys.argv[1:]
cpu = float(cpu1) - float(cpu0)
eps = json.load(open(f"{d}/endpoints.json"))
tokens = sum(e["tokens"] for e in eps)
wall = float(end) - float(start)
per = ", ".join(f'{e["endpoint"]}: {e["completions"]} completions, {e["tokens"]} tokens' for e in eps)
print(f"{name}: concurrency {conc}, {tokens} tokens in {wall:.1f} s = {tokens / wall:.1f} tokens/s; "
      f"servers' CPU {cpu:.1f} s = {tokens / max(cpu, 1e-9):.1f} tokens per CPU-second (load {load}; {per})")
PY
}

one="http://127.0.0.1:${PORTS[0]}"
two="http://127.0.0.1:${PORTS[1]}"
run c1 1 "$one"
run c4 4 "$one"
run c16 16 "$one"
run two-servers 16 "$one" "$two"
echo "run directories and logs: $work"
