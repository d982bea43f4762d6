#!/usr/bin/env bash
# Checks that what the build needs is really there, installs only what is missing, then
# configures and builds mgbench. Tools are looked up on PATH with their versions; libraries and
# headers by a small CMake project (scripts/setup_probe) that finds them as the real build does.
# With nothing missing, no package manager is called (works offline).
#
#   scripts/setup.sh [PRESET [TARGET]]  check, install what is missing, build (PRESET: release,
#                               ci, debug, asan, fuzz; TARGET: only that target, e.g. mgbench)
#   scripts/setup.sh --check    check only: one line per missing piece; never installs or builds
#   scripts/setup.sh --deps     check and install what is missing; no build
#
# Installs with apt-get (Debian/Ubuntu) or dnf (RHEL/Rocky/Fedora), through sudo when not root.
# A required piece that cannot be installed: one line saying how to provide it, exit 4. An
# optional one: a warning, its feature is disabled. Optional pieces alone are installed only when
# the local package index offers them (no registry, no call). MGBENCH_SETUP_NO_INSTALL=1: never
# install. The CUDA toolkit (nvcc, cuBLAS, NCCL) is never installed here; it is taken from
# CUDACXX, CUDAToolkit_ROOT, CUDA_HOME, PATH, then /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=build
case "${1:-}" in
  --check) mode=check; shift ;;
  --deps) mode=deps; shift ;;
  -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "setup: unknown option '$1' (see scripts/setup.sh --help)" >&2; exit 2 ;;
esac
preset="${1:-release}"
target="${2:-}"

# piece | need | apt package | dnf package | what it is (for the messages)
# need: required (exit 4 when missing), optional (a warning), cuda (never installed here).
PIECES='
cmake|required|cmake|cmake|CMake >= 3.25 (or: pip install cmake)
ninja|required|ninja-build|ninja-build|Ninja (or: pip install ninja)
gxx|required|g++|gcc-c++|g++ >= 9
nvcc|cuda|-|-|the CUDA toolkit >= 12 (nvcc): NVIDIA CUDA repository package cuda-toolkit-13-0 or the runfile; then set CUDA_HOME
cublas|cuda|-|-|cuBLAS/cuBLASLt of the CUDA toolkit: NVIDIA CUDA repository package libcublas-dev-13-0
nccl|cuda|-|-|NCCL headers and library: NVIDIA CUDA repository package libnccl-dev (dnf: libnccl-devel), or set NCCL_ROOT
catch2|required|catch2|catch2-devel|Catch2 (tests)
cxxopts|required|libcxxopts-dev|cxxopts-devel|cxxopts
spdlog|required|libspdlog-dev|spdlog-devel|spdlog
fmt|required|libfmt-dev|fmt-devel|fmt
json|required|nlohmann-json3-dev|json-devel|nlohmann-json >= 3.10
benchmark|optional|libbenchmark-dev|google-benchmark-devel|Google Benchmark (micro-benchmarks)
sqlite|required|libsqlite3-0|sqlite-libs|the SQLite runtime library libsqlite3.so.0 (history store; loaded at run time, no header needed)
mpi|optional|libopenmpi-dev|openmpi-devel|MPI (multi-node launch)
mpirun|optional|openmpi-bin|openmpi|mpirun (OpenMPI: --launcher mpirun and the mpi tests)
python3|optional|python3|python3|/usr/bin/python3 (schema and report checks)
jsonschema|optional|python3-jsonschema|python3-jsonschema|python3 jsonschema (results schema test)
chromium|optional|chromium|chromium|Chromium (HTML report browser test)
ccache|optional|ccache|ccache|ccache (faster rebuilds)
ctags|optional|universal-ctags|ctags|universal-ctags (size lint)
promtool|optional|prometheus|-|promtool (Prometheus export check; dnf: take it from the Prometheus release tarball)
xmllint|optional|libxml2-utils|libxml2|xmllint (JUnit export check)
help2man|optional|help2man|help2man|help2man (man page)
slurm|optional|slurmctld slurmd slurm-client munge|slurm-slurmctld slurm-slurmd slurm munge|Slurm daemons, client and munge (single-node Slurm cluster test)
fuzzer|optional|clang-16 libfuzzer-16-dev libclang-rt-16-dev|-|clang-16 with libFuzzer and the sanitizer runtimes (fuzz preset)
'
TOOLS="cmake ninja gxx sqlite python3 jsonschema chromium ccache ctags promtool xmllint help2man fuzzer mpirun slurm"
LIBS="cublas nccl catch2 cxxopts spdlog fmt json benchmark mpi"

field() { echo "$PIECES" | awk -F'|' -v p="$1" -v f="$2" '$1 == p { print $f }'; }
say() { echo "setup: $*" >&2; }

# version_ge A B: A >= B in version order.
version_ge() { [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]; }
first_version() { grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -n1; }

has_tool() {
  case "$1" in
    cmake) command -v cmake >/dev/null && version_ge "$(cmake --version | first_version)" 3.25 ;;
    ninja) command -v ninja >/dev/null ;;
    gxx) command -v g++ >/dev/null && version_ge "$(g++ -dumpfullversion 2>/dev/null)" 9 ;;
    python3) [[ -x /usr/bin/python3 ]] ;;
    sqlite) has_runtime_library libsqlite3.so.0 ;;
    jsonschema) [[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import jsonschema' 2>/dev/null ;;
    chromium) command -v chromium >/dev/null || command -v chromium-browser >/dev/null ;;
    slurm) command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
           command -v srun >/dev/null && command -v munged >/dev/null ;;
    ctags) grep -q 'Universal Ctags' <<<"$(ctags --version 2>/dev/null)" ;;
    fuzzer) command -v clang++-16 >/dev/null &&
            compgen -G '/usr/lib/llvm-16/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null ;;
    *) command -v "$1" >/dev/null ;;
  esac
}

# Whether the dynamic loader finds a shared library by its soname (what dlopen will look up).
has_runtime_library() {
  local ldconfig
  ldconfig=$(PATH="$PATH:/sbin:/usr/sbin" command -v ldconfig) &&
    grep -q "^[[:space:]]*$1 " <<<"$("$ldconfig" -p 2>/dev/null)" && return 0
  compgen -G "/usr/lib*/$1" >/dev/null || compgen -G "/usr/lib/*-linux-gnu/$1" >/dev/null ||
    compgen -G "/lib*/$1" >/dev/null
}

# The CUDA compiler, in the order CUDACXX, CUDAToolkit_ROOT, CUDA_HOME, PATH, /usr/local/cuda.
find_nvcc() {
  local c
  for c in "${CUDACXX:-}" "${CUDAToolkit_ROOT:+$CUDAToolkit_ROOT/bin/nvcc}" \
           "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" "$(command -v nvcc 2>/dev/null || true)" \
           /usr/local/cuda/bin/nvcc; do
    if [[ -n "$c" && -x "$c" ]] &&
       version_ge "$("$c" --version 2>/dev/null | grep -oE 'release [0-9.]+' | first_version)" 12.0
    then
      echo "$c"; return 0
    fi
  done
  return 1
}

# Prints the pieces among $LIBS that the CMake probe does not find.
probe_libs() {
  local dir out gen=()
  dir=$(mktemp -d)
  command -v ninja >/dev/null && gen=(-G Ninja)
  out=$(cmake -S scripts/setup_probe -B "$dir" "${gen[@]}" \
          ${CUDAToolkit_ROOT:+"-DCUDAToolkit_ROOT=$CUDAToolkit_ROOT"} 2>&1) || true
  rm -rf "$dir"
  if ! grep -q "^MGBENCH_PROBE " <<<"$out"; then
    say "the CMake probe did not run: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
    echo "$LIBS"; return
  fi
  awk '$1 == "MGBENCH_PROBE" && $3 == "missing" { printf "%s ", $2 }' <<<"$out"
  local p
  for p in $LIBS; do  # a piece the probe never reported (it stopped early) is missing too
    { pretend "$p" || ! grep -q "^MGBENCH_PROBE $p " <<<"$out"; } && printf '%s ' "$p"
  done
  return 0
}

# MGBENCH_SETUP_PRETEND_MISSING="piece ...": treat these as missing (tests of this script only).
pretend() { [[ " ${MGBENCH_SETUP_PRETEND_MISSING:-} " == *" $1 "* ]]; }

missing_tools() {
  local p
  for p in $TOOLS; do { has_tool "$p" && ! pretend "$p"; } || printf '%s ' "$p"; done
}

package_manager() {
  if command -v apt-get >/dev/null; then echo apt
  elif command -v dnf >/dev/null; then echo dnf
  else echo none; fi
}
# Through sudo when not root; without a terminal sudo must not ask for a password (-n).
as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif [[ -t 0 ]]; then sudo "$@"
  else sudo -n "$@"; fi
}

# Whether the local package index offers a package: a local read, no registry contacted.
offered() {
  case "$PM" in
    apt) grep -q 'Candidate: [^(]' <<<"$(apt-cache policy "$1" 2>/dev/null)" ;;
    dnf) dnf -C -q list --available "$1" >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}

# Without a reachable registry apt gives up after a short wait rather than retrying.
APT_OPTS=(-o Acquire::Retries=0 -o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20)
UPDATED=0
refresh_index() {
  [[ $UPDATED -eq 1 ]] && return 0
  UPDATED=1
  case "$PM" in
    apt) as_root apt-get "${APT_OPTS[@]}" update -qq ||
           say "apt-get update failed (no package registry?)" ;;
    dnf) as_root dnf -q makecache || say "dnf makecache failed (no package registry?)" ;;
  esac
}

INSTALLED=0
install_packages() {
  INSTALLED=1
  case "$PM" in
    apt) as_root env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -qq \
           --no-install-recommends "$@" ;;
    dnf) as_root dnf install -y -q "$@" ;;
  esac
}

# install PIECE...: required pieces refresh the index and install; optional ones are tried one
# by one, and only when a required piece needed the package manager or the index offers them.
install_missing() {
  [[ "$mode" == check || "${MGBENCH_SETUP_NO_INSTALL:-0}" == 1 || "$PM" == none ]] && return 0
  [[ $(id -u) -ne 0 ]] && ! command -v sudo >/dev/null && return 0
  local p pkg required=() optional=()
  for p in "$@"; do
    pkg=$(field "$p" "$([[ $PM == apt ]] && echo 3 || echo 4)")
    [[ -z "$pkg" || "$pkg" == - ]] && continue
    case "$(field "$p" 2)" in
      required) required+=("$pkg") ;;
      optional) optional+=("$pkg") ;;
    esac
  done
  if [[ ${#required[@]} -gt 0 ]]; then
    refresh_index
    install_packages "${required[@]}" || say "installing ${required[*]} failed"
  fi
  for pkg in ${optional[*]}; do  # a piece may name several packages
    if [[ $UPDATED -eq 1 ]] || offered "$pkg"; then
      install_packages "$pkg" >/dev/null 2>&1 || say "optional package $pkg not installed"
    fi
  done
}

# One line per missing piece: what it is and how to provide it. Returns 1 when one is required.
report_missing() {
  local p need how bad=0
  for p in "$@"; do
    need=$(field "$p" 2)
    how=""
    [[ "$(field "$p" 3)" != - ]] && how="apt-get install $(field "$p" 3)"
    [[ "$(field "$p" 4)" != - ]] && how+="${how:+ | }dnf install $(field "$p" 4)"
    [[ -z "$how" ]] && how="see docs/INSTALL.md"
    if [[ "$need" == optional ]]; then
      say "optional, missing: $(field "$p" 5): $how (its feature is disabled)"
    else
      say "REQUIRED, missing: $(field "$p" 5): $how"
      bad=1
    fi
  done
  return $bad
}

PM=$(package_manager)
tools=$(missing_tools)
if [[ -n "$tools" ]]; then
  # shellcheck disable=SC2086
  install_missing $tools
  [[ $INSTALLED -eq 1 ]] && tools=$(missing_tools)
fi
libs=""
if has_tool cmake && has_tool gxx; then
  if CUDACXX=$(find_nvcc); then
    export CUDACXX
    export CUDAToolkit_ROOT="${CUDAToolkit_ROOT:-$(dirname "$(dirname "$CUDACXX")")}"
  else
    unset CUDACXX
    libs="nvcc "
  fi
  libs+=$(probe_libs)
  if [[ -n "$(printf '%s' "$libs" | tr -d ' ')" ]]; then
    # shellcheck disable=SC2086
    INSTALLED=0
    install_missing $libs
    [[ $INSTALLED -eq 1 ]] && libs=$( [[ -z "${CUDACXX:-}" ]] && printf 'nvcc '; probe_libs)
  fi
fi
ok=1
# shellcheck disable=SC2086
report_missing $tools $libs || ok=0
if [[ $ok -eq 0 ]]; then
  say "a required piece is missing (see above)"
  exit 4
fi
say "all required pieces found (nvcc: ${CUDACXX}, cmake $(cmake --version | first_version))"
[[ "$mode" != build ]] && exit 0

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" ${target:+--target "$target"}
say "built build/$preset/bin/mgbench${target:+ (target $target only)}"
