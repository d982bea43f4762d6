#!/usr/bin/env bash
# Regenerates the example reports under reports/examples/ from their committed results JSON,
# so the examples always match the current renderer.
#
#   scripts/render_examples.sh [--mgbench BIN]
#       re-renders every reports/examples/<name>/results.json into report.html, report.md
#       and report_charts/ beside it.
#   scripts/render_examples.sh [--mgbench BIN] --import RESULTS.json NAME
#       first copies a run's results to reports/examples/NAME/results.json, made small:
#       per-point telemetry time series dropped (the run-level series stays), at most 100
#       raw samples kept per point (statistics stay as measured), and the
#       run-level series down-sampled to at most 400 points per GPU.
#
# BIN defaults to $MGBENCH, else the newest build*/bin/mgbench of this checkout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
examples="$root/reports/examples"
bin="${MGBENCH:-}"
import_src=""
import_name=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --mgbench) bin="$2"; shift 2 ;;
    --import) import_src="$2"; import_name="$3"; shift 3 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "render_examples.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

if [[ -z "$bin" ]]; then
  bin="$(ls -t "$root"/build*/bin/mgbench 2>/dev/null | head -n 1 || true)"
fi
if [[ -z "$bin" || ! -x "$bin" ]]; then
  echo "render_examples.sh: no mgbench binary (build first, or pass --mgbench BIN)" >&2
  exit 2
fi

if [[ -n "$import_src" ]]; then
  [[ "$import_name" =~ ^[A-Za-z0-9._-]+$ ]] || {
    echo "render_examples.sh: example name '$import_name' must be [A-Za-z0-9._-]+" >&2; exit 2; }
  mkdir -p "$examples/$import_name"
  /usr/bin/env python3 - "$import_src" "$examples/$import_name/results.json" <<'PY'
import json, math, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, encoding="utf-8") as f:
    run = json.load(f)
MAX_SAMPLES = 100  # raw samples kept per point (evenly spaced); statistics stay as measured
for p in run.get("points", []):
    t = p.get("telemetry")
    if isinstance(t, dict):
        t.pop("series", None)
    samples = p.get("samples")
    if isinstance(samples, list) and len(samples) > MAX_SAMPLES:
        p.setdefault("extra", {})["samples_kept"] = f"{MAX_SAMPLES} of {len(samples)}"
        p["samples"] = [samples[i * len(samples) // MAX_SAMPLES] for i in range(MAX_SAMPLES)]
MAX = 400
ts = run.get("telemetry_series")
if isinstance(ts, dict) and isinstance(ts.get("t_s"), list) and len(ts["t_s"]) > MAX:
    n = len(ts["t_s"])
    ranges = [(b * n // MAX, (b + 1) * n // MAX) for b in range(MAX)]
    def mean(values, lo, hi):
        xs = [v for v in values[lo:hi] if isinstance(v, (int, float))]
        return sum(xs) / len(xs) if xs else None
    def any_of(values, lo, hi):
        xs = [v for v in values[lo:hi] if isinstance(v, (int, float))]
        return (1 if any(x > 0 for x in xs) else 0) if xs else None
    ts["t_s"] = [mean(ts["t_s"], lo, hi) for lo, hi in ranges]
    for g in ts.get("per_gpu", []):
        for key in ("power_w", "temp_c", "sm_clock_mhz"):
            if isinstance(g.get(key), list):
                g[key] = [mean(g[key], lo, hi) for lo, hi in ranges]
        if isinstance(g.get("throttled"), list):
            g["throttled"] = [any_of(g["throttled"], lo, hi) for lo, hi in ranges]
with open(dst, "w", encoding="utf-8") as f:
    json.dump(run, f, separators=(",", ":"))
    f.write("\n")
PY
  echo "imported $import_src -> reports/examples/$import_name/results.json"
fi

shopt -s nullglob
count=0
for results in "$examples"/*/results.json; do
  dir="$(dirname "$results")"
  "$bin" report "$results" -o "$dir/report.html" >/dev/null
  "$bin" report "$results" --format md -o "$dir/report.md" >/dev/null
  echo "rendered ${dir#"$root"/}/report.html and report.md"
  count=$((count + 1))
done
if [[ $count -eq 0 ]]; then
  echo "render_examples.sh: no reports/examples/*/results.json to render" >&2
  exit 1
fi
