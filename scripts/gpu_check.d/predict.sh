#!/usr/bin/env bash
# mgbench predict: train_step's compute composed from the same run's GEMM, memory and host-copy
# points against its measured step time, then transformer_step's (llama3-8b, 2 layers, 8192
# tokens) from a run of its layer's GEMM shapes, attention's included, and membw (aim: within
# 10 % each; tests/data/h200-transformer holds such a run).
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

S=8192x6144x4096,8192x4096x4096,8192x28672x4096,8192x4096x14336,8192x4096x6144,8192x4096x28672
S+=,8192x14336x4096,6144x4096x8192,4096x4096x8192,28672x4096x8192,4096x14336x8192
S+=,4096x4096x128,128x4096x4096
timeout 240 "$BIN/mgbench" sweep --gpus 1 --workloads gemm,membw,transformer_step \
  --param dtype=bf16 --param size=8192 --param shape="$S" --param model=llama3-8b \
  --param layers=2 --param seq=4096 --param strategy=ddp,fsdp --param batch=2 --warmup 0.3 \
  --max-time-per-point 0.6 --skip-doctor --no-history --out "$OUT/runs/transformer_predict" \
  >"$OUT/transformer_predict.log" 2>&1
check "transformer_step sweep with its GEMM shapes" $?
"$BIN/mgbench" predict "$OUT/runs/transformer_predict/results.json" --workload transformer_step \
  --gpus 1,8 --intra nvlink4 --json >"$OUT/transformer_predict.json" 2>>"$OUT/predict.err"
python3 - "$OUT/transformer_predict.json" >"$OUT/transformer_predict_check.txt" 2>&1 <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); bad = 0
for c in p["compute_checks"]:
    e = c["error"]; bad += abs(e) > 0.10
    print(f"{c['params']['strategy']}: measured {c['measured_s']*1e3:.2f} ms, composed "
          f"{c['composed_s']*1e3:.2f} ms, error {e*100:+.1f} %")
print(f"{len(p['compute_checks'])} configurations, {bad} beyond 10 %")
sys.exit(1 if bad or len(p["compute_checks"]) != 2 else 0)
PY
check "transformer_step compute within 10 %" $? "$(tail -1 "$OUT/transformer_predict_check.txt")"
