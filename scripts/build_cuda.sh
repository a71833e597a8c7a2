#!/usr/bin/env bash
# Build the engine (rlengine; or the package passed with -p) with the `cuda` feature on a machine
# WITHOUT a CUDA toolkit, for GPU machines with CUDA 13 (driver 580, e.g. H100/H200).
#
#   * nvcc, nvvm, crt, runtime headers and cccl come from PyPI wheels (~45 MB) installed into
#     $CUDA_WHEELS (default .cache/cuda-wheels);
#   * the CUDA runtime (libcudart) is linked statically from the runtime wheel: candle-kernels'
#     static MoE library calls its kernel-launch internals (__cudaRegisterFatBinary, ...), which no
#     stub can stand in for;
#   * the other CUDA libraries candle links against (libcuda, libnvrtc, libcurand, libcublas,
#     libcublasLt) are replaced at link time by stub .so files with the right SONAMEs that define
#     every symbol cudarc declares; the real libraries are found at run time (driver 580+).
#
# Building candle-kernels takes ~7.5 min of 2 cores. Usage:
#   scripts/build_cuda.sh [extra cargo args, e.g. --example engine_bench]   # rlengine
#   scripts/build_cuda.sh -p rlbench                                         # rlbench with the GPU engine
#   scripts/build_cuda.sh -p rltrain --example train_step_bench
# Stripped, gzipped copies land in target-cuda/carry/ (scripts/gpu_compare.sh unpacks them).
# Run the result on the GPU machine with the CUDA libraries of its Python wheels:
#   export LD_LIBRARY_PATH="$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))')/cu13/lib:$LD_LIBRARY_PATH"
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
wheels="${CUDA_WHEELS:-$root/.cache/cuda-wheels}"
stubs="$wheels/stubs"
compute_cap="${CUDA_COMPUTE_CAP:-90}"

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x "$wheels/nvidia/cu13/bin/nvcc" && ! -x "$wheels/nvidia/cuda_nvcc/bin/nvcc" ]]; then
  echo "installing nvcc from PyPI wheels into $wheels" >&2
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$wheels" \
    "nvidia-cuda-nvcc==13.0.88" "nvidia-nvvm==13.0.88" "nvidia-cuda-crt==13.0.88" \
    "nvidia-cuda-runtime==13.0.96" "nvidia-cuda-cccl==13.0.85"
fi

# The wheels lay CUDA out under nvidia/cu13 (or nvidia/<component> in older layouts).
cuda_home=""
for cand in "$wheels/nvidia/cu13" "$wheels/nvidia/cuda_nvcc"; do
  if [[ -x "$cand/bin/nvcc" ]]; then cuda_home="$cand"; break; fi
done
if [[ -z "$cuda_home" ]] && command -v nvcc >/dev/null 2>&1; then
  cuda_home="$(dirname "$(dirname "$(command -v nvcc)")")"
fi
if [[ -z "$cuda_home" ]]; then
  echo "error: no nvcc found after installing the wheels into $wheels" >&2
  exit 1
fi

# Stub libraries: one C file per library defining every function cudarc's bindings name.
cargo fetch --manifest-path "$root/Cargo.toml" >/dev/null
cudarc_src="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.* 2>/dev/null | sort -V | tail -1)"
if [[ -z "$cudarc_src" ]]; then
  echo "error: cudarc 0.19 sources not found in the cargo registry" >&2
  exit 1
fi
mkdir -p "$stubs"
make_stub() { # name soname module...
  local name="$1" soname="$2"; shift 2
  local c="$stubs/$name.c"
  : > "$c"
  for module in "$@"; do
    grep -rhoE 'pub (unsafe )?fn [A-Za-z_][A-Za-z0-9_]*\(' "$cudarc_src/src/$module/sys" 2>/dev/null \
      | sed -E 's/pub (unsafe )?fn ([A-Za-z0-9_]+)\(/\2/' || true
  done | grep -E '^(cu|nvrtc|curand|cublas)' | sort -u | sed 's/.*/void &(void) {}/' >> "$c"
  cc -shared -fPIC -o "$stubs/lib$name.so" -Wl,-soname,"$soname" "$c"
}
make_stub cuda libcuda.so.1 driver
# `-lcudart` must find the static archive: no libcudart.so may sit on the link path.
rm -f "$stubs/libcudart.so" "$stubs/cudart.c"
cudart_static=""
for cand in "$cuda_home/lib" "$cuda_home/lib64" "$cuda_home/targets/x86_64-linux/lib"; do
  if [[ -f "$cand/libcudart_static.a" ]]; then cudart_static="$cand/libcudart_static.a"; break; fi
done
if [[ -z "$cudart_static" ]]; then
  echo "error: no libcudart_static.a under $cuda_home (the nvidia-cuda-runtime wheel provides it)" >&2
  exit 1
fi
ln -sf "$cudart_static" "$stubs/libcudart.a"
make_stub nvrtc libnvrtc.so.13 nvrtc
make_stub curand libcurand.so.10 curand
make_stub cublas libcublas.so.13 cublas
make_stub cublasLt libcublasLt.so.13 cublaslt

export CUDA_HOME="$cuda_home" CUDA_PATH="$cuda_home" PATH="$cuda_home/bin:$PATH"
export CUDARC_CUDA_VERSION=13000 CUDA_COMPUTE_CAP="$compute_cap"
export LIBRARY_PATH="$stubs:${LIBRARY_PATH:-}"
export RUSTFLAGS="${RUSTFLAGS:-} -L native=$stubs -C link-arg=-Wl,--no-as-needed"
cd "$root"
# rlengine (the engine and its examples) unless the arguments name a package
# (e.g. `-p rltrain --example train_step_bench`).
package=(-p rlengine)
for arg in "$@"; do
  if [[ "$arg" == "-p" || "$arg" == "--package" || "$arg" == --package=* ]]; then package=(); fi
done
cargo build --release "${package[@]}" --features cuda --target-dir "$root/target-cuda" "$@"

# Stripped, gzipped copies to carry to a GPU machine (a binary with its CUDA kernels is ~60 MB
# stripped, ~16 MB gzipped): target-cuda/carry/NAME.gz for every executable built so far.
carry="$root/target-cuda/carry"
mkdir -p "$carry"
for exe in "$root"/target-cuda/release/{rlbench,rltrain,rlverify} "$root"/target-cuda/release/examples/*; do
  name="$(basename "$exe")"
  [[ -f "$exe" && -x "$exe" && ! "$name" =~ -[0-9a-f]{16}$ ]] || continue
  strip -o "$carry/$name" "$exe" && gzip -f "$carry/$name"
done
# The PyTorch reference travels with them (it is not part of the repo).
reference="$root/../shared/bench/torch_reference.py"
if [[ -f "$reference" ]]; then install -m 0644 "$reference" "$carry/"; fi
echo "carry to the GPU machine: $(cd "$carry" && ls -s --block-size=M | tr '\n' ' ')" >&2
