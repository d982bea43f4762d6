#!/usr/bin/env bash
# The history store with SQLite's runtime library only (loaded at run time), and the regression
# gate on this host: baseline, then check with the same arguments, exit 0.
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
DB="$OUT/history.db"
shared_results >/dev/null
{ ls /usr/include/sqlite3.h; ldconfig -p | grep sqlite; } >"$OUT/sqlite.txt" 2>&1
! ldd "$BIN/mgbench" | grep -qi sqlite; check "mgbench does not link SQLite" $?
"$BIN/mgbench" history list --db "$DB" >"$OUT/history_list.txt" 2>&1
"$BIN/mgbench" history list --db "$DB" --json 2>/dev/null |
  python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r and r[0]["points"] > 0 else 1)'
check "history list shows the run with its points" $? "$(tail -1 "$OUT/history_list.txt" | head -c 160)"
"$BIN/mgbench" history show last --db "$DB" >"$OUT/history_show.txt" 2>&1; check "history show last" $?
"$BIN/mgbench" history export last --format csv --db "$DB" >"$OUT/history.csv" 2>&1
check "history export" $? "$(wc -l <"$OUT/history.csv") lines"
"$BIN/mgbench" history trend --workload gemm --metric median_s --db "$DB" >/dev/null 2>&1
check "history trend" $?
mkfifo "$OUT/fifo.db"
timeout 20 "$BIN/mgbench" history list --db "$OUT/fifo.db" >/dev/null 2>"$OUT/fifo.err"
rc=$?; rm -f "$OUT/fifo.db"
[[ $rc == 2 ]]; check "history --db FIFO: exit 2 at once" $? "(exit $rc)"
MGBENCH_SQLITE_LIBRARY=/nonexistent/libsqlite3.so.0 "$BIN/mgbench" history list --db "$DB" \
  >/dev/null 2>"$OUT/nolib.err"
rc=$?
[[ $rc == 4 && $(wc -l <"$OUT/nolib.err") == 1 ]]; check "no SQLite library: exit 4, one line" $?
gate=(--state "$OUT/gate" --db "$OUT/gate.db" -- --workloads gemm --profile quick
      --max-time-per-point 0.2 --skip-doctor --no-report)
here="$(dirname "$0")/.."
MGBENCH="$BIN/mgbench" timeout 240 bash "$here/regression_gate.sh" baseline "${gate[@]}" \
  >"$OUT/gate_baseline.log" 2>&1
check "regression_gate.sh baseline" $?
MGBENCH="$BIN/mgbench" timeout 240 bash "$here/regression_gate.sh" check "${gate[@]}" \
  >"$OUT/gate_check.log" 2>&1
check "regression_gate.sh check: exit 0" $? "$(tail -1 "$OUT/gate_check.log" | head -c 160)"
rm -rf "$OUT/gate/sweeps"
