#!/usr/bin/env bash
# Installs the build dependencies (Debian/Ubuntu, apt-get) and configures + builds mgbench.
# Idempotent: installs only what is missing and rebuilds only what changed.
#   scripts/setup.sh [PRESET]      PRESET: release (default), ci, debug, asan, fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"

required=(cmake ninja-build g++ catch2 libcxxopts-dev libspdlog-dev libfmt-dev
          nlohmann-json3-dev libbenchmark-dev)
optional=(libsqlite3-dev libopenmpi-dev python3 python3-jsonschema chromium ccache universal-ctags libfuzzer-16-dev libclang-rt-16-dev)

missing() {
  local out=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
  done
  echo "${out[@]:-}"
}

need_required=$(missing "${required[@]}")
need_optional=$(missing "${optional[@]}")
if [[ -n "$need_required$need_optional" ]]; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get update -qq; then
    echo "setup: apt-get update failed (no package registry?)" >&2
  fi
  if [[ -n "$need_required" ]]; then
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $need_required
  fi
  for p in $need_optional; do
    $sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
      echo "setup: optional package $p not installed (its feature is disabled)" >&2
  done
fi

# The CUDA toolkit: CUDACXX, CUDAToolkit_ROOT, CUDA_HOME, PATH, then /usr/local/cuda. CMake takes
# the compiler from CUDACXX and finds cuBLAS and NCCL beside it.
find_nvcc() {
  local c
  for c in "${CUDACXX:-}" "${CUDAToolkit_ROOT:+$CUDAToolkit_ROOT/bin/nvcc}" \
           "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" "$(command -v nvcc 2>/dev/null)" \
           /usr/local/cuda/bin/nvcc; do
    if [[ -n "$c" && -x "$c" ]]; then echo "$c"; return 0; fi
  done
  return 1
}
if ! CUDACXX=$(find_nvcc); then
  echo "setup: nvcc not found: install the CUDA toolkit (nvcc, cuBLAS, NCCL) and put it on PATH," \
       "or set CUDA_HOME / CUDAToolkit_ROOT to its directory" >&2
  exit 4
fi
export CUDACXX
export CUDAToolkit_ROOT="${CUDAToolkit_ROOT:-$(dirname "$(dirname "$CUDACXX")")}"

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
echo "setup: built build/$preset/bin/mgbench"
