#!/usr/bin/env bash
# mgbench predict: train_step's compute composed from the same run's GEMM, memory and host-copy
# points against its measured step time (aim: within 10 %).
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
results=$(shared_results)
"$BIN/mgbench" predict "$results" --workload train_step --gpus 1,2,4,8,16 --intra nvlink4 \
  >"$OUT/predict.txt" 2>&1
check "predict table" $?
"$BIN/mgbench" predict "$results" --workload train_step --gpus 1,8 --intra nvlink4 --json \
  >"$OUT/predict.json" 2>"$OUT/predict.err"
python3 - "$OUT/predict.json" >"$OUT/predict_check.txt" 2>&1 <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); bad = 0
for c in p["compute_checks"]:
    q = c["params"]; e = c["error"]; bad += abs(e) > 0.10
    print(f"{q['dtype']} batch {q['batch']}: measured {c['measured_s']*1e3:.3f} ms, composed "
          f"{c['composed_s']*1e3:.3f} ms, error {e*100:+.1f} %")
print(f"{len(p['compute_checks'])} configurations, {bad} beyond 10 %")
sys.exit(1 if bad or not p["compute_checks"] else 0)
PY
check "predicted compute within 10 %" $? "$(tail -1 "$OUT/predict_check.txt")"
