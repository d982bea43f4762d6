#!/usr/bin/env bash
# The README's main command on this host (issue 32): `scripts/run.sh --profile quick` builds the
# release preset's mgbench only and runs the sweep, recorded in the default history store; then
# `mgbench history list` shows that run, with no SQLite headers needed on the host.
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
root="$(cd "$(dirname "$0")/../.." && pwd)"
{ ls /usr/include/sqlite3.h; ldconfig -p | grep sqlite; } >"$OUT/readme_sqlite.txt" 2>&1
t0=$SECONDS
timeout 540 "$root/scripts/run.sh" --profile quick >"$OUT/readme_run.log" 2>&1
check "scripts/run.sh --profile quick" $? "$((SECONDS - t0)) s: $(tail -1 "$OUT/readme_run.log" | head -c 160)"
ls "$root/build/release/bin" >"$OUT/readme_bins.txt" 2>&1
[[ $(wc -l <"$OUT/readme_bins.txt") -le 2 ]]
check "the release build holds mgbench only" $? "$(tr '\n' ' ' <"$OUT/readme_bins.txt")"
"$root/build/release/bin/mgbench" history list >"$OUT/readme_history.txt" 2>&1
"$root/build/release/bin/mgbench" history list --json 2>/dev/null |
  python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r and r[-1]["points"] > 0 else 1)'
check "history list shows the run with its points" $? "$(tail -1 "$OUT/readme_history.txt" | head -c 160)"
