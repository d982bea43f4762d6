#!/usr/bin/env bash
# issue 31 (typed plan for --resume, launcher interface, printer interface) on a host with one
# H200, from the repository root, build/ci built. Expected run time: about 2 minutes (under 3).
#
#  1. local-resume   a real sweep (allreduce + gemm, quick) stopped after 1 point by the journal
#                    hook, the journal header's argv made unreadable (42), then `--resume` with no
#                    plan option: exit 0, every point ok or waived, as many points as a dry run
#                    of the same plan, and the log says it resumed with the journal's plan.
#  2. hostile-plan   the same journal with plan_options.gpus = [-1]: exit 2, one stderr line
#                    naming --gpus, results.json unchanged.
#  3. mpirun-resume  the same with --launcher mpirun (--allow-run-as-root through --launcher-arg),
#                    stopped after 1 point, resumed WITHOUT --launcher on the command line: the
#                    plan's launcher (mpirun) is taken from the journal: every point ok or waived,
#                    every point's process_model "processes" (a process per GPU).
#  4. formats        `mgbench report` of run 1 with --format html, md, csv, text, prom, gbench:
#                    exit 0 and a non-empty file each; --format bogus: exit 2, one line listing
#                    "html, md, csv, text, prom or gbench".
# Everything lands in $OUT/resume/; summary.txt has one PASS or FAIL line per check (all PASS = pass).
set -u
# A step of scripts/gpu_check.sh (BIN_DIR OUT_DIR), run from the repository root.
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
own_summary resume
BIN="$BIN/mgbench"
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
nvidia-smi -L >"$OUT_DIR/gpus.txt" 2>&1
plan=(--workloads allreduce,gemm --param size=1024 --param bytes=1024 --gpus 1 --profile quick
      --warmup 0.1 --no-history --no-report)

# Points of a results.json: "index workload status process_model", one a line.
points() {
  python3 - "$1" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for p in run["points"]:
    print(p["index"], p["workload"], p["status"], p.get("process_model"))
PY
}
# Edits the journal's header in place: python expression on `run` (the header's run object).
edit_header() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, code = sys.argv[1], sys.argv[2]
lines = open(path).read().splitlines()
h = json.loads(lines[0]); run = h["run"]; exec(code); lines[0] = json.dumps(h)
open(path, "w").write("\n".join(lines) + "\n")
PY
}
all_ok() { [ -s "$1" ] && ! grep -v ' ok \| waived ' "$1" | grep -q .; }

# 1. Local sweep stopped after one point; argv unreadable; resume.
rm -rf "$OUT_DIR/r1"
MGBENCH_TEST_JOURNAL_FAIL_AFTER=1 timeout 200 "$BIN" sweep "${plan[@]}" --out "$OUT_DIR/r1" \
  >"$OUT_DIR/r1-first.out" 2>"$OUT_DIR/r1-first.err"
echo "first rc=$?" >>"$OUT_DIR/r1-first.err"
edit_header "$OUT_DIR/r1/journal.jsonl" 'run["argv"] = 42'
timeout 200 "$BIN" sweep --resume "$OUT_DIR/r1" >"$OUT_DIR/r1.out" 2>"$OUT_DIR/r1.err"
rc=$?
points "$OUT_DIR/r1/results.json" >"$OUT_DIR/r1_points.txt" 2>&1
n=$(wc -l <"$OUT_DIR/r1_points.txt")
all_ok "$OUT_DIR/r1_points.txt"; ok=$?
grep -q "with the plan of its journal" "$OUT_DIR/r1.err"; logged=$?
check "local-resume rc=$rc points=$n logged=$logged" \
  $((rc != 0 || ok != 0 || logged != 0 || n < 2))
cp "$OUT_DIR/r1/journal.jsonl" "$OUT_DIR/r1-journal.jsonl"

# 2. A hostile plan is refused.
rm -rf "$OUT_DIR/r2" && cp -r "$OUT_DIR/r1" "$OUT_DIR/r2"
python3 - "$OUT_DIR/r2/journal.jsonl" <<'PY'
import sys
p = sys.argv[1]; lines = open(p).read().splitlines(); open(p, "w").write("\n".join(lines[:-1]) + "\n")
PY
edit_header "$OUT_DIR/r2/journal.jsonl" 'run["plan_options"]["gpus"] = [-1]'
sum_before=$(md5sum <"$OUT_DIR/r2/results.json")
timeout 60 "$BIN" sweep --resume "$OUT_DIR/r2" >"$OUT_DIR/r2.out" 2>"$OUT_DIR/r2.err"
rc=$?
lines=$(wc -l <"$OUT_DIR/r2.err")
sum_after=$(md5sum <"$OUT_DIR/r2/results.json")
grep -q -- "--gpus" "$OUT_DIR/r2.err"; named=$?
check "hostile-plan rc=$rc stderr_lines=$lines: $(head -c 200 "$OUT_DIR/r2.err")" \
  $((rc != 2 || lines != 1 || named != 0)) 
check "hostile-plan results.json unchanged" $([ "$sum_before" = "$sum_after" ]; echo $?)

# 3. mpirun: the plan's launcher comes from the journal.
rm -rf "$OUT_DIR/r3"
MGBENCH_TEST_JOURNAL_FAIL_AFTER=1 timeout 240 "$BIN" sweep "${plan[@]}" --launcher mpirun \
  --launcher-arg=--allow-run-as-root --out "$OUT_DIR/r3" >"$OUT_DIR/r3-first.out" \
  2>"$OUT_DIR/r3-first.err"
echo "first rc=$?" >>"$OUT_DIR/r3-first.err"
# No --launcher and no --launcher-arg here (a launcher word needs --launcher on the command line,
# as before): root consent through OpenMPI's own variables instead.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 240 "$BIN" sweep \
  --resume "$OUT_DIR/r3" >"$OUT_DIR/r3.out" 2>"$OUT_DIR/r3.err"
rc=$?
points "$OUT_DIR/r3/results.json" >"$OUT_DIR/r3_points.txt" 2>&1
all_ok "$OUT_DIR/r3_points.txt"; ok=$?
grep -v ' processes$' "$OUT_DIR/r3_points.txt" | grep -q .; other_model=$?
check "mpirun-resume rc=$rc points=$(wc -l <"$OUT_DIR/r3_points.txt") all_ok=$ok" \
  $((rc != 0 || ok != 0))
check "mpirun-resume every point a process per GPU" $((other_model == 0))

# 4. Every format from the registry.
for f in html md csv text prom gbench; do
  timeout 60 "$BIN" report "$OUT_DIR/r1/results.json" --format "$f" -o "$OUT_DIR/report.$f" \
    >"$OUT_DIR/report-$f.out" 2>&1
  rc=$?
  check "format $f rc=$rc size=$(stat -c %s "$OUT_DIR/report.$f" 2>/dev/null || echo 0)" \
    $((rc != 0)) 
  [ -s "$OUT_DIR/report.$f" ] || say "FAIL format $f: empty or missing"
done
timeout 30 "$BIN" report "$OUT_DIR/r1/results.json" --format bogus >"$OUT_DIR/bogus.out" \
  2>"$OUT_DIR/bogus.err"
rc=$?
grep -q "html, md, csv, text, prom or gbench" "$OUT_DIR/bogus.err"; listed=$?
check "format bogus rc=$rc lines=$(wc -l <"$OUT_DIR/bogus.err")" $((rc != 2 || listed != 0))
rm -rf "$OUT_DIR/report.md" "$OUT_DIR"/report_charts  # charts: not needed back
echo "done" >>"$SUMMARY"
