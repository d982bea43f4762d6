#!/usr/bin/env bash
# GEMM batch points (M = batch, N = K = hidden) weak and strong: params batch/hidden, TFLOP/s =
# 2·B·H·H / t, a strong series with its global batch, and the verdicts `report` recomputes.
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
for mode in weak strong; do
  "$BIN/mgbench" sweep --workloads gemm --batch-sizes 2048 --gpus 1 --scaling "$mode" \
    --profile quick --param dtype=bf16 --param impl=cublas,mgbench --no-history --no-report \
    --out "$OUT/runs/batch_$mode" >"$OUT/batch_$mode.log" 2>&1
  check "gemm batch sweep ($mode)" $?
  python3 - "$OUT/runs/batch_$mode/results.json" >"$OUT/batch_$mode.txt" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pts = [p for p in d["points"] if p["workload"] == "gemm" and p["params"].get("shape") == "batch"]
assert pts, "no batch point"
for p in pts:
    q = p["params"]; assert p["status"] == "ok", p["message"]
    assert q.get("batch") == 2048 and "m" not in q, q
    assert p["verification"].get("ok") is True
    want = 2 * 2048 * q["hidden"] * q["hidden"] / p["stats"]["median"] / 1e12
    assert abs(p["metrics"]["tflops_per_gpu"] / want - 1) < 1e-6
    print(q["impl"], "hidden", q["hidden"], round(p["metrics"]["tflops_per_gpu"], 1), "TFLOP/s")
print("series:", [s["params"].get("global_batch", s["params"].get("batch")) for s in d["scaling"]])
PY
  check "gemm batch points ($mode)" $? "$(tr '\n' ' ' <"$OUT/batch_$mode.txt" | head -c 200)"
done
"$BIN/mgbench" report "$OUT/runs/batch_strong/results.json" --format text -o - \
  >"$OUT/batch_report.txt" 2>&1
check "report recomputes the verdicts" $?
