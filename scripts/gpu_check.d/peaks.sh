#!/usr/bin/env bash
# % of peak on every headline, against the GPU model's datasheet row (docs/METHODOLOGY.md).
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
"$BIN/mgbench" info >"$OUT/info.txt" 2>&1
check "info names the GPU model's row" $? "$(grep -i -A1 'GPU model' "$OUT/info.txt" | tr '\n' ' ' | head -c 200)"
results=$(shared_results)
grep -q "% of peak" "$OUT/example.log" 2>/dev/null; check "console tables show % of peak" $?
python3 - "$results" >"$OUT/peaks.txt" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); pk = d["peaks"]; pts = {p["index"]: p for p in d["points"]}
print("model:", (pk.get("gpu_model") or {}).get("id"))
seen = set()
for s in pk["shares"]:
    p = pts[s["point"]]; seen.add(p["workload"]); e = s.get("expected")
    v = "" if not e else (" BELOW %.4g: %s" % (e["low"], "; ".join(s.get("causes", []))) if s.get("below") else " within (low %.4g)" % e["low"])
    q = {k: x for k, x in p["params"].items() if k not in ("timing", "cache")}
    print("%-10s %-16s %-60s %9.4g of %8.4g = %5.1f %%%s" % (p["workload"], s["metric"], json.dumps(q)[:60], s["value"], s["peak"], 100 * s["fraction"], v))
ok = {p["workload"] for p in d["points"] if p["status"] == "ok"}
missing = sorted(w for w in ("gemm", "membw", "h2d", "train_step") if w in ok and w not in seen)
print("workloads with shares:", sorted(seen), "missing:", missing)
sys.exit(1 if missing else 0)
PY
check "results.json: a share of peak for every workload" $? "$(tail -1 "$OUT/peaks.txt")"
"$BIN/mgbench" report "$results" --format md -o "$OUT/peaks_report.md" >/dev/null 2>&1
grep -q "% of peak" "$OUT/peaks_report.md"; check "report re-renders % of peak" $?
