#!/usr/bin/env bash
# Cross-check mgbench against nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
# alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf) and torch.matmul on this GPU machine.
#   scripts/crosscheck.sh [--nccl-tests DIR] [--mgbench BIN] [--only LIST] [--sizes LIST] [--out DIR]
#   (--only: a comma list of allreduce, allgather, reducescatter, alltoall, broadcast, reduce,
#   sendrecv, gemm)
# Exit codes: 0 within tolerance, 1 beyond tolerance (or a row missing on one side), 2 usage,
# 4 a tool failed to run, 77 nothing failed but a reference tool is absent (its part skipped).
# `scripts/crosscheck.sh --help` lists every option; the logic is in scripts/crosscheck.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v python3 >/dev/null || { echo "crosscheck: python3 not found (skipped)" >&2; exit 77; }
exec python3 -B "$here/crosscheck.py" "$@"  # -B: no __pycache__ in scripts/
