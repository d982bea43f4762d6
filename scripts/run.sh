#!/usr/bin/env bash
# Builds mgbench if needed and runs `mgbench sweep` with its defaults (all visible GPUs,
# standard profile). Extra arguments go to `mgbench sweep`. Only the mgbench target is built
# (the release preset's tests are built by scripts/test.sh's ci preset, not here).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release mgbench >&2
exec build/release/bin/mgbench sweep "$@"
