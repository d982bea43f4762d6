#!/usr/bin/env bash
# One GPU, the same small sweep twice: one thread per GPU (--launcher local) and one process per
# GPU (--launcher mpirun, one rank), then every point's headline metric both ways, side by side,
# with the ratio processes / threads. The two must agree within noise.
#
# Usage: scripts/process_vs_thread.sh [MGBENCH] [more sweep options...]
#   MGBENCH  the binary (default build/release/bin/mgbench); it must be built with MPI
# The sweep: --gpus 1 --profile quick over gemm, allreduce, train_step, membw and h2d (override
# with --workloads ... among the extra options). As root, mpirun needs
# OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (set here when running as root).
set -euo pipefail
bin="${1:-build/release/bin/mgbench}"
shift || true
[[ -x "$bin" ]] || { echo "process_vs_thread: no executable '$bin'" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "process_vs_thread: mpirun is not on PATH (install openmpi-bin)" >&2; exit 4; }
command -v python3 >/dev/null || { echo "process_vs_thread: python3 is needed for the table" >&2; exit 4; }
if [[ "$(id -u)" == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
out="$(mktemp -d "${TMPDIR:-/tmp}/mgbench-pvt.XXXXXX")"
sweep=(sweep --gpus 1 --profile quick --workloads gemm,allreduce,train_step,membw,h2d
       --no-history --no-report -q "$@")
status=0
"$bin" "${sweep[@]}" --launcher local --out "$out/threads" || status=$?
"$bin" "${sweep[@]}" --launcher mpirun --out "$out/processes" || status=$?
python3 - "$out/threads/results.json" "$out/processes/results.json" <<'PY'
import json, sys

def load(path):
    with open(path) as f:
        run = json.load(f)
    points = {}
    for p in run["points"]:
        key = (p["workload"], json.dumps(p["params"], sort_keys=True))
        headline = (run.get("presentation", {}).get(p["workload"], {}) or {}).get("headline") or {}
        name, unit = headline.get("name"), headline.get("unit", "")
        metrics = p.get("metrics", {})
        value = metrics.get(name) if name else None
        if value is None and metrics.get("time_us") is not None:
            # A headline with no value here (all-reduce busbw on 1 GPU): the time per op.
            name, unit, value = "time_us", "us", metrics["time_us"]
        points[key] = (p["status"], name, unit, value, p.get("process_model", "threads"))
    return points

threads, processes = load(sys.argv[1]), load(sys.argv[2])
rows = [("workload", "params", "metric", "threads", "processes", "ratio")]
for key in sorted(set(threads) | set(processes)):
    t, p = threads.get(key), processes.get(key)
    name = (t or p)[1] or "-"
    unit = (t or p)[2]
    def cell(x):
        if x is None: return "missing"
        if x[0] != "ok" or x[3] is None: return x[0]
        return "%.4g" % x[3]
    ratio = "-"
    if t and p and t[0] == "ok" and p[0] == "ok" and t[3] and p[3] is not None:
        ratio = "%.3f" % (p[3] / t[3])
    params = ",".join("%s=%s" % kv for kv in json.loads(key[1]).items())
    rows.append((key[0], params[:48], "%s [%s]" % (name, unit), cell(t), cell(p), ratio))
widths = [max(len(r[i]) for r in rows) for i in range(6)]
for r in rows:
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
models = {x[4] for x in processes.values()}
print("process model of the mpirun run:", ", ".join(sorted(models)))
PY
echo "results: $out/threads/results.json, $out/processes/results.json"
exit "$status"
