#!/usr/bin/env bash
# `mgbench accept --soak 2m` end to end (on one GPU the communication stage says so), then the
# saved result rendered again in Simplified Chinese (`--from ... --lang zh`: nothing measured
# again, the same exit code), the stages and items as results.json records them.
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
run="$OUT/runs/accept"
rm -rf "$run"
t0=$SECONDS
"$BIN/mgbench" accept --soak 2m --no-history --out "$run" >"$OUT/accept_en.txt" 2>"$OUT/accept_en.err"
rc_en=$?
[[ $rc_en == 0 || $rc_en == 1 ]]
check "accept --soak 2m ran (0 ready, 1 not ready)" $? "exit $rc_en, $((SECONDS - t0)) s"
"$BIN/mgbench" accept --from "$run/results.json" --lang zh --out "$run/zh" >"$OUT/accept_zh.txt" 2>&1
rc_zh=$?
[[ $rc_zh == "$rc_en" ]]; check "--from --lang zh: the same exit code" $? "exit $rc_zh"
grep -q 'lang="zh-CN"' "$run/zh/report.html"; check "Chinese report page" $?
python3 - "$run/results.json" >"$OUT/accept_items.txt" 2>&1 <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["accept"]
print("verdict:", a["verdict"], "| stopped after:", a["stopped_after"])
for s in a["stages"]:
    note = s["note"]["key"] if s["note"] else ""
    print(f"stage {s['id']:<14} {s['state']:<14} {s['wall_s']:7.1f} s {note}")
for i in a["items"]:
    print(f"item {i['status']:<5} {i['stage']:<14} {i['id']:<17} {i['subject']:<11}",
          i["measured"]["args"] if i["measured"] else "")
PY
check "results.json: stages and items" $? "$(head -1 "$OUT/accept_items.txt")"
