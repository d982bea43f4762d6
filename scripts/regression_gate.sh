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
#   --allow-missing  baseline points the check did not measure (e.g. fewer GPU counts) are
#                    listed but do not fail the gate
# SWEEP ARGS go to `mgbench sweep` unchanged, and must be the same for baseline and check
# (e.g. -- --workloads gemm,allreduce --gpus 1,2,4,8 --profile quick).
#
# Exit: 0 no point slower · 1 a point is slower (regression; JUnit has a <failure> per point) ·
# 2 bad usage or no baseline yet · 5 a baseline point the check did not measure (listed, and a
# <failure type="missing"> each in JUnit), unless --allow-missing · anything else: mgbench's own
# code (3 wrong results, 4 environment, 5 inconclusive), passed through: the job fails without
# a verdict.
set -uo pipefail

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "regression_gate: $1" >&2; exit "${2:-2}"; }

mode="${1:-}"
[[ "$mode" == baseline || "$mode" == check ]] || { usage >&2; die "expected 'baseline' or 'check'"; }
shift
state="./regression-gate" db="" bin="${MGBENCH:-mgbench}" threshold="3" junit="" allow_missing=0
while (($#)); do
  case "$1" in
    --state) state="${2:?--state needs a directory}"; shift 2 ;;
    --db) db="${2:?--db needs a path}"; shift 2 ;;
    --mgbench) bin="${2:?--mgbench needs a path}"; shift 2 ;;
    --threshold) threshold="${2:?--threshold needs a percentage}"; shift 2 ;;
    --junit) junit="${2:?--junit needs a file}"; shift 2 ;;
    --allow-missing) allow_missing=1; shift ;;
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

# The baseline lives in the history database: fail before the sweep when it cannot be read
# (mgbench prints why, e.g. no SQLite runtime library: exit 4).
"$bin" history list "${db_args[@]}" >/dev/null ||
  die "cannot read the history database (mgbench exit $?); see above" 4

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
  --threshold "$threshold" --junit "$junit" --report "$state/compare.json" |
  tee "$state/compare.txt"
rc=${PIPESTATUS[0]}

# Baseline points the check did not measure (compare's only_in_base): one line each, and a
# testcase each in the JUnit file, a <failure type="missing"> unless --allow-missing.
missing=0
if [[ -f "$state/compare.json" && -f "$junit" ]]; then
  missing=$(python3 - "$state/compare.json" "$junit" "$allow_missing" <<'PY'
import json, sys
import xml.etree.ElementTree as ET

comparison, junit, allowed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
points = json.load(open(comparison)).get("only_in_base", [])
for p in points:
    params = " ".join(f"{k}={v}" for k, v in sorted(p.get("params", {}).items()))
    print(f"regression_gate: not measured by the check: {p['workload']} {params} "
          f"on {p['gpus']} GPU(s) (baseline {p['status']})".replace("  ", " "), file=sys.stderr)
if points:
    tree = ET.parse(junit)
    root = tree.getroot()
    kind = "skipped" if allowed else "failure"
    suite = ET.SubElement(root, "testsuite", name="not measured by the check",
                          tests=str(len(points)), errors="0", time="0",
                          failures="0" if allowed else str(len(points)),
                          skipped=str(len(points)) if allowed else "0")
    for p in points:
        params = " ".join(f"{k}={v}" for k, v in sorted(p.get("params", {}).items()))
        case = ET.SubElement(suite, "testcase", classname=p["workload"], time="0",
                             name=f"{params} gpus={p['gpus']}".strip())
        message = "in the baseline, not measured by the check" + (
            " (allowed by --allow-missing)" if allowed else "")
        element = ET.SubElement(case, kind, message=message)
        if not allowed:
            element.set("type", "missing")
    for counter, add in (("tests", len(points)),
                         ("failures" if not allowed else "skipped", len(points))):
        root.set(counter, str(int(root.get(counter, "0")) + add))
    ET.indent(tree)
    tree.write(junit, encoding="UTF-8", xml_declaration=True)
    with open(junit, "a", encoding="utf-8") as f:
        f.write("\n")
print(len(points))
PY
) || die "cannot read $state/compare.json or $junit" 4
fi
unmeasured=0
if ((missing > 0 && allow_missing)); then
  echo "regression_gate: $missing baseline point(s) not measured by the check (allowed by --allow-missing)"
elif ((missing > 0)); then
  echo "regression_gate: $missing baseline point(s) not measured by the check (--allow-missing accepts that)"
  ((rc == 0)) && unmeasured=1 rc=5
fi
case "$rc" in
  0) echo "regression_gate: PASS: no point slower than baseline run $id (JUnit: $junit)" ;;
  1) echo "regression_gate: FAIL: regression against baseline run $id (JUnit: $junit)" ;;
  *) if ((unmeasured)); then
       echo "regression_gate: FAIL: the check did not measure every point of baseline run $id (JUnit: $junit)"
     else
       echo "regression_gate: compare failed (exit $rc)" >&2
     fi ;;
esac
exit "$rc"
