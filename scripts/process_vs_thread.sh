#!/usr/bin/env bash
# One GPU, the same small sweep with one thread per GPU (--launcher local) and with one process
# per GPU (--launcher mpirun, one rank), each repeated, the runs alternating; then every point's
# headline metric both ways, side by side, with the ratio processes / threads and the verdict
# against the noise: how far a repeat of the same mode moves (scripts/process_vs_thread.py).
#
# Usage: scripts/process_vs_thread.sh [MGBENCH] [--repeats N] [more sweep options...]
#   MGBENCH      the binary (default build/release/bin/mgbench); it must be built with MPI
#   --repeats N  runs of each mode (default 2; 1 leaves only the within-run CI as noise)
# The sweep: --gpus 1 --profile quick over gemm, allreduce, train_step, membw and h2d (override
# with --workloads ... among the extra options). As root, mpirun needs
# OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (set here when running as root).
# Exit: 0 every point agrees, 1 a point differs or failed, 2 usage, 4 mpirun or python3 missing.
set -euo pipefail
bin="${1:-build/release/bin/mgbench}"
shift || true
repeats=2
if [[ "${1:-}" == --repeats ]]; then
  repeats="${2:-}"
  shift 2 || true
fi
[[ -x "$bin" ]] || { echo "process_vs_thread: no executable '$bin'" >&2; exit 2; }
[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || { echo "process_vs_thread: --repeats needs a count >= 1" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "process_vs_thread: mpirun is not on PATH (install openmpi-bin)" >&2; exit 4; }
command -v python3 >/dev/null || { echo "process_vs_thread: python3 is needed for the table" >&2; exit 4; }
if [[ "$(id -u)" == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
out="$(mktemp -d "${TMPDIR:-/tmp}/mgbench-pvt.XXXXXX")"
sweep=(sweep --gpus 1 --profile quick --workloads gemm,allreduce,train_step,membw,h2d
       --no-history --no-report -q "$@")
status=0
threads=() processes=()
for ((i = 1; i <= repeats; i++)); do
  "$bin" "${sweep[@]}" --launcher local --out "$out/threads-$i" || status=$?
  "$bin" "${sweep[@]}" --launcher mpirun --out "$out/processes-$i" || status=$?
  threads+=("$out/threads-$i/results.json")
  processes+=("$out/processes-$i/results.json")
done
python3 "$(dirname "$0")/process_vs_thread.py" "${threads[@]}" -- "${processes[@]}" || status=$?
echo "results: $out/{threads,processes}-{1..$repeats}/results.json"
exit "$status"
