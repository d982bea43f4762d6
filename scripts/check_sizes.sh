#!/usr/bin/env bash
# House-style size limits on product code (app/, harness/, benchmarks/, kernels/, reports/):
# no function longer than 80 lines (universal-ctags end lines) and no source file longer than
# 600 lines. Prints every offender; exits 1 when there is one, 77 (skipped) without
# universal-ctags.
#   scripts/check_sizes.sh [REPO_ROOT]
set -uo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root" || exit 2
dirs=(app harness benchmarks kernels reports)
max_function=80
max_file=600
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "SKIP: universal-ctags is not installed (Debian package universal-ctags)"
  exit 77
fi
status=0
long_functions=$(ctags -R -x --fields=+ne --_xformat='%{line} %{end} %N %F' --kinds-C++=f \
                   --kinds-C=f --map-C++=+.cu --map-C++=+.cuh --languages=C,C++ "${dirs[@]}" |
                 awk -v max="$max_function" '$2 != "" && $2 - $1 + 1 > max {
                   print "function " $3 " in " $4 ":" $1 " has " $2 - $1 + 1 " lines" }')
if [[ -n "$long_functions" ]]; then
  echo "$long_functions"
  status=1
fi
while read -r lines file; do
  [[ "$file" == "total" ]] && continue
  if (( lines > max_file )); then
    echo "file $file has $lines lines"
    status=1
  fi
done < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \
           -o -name '*.cuh' \) -print0 | xargs -0 wc -l)
if (( status == 0 )); then
  echo "sizes ok: no function over $max_function lines, no file over $max_file lines"
fi
exit $status
