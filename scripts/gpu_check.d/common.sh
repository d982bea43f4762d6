# shellcheck shell=bash
# Sourced by the steps of scripts/gpu_check.sh: BIN (the build's bin directory), OUT (the
# output directory), one PASS/FAIL line per check on stdout and in OUT/summary.txt, and the
# sweep the peaks, predict and history steps share.
BIN="$(realpath "$1")"
OUT="$(realpath -m "$2")"
mkdir -p "$OUT/runs"
check() {  # check NAME RC [DETAIL]
  local line
  if [[ "$2" == 0 ]]; then line="PASS $1 ${3:-}"; else line="FAIL $1 (rc $2) ${3:-}"; fi
  echo "$line" | tee -a "$OUT/summary.txt"
}
# The default profile of every workload but all-reduce (whose 112 one-rank points the gpu test
# label covers), recorded in OUT/history.db; the `example` step's full sweep is used instead
# when it ran first. Prints the results file (the check line goes to stderr).
shared_results() {
  local dir="$OUT/runs/example"
  if [[ ! -f "$dir/results.json" ]]; then
    timeout 420 "$BIN/mgbench" sweep --gpus 1 --workloads gemm,membw,h2d,train_step,p2p \
      --db "$OUT/history.db" --out "$dir" >"$OUT/example.log" 2>&1
    check "default-profile sweep" $? >&2
  fi
  echo "$dir/results.json"
}
# A step whose checks go to a folder of its own: OUT_DIR = OUT/NAME and its summary.txt, where
# `say` writes a line and `check NAME RC` one PASS or FAIL line.
own_summary() {  # own_summary NAME
  OUT_DIR="$OUT/$1"
  mkdir -p "$OUT_DIR"
  SUMMARY="$OUT_DIR/summary.txt"
  : >"$SUMMARY"
  say() { echo "$*" | tee -a "$SUMMARY"; }
  check() { if [ "$2" -eq 0 ]; then say "PASS $1"; else say "FAIL $1"; fi; }
}
