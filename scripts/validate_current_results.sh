#!/bin/sh
# A results.json written by the current build must validate against the JSON Schema.
# usage: validate_current_results.sh MGBENCH_BINARY SOURCE_DIR [PYTHON3]
# Runs a small CPU-only selftest sweep (two GPU counts on fake devices, an ok and a noisy-free
# faulty point), then scripts/validate_results.py on its results.json. Exit 77 (skipped) when
# python3 or python3-jsonschema is missing; 1 when the sweep writes no results.json or the
# document is invalid.
set -u
mgbench=$1
source_dir=$2
python=${3:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  echo "python3 not found: schema validation of the current build's results skipped" >&2
  exit 77
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/mgbench-schema-XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=2 "$mgbench" sweep \
  --workloads selftest --param behavior=ok,wrong,nan --gpus 1,2 --out "$out/run" \
  --no-history --no-report --skip-doctor --no-telemetry -q
status=$?
# 3: the `wrong` point (expected); anything else but 0 means the sweep itself broke.
if [ "$status" -ne 3 ] && [ "$status" -ne 0 ]; then
  echo "the selftest sweep exited $status" >&2
  exit 1
fi
if [ ! -s "$out/run/results.json" ]; then
  echo "the selftest sweep wrote no results.json" >&2
  exit 1
fi
exec "$python" "$source_dir/scripts/validate_results.py" \
  "$source_dir/harness/schema/results.schema.json" "$out/run/results.json"
