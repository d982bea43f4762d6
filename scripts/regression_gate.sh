#!/usr/bin/env bash
# Regression gate for a GPU host (e.g. a self-hosted CI runner): a baseline sweep recorded in the
# history database before a change (driver, CUDA, NCCL, firmware), a sweep after it, and
# `mgbench compare --junit` between the two. The exit code gates the CI job. Recipe and CI
# examples: docs/REGRESSION-TRACKING.md.
#
#   regression_gate.sh baseline [OPTIONS] [-- SWEEP ARGS...]   sweep, record, remember the run
#   regression_gate.sh check    [OPTIONS] [-- SWEEP ARGS...]   sweep, compare with the baseline
#
# Options:
#   --state DIR      where the gate keeps its files (default: ./regression-gate):
#                    baseline.id (history run id of the baseline), baseline.json, sweeps/,
#                    junit.xml, compare.txt
#   --db PATH        history database (default: mgbench's own, $XDG_DATA_HOME/mgbench/history.db)
#   --mgbench BIN    the mgbench binary (default: $MGBENCH, else mgbench on PATH)
#   --threshold PCT  minimum change to call a point slower (compare's --threshold, default 3)
#   --junit FILE     the JUnit XML (default: STATE/junit.xml)
# SWEEP ARGS go to `mgbench sweep` unchanged, and must be the same for baseline and check
# (e.g. -- --workloads gemm,allreduce --gpus 1,2,4,8 --profile quick).
#
# Exit: 0 no point slower · 1 a point is slower (regression; JUnit has a <failure> per point) ·
# 2 bad usage or no baseline yet · anything else: mgbench's own code (3 wrong results,
# 4 environment, 5 inconclusive), passed through: the job fails without a verdict.
set -uo pipefail

usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "regression_gate: $1" >&2; exit "${2:-2}"; }

mode="${1:-}"
[[ "$mode" == baseline || "$mode" == check ]] || { usage >&2; die "expected 'baseline' or 'check'"; }
shift
state="./regression-gate" db="" bin="${MGBENCH:-mgbench}" threshold="3" junit=""
while (($#)); do
  case "$1" in
    --state) state="${2:?--state needs a directory}"; shift 2 ;;
    --db) db="${2:?--db needs a path}"; shift 2 ;;
    --mgbench) bin="${2:?--mgbench needs a path}"; shift 2 ;;
    --threshold) threshold="${2:?--threshold needs a percentage}"; shift 2 ;;
    --junit) junit="${2:?--junit needs a file}"; shift 2 ;;
    --) shift; break ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
sweep_args=("$@")
command -v "$bin" >/dev/null 2>&1 || die "mgbench binary '$bin' not found (--mgbench or \$MGBENCH)" 4
mkdir -p "$state/sweeps" || die "cannot create $state" 4
db_args=()
[[ -n "$db" ]] && db_args=(--db "$db")
junit="${junit:-$state/junit.xml}"

# Runs one sweep into a fresh directory under STATE/sweeps and prints that directory.
sweep() {
  local out
  out="$state/sweeps/$1-$(date -u +%Y%m%dT%H%M%SZ)-$$"
  echo "regression_gate: $1 sweep -> $out" >&2
  "$bin" sweep "${sweep_args[@]}" "${db_args[@]}" --out "$out" -q >&2
  local rc=$?
  ((rc == 0)) || die "the $1 sweep failed (mgbench exit $rc); see $out" "$rc"
  [[ -f "$out/results.json" ]] || die "the $1 sweep wrote no $out/results.json" 4
  echo "$out"
}

# The history id of the run recorded from RESULTS (the latest run with its start time).
recorded_id() {
  local started
  started=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["started_at"])' "$1") ||
    die "cannot read $1" 4
  "$bin" history list --json "${db_args[@]}" | python3 -c '
import json, sys
runs = [r for r in json.load(sys.stdin) if r["started_at"] == sys.argv[1]]
if not runs: sys.exit("the sweep was not recorded in the history database")
print(runs[-1]["id"])' "$started" || die "run not found in the history database" 4
}

if [[ "$mode" == baseline ]]; then
  out=$(sweep baseline) || exit $?
  id=$(recorded_id "$out/results.json") || exit $?
  echo "$id" >"$state/baseline.id"
  echo "regression_gate: baseline is history run $id ($out)"
  exit 0
fi

[[ -s "$state/baseline.id" ]] || die "no baseline yet: run '$0 baseline' first (state: $state)"
id=$(<"$state/baseline.id")
"$bin" history export "$id" "${db_args[@]}" >"$state/baseline.json" ||
  die "cannot export baseline run $id from the history database" 4
out=$(sweep check) || exit $?
"$bin" compare "$state/baseline.json" "$out/results.json" --label baseline --label candidate \
  --threshold "$threshold" --junit "$junit" | tee "$state/compare.txt"
rc=${PIPESTATUS[0]}
case "$rc" in
  0) echo "regression_gate: PASS: no point slower than baseline run $id (JUnit: $junit)" ;;
  1) echo "regression_gate: FAIL: regression against baseline run $id (JUnit: $junit)" ;;
  *) echo "regression_gate: compare failed (exit $rc)" >&2 ;;
esac
exit "$rc"
