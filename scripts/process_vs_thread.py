#!/usr/bin/env python3
"""The process-vs-thread table of scripts/process_vs_thread.sh.

Usage: process_vs_thread.py THREADS_RESULTS... -- PROCESSES_RESULTS...

Each side is one or more results.json files of the same sweep (runs repeated alternately). Per
point, the headline metric (the time per op where the headline has no value, as all-reduce
busbw on 1 GPU) is the median over that side's runs. Noise is what a repeat of the same mode
moves: the larger of the two sides' run-to-run spreads, (max - min) / median, and never less
than twice the larger within-run 95 % CI half-width of a median. A point agrees when
|processes / threads - 1| <= noise. With one run per side only the within-run CI is known, and
the table says so. Exit 0 when every point agrees, 1 when one differs or is missing or failed
on one side, 2 on bad input.
"""
import json
import statistics
import sys


def headline(run, point):
    """(metric name, unit, value) of a point: the workload's headline, else time per op."""
    spec = (run.get("presentation", {}).get(point["workload"], {}) or {}).get("headline") or {}
    name, unit = spec.get("name"), spec.get("unit", "")
    metrics = point.get("metrics", {})
    value = metrics.get(name) if name else None
    if value is None and metrics.get("time_us") is not None:
        name, unit, value = "time_us", "us", metrics["time_us"]
    return name or "-", unit, value


def load(path):
    """{(workload, params json): entry} of one results.json; entry has status, name, unit,
    value, ci (relative half-width of the median's CI) and the process model."""
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    points = {}
    for p in run["points"]:
        name, unit, value = headline(run, p)
        points[(p["workload"], json.dumps(p["params"], sort_keys=True))] = {
            "status": p["status"], "name": name, "unit": unit, "value": value,
            "ci": (p.get("spread") or {}).get("median_ci_half_width") or 0.0,
            "model": p.get("process_model", "threads")}
    return points


def combine(runs, key):
    """One side of one point over its runs: {value (median), spread, ci} or a status string."""
    entries = [run.get(key) for run in runs]
    for e in entries:
        if e is None:
            return "missing"
        if e["status"] != "ok" or e["value"] is None:
            return e["status"]
    values = [e["value"] for e in entries]
    median = statistics.median(values)
    spread = (max(values) - min(values)) / median if len(values) > 1 and median else None
    return {"value": median, "spread": spread, "ci": max(e["ci"] for e in entries),
            "name": entries[0]["name"], "unit": entries[0]["unit"]}


def judge(t, p):
    """(ratio, noise, verdict) of two combined sides."""
    if isinstance(t, str) or isinstance(p, str) or not t["value"]:
        return None, None, "not comparable"
    ratio = p["value"] / t["value"]
    spreads = [s["spread"] for s in (t, p) if s["spread"] is not None]
    noise = max(spreads + [2.0 * max(t["ci"], p["ci"])])
    return ratio, noise, ("agrees" if abs(ratio - 1.0) <= noise + 1e-12 else "DIFFERS")


def table(threads, processes):
    """Rows (tuples of text) and the count of points that agree."""
    rows = [("workload", "params", "metric", "threads", "processes", "ratio", "noise", "verdict")]
    agree = 0
    keys = sorted(set().union(*threads, *processes))
    for key in keys:
        t, p = combine(threads, key), combine(processes, key)
        ratio, noise, verdict = judge(t, p)
        agree += verdict == "agrees"
        side = t if isinstance(t, dict) else p
        metric = "%s [%s]" % (side["name"], side["unit"]) if isinstance(side, dict) else "-"
        params = ",".join("%s=%s" % kv for kv in json.loads(key[1]).items())
        rows.append((key[0], params[:48], metric, cell(t), cell(p),
                     "-" if ratio is None else "%.3f" % ratio,
                     "-" if noise is None else "%.1f %%" % (noise * 100.0), verdict))
    return rows, agree, len(keys)


def cell(side):
    if isinstance(side, str):
        return side
    text = "%.4g" % side["value"]
    return text + (" (runs %.1f %%)" % (side["spread"] * 100.0) if side["spread"] is not None else "")


def main(argv):
    if "--" not in argv or argv.index("--") == 0 or argv.index("--") == len(argv) - 1:
        print("process_vs_thread.py: usage: THREADS_RESULTS... -- PROCESSES_RESULTS...",
              file=sys.stderr)
        return 2
    cut = argv.index("--")
    try:
        threads = [load(path) for path in argv[:cut]]
        processes = [load(path) for path in argv[cut + 1:]]
    except (OSError, ValueError, KeyError) as e:
        print("process_vs_thread.py: cannot read results: %s" % e, file=sys.stderr)
        return 2
    rows, agree, total = table(threads, processes)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    models = sorted({e["model"] for run in processes for e in run.values()})
    print("process model of the mpirun runs:", ", ".join(models))
    basis = ("run-to-run spread of %d+%d runs" % (len(threads), len(processes))
             if min(len(threads), len(processes)) > 1 else "within-run CI only (one run a side)")
    print("%d of %d points agree within noise (%s)" % (agree, total, basis))
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
