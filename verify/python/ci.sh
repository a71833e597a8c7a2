#!/usr/bin/env bash
# The Python package's CI: make a venv, install maturin and pytest from PyPI, build the wheel with
# maturin, install it in the venv and run the pytest suite against the installed wheel (not the
# source tree). Called by .ci/run after `cargo test --workspace`; runs on its own as well.
#
#   bash verify/python/ci.sh            # PYTHON=python3.12 to pick the interpreter
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
venv="${RLVERIFY_CI_VENV:-$repo/.venv-ci-python}"
target="${CARGO_TARGET_DIR:-$repo/target}"

if ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
  echo "verify/python/ci.sh: needs Python 3.9+ as \`$python\` (set PYTHON)" >&2
  exit 1
fi
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" "pytest>=7"

wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
(cd "$here" && "$venv/bin/maturin" build --release --locked \
  --interpreter "$venv/bin/python" --out "$wheels")
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall "$wheels"/rlverify-*.whl

# The done check of issue 13, from outside the source tree.
(cd "$wheels" && "$venv/bin/python" -c "import rlverify; assert rlverify.verify('1/2', 'so \\\\boxed{0.5}') is True")

# The parity tests compare with the CLI built from this checkout.
(cd "$repo" && cargo build --locked -q -p rlverify --bin rlverify)
export RLVERIFY_BIN="$target/debug/rlverify"
(cd "$wheels" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests")
