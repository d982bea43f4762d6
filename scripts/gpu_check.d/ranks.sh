#!/usr/bin/env bash
# Ranks in processes on one GPU, and the NCCL NVLS setting as a run records it:
#  two-nodes   the 4-rank mpirun test (2 "nodes" x 2 ranks on GPU 0) with glibc's heap checks on
#              (MALLOC_CHECK_=3), so a rank writing past a heap block aborts.
#  memcheck    the same with every rank under compute-sanitizer memcheck: 0 errors per rank.
#  nvls        environment.nccl_nvls of a sweep with NCCL_NVLS_ENABLE=0 and with --nvls off (this
#              check never turns NVLS on), the report's row, compare's environment line, and the
#              refusal of a --nvls that contradicts the variable.
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
out="$OUT/ranks"
mkdir -p "$out/memcheck" "$out/nvls"
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MALLOC_CHECK_=3 MALLOC_PERTURB_=165 timeout 200 "$BIN/mgbench_mpi_gpu_tests" >"$out/two_nodes.log" 2>&1
check "two nodes on one GPU (4 ranks, heap checks)" $? "$(grep -E 'All tests passed|test cases:' "$out/two_nodes.log" | tail -1)"
# A Catch2 filter with a comma is two filters: the test names are given up to their comma.
# NCCL probes kernels of other architectures at start (cudaFuncGetAttributes answers "no kernel
# image", which NCCL handles); memcheck reports such API errors by default and would fail every
# NCCL rank on them, so they are not reported: memory errors still are.
export MGBENCH_GPU_TEST_RANK_WRAPPER="compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 \
--print-limit 20 --log-file $out/memcheck/rank.%p.log"
MGBENCH_GPU_TEST_TIME_SCALE=20 timeout 120 "$BIN/mgbench_mpi_gpu_tests" \
  "two nodes on one GPU: the own all-reduce is waived on every rank*" \
  >"$out/memcheck_own.log" 2>&1
rc_own=$?
rc_nccl=skipped  # MGBENCH_CHECK_MEMCHECK_OWN_ONLY: the own all-reduce only (issue 30's finding 3)
if [[ -z "${MGBENCH_CHECK_MEMCHECK_OWN_ONLY:-}" ]]; then
  MGBENCH_GPU_TEST_TIME_SCALE=20 timeout 150 "$BIN/mgbench_mpi_gpu_tests" \
    "two nodes on one GPU: NCCL's all-reduce is exact on every rank" >"$out/memcheck_nccl.log" 2>&1
  rc_nccl=$?
fi
unset MGBENCH_GPU_TEST_RANK_WRAPPER
summaries=$(grep -h "ERROR SUMMARY" "$out"/memcheck/rank.*.log 2>/dev/null | sort | uniq -c | tr '\n' ' ')
! grep -h "ERROR SUMMARY" "$out"/memcheck/rank.*.log | grep -vq "ERROR SUMMARY: 0 errors"
check "memcheck on every rank: 0 errors" $? "own rc=$rc_own nccl rc=$rc_nccl (124: time-out) $summaries"
nvls_run() {  # NAME VALUE-OF-NCCL_NVLS_ENABLE-OR-unset SWEEP-ARGS...
  local name="$1" value="$2" envs=(-u NCCL_NVLS_ENABLE); shift 2
  [[ "$value" != unset ]] && envs=("NCCL_NVLS_ENABLE=$value")
  env "${envs[@]}" timeout 90 "$BIN/mgbench" sweep --gpus 1 --workloads allreduce \
    --param impl=nccl --param bytes=67108864 --profile quick --no-history --skip-doctor \
    --out "$out/nvls/$name" "$@" >"$out/nvls/$name.log" 2>&1
}
nvls_run env0 0; check "sweep with NCCL_NVLS_ENABLE=0" $?
nvls_run opt_off unset --nvls off; check "sweep with --nvls off" $?
for name in env0 opt_off; do
  echo "$name: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['environment'].get('nccl_nvls'))" \
    "$out/nvls/$name/results.json" 2>&1)"
done >"$out/nvls_table.txt"
[[ $(grep -c "off (NCCL_NVLS_ENABLE=0)" "$out/nvls_table.txt") == 2 ]]
check "both record off (NCCL_NVLS_ENABLE=0)" $? "$(tr '\n' ';' <"$out/nvls_table.txt")"
grep -q "NVLS" "$out/nvls/env0/report.md"; check "the report shows the NVLS setting" $?
NCCL_NVLS_ENABLE=1 "$BIN/mgbench" sweep --gpus 1 --workloads allreduce --nvls off --dry-run \
  >/dev/null 2>"$out/nvls/conflict.err"
[[ $? == 2 ]]; check "--nvls off against NCCL_NVLS_ENABLE=1 (dry run): exit 2" $?
