#!/usr/bin/env bash
# One batched verification pass on a GPU machine (used for the closing notes):
#   scripts/gpu_check.sh BIN_DIR OUT_DIR [STEP...]
# Steps: info tests gemm torch allreduce train telemetry compare (default: all). Each step's
# output goes to OUT_DIR/<step>.log and a short summary to stdout; results under OUT_DIR/runs.
# More steps are files in scripts/gpu_check.d/ (one PASS/FAIL line per check, also gathered in
# OUT_DIR/summary.txt): labels (the GPU test labels), peaks, predict and history (they share one
# default-profile sweep, the `example` step's when it ran first), batch, launch (mpirun as root),
# ranks (ranks in processes on one GPU, NVLS as recorded), accept (mgbench accept --soak 2m),
# transformer (transformer_step presets, MFU, the 8B layer's GEMMs), collectives (the six
# collectives' GPU and 4-rank tests, a sweep, the crosscheck against nccl-tests built from a
# checkout at gpujob/nccl-tests), screen (mgbench screen on this host), resume (--resume from
# the journal's plan, locally and through mpirun; report --format from the printers), readme
# (scripts/run.sh --profile quick, then history list from the default store).
# MGBENCH_CHECK_SKIP_GPU_TESTS=1: collectives and transformer skip the GPU test cases a labels
# step already ran; MGBENCH_CHECK_MEMCHECK_OWN_ONLY=1: ranks puts only the own all-reduce's
# two-nodes test under memcheck (not NCCL's too).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$1"; out="$2"; shift 2
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(info tests gemm torch allreduce train telemetry compare)
# Steps: ubuntu_build (configure + build the ci preset here, in the background), example
# (every workload, default profile).
mkdir -p "$out/runs"
export NCCL_NVLS_ENABLE=0
common=(--no-history --gpus 1)

step() { echo "=== $1 ($(date +%T))"; }
for s in "${steps[@]}"; do
  case "$s" in
    info)
      step info
      nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv
      "$bin/mgbench" info >"$out/info.log" 2>&1; echo "info rc=$?"
      "$bin/mgbench" info --json >"$out/info.json" 2>>"$out/info.log"
      "$bin/mgbench" doctor >"$out/doctor.log" 2>&1; echo "doctor rc=$?"
      tail -n 30 "$out/doctor.log" ;;
    tests)
      step tests
      timeout 300 "$bin/mgbench_gpu_tests" >"$out/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"
      grep -E "FAILED|passed|failed|SKIP" "$out/gpu_tests.log" | tail -n 25 ;;
    gemm)
      step gemm
      timeout 300 "$bin/mgbench" sweep "${common[@]}" --workloads gemm --out "$out/runs/gemm" \
        >"$out/gemm.log" 2>&1; echo "gemm sweep rc=$?"
      tail -n 40 "$out/gemm.log" ;;
    torch)
      step torch
      "$bin/mgbench" sweep "${common[@]}" --workloads gemm --param impl=cublas --param dtype=bf16 \
        --param size=8192 --skip-doctor --no-report --out "$out/runs/torchcmp" >"$out/torch.log" 2>&1
      grep -A4 "TFLOP/s/GPU" "$out/torch.log" | tail -n 3
      python3 scripts/torch_matmul_reference.py 2>&1 | tail -n 3
      echo "sustained (1 s warm-up, 3 s timed, as mgbench's point):"
      python3 scripts/torch_matmul_reference.py --seconds 3 2>&1 | tail -n 3 ;;
    ubuntu_build)
      step ubuntu_build
      (cmake --preset ci >"$out/ubuntu_build.log" 2>&1 &&
        cmake --build --preset ci -j 12 >>"$out/ubuntu_build.log" 2>&1;
        echo "ubuntu build rc=$?" >>"$out/ubuntu_build.log") &
      build_pid=$! ;;
    wait_build)
      step wait_build
      [[ -n "${build_pid:-}" ]] && { wait "$build_pid"; build_pid=""; tail -n 5 "$out/ubuntu_build.log"; } ;;
    example)
      step example
      timeout 420 "$bin/mgbench" sweep --gpus 1 --out "$out/runs/example" --db "$out/history.db" \
        >"$out/example.log" 2>&1; echo "example sweep rc=$?"
      tail -n 60 "$out/example.log" ;;
    allreduce)
      step allreduce
      timeout 240 "$bin/mgbench" sweep "${common[@]}" --workloads allreduce --out "$out/runs/allreduce" \
        >"$out/allreduce.log" 2>&1; echo "allreduce sweep rc=$?"
      tail -n 40 "$out/allreduce.log" ;;
    train)
      step train
      timeout 300 "$bin/mgbench" sweep "${common[@]}" --workloads train_step --dtypes bf16,fp32 \
        --batch-sizes auto --param hidden=1024 --param layers=4 --param h2d=false --profile quick \
        --out "$out/runs/train" >"$out/train.log" 2>&1; echo "train sweep rc=$?"
      tail -n 40 "$out/train.log" ;;
    telemetry)
      step telemetry
      for i in 1 2; do
        for t in on off; do
          extra=(); [[ $t == off ]] && extra=(--no-telemetry)
          "$bin/mgbench" sweep "${common[@]}" --workloads gemm --param impl=cublas --param dtype=bf16 \
            --param size=8192 --skip-doctor --no-report "${extra[@]}" \
            --out "$out/runs/telov-$t-$i" >>"$out/telemetry.log" 2>&1
        done
      done
      grep -h '"tflops_per_gpu"' "$out"/runs/telov-*/results.json | head ;;
    compare)
      step compare
      cmp=(--gpus 1 --workloads gemm --param dtype=fp32 --param size=4096 --skip-doctor --no-report
           --db "$out/history.db")
      "$bin/mgbench" sweep "${cmp[@]}" --out "$out/runs/cmp-a" >>"$out/compare.log" 2>&1
      "$bin/mgbench" sweep "${cmp[@]}" --out "$out/runs/cmp-b" >>"$out/compare.log" 2>&1
      MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_SLOWDOWN=0.1 "$bin/mgbench" sweep "${cmp[@]}" --out "$out/runs/cmp-slow" \
        >>"$out/compare.log" 2>&1
      "$bin/mgbench" compare "$out/runs/cmp-a/results.json" "$out/runs/cmp-b/results.json"
      echo "same rc=$?"
      "$bin/mgbench" compare "$out/runs/cmp-a/results.json" "$out/runs/cmp-slow/results.json"
      echo "slow rc=$?"
      "$bin/mgbench" history list --db "$out/history.db"
      "$bin/mgbench" history trend --workload gemm --metric tflops_aggregate --by driver \
        --db "$out/history.db" ;;
    *)
      if [[ -f "$here/gpu_check.d/$s.sh" ]]; then
        step "$s"
        bash "$here/gpu_check.d/$s.sh" "$bin" "$out"
      else
        echo "gpu_check: unknown step '$s'" >&2
      fi ;;
  esac
done
[[ -n "${build_pid:-}" ]] && { wait "$build_pid"; tail -n 5 "$out/ubuntu_build.log"; }
tar -C "$out" -czf "$out/../gpu_check.tgz" . 2>/dev/null || true
