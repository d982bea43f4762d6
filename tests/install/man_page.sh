#!/usr/bin/env bash
# The man page the build generated with help2man from `mgbench --help` and every command's
# --help. Exit 77 (skipped) when help2man was not installed at configure time.
#   man_page.sh BUILD_DIR
set -uo pipefail
page="$1/share/man/man1/mgbench.1"
fail() { echo "FAIL: $*"; exit 1; }
if [[ ! -f "$page" ]]; then
  echo "SKIP: no man page in the build: help2man was not installed at configure time"
  exit 77
fi
grep -q '^\.TH MGBENCH "1"' "$page" || fail "no .TH header"
grep -q '^\.SS "mgbench sweep"' "$page" || fail "no section for mgbench sweep"
grep -q 'dry\\-run' "$page" || fail "the sweep options are missing"
grep -q '^\.SS "mgbench worker"' "$page" && fail "the hidden worker command is in the man page"
if command -v man >/dev/null; then
  text=$(MANWIDTH=100 man -l "$page" 2>/dev/null) || fail "man cannot render the page"
  grep -q "multi-GPU scaling benchmarks" <<<"$text" || fail "rendered page lacks the name line"
fi
echo "ok: $page"
