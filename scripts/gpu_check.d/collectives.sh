#!/usr/bin/env bash
# collectives (issue 33): the NCCL collectives (allgather, reducescatter, alltoall, broadcast, reduce,
# sendrecv) on one H200. Run from the repository root, tree built in build/ci, nccl-tests source
# (plain checkout, unbuilt) at gpujob/nccl-tests. Expected run time: ~3.5 minutes (every step
# has a timeout: at most ~4.5 minutes).
#   1. nccl-tests is built in the background (make -j16 MPI=0, sm_90 only, NCCL found as the
#      project's CMake found it: NCCL_INCLUDE_DIR / NCCL_LIBRARY of build/ci/CMakeCache.txt),
#      timed, while the correctness steps run on the GPU;
#   2. mgbench_gpu_tests "[collective]": every collective at 1 GPU, every dtype, odd sizes
#      (4 B .. 4 MiB + 4), in and out of place: ok with 0 wrong, or waived (in place on one
#      GPU) with the reason; a cold rotation verified set by set; algo/proto stretches recorded
#      in extra.nccl_env; the verification kernels themselves; plus the all-reduce's GPU cases
#      but the stress and fault cases (its point class is now the collectives' one); and the
#      transformer step's ddp/fsdp case (its all-gather/reduce-scatter now go through
#      collective_call);
#   3. mgbench_mpi_gpu_tests "[collective],[allreduce][nccl]": 4 ranks on this one GPU as 2
#      "nodes" (mpirun, NCCL_HOSTID per rank, sockets): every collective exact on every rank, in
#      and out of place, several roots, and a forced NCCL_ALGO/NCCL_PROTO stretch (communicators
#      re-created in every process); NCCL's all-reduce exact on every rank;
#   4. a real `mgbench sweep --gpus 1` of the six collectives (odd sizes, fp32 and bf16, in and
#      out of place): exit 0, every point ok or waived with 0 wrong, the Markdown report with one
#      table and one plateau summary per collective;
#   5. scripts/crosscheck.sh against all_gather_perf, reduce_scatter_perf, alltoall_perf,
#      broadcast_perf, reduce_perf, sendrecv_perf at 1 GPU (timing=host cache=hot vs nccl-tests,
#      medians over 2 alternating runs, sizes 16 B, 4 KiB, 1 MiB, 256 MiB): the table in
#      $OUT/collectives/crosscheck/crosscheck.md (paste it). Beyond-tolerance rows are reported as WARN
#      (timing data, not correctness: rerun with --repeats 8 for a verdict); a tool failure is FAIL.
# Everything goes to $OUT/collectives/; the last line of $OUT/collectives/summary.txt is
#   COLLECTIVES RESULT: PASS     (every correctness step passed)   or   COLLECTIVES RESULT: FAIL (n step(s) failed)
set -u
# As a step of scripts/gpu_check.sh (BIN_DIR OUT_DIR): OUT is OUT_DIR; run from the repository
# root with the tree built in build/ci.
[[ $# -ge 2 ]] && OUT="$(realpath -m "$2")"
[[ -f CMakePresets.json ]] || { echo "collectives: run from the repository root" >&2; exit 2; }
O="${OUT:-/tmp/out}/collectives"
mkdir -p "$O"
S="$O/summary.txt"
: >"$S"
failed=0
step() {  # step NAME RC [DETAIL]: one PASS/FAIL line
  if [[ "$2" == 0 ]]; then echo "PASS $1 ${3:-}" | tee -a "$S"
  else echo "FAIL $1 (rc $2) ${3:-}" | tee -a "$S"; failed=$((failed + 1)); fi
}
BIN="$PWD/build/ci/bin"
export NCCL_NVLS_ENABLE=0  # the project's GPU test scripts keep NVLink SHARP off explicitly
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; git log --oneline -1
  date -u; } >"$O/host.txt" 2>&1

# 1. nccl-tests, built in the background against the NCCL the project's build found.
nccl_inc=$(sed -n 's/^NCCL_INCLUDE_DIR:PATH=//p' build/ci/CMakeCache.txt)
nccl_lib=$(sed -n 's/^NCCL_LIBRARY:FILEPATH=//p' build/ci/CMakeCache.txt)
NH="$PWD/gpujob/nccl-home"  # include/ and lib/ of that NCCL, as nccl-tests' NCCL_HOME wants them
rm -rf "$NH" && mkdir -p "$NH" && ln -s "$nccl_inc" "$NH/include" && ln -s "$(dirname "$nccl_lib")" "$NH/lib"
echo "NCCL for nccl-tests: include $nccl_inc, library $nccl_lib" >"$O/nccl-tests-build.log"
(
  cd gpujob/nccl-tests || exit 3
  start=$(date +%s%N)
  make -j16 MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME="$NH" \
       NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" >>"$O/nccl-tests-build.log" 2>&1
  rc=$?
  echo "$rc $(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')" \
    >"$O/nccl-tests-build.rc"
) &
build_pid=$!

# 2. Every collective on one GPU: odd sizes, every dtype, in and out of place; and the all-reduce
#    and timing cases, whose point class and executor the collectives now share.
if [[ -n "${MGBENCH_CHECK_SKIP_GPU_TESTS:-}" ]]; then  # they ran in an earlier labels step
  echo "SKIP gpu tests [collective], [allreduce] (MGBENCH_CHECK_SKIP_GPU_TESTS)" | tee -a "$S"
else
  T0=$SECONDS
  timeout 80 "$BIN/mgbench_gpu_tests" "[collective],[allreduce]~[stress]~[faults],host- and graph-timed all-reduce*,a cold all-reduce*,small all-reduce messages*,a 1-GPU in-place all-reduce*,transformer_step ddp and fsdp on one GPU*" \
    --durations yes >"$O/gpu_tests.log" 2>&1
  step "gpu tests [collective], [allreduce] and the all-reduce timing cases: ok or waived, 0 wrong ($((SECONDS - T0)) s)" $? \
    "$(grep -E 'test cases|assertions' "$O/gpu_tests.log" | tail -1)"
fi

# 3. Several ranks on this one GPU through mpirun: the collectives, and NCCL's all-reduce (whose
#    point class the collectives now share).
T0=$SECONDS
timeout 80 "$BIN/mgbench_mpi_gpu_tests" "[collective],[allreduce][nccl]" --durations yes >"$O/mpi_tests.log" 2>&1
step "mpi tests: 4 ranks on one GPU, every collective exact on every rank ($((SECONDS - T0)) s)" $? \
  "$(grep -E 'test cases|assertions' "$O/mpi_tests.log" | tail -1)"

# 4. A real sweep of the six collectives on one GPU, with its report.
T0=$SECONDS
timeout 70 "$BIN/mgbench" sweep --gpus 1 --no-history --out "$O/sweep" \
  --workloads allgather,reducescatter,alltoall,broadcast,reduce,sendrecv \
  --dtypes fp32,bf16 --param bytes=12,4092,262148,4194308 --param inplace=false,true \
  --max-time-per-point 0.3 >"$O/sweep_console.txt" 2>"$O/sweep.err"
rc=$?
step "sweep of the six collectives on 1 GPU exits 0 ($((SECONDS - T0)) s)" $rc "$(tail -1 "$O/sweep.err" | head -c 200)"
cp "$O/sweep/report.md" "$O/report.md" 2>/dev/null
python3 - "$O/sweep/results.json" "$O/report.md" >"$O/sweep_check.txt" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
report = open(sys.argv[2]).read()
names = ["allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv"]
bad = []
for p in d["points"]:
    v = p.get("verification", {})
    ok = p["status"] == "ok" and v.get("wrong") == 0
    waived = p["status"] == "waived" and p["params"].get("inplace") is True and "moves nothing" in p["message"]
    print(p["workload"], json.dumps(p["params"], sort_keys=True), p["status"], v.get("wrong"),
          p.get("metrics", {}).get("algbw_GBps"), p.get("message", ""))
    if not (ok or waived):
        bad.append(p["index"])
for n in names:
    count = sum(p["workload"] == n for p in d["points"])
    assert count == (8 if n in ("alltoall", "sendrecv") else 16), (n, count)
    assert f"## {n}" in report, f"no section for {n}"
assert not bad, f"points neither ok with 0 wrong nor waived in place: {bad}"
print("every point ok with 0 wrong or waived in place; a section per collective")
PY
step "sweep: every point ok with 0 wrong or waived (in place, 1 GPU); a report section each" $? \
  "$(tail -1 "$O/sweep_check.txt" | head -c 200)"

# 5. The cross-check against nccl-tests at 1 GPU.
wait "$build_pid"
read -r build_rc build_s <"$O/nccl-tests-build.rc" 2>/dev/null || { build_rc=99; build_s=?; }
step "nccl-tests builds (make -j16 MPI=0, sm_90) in ${build_s} s" "$build_rc" \
  "$(ls gpujob/nccl-tests/build/*_perf 2>/dev/null | wc -l) binaries"
export LD_LIBRARY_PATH="$(dirname "$nccl_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ ldd gpujob/nccl-tests/build/all_gather_perf | grep nccl; ldd "$BIN/mgbench" | grep nccl; } \
  >"$O/nccl_loaded.txt" 2>&1
start=$(date +%s)
timeout 110 bash scripts/crosscheck.sh --nccl-tests gpujob/nccl-tests --mgbench "$BIN/mgbench" \
  --only allgather,reducescatter,alltoall,broadcast,reduce,sendrecv --repeats 2 \
  --sizes 16,4096,1048576,268435456 --mgbench-arg=--max-time-per-point --mgbench-arg=0.5 \
  --out "$O/crosscheck" >"$O/crosscheck.txt" 2>&1
rc=$?
echo "crosscheck: exit $rc after $(( $(date +%s) - start )) s" >>"$O/crosscheck.txt"
case $rc in
  0) echo "PASS crosscheck: every row within tolerance" | tee -a "$S" ;;
  1) echo "WARN crosscheck: rows beyond tolerance (timing; see crosscheck.md)" | tee -a "$S" ;;
  *) step "crosscheck runs (exit $rc)" "$rc" "$(tail -2 "$O/crosscheck.txt" | head -c 200)" ;;
esac
grep -E "rows within tolerance|skipped" "$O/crosscheck.txt" | tee -a "$S"

echo "total: $SECONDS s" | tee -a "$S"
if [[ $failed == 0 ]]; then echo "COLLECTIVES RESULT: PASS" | tee -a "$S"
else echo "COLLECTIVES RESULT: FAIL ($failed step(s) failed)" | tee -a "$S"; fi
