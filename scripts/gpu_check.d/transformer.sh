#!/usr/bin/env bash
# transformer_step on one GPU:
#  1. its GPU tests (small configurations against the FP64 reference, ddp and fsdp, bf16 and
#     fp16, accumulation, no overlap, breakdown, memory estimate, an OOM point);
#  2. each preset with a layer count that fits, for the strategies one GPU allows (ddp, fsdp run
#     one-rank collectives), bf16, seq 4096: llama3-1b 4 layers, llama3-8b 2 layers (micro-batch
#     2, and 4 with 2 accumulation steps), llama3-70b 1 layer; MFU, tokens/s, peak memory and the
#     breakdown as OUT/table.md;
#  3. the 8B layer's eleven distinct GEMMs at 8192 tokens (gemm shape=MxNxK), OUT/gemm.md;
#  4. if time remains, the largest llama3-1b micro-batch that fits (informational).
# About 3.5 minutes.
set -u
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
O="$OUT/transformer"
mkdir -p "$O"
S="$OUT/summary.txt"
start=$(date +%s)
step() { check "$@"; }
# 1. GPU tests (each case prints its duration).
if [[ -n "${MGBENCH_CHECK_SKIP_GPU_TESTS:-}" ]]; then  # they ran in an earlier labels step
  echo "SKIP gpu tests [transformer] (MGBENCH_CHECK_SKIP_GPU_TESTS)" | tee -a "$S"
else
  timeout 150 "$BIN/mgbench_gpu_tests" "[transformer]" --durations yes >"$O/gpu_tests.log" 2>&1
  step "gpu tests [transformer]" $? "$(grep -E 'test cases|assertions' "$O/gpu_tests.log" | tail -1)"
fi

# 2. Presets. Common: one GPU, bf16, seq 4096, ddp and fsdp, 0.5 s warm-up, at most 2 s of samples.
# shellcheck disable=SC2054  # the commas are --param lists
COMMON=(--gpus 1 --workloads transformer_step --param dtype=bf16 --param seq=4096
        --param strategy=ddp,fsdp --warmup 0.5 --max-time-per-point 2 --min-samples 5
        --skip-doctor --no-history -q)
run_preset() {  # run_preset NAME MODEL LAYERS BATCHES ACCUM
  timeout 120 "$BIN/mgbench" sweep "${COMMON[@]}" --param model="$2" --param layers="$3" \
    --param batch="$4" --param accum="$5" --out "$O/$1" >"$O/$1.log" 2>&1
  step "sweep $1 ($2, $3 layers, batch $4, accum $5)" $? "$(tail -1 "$O/$1.log" | head -c 160)"
}
run_preset 1b llama3-1b 4 2 1
run_preset 8b llama3-8b 2 2 1
run_preset 8b-acc llama3-8b 2 4 2
run_preset 70b llama3-70b 1 2 1

python3 - "$O" >"$O/table.md" 2>"$O/table.err" <<'PY'
import json, os, sys
o = sys.argv[1]
rows, bad = [], []
for name in ["1b", "8b", "8b-acc", "70b"]:
    path = os.path.join(o, name, "results.json")
    if not os.path.exists(path):
        bad.append(name + ": no results.json"); continue
    d = json.load(open(path))
    shares = {(s["point"], s["metric"]): s for s in d.get("peaks", {}).get("shares", [])}
    for p in d["points"]:
        if p["workload"] != "transformer_step": continue
        pr, m, v = p["params"], p.get("metrics", {}), p.get("verification", {})
        sh = shares.get((p["index"], "model_tflops_per_gpu"))
        mfu = sh["fraction"] if sh else None
        peak = max(p.get("memory", {}).get("peak_bytes", [0]) or [0])
        rows.append("| {} | {} | {} | {}x{} | {} | {:.1f} ms | {:,.0f} | {:.1f} | {} | {:.1f} GiB | {:.1f} / {:.1f} / {:.1f} ms | {} | {} |".format(
            pr["model"], pr["layers"], pr["strategy"], pr["batch"], pr["accum"], p["status"],
            1e3 * m.get("step_time_s", float("nan")), m.get("tokens_per_s", float("nan")),
            m.get("model_tflops_per_gpu", float("nan")),
            "{:.1f} %".format(100 * mfu) if mfu is not None else "?", peak / 2**30,
            1e3 * m.get("compute_only_s", float("nan")), 1e3 * m.get("exposed_comm_s", float("nan")),
            1e3 * m.get("optimizer_s", float("nan")),
            "{:.2g}/{:.2g}".format(v.get("grad_rel_l2", float("nan")), v.get("grad_tolerance", float("nan"))),
            p.get("message", "")[:80]))
        if p["status"] != "ok" or not v.get("ok"): bad.append("{} {}: {} {}".format(name, pr["strategy"], p["status"], p.get("message", "")))
print("| model | layers | strategy | batch x accum | status | step | tokens/s | model TFLOP/s | MFU | peak mem | compute / exposed comm / optimizer | grad err/tol | message |")
print("|---|---:|---|---|---|---:|---:|---:|---:|---:|---|---|---|")
print("\n".join(rows))
for b in bad: print("BAD", b, file=sys.stderr)
sys.exit(1 if bad or not rows else 0)
PY
step "every preset point ok and verified (table.md)" $? "$(head -c 300 "$O/table.err")"
cat "$O/table.md" >>"$S"

# 3. The 8B layer's GEMMs at 8192 tokens (C[M,N] = A[M,K] B[N,K]^T): forward, input gradient and
# weight gradient of QKV, output, gate/up and down (M x N x K).
SHAPES=8192x6144x4096,8192x4096x4096,8192x28672x4096,8192x4096x14336
SHAPES+=,8192x4096x6144,8192x4096x28672,8192x14336x4096
SHAPES+=,6144x4096x8192,4096x4096x8192,28672x4096x8192,4096x14336x8192
elapsed=$(( $(date +%s) - start ))
if (( elapsed < 170 )); then
  timeout $(( 225 - elapsed )) "$BIN/mgbench" sweep --gpus 1 --workloads gemm --param impl=cublas \
    --param dtype=bf16 --param size=8192 --param shape="$SHAPES" --warmup 0.3 \
    --max-time-per-point 1 --skip-doctor --no-history -q --out "$O/gemm" >"$O/gemm.log" 2>&1
  step "gemm shape sweep" $? "$(tail -1 "$O/gemm.log" | head -c 160)"
  python3 - "$O/gemm/results.json" >"$O/gemm.md" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
shares = {(s["point"], s["metric"]): s for s in d.get("peaks", {}).get("shares", [])}
print("| shape MxNxK | status | TFLOP/s | % of peak |")
print("|---|---|---:|---:|")
for p in d["points"]:
    sh = shares.get((p["index"], "tflops_per_gpu"))
    print("| {} | {} | {:.1f} | {} |".format(p["params"].get("shape"), p["status"],
          p.get("metrics", {}).get("tflops_per_gpu", float("nan")),
          "{:.1f}".format(100 * sh["fraction"]) if sh else "?"))
PY
  cat "$O/gemm.md" >>"$S"
else
  step "gemm shape sweep skipped: ${elapsed} s elapsed" 1
fi

# 4. If time remains: the largest micro-batch of llama3-1b (4 layers, ddp) that fits, by the
# existing out-of-memory probing (--batch-sizes auto: 1, 2, 4, ... until one is oom).
elapsed=$(( $(date +%s) - start ))
if (( elapsed < 185 )); then
  timeout $(( 235 - elapsed )) "$BIN/mgbench" sweep --gpus 1 --workloads transformer_step \
    --param model=llama3-1b --param layers=4 --param seq=4096 --param strategy=ddp \
    --batch-sizes auto --warmup 0.3 --max-time-per-point 1 --skip-doctor --no-history -q \
    --out "$O/auto" >"$O/auto.log" 2>&1
  echo "auto batch (rc $?): $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(", ".join("batch {} {}".format(p["params"]["batch"], p["status"]) for p in d["points"]))
' "$O/auto/results.json" 2>&1 | head -c 400)" | tee -a "$S"
fi

