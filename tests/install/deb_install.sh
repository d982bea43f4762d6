#!/usr/bin/env bash
# Builds the .deb with CPack, checks its declared dependencies and contents, installs it with
# dpkg, runs the installed /usr/bin/mgbench from an empty directory with a bare environment
# (--version, list, a dry-run plan for 1,2,4,8 GPUs: no GPU needed), checks the completion file
# loads, then removes the package.
#   deb_install.sh BUILD_DIR
# Exit 77 (skipped) without root or dpkg, or when a package named mgbench is already installed.
set -uo pipefail
build="$1"
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[[ $(id -u) -eq 0 ]] || skip "installing a .deb needs root"
command -v dpkg >/dev/null && command -v dpkg-deb >/dev/null || skip "dpkg is not installed"
command -v cpack >/dev/null || skip "cpack is not on PATH"
work=$(mktemp -d)
exec 9>/tmp/mgbench-deb-install-test.lock
flock 9  # one install of the package at a time on this machine
if grep -q "install ok installed" <<<"$(dpkg-query -W -f="\${Status}" mgbench 2>/dev/null)"; then
  skip "a package named mgbench is already installed here; not touching it"
fi
installed=0
cleanup() {
  [[ $installed -eq 1 ]] && dpkg -r mgbench >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# Build the package.
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg") >"$work/cpack.log" 2>&1 ||
  fail "cpack failed: $(tail -n 20 "$work/cpack.log")"
deb=$(ls "$work"/pkg/mgbench_*.deb 2>/dev/null | head -n1)
[[ -n "$deb" ]] || fail "no mgbench_*.deb produced: $(cat "$work/cpack.log")"
echo "built $(basename "$deb")"

# Declared dependencies: cuBLAS and NCCL from the CUDA repository.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
grep -Eq '(^|, )libcublas-[0-9]+-[0-9]+(,|$)' <<<"$depends" || fail "no libcublas-X-Y dependency"
grep -Eq '(^|, )libnccl2( \(>= [0-9.]+\))?(,|$)' <<<"$depends" || fail "no libnccl2 dependency"
# SQLite's runtime library, loaded at run time by the history store.
grep -Eq '(^|, )libsqlite3-0( \(>= [0-9.]+\))?(,|$)' <<<"$depends" || fail "no libsqlite3-0 dependency"

# Contents: the usual places.
contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
for f in ./usr/bin/mgbench ./usr/share/mgbench/results.schema.json \
         ./usr/share/doc/mgbench/README.md ./usr/share/doc/mgbench/INSTALL.md \
         ./usr/share/doc/mgbench/examples/h200-1gpu/results.json \
         ./usr/share/bash-completion/completions/mgbench; do
  grep -qx "$f" <<<"$contents" || fail "$f is not in the package"
done
if [[ -f "$build/share/man/man1/mgbench.1" ]]; then
  grep -qx ./usr/share/man/man1/mgbench.1 <<<"$contents" || fail "the man page is not packaged"
fi

# Install. Where the CUDA libraries came from NVIDIA's runfile, dpkg does not know the
# dependency packages: install with --force-depends, then require that every shared library of
# the installed binary resolves.
force=()
unknown=()
for pkg in $(sed 's/([^)]*)//g; s/,/ /g' <<<"$depends"); do
  grep -q "install ok installed" <<<"$(dpkg-query -W -f="\${Status}" "$pkg" 2>/dev/null)" || unknown+=("$pkg")
done
if [[ ${#unknown[@]} -gt 0 ]]; then
  echo "NOTE: not registered with dpkg here: ${unknown[*]}; installing with --force-depends"
  force=(--force-depends)
fi
dpkg "${force[@]}" -i "$deb" >"$work/dpkg.log" 2>&1 || fail "dpkg -i failed: $(cat "$work/dpkg.log")"
installed=1
[[ -x /usr/bin/mgbench ]] || fail "/usr/bin/mgbench is not installed"
if ldd /usr/bin/mgbench | grep -q "not found"; then
  fail "a shared library of the installed binary does not resolve: $(ldd /usr/bin/mgbench | grep 'not found')"
fi

# Run it from an empty directory, with no trace of the build or source tree in the environment.
mkdir "$work/empty"
run() { (cd "$work/empty" && env -i PATH=/usr/bin:/bin HOME="$work/empty" /usr/bin/mgbench "$@"); }
out=$(run --version) || fail "mgbench --version failed"
grep -Eq '^mgbench [0-9]+\.[0-9]+\.[0-9]+ ' <<<"$out" || fail "unexpected --version: $out"
echo "$out"
out=$(run list) || fail "mgbench list failed"
grep -q "gemm:" <<<"$out" || fail "mgbench list does not name gemm: $out"
out=$(run sweep --dry-run --gpus 1,2,4,8 2>&1) || fail "dry run failed: $out"
grep -q "^Plan:" <<<"$out" || fail "the dry run printed no plan: $out"
grep -q "GPU counts 1,2,4,8" <<<"$out" || fail "the plan is not for 1,2,4,8 GPUs: $out"
out=$(run history list --db "$work/empty/none.db" 2>&1) || fail "history list failed: $out"
grep -q "No run recorded yet" <<<"$out" || fail "history list: $out"
echo "installed mgbench: --version, list, history list and the 1,2,4,8 dry-run plan ok"

# The completion file loads and completes a command.
words=$(bash -c 'source /usr/share/bash-completion/completions/mgbench &&
                 COMP_WORDS=(mgbench swe) COMP_CWORD=1 && _mgbench && echo "${COMPREPLY[*]}"') ||
  fail "the installed completion does not load"
[[ "$words" == sweep ]] || fail "completion of 'swe' gave '$words'"

# Remove.
dpkg -r mgbench >"$work/dpkg-r.log" 2>&1 || fail "dpkg -r failed: $(cat "$work/dpkg-r.log")"
installed=0
[[ ! -e /usr/bin/mgbench ]] || fail "/usr/bin/mgbench is still there after dpkg -r"
echo "removed"
