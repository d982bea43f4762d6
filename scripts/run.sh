#!/usr/bin/env bash
# Builds mgbench if needed and runs `mgbench sweep` with its defaults (all visible GPUs,
# standard profile). Extra arguments go to `mgbench sweep`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release >&2
exec build/release/bin/mgbench sweep "$@"
