#!/usr/bin/env bash
# Smoke test of mgbench-micro without a GPU: every case is listed, and the host cases run
# briefly and write Google Benchmark's JSON, with no error except where NVML is missing.
# Usage: micro_smoke.sh <mgbench-micro binary> <scratch directory>
set -euo pipefail
bin="$1"
dir="$2"
mkdir -p "$dir"
"$bin" --benchmark_list_tests=true > "$dir/list.txt"
for name in host/statistics_1e5 host/results_json_10k host/telemetry_sample host/journal_append \
            gpu/kernel_launch gpu/event_overhead gpu/stream_sync gpu/small_gemm_bf16; do
  if ! grep -q "^$name" "$dir/list.txt"; then
    echo "mgbench-micro does not list $name" >&2
    exit 1
  fi
done
"$bin" --benchmark_filter='^host/' --benchmark_min_time=0.01 --benchmark_format=json \
  > "$dir/host.json"
python3 - "$dir/host.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
runs = {b["name"]: b for b in doc["benchmarks"]}
for name in ("host/statistics_1e5", "host/results_json_10k", "host/journal_append"):
    run = runs.get(name)
    assert run is not None, f"{name} did not run"
    assert not run.get("error_occurred", False), f"{name}: {run.get('error_message')}"
    assert run["iterations"] >= 1 and run["real_time"] > 0, f"{name} measured nothing"
telemetry = runs.get("host/telemetry_sample")
assert telemetry is not None, "host/telemetry_sample did not run"
if telemetry.get("error_occurred", False):
    assert "NVML" in telemetry.get("error_message", ""), telemetry
assert not any(n.startswith("gpu/") for n in runs), "the filter let a GPU case run"
print("ok:", ", ".join(sorted(runs)))
PY
