#!/usr/bin/env bash
# Builds mgbench (ci preset: sm_90, tests on) and runs the whole test suite. GPU tests are
# reported as skipped on machines without a GPU; they never pass there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh ci
ctest --preset ci -j "$(nproc)" "$@"
