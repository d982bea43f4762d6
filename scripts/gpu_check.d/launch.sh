#!/usr/bin/env bash
# mpirun on a GPU host as root, as a new user meets it (docs/DISTRIBUTED.md). One check each:
#  root-refused   `sweep --launcher mpirun` as root without consent: exit 4, one stderr line
#                 naming --allow-run-as-root, no results.json (no point recorded, none failed).
#  root-allowed   the same with --launcher-arg=--allow-run-as-root: exit 0, every point ok or
#                 waived, telemetry from the node leader (power > 0 on ok points).
#  no-gpu-orch    the orchestrator sees no GPU, the rank does (-x CUDA_VISIBLE_DEVICES=0 through
#                 --launcher-arg): exit 0, the environment names the rank's GPU, and the
#                 orchestrator never holds a CUDA context (its PID never among nvidia-smi's
#                 compute processes, sampled every 0.2 s, while a rank's is). libcuda's mappings
#                 in it are counted for information only: cuBLASLt's initializer dlopens
#                 libcuda.so.1 when the program loads, before main, and no CUDA call follows.
#  one-cpu        `taskset -c 0` around the sweep: the one-CPU warning exactly once.
#  aliases        --hosts localhost:1,127.0.0.1:1 --gpus 1,2: the alias warning, 2 GPUs left
#                 out, no point on 2 nodes.
#  gpn-refused    --gpus-per-node 64 without --hosts: exit 2, one line.
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
out="$OUT/launch"
mkdir -p "$out"
bin="$BIN/mgbench"
verdict() { check "$2" "$1"; }
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader >"$out/gpu.txt" 2>&1
id -u >"$out/uid.txt"
mpirun --version >"$out/mpirun_version.txt" 2>&1
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
quick=(--profile quick --warmup 0.1 --param bytes=1024 --no-history --no-report)
both=(--workloads "allreduce,gemm" --param "size=1024")  # gemm's size, all-reduce's bytes
# Points of a results.json: index gpus status nodes message (first 100 chars).
points() {
  python3 - "$1" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for p in run["points"]:
    t = p.get("telemetry") or {}
    power = [g.get("power_w", {}).get("mean") for g in t.get("gpus", [])]
    print(p["index"], p["workload"], p["gpus"], p["status"], "nodes=%s" % p.get("nodes"),
          "model=%s" % p.get("process_model"), "power=%s" % power, p.get("message", "")[:100])
PY
}

# 1. As root without consent.
step root-refused
rm -rf "$out/r1"
timeout 120 "$bin" sweep --launcher mpirun "${both[@]}" --gpus 1 "${quick[@]}" \
  --out "$out/r1/run" >"$out/r1.out" 2>"$out/r1.err"
rc=$?
lines=$(wc -l <"$out/r1.err")
ok=1
[[ $rc -eq 4 && $lines -eq 1 ]] && grep -q -- '--allow-run-as-root' "$out/r1.err" &&
  [[ ! -e "$out/r1/run/results.json" ]] && ok=0
verdict $ok "root-refused rc=$rc stderr_lines=$lines results=$([[ -e $out/r1/run/results.json ]] && echo yes || echo no): $(head -c 300 "$out/r1.err")"

# 2. As root with the pass-through option.
step root-allowed
timeout 240 "$bin" sweep --launcher mpirun "${both[@]}" --gpus 1 "${quick[@]}" \
  --launcher-arg=--allow-run-as-root --out "$out/r2" >"$out/r2.out" 2>"$out/r2.err"
rc=$?
points "$out/r2/results.json" >"$out/r2_points.txt" 2>&1
ok=1
[[ $rc -eq 0 ]] && [[ -s "$out/r2_points.txt" ]] && ! grep -v ' ok \| waived ' "$out/r2_points.txt" | grep -q . &&
  ! grep ' ok ' "$out/r2_points.txt" | grep -q 'power=\[\]\|power=\[None' && ok=0
verdict $ok "root-allowed rc=$rc points=$(wc -l <"$out/r2_points.txt") not_ok_or_waived=$(grep -vc ' ok \| waived ' "$out/r2_points.txt")"

# 3. An orchestrator without a GPU; the rank sees GPU 0. libcuda must never be mapped in it.
step no-gpu-orch
CUDA_VISIBLE_DEVICES="" "$bin" sweep --launcher mpirun --workloads allreduce --gpus 1 \
  "${quick[@]}" --launcher-arg=--allow-run-as-root --launcher-arg=-x \
  --launcher-arg=CUDA_VISIBLE_DEVICES=0 --out "$out/r3" >"$out/r3.out" 2>"$out/r3.err" &
pid=$!
( while kill -0 $pid 2>/dev/null; do
    nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null; sleep 0.2
  done >"$out/r3_apps.txt" ) &
maps=0
for _ in $(seq 2400); do
  kill -0 $pid 2>/dev/null || break
  n=$(grep -c 'libcuda' "/proc/$pid/maps" 2>/dev/null || true)
  [[ -n "$n" && "$n" -gt "$maps" ]] && maps=$n
  sleep 0.05
done
wait $pid
rc=$?
wait
own=$(grep -cx " *$pid" "$out/r3_apps.txt")
ranks=$(grep -vcx " *$pid" "$out/r3_apps.txt")
points "$out/r3/results.json" >"$out/r3_points.txt" 2>&1
gpu=$(python3 -c "import json;e=json.load(open('$out/r3/results.json'))['environment'];print(e.get('gpu_count'),[g.get('name') for g in e.get('gpus',[])])" 2>&1)
ok=1
[[ $rc -eq 0 && $own -eq 0 && $ranks -gt 0 ]] && ! grep -v ' ok \| waived ' "$out/r3_points.txt" | grep -q . &&
  [[ "$gpu" == *H200* ]] && ok=0
verdict $ok "no-gpu-orch rc=$rc orchestrator_context_samples=$own rank_context_samples=$ranks libcuda_mappings=$maps (cuBLASLt's loader) environment_gpus=$gpu"

# 4. Ranks confined to CPU 0.
step one-cpu
taskset -c 0 timeout 120 "$bin" sweep --launcher mpirun "${both[@]}" --gpus 1 \
  "${quick[@]}" --launcher-arg=--allow-run-as-root --out "$out/r4" \
  >"$out/r4.out" 2>"$out/r4.err"
rc=$?
n=$(grep -c 'may run on one CPU only' "$out/r4.err")
verdict "$([[ $rc -eq 0 && $n -eq 1 ]] && echo 0 || echo 1)" "one-cpu rc=$rc one_cpu_warnings=$n remote_cpu_warnings=$(grep -c 'none of them local' "$out/r4.err")"

# 5. Two names of this host.
step aliases
timeout 120 "$bin" sweep --launcher mpirun --workloads allreduce --gpus 1,2 "${quick[@]}" \
  --launcher-arg=--allow-run-as-root --hosts localhost:1,127.0.0.1:1 --out "$out/r5" \
  >"$out/r5.out" 2>"$out/r5.err"
rc=$?
points "$out/r5/results.json" >"$out/r5_points.txt" 2>&1
ok=1
[[ $rc -eq 0 ]] && grep -q "'127.0.0.1' is the machine 'localhost' already reaches" "$out/r5.err" &&
  grep -q -- '--gpus 2 left out' "$out/r5.err" && ! grep -q 'nodes=2' "$out/r5_points.txt" && ok=0
verdict $ok "aliases rc=$rc points=$(wc -l <"$out/r5_points.txt")"

# 6. More GPUs per node than this host has, without --hosts.
step gpn-refused
timeout 120 "$bin" sweep --launcher mpirun --workloads allreduce --gpus 1 --gpus-per-node 64 \
  "${quick[@]}" --launcher-arg=--allow-run-as-root --out "$out/r6" >"$out/r6.out" 2>"$out/r6.err"
rc=$?
verdict "$([[ $rc -eq 2 && $(wc -l <"$out/r6.err") -eq 1 ]] && echo 0 || echo 1)" "gpn-refused rc=$rc: $(head -c 200 "$out/r6.err")"

echo "done $(date +%T)"
