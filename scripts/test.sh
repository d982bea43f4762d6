#!/usr/bin/env bash
# Builds mgbench (ci preset: sm_90, tests on) and runs the whole test suite. GPU tests are
# reported as skipped on machines without a GPU; they never pass there.
# MGBENCH_ASAN=1 then runs the host code under ASan + UBSan (asan preset): the unit and cli
# tests again, built without the micro-benchmarks (docs/TESTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh ci
ctest --preset ci -j "$(nproc)" "$@"
if [[ "${MGBENCH_ASAN:-0}" == 1 ]]; then
  start=$SECONDS
  scripts/setup.sh asan
  ctest --preset asan -j "$(nproc)"
  echo "test: asan step took $((SECONDS - start)) s"
fi
