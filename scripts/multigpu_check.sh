#!/usr/bin/env bash
# The multi-GPU validation pass on one host with 2..8 GPUs (docs/TESTING.md, "Several GPUs of
# one host"), from the repository root with the tree built in BUILD (tests included):
#   scripts/multigpu_check.sh BUILD OUT [STAGE...]
# Stages, in this order by default (each bounded by a timeout; one PASS/FAIL line per check in
# OUT/summary.txt, every log and results file under OUT):
#   env         nvidia-smi topo -m, `mgbench info` (+ --json) and `mgbench doctor`
#   tests       ctest -L multi_gpu (one at a time: each takes every GPU), then -L gpu|workloads
#   sweep       `mgbench sweep --gpus COUNTS` (PROFILE, default standard): every point ok or
#               waived, 0 wrong values, its report as OUT/report.md; the training steps again
#               with overlap off; then `--baseline each` for gemm (the outlier check)
#   mpirun      the collectives and gemm (quick profile) with a thread and with a process per
#               GPU, and `mgbench compare` of the two: no point slower from 1 MiB up
#   datapath    p2p (both engines, uni/bidir, device and graph timing), h2d and membw on all GPUs
#   crosscheck  scripts/crosscheck.sh --gpus G for every count G >= 2 (G = 1 on a one-GPU host)
#               against nccl-tests built from NCCL_TESTS_SRC (default gpujob/nccl-tests;
#               skipped when absent), REPEATS alternating runs of each (default 4)
#   predict     `mgbench predict` from the sweep's 1- and 2-GPU points against its measured
#               larger counts: the error per workload and count (skipped up to 2 GPUs)
#   screen      `mgbench screen --stages 1,2`, and again with the last GPU left out (not on one)
# Exit 0 when every check passed, 1 when one failed, 2 usage, 4 when nvidia-smi lists no GPU.
# COUNTS: the powers of two up to the GPUs nvidia-smi lists, and that count. The environment
# should set NCCL_NVLS_ENABLE=0 on the lent machines (the product records what it ran with).
set -uo pipefail
[[ $# -ge 2 && -f CMakePresets.json ]] || { echo "usage (from the repository root): $0 BUILD OUT [STAGE...]" >&2; exit 2; }
BUILD="$(realpath "$1")"; out_arg=$2; shift 2
all=(env tests sweep mpirun datapath crosscheck predict screen)
stages=("$@"); [[ ${#stages[@]} -eq 0 ]] && stages=("${all[@]}")
for stage in "${stages[@]}"; do  # every name checked before anything runs
  [[ " ${all[*]} " == *" $stage "* ]] || { echo "multigpu_check: unknown stage '$stage' (${all[*]})" >&2; exit 2; }
done
MG="$BUILD/bin/mgbench"; PROFILE="${PROFILE:-standard}"
COLLECTIVES=allreduce,allgather,reducescatter,alltoall,broadcast,reduce,sendrecv
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
N=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[[ $N -ge 1 ]] || { echo "multigpu_check: nvidia-smi lists no GPU" >&2; exit 4; }
# OUT (created), and check NAME RC [DETAIL]: one PASS/FAIL line, also in OUT/summary.txt.
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/gpu_check.d/common.sh" "$BUILD/bin" "$out_arg"
S="$OUT/summary.txt"
COUNTS=$(python3 -c "n=$N; c=[1<<i for i in range(8) if 1<<i<=n]; print(','.join(map(str,sorted(set(c+[n])))))")
note() { echo "$(date +%T) $*" | tee -a "$OUT/timeline.txt"; }
skip() { echo "SKIP $*" | tee -a "$S"; }  # a check this host cannot run, and why
# points_ok RESULTS: every point ok or waived, no wrong value; one line per status and workload.
points_ok() {
  python3 - "$1" <<'PY'
import collections, json, sys
run = json.load(open(sys.argv[1])); bad = []; by = collections.Counter()
for p in run["points"]:
    v = p.get("verification") or {}
    by[(p["workload"], p["gpus"], p["status"])] += 1
    if p["status"] not in ("ok", "waived") or v.get("wrong", 0) or v.get("ok") is False:
        bad.append(f'{p["index"]} {p["workload"]} gpus={p["gpus"]} {p["status"]} wrong={v.get("wrong")}: {p.get("message", "")[:120]}')
for (w, g, s), n in sorted(by.items()): print(f"{w} gpus={g} {s}: {n}")
print("\n".join(bad[:30])); print(f"{len(run['points'])} points, {len(bad)} not ok or wrong")
sys.exit(1 if bad or not run["points"] else 0)
PY
}
# slower_from_1mib COMPARE.json: the points `mgbench compare` calls slower, judged from 1 MiB up
# (and every point without a size); the launch-bound sizes below are listed, not judged.
slower_from_1mib() {
  python3 - "$1" <<'PY'
import json, sys
points = json.load(open(sys.argv[1])).get("points", [])
slower = [p for p in points if p.get("verdict") == "slower"]
judged = [p for p in slower if p.get("params", {}).get("bytes", 1 << 20) >= 1 << 20]
for p in slower:
    print("judged" if p in judged else "below 1 MiB", p["workload"], p["gpus"], "GPUs",
          json.dumps(p["params"], sort_keys=True), f'{100 * p["change"]:+.1f} %')
print(f"{len(points)} compared, {len(judged)} slower from 1 MiB up, {len(slower) - len(judged)} below")
sys.exit(1 if judged or not points else 0)
PY
}
sweep() {  # sweep NAME TIMEOUT ARGS...: one sweep into OUT/runs/NAME, its points checked
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$MG" sweep --out "$OUT/runs/$name" --db "$OUT/history.db" "$@" >"$OUT/$name.log" 2>&1
  check "sweep $name" $? "$(tail -n 1 "$OUT/$name.log")"
  points_ok "$OUT/runs/$name/results.json" >"$OUT/$name.points.txt" 2>&1
  check "$name: every point ok or waived, 0 wrong" $? "$(tail -n 1 "$OUT/$name.points.txt")"
}
note "GPUs $N, counts $COUNTS, profile $PROFILE, stages ${stages[*]}"
{ nvidia-smi; nvidia-smi topo -m; git log --oneline -1; } >"$OUT/host.txt" 2>&1
for stage in "${stages[@]}"; do
  note "stage $stage"
  case "$stage" in
    env)
      "$MG" info >"$OUT/info.txt" 2>&1; check "info" $?
      "$MG" info --json >"$OUT/info.json" 2>>"$OUT/info.txt"; check "info --json" $?
      timeout 300 "$MG" doctor >"$OUT/doctor.txt" 2>&1; check "doctor" $? ;;
    tests)
      timeout 900 ctest --test-dir "$BUILD" -L multi_gpu -j1 --timeout 300 --output-on-failure \
        --output-junit "$OUT/multi_gpu.xml" >"$OUT/multi_gpu.log" 2>&1
      check "ctest -L multi_gpu" $? "$(grep 'tests passed' "$OUT/multi_gpu.log")"
      timeout 600 ctest --test-dir "$BUILD" -L 'gpu|workloads' -LE multi_gpu -j4 --timeout 240 \
        --output-on-failure --output-junit "$OUT/gpu.xml" >"$OUT/gpu.log" 2>&1
      check "ctest -L gpu|workloads" $? "$(grep 'tests passed' "$OUT/gpu.log")" ;;
    sweep)
      sweep sweep 1800 --gpus "$COUNTS" --profile "$PROFILE"
      "$MG" report "$OUT/runs/sweep/results.json" --format md -o "$OUT/report.md" >/dev/null 2>&1
      check "report.md of the sweep (the note's tables)" $?
      sweep overlap_off 600 --gpus "$COUNTS" --workloads train_step,transformer_step \
        --param overlap=false --profile "$PROFILE" --no-report
      sweep baseline_each 600 --gpus "$COUNTS" --workloads gemm --profile quick --baseline each \
        --no-report ;;
    mpirun)
      q=(--gpus "$COUNTS" --profile quick --workloads "$COLLECTIVES,gemm" --no-report)
      sweep threads 600 "${q[@]}"
      sweep processes 600 "${q[@]}" --launcher mpirun
      "$MG" compare "$OUT/runs/threads/results.json" "$OUT/runs/processes/results.json" \
        >"$OUT/compare_threads_processes.txt" 2>&1
      "$MG" compare "$OUT/runs/threads/results.json" "$OUT/runs/processes/results.json" --json \
        >"$OUT/compare_threads_processes.json" 2>/dev/null
      slower_from_1mib "$OUT/compare_threads_processes.json" >"$OUT/compare_judged.txt" 2>&1
      check "threads vs processes: no point slower from 1 MiB up" $? \
        "$(tail -n 1 "$OUT/compare_judged.txt")" ;;
    datapath)
      sweep datapath 900 --gpus "$COUNTS" --workloads p2p,h2d,membw --param timing=device,graph \
        --no-report ;;
    crosscheck)
      src="${NCCL_TESTS_SRC:-$PWD/gpujob/nccl-tests}"
      if [[ ! -d $src ]]; then skip "crosscheck (no nccl-tests source at $src)"; continue; fi
      nccl_inc=$(sed -n 's/^NCCL_INCLUDE_DIR:PATH=//p' "$BUILD/CMakeCache.txt")
      nccl_lib=$(sed -n 's/^NCCL_LIBRARY:FILEPATH=//p' "$BUILD/CMakeCache.txt")
      nh="$OUT/nccl-home"; mkdir -p "$nh"
      ln -sfn "$nccl_inc" "$nh/include"; ln -sfn "$(dirname "$nccl_lib")" "$nh/lib"
      make -C "$src" -j"$(nproc)" MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME="$nh" \
        NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" >"$OUT/nccl-tests-build.log" 2>&1
      check "nccl-tests built" $?
      for g in ${COUNTS//,/ }; do
        [[ $g -lt 2 && $N -ge 2 ]] && continue  # one GPU: the 1-GPU comparison, for the plumbing
        timeout 900 scripts/crosscheck.sh --mgbench "$MG" --nccl-tests "$src" --gpus "$g" \
          --only "$COLLECTIVES" --repeats "${REPEATS:-4}" \
          --sizes 1024,65536,1048576,16777216,268435456 --out "$OUT/crosscheck-$g" \
          >"$OUT/crosscheck-$g.txt" 2>&1
        check "crosscheck at $g GPUs (1: a row beyond tolerance, timing data)" $?
      done ;;
    predict)
      [[ $N -le 2 ]] && { skip "predict (no count above 2 GPUs to predict)"; continue; }
      full="$OUT/runs/sweep/results.json"
      python3 scripts/multigpu_predict.py "$MG" "$full" "$OUT/predict" >"$OUT/predict.txt" 2>&1
      check "predict from 1-2 GPUs against the measured counts" $? "$(tail -n 1 "$OUT/predict.txt")" ;;
    screen)
      timeout 600 "$MG" screen --stages 1,2 --out "$OUT/runs/screen" --no-history \
        --exclude-list "$OUT/screen_exclude.txt" >"$OUT/screen.txt" 2>&1
      check "screen stages 1-2 (1: a GPU flagged)" $?
      [[ $N -lt 2 ]] && { skip "screen without the last GPU (one GPU)"; continue; }
      visible=$(python3 -c "print(','.join(str(i) for i in range($N - 1)))")
      CUDA_VISIBLE_DEVICES="$visible" timeout 600 "$MG" screen --stages 1,2 --no-history \
        --out "$OUT/runs/screen_less" >"$OUT/screen_less.txt" 2>&1
      check "screen without the last GPU (devices $visible)" $? ;;
  esac
done
note "all stages run"
fails=$(grep -c '^FAIL' "$S")
echo "MULTIGPU RESULT: $fails check(s) failed" | tee -a "$S"
[[ $fails -eq 0 ]]  # exit 0: every check passed; 1: one failed
