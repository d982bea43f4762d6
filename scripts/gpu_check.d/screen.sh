#!/usr/bin/env bash
# issue 37 (`mgbench screen`) on a host with one H200, from the repository root, build/ci built.
# Expected run time: about 1 minute (well under 2).
#
#  1. `mgbench screen --dry-run`: the schedule of one host (stage 1's three launches; stage 2 and
#     stage 3 left out with notes: two GPUs, two nodes) and its estimate.
#  2. `mgbench screen` for real: stage 1 (gemm bf16 8192 cuBLAS, membw copy 1 GiB, h2d pinned
#     256 MiB) on the one GPU. One GPU has no peer, so nothing can be flagged: exit 0, and the
#     console says "Nothing to compare"; the figures table shows the three numbers.
#  3. The same binary's fake 8-GPU fleet with one GPU 30 % slower (test hooks, no GPU used): exit
#     1 naming exactly that GPU, to show on this host what a flagged GPU looks like.
# Everything lands in $OUT/screen/: the console outputs, results.json, report.html, the exclude list,
# and summary.txt whose lines start with PASS or FAIL (all PASS = pass).
set -u
# A step of scripts/gpu_check.sh (BIN_DIR OUT_DIR), run from the repository root.
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
own_summary screen
BIN="$BIN/mgbench"

nvidia-smi -L > "$OUT_DIR/gpus.txt" 2>&1
"$BIN" --version > "$OUT_DIR/version.txt" 2>&1

# 1. The schedule.
timeout 120 "$BIN" screen --dry-run > "$OUT_DIR/dry_run.txt" 2> "$OUT_DIR/dry_run.err"
rc=$?
check "dry-run exits 0 (rc=$rc)" $((rc != 0))
grep -q "Screen: 1 node(s) x 1 GPU(s), 3 launch(es), estimated" "$OUT_DIR/dry_run.txt"
check "dry-run: one node, one GPU, three launches" $?
grep -q "needs two GPUs on a node" "$OUT_DIR/dry_run.txt"
check "dry-run: stage 2 left out with a note" $?

# 2. The real screen of this host.
rm -rf "$OUT_DIR/screen"
start=$(date +%s)
timeout 300 "$BIN" screen --out "$OUT_DIR/screen" --no-history \
  --exclude-list "$OUT_DIR/screen/exclude.txt" > "$OUT_DIR/screen.txt" 2> "$OUT_DIR/screen.err"
rc=$?
say "screen took $(( $(date +%s) - start )) s"
check "screen exits 0 (rc=$rc)" $((rc != 0))
grep -q "Nothing to compare" "$OUT_DIR/screen.txt"
check "console: nothing to compare on one GPU" $?
cp "$OUT_DIR/screen/results.json" "$OUT_DIR/results.json" 2>/dev/null
cp "$OUT_DIR/screen/report.html" "$OUT_DIR/report.html" 2>/dev/null
python3 - "$OUT_DIR/results.json" >> "$SUMMARY" 2>&1 <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
s = run["screen"]
def check(name, ok):
    print(("PASS " if ok else "FAIL ") + name)
check("settings.mode is screen", run["settings"].get("mode") == "screen")
check("one node, status ok", len(s["nodes"]) == 1 and s["nodes"][0]["status"] == "ok")
figs = {f["metric"]: f for f in s["figures"]}
print("figures:", {k: (round(v["value"], 1), v["unit"]) for k, v in figs.items()})
check("three stage-1 figures (gemm, membw, h2d)", sorted(figs) == ["gemm", "h2d", "membw"])
check("gemm bf16 8192 above 300 TFLOP/s", figs.get("gemm", {}).get("value", 0) > 300)
check("membw above 2000 GB/s", figs.get("membw", {}).get("value", 0) > 2000)
check("h2d above 20 GB/s", figs.get("h2d", {}).get("value", 0) > 20)
check("no finding", s["findings"] == [])
check("every point ok", all(p["status"] == "ok" for p in run["points"]))
print("notes:", s["notes"])
EOF
heatmaps=$(grep -c "class=\"chart heatmap\"" "$OUT_DIR/report.html" 2>/dev/null)
echo "${heatmaps:-0}" > "$OUT_DIR/heatmaps.txt"
[ "${heatmaps:-0}" -ge 1 ]
check "report.html holds a heat map" $?
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 scripts/validate_results.py harness/schema/results.schema.json "$OUT_DIR/results.json" \
    > "$OUT_DIR/schema.txt" 2>&1
  check "results.json validates against the schema" $?
else
  say "SKIP schema (no python3 jsonschema)"
fi

# 3. The fake fleet on this host: what a flagged GPU looks like (no GPU involved).
rm -rf "$OUT_DIR/fake"
MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=8 MGBENCH_TEST_SCREEN_FAULT=gpu:5@0.3 \
  timeout 120 "$BIN" screen --out "$OUT_DIR/fake" --no-history --no-report \
  --exclude-list "$OUT_DIR/fake_exclude.txt" > "$OUT_DIR/fake.txt" 2> "$OUT_DIR/fake.err"
rc=$?
check "fake fleet with a slow GPU exits 1 (rc=$rc)" $((rc != 1))
grep -q ":5$" "$OUT_DIR/fake_exclude.txt"
check "fake fleet: the exclude list names GPU 5" $?
rm -rf "$OUT_DIR/fake" "$OUT_DIR/screen/report_charts"
echo "---- screen.txt"; cat "$OUT_DIR/screen.txt"
echo "---- summary"; cat "$SUMMARY"
