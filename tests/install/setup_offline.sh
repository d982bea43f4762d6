#!/usr/bin/env bash
# scripts/setup.sh decides what is missing from what is really there, and calls no package
# manager when nothing is missing. apt-get, apt-cache, dnf and sudo are replaced by stubs that
# record the call and fail loudly.
#   1. Everything installed: `setup.sh --deps` succeeds and calls no stub.
#   2. An optional piece missing, a package index that offers nothing (a GPU host without a
#      registry): a one-line warning naming the package, exit 0, apt-get never called.
#   3. A required piece missing, and the package manager fails: exit 4 and one line naming the
#      piece and the package that provides it.
#   4. An MPI wrapper that cannot include mpi.h: MPI reported missing, no configure error.
# Exit 77 (skipped) when this machine is not fully set up, since case 1 needs that.
set -uo pipefail
src="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

check=$(bash "$src/scripts/setup.sh" --check 2>&1)
if grep -q "missing" <<<"$check"; then
  echo "SKIP: this machine is not fully set up (run scripts/setup.sh --deps):"
  grep "missing" <<<"$check"
  exit 77
fi

mkdir "$work/stubs"
for tool in apt-get dnf sudo yum; do
  printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\necho "STUB %s CALLED: $*" >&2\nexit 100\n' \
    "$tool" "$work" "$tool" > "$work/stubs/$tool"
done
# apt-cache answers like a package index with no registry: no candidate for anything.
printf '#!/bin/sh\necho "apt-cache $*" >> "%s/index-reads"\necho "$2:"\necho "  Installed: (none)"\necho "  Candidate: (none)"\n' \
  "$work" > "$work/stubs/apt-cache"
chmod +x "$work/stubs/"*
export PATH="$work/stubs:$PATH"

# 1. Everything installed.
out=$(bash "$src/scripts/setup.sh" --deps 2>&1) || fail "setup --deps failed: $out"
[[ ! -e "$work/calls" ]] || fail "a package manager was called: $(cat "$work/calls")"
[[ ! -e "$work/index-reads" ]] || fail "the package index was read: $(cat "$work/index-reads")"
grep -q "all required pieces found" <<<"$out" || fail "no summary line: $out"
echo "ok: nothing missing, no package manager call"

# 2. Optional pieces missing, nothing offered by the index.
out=$(MGBENCH_SETUP_PRETEND_MISSING="benchmark help2man" bash "$src/scripts/setup.sh" --deps 2>&1) ||
  fail "setup failed for a missing optional piece: $out"
[[ ! -e "$work/calls" ]] || fail "apt-get/sudo called for optional pieces: $(cat "$work/calls")"
grep -q "optional, missing: Google Benchmark.*apt-get install libbenchmark-dev" <<<"$out" ||
  fail "no line for Google Benchmark: $out"
grep -q "optional, missing: help2man.*apt-get install help2man" <<<"$out" ||
  fail "no line for help2man: $out"
echo "ok: optional pieces missing, no registry: warnings, exit 0"

# 3. A required piece missing; the package manager fails.
out=$(MGBENCH_SETUP_PRETEND_MISSING="fmt sqlite" bash "$src/scripts/setup.sh" --deps 2>&1)
rc=$?
[[ $rc -eq 4 ]] || fail "expected exit 4 for a missing required piece, got $rc: $out"
grep -q "apt-get" "$work/calls" 2>/dev/null || fail "apt-get was not tried for a required piece"
grep -q "REQUIRED, missing: fmt: apt-get install libfmt-dev" <<<"$out" ||
  fail "no line naming fmt and libfmt-dev: $out"
# The history store needs only SQLite's runtime library (loaded at run time), not its headers.
grep -q "REQUIRED, missing: the SQLite runtime library libsqlite3.so.0.*apt-get install libsqlite3-0 | dnf install sqlite-libs" <<<"$out" ||
  fail "no line naming the SQLite runtime library and libsqlite3-0: $out"
echo "ok: required piece missing: exit 4, one line with the package"

# 4. An MPI compiler wrapper without its headers (OpenMPI's binaries, no -dev package): the
#    probe reports MPI missing instead of stopping in FindMPI, and setup names the package.
mkdir "$work/mpi"
# Like OpenMPI's wrappers: they name an include directory the -dev package would provide.
for wrapper in mpicc:cc mpicxx:c++; do
  cat > "$work/mpi/${wrapper%%:*}" <<WRAPPER
#!/bin/sh
case "\$1" in
  -showme:compile) echo "-I$work/mpi/include -pthread" ;;
  -showme:link) echo "-pthread -L$work/mpi/lib -lmpi" ;;
  -showme:incdirs) echo "$work/mpi/include" ;;
  -showme:libdirs) echo "$work/mpi/lib" ;;
  -showme:libs) echo "mpi" ;;
  -showme:version) echo "fake mpi 4.1" ;;
  -showme*) echo "${wrapper#*:} -I$work/mpi/include -pthread -L$work/mpi/lib -lmpi" ;;
  *) exec ${wrapper#*:} -I$work/mpi/include "\$@" ;;
esac
WRAPPER
done
chmod +x "$work/mpi/"*
probe=$(PATH="$work/mpi:$PATH" cmake -S "$src/scripts/setup_probe" -B "$work/probe" 2>&1)
grep -q "^MGBENCH_PROBE mpi missing" <<<"$probe" || fail "probe did not report MPI missing: $probe"
! grep -q "CMake Error" <<<"$probe" || fail "the probe stopped with an error: $probe"
out=$(PATH="$work/mpi:$PATH" bash "$src/scripts/setup.sh" --check 2>&1)
grep -q "optional, missing: MPI.*apt-get install libopenmpi-dev" <<<"$out" ||
  fail "no line for MPI without headers: $out"
echo "ok: an MPI wrapper without mpi.h: MPI missing, no configure error"
