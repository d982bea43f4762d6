#!/usr/bin/env bash
# The GPU test labels of the build tree that holds BIN: gpu, multi_gpu (skipped, not passed, on
# one GPU) and workloads, four at a time.
set -uo pipefail
# shellcheck source=scripts/gpu_check.d/common.sh
source "$(dirname "$0")/common.sh"
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 480 ctest --test-dir "$BIN/.." -L 'gpu|multi_gpu|workloads' -j4 --timeout 240 \
  --output-on-failure --output-junit "$OUT/labels.xml" >"$OUT/labels.log" 2>&1
check "ctest -L gpu|multi_gpu|workloads" $? "$(grep -E 'tests passed' "$OUT/labels.log")"
grep -E '\*\*\*(Failed|Timeout)|Not Run' "$OUT/labels.log" | head -20
