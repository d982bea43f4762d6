#!/usr/bin/env python3
"""`mgbench predict` from the 1- and 2-GPU points of a multi-GPU sweep, against the larger counts
the same sweep measured (scripts/multigpu_check.sh, stage predict).

  scripts/multigpu_predict.py MGBENCH RESULTS.json OUT_DIR [--upto 2]

Writes OUT_DIR/basis.json (the points on at most --upto GPUs), OUT_DIR/prediction.json and
prints one row per predicted series and GPU count with a measured point: predicted / measured
throughput, then per workload and count the median and worst error. Exit 0 when there was
something to compare, 1 when nothing matched, 2 usage, 4 when mgbench failed.
`mgbench predict` on the whole file would show the measured counts beside its predictions, but
it would also calibrate the links on them: the basis holds the small counts only, and the
matching to the measured points is done here.
"""
import json
import os
import statistics
import subprocess
import sys


def restrict(results, upto):
    """The results document with only the points on at most `upto` GPUs."""
    return dict(results, points=[p for p in results["points"] if p.get("gpus", 0) <= upto])


def identity(workload, params, gpus):
    return workload, json.dumps(params, sort_keys=True), gpus


def measured_index(results):
    """{(workload, params, gpus): point} of the ok points."""
    return {identity(p["workload"], p.get("params", {}), p["gpus"]): p
            for p in results["points"] if p.get("status") == "ok"}


def comparisons(prediction, results, upto):
    """Rows (workload, gpus, params, metric, predicted, measured, ratio) for every predicted count
    above `upto` that the results measured, ok, with the series' metric."""
    points = measured_index(results)
    rows = []
    for series in prediction.get("series", []):
        for row in series.get("rows", []):
            if row.get("gpus", 0) <= upto or row.get("throughput") is None:
                continue
            p = points.get(identity(series["workload"], series["params"], row["gpus"]))
            value = (p or {}).get("metrics", {}).get(series["metric"])
            if not isinstance(value, (int, float)) or value <= 0:
                continue
            rows.append((series["workload"], row["gpus"], series["params"], series["metric"],
                         row["throughput"], value, row["throughput"] / value))
    return rows


def summary(rows):
    """{(workload, gpus): (count, median |error|, worst error)} with error = ratio - 1."""
    groups = {}
    for workload, gpus, _, _, _, _, ratio in rows:
        groups.setdefault((workload, gpus), []).append(ratio - 1.0)
    return {k: (len(v), statistics.median(abs(e) for e in v), max(v, key=abs))
            for k, v in sorted(groups.items())}


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--upto"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    mgbench, path, out = argv[:3]
    upto = int(argv[4]) if len(argv) == 5 else 2
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    counts = sorted({p["gpus"] for p in results["points"] if p["gpus"] > upto})
    if not counts:
        print(f"multigpu_predict: no point on more than {upto} GPUs in {path}")
        return 1
    os.makedirs(out, exist_ok=True)
    basis = os.path.join(out, "basis.json")
    with open(basis, "w", encoding="utf-8") as f:
        json.dump(restrict(results, upto), f)
    done = subprocess.run([mgbench, "predict", basis, "--gpus", ",".join(map(str, counts)),
                           "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"multigpu_predict: mgbench predict exited {done.returncode}: "
              f"{done.stderr.strip()[:300]}")
        return 4
    with open(os.path.join(out, "prediction.json"), "w", encoding="utf-8") as f:
        f.write(done.stdout)
    rows = comparisons(json.loads(done.stdout), results, upto)
    print("| workload | GPUs | params | metric | predicted | measured | predicted/measured |")
    print("|---|---|---|---|---|---|---|")
    for w, g, params, metric, pred, meas, ratio in rows:
        print(f"| {w} | {g} | {json.dumps(params, sort_keys=True)[:80]} | {metric} | {pred:.4g} "
              f"| {meas:.4g} | {ratio:.3f} |")
    for (w, g), (n, med, worst) in summary(rows).items():
        print(f"{w} at {g} GPUs: {n} series, median |error| {med * 100:.1f} %, "
              f"worst {worst * 100:+.1f} %")
    print(f"{len(rows)} predictions compared with measured points")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
