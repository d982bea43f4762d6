#!/usr/bin/env bash
# Run the GPU test cases under compute-sanitizer (memcheck, racecheck, synccheck), one tool and
# one case per process, and count the errors each tool reports.
#   scripts/gpu_sanitize.sh [--tools LIST] [--cases FILE] [--scale N] [--budget S] TEST_BINARY
# Exit codes: 0 every case clean, 1 errors or a failed case, 2 usage, 4 a tool is missing.
# `scripts/gpu_sanitize.sh --help` lists every option; the logic is in scripts/gpu_sanitize.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v python3 >/dev/null || { echo "gpu_sanitize: python3 not found" >&2; exit 4; }
exec python3 "$here/gpu_sanitize.py" "$@"
