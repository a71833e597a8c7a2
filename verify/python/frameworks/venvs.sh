#!/usr/bin/env bash
# The frameworks' own code, for the tests under verify/python/tests/frameworks/ (issue 20).
#
#   bash verify/python/frameworks/venvs.sh setup   # once: two venvs, ~12 GB, 5-10 minutes
#   bash verify/python/frameworks/venvs.sh test    # builds the wheel, runs the framework tests in both
#
# The venvs live in $RLVERIFY_FRAMEWORKS_VENVS (default: .venv-frameworks/ at the repository root,
# git-ignored). CI does not use them: there the framework tests skip, and the call shapes are kept
# by tests that need no framework (tests/frameworks/test_call_shapes.py).
#
# - `main`: TRL (its GRPOTrainer, with torch and transformers), OpenRLHF --no-deps (vllm and
#   deepspeed cannot install here; its remote-reward client needs only aiohttp and requests),
#   math-verify 0.9.0 (the compat tests compare with it), and what slime's `rm_hub` imports
#   (torch, aiohttp, httpx). slime is not on PyPI: `SLIME_SRC` names a checkout of THUDM/slime
#   (`git clone https://github.com/THUDM/slime`); without it the slime test skips.
# - `verl`: verl with its dependencies (ray, hydra), on its own: it pins versions TRL does not.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
python="${PYTHON:-python3}"
venvs="${RLVERIFY_FRAMEWORKS_VENVS:-$repo/.venv-frameworks}"
pip_flags=(-q --disable-pip-version-check)

setup() {
  mkdir -p "$venvs"
  if [ ! -x "$venvs/main/bin/python" ]; then
    "$python" -m venv "$venvs/main"
    "$venvs/main/bin/pip" install "${pip_flags[@]}" "maturin>=1.5,<2" pytest trl "math-verify==0.9.0" \
      aiohttp requests httpx
    # OpenRLHF without its dependencies; `openrlhf.utils` imports pylatexenc.
    "$venvs/main/bin/pip" install "${pip_flags[@]}" --no-deps openrlhf
    "$venvs/main/bin/pip" install "${pip_flags[@]}" pylatexenc
  fi
  if [ ! -x "$venvs/verl/bin/python" ]; then
    "$python" -m venv "$venvs/verl"
    "$venvs/verl/bin/pip" install "${pip_flags[@]}" "maturin>=1.5,<2" pytest verl
  fi
  versions
}

versions() {
  for v in main verl; do
    echo "$v: $("$venvs/$v/bin/pip" list --format=freeze 2>/dev/null \
      | grep -iE '^(trl|transformers|torch|openrlhf|math-verify|verl|ray|aiohttp|httpx)==' | tr '\n' ' ')"
  done
}

run_tests() {
  local wheels
  wheels="$(mktemp -d)"
  trap 'rm -rf "$wheels"' RETURN
  (cd "$repo/verify/python" && "$venvs/main/bin/maturin" build --release --locked \
    --interpreter "$venvs/main/bin/python" --out "$wheels")
  (cd "$repo" && cargo build --locked -q --release -p rlverify --bin rlverify)
  export RLVERIFY_BIN="${CARGO_TARGET_DIR:-$repo/target}/release/rlverify"
  local status=0
  for v in main verl; do
    "$venvs/$v/bin/pip" install "${pip_flags[@]}" --force-reinstall --no-deps "$wheels"/rlverify-*.whl
    echo "== $v: $(versions | grep "^$v:")"
    (cd "$wheels" && "$venvs/$v/bin/python" -m pytest -q -rs -p no:cacheprovider \
      "$repo/verify/python/tests/frameworks" "$@") || status=1
  done
  return $status
}

case "${1:-}" in
  setup) setup ;;
  test) shift; run_tests "$@" ;;
  versions) versions ;;
  *) echo "usage: $0 setup|test|versions" >&2; exit 2 ;;
esac
