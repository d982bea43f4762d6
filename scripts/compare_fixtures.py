#!/usr/bin/python3
"""Inputs for the comparison-report checks, derived at run time from the fixed results files.

Usage: compare_fixtures.py SOURCE_DIR OUT_DIR   (writes the files and prints their paths)

From tests/data/report_sample.json (8 GPUs, GEMM, all-reduce, training step):
  sample_new.json    a "driver upgrade": new driver/CUDA/NCCL/VBIOS, a lower power limit, and
                     points that got slower (GEMM own kernel bf16 at 8 GPUs, NCCL bf16
                     all-reduce >= 16 MiB at 8 GPUs), faster (cuBLAS fp32 GEMM), noisy (training
                     batch 256 at 8 GPUs), failed (training batch 32 at 2 GPUs), one point
                     dropped and one added; every other point re-measured with +-0.2 % noise.
  sample_cloud.json  a third offer: 4 % slower everywhere, in a KVM guest.
From tests/data/report_hostile.json (hostile strings everywhere):
  hostile_new.json   another hostile driver string and host name, one point slower.
Deterministic (fixed seeds). Python standard library only.
"""
import copy
import json
import os
import random
import statistics
import sys

HOSTILE_HOST = "\"><svg onload=alert(4)>"


def restat(samples):
    s = sorted(samples)
    n = len(s)

    def pct(q):
        h = (n - 1) * q
        lo = int(h)
        hi = min(lo + 1, n - 1)
        return s[lo] + (h - lo) * (s[hi] - s[lo])

    mean = statistics.fmean(s)
    sd = statistics.stdev(s) if n > 1 else 0.0
    return {"n": n, "median": statistics.median(s), "mean": mean, "min": s[0], "max": s[-1],
            "stdev": sd, "rel_stdev": sd / mean if mean else 0.0, "p05": pct(0.05),
            "p95": pct(0.95), "ci_low": pct(0.4), "ci_high": pct(0.6)}


TIME_METRICS = {"time_us", "time_ms", "step_time_s", "breakdown_step_s"}


def scale_point(point, factor, rnd, jitter):
    """Sample times x factor (and noise); throughput metrics / factor, time metrics x factor."""
    if point.get("status") != "ok" or not point.get("samples"):
        return
    noisy = [t * factor * (1 + rnd.uniform(-jitter, jitter)) for t in point["samples"]]
    real = statistics.median(noisy) / statistics.median(point["samples"])
    point["samples"] = noisy
    point["stats"] = restat(noisy)
    for r in point.get("ranks", []):
        for k in ("median_s", "mean_s"):
            if k in r:
                r[k] *= real
    for k, v in list(point.get("metrics", {}).items()):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        if k in TIME_METRICS or k.endswith("_s") and "per_s" not in k:
            point["metrics"][k] = v * real
        elif k in ("global_batch",):
            continue
        else:
            point["metrics"][k] = v / real


def refresh_scaling(doc):
    """Scaling rows follow the (changed) points: throughput, speedup, efficiency."""
    points = doc["points"]
    for series in doc.get("scaling", []):
        rows = series.get("rows", [])
        metric = series.get("metric")
        for row in rows:
            i = row.get("point_index")
            if i is None or i >= len(points):
                continue
            p = points[i]
            value = p.get("metrics", {}).get(metric)
            if p.get("status") != "ok" or value is None:
                continue
            row["throughput"] = value
            row["time_s"] = p["stats"]["median"]
        if not rows:
            continue
        base = min(rows, key=lambda r: r["gpus"])
        for row in rows:
            if base.get("throughput"):
                row["speedup"] = row["throughput"] / base["throughput"] * base["gpus"]
                row["efficiency"] = row["speedup"] / row["gpus"]


def sample_new(doc):
    rnd = random.Random(7)
    new = copy.deepcopy(doc)
    env = new["environment"]
    env["driver_version"] = "590.44.01"
    env["cuda_driver_version"] = "13.1"
    env["nccl"] = {"built": "2.28.9", "loaded": "2.29.3"}
    for gpu in env.get("gpus", []):
        gpu["vbios"] = "96.00.A1.00.02"
        gpu["power_limit_w"] = {"enforced": 650, "default": 700}
    new["started_at"] = "2025-02-20T09:00:00.000Z"
    kept = []
    for p in new["points"]:
        w, params, g = p["workload"], p["params"], p["gpus"]
        if (w == "allreduce" and params.get("impl") == "mgbench" and params.get("dtype") == "fp32"
                and params.get("bytes") == 8 and g == 2):
            continue  # only in base
        factor = 1.0
        if w == "gemm" and params.get("impl") == "mgbench" and params.get("dtype") == "bf16" \
                and g == 8:
            factor = 1.10
        elif w == "gemm" and params.get("impl") == "cublas" and params.get("dtype") == "fp32":
            factor = 0.94
        elif w == "allreduce" and params.get("impl") == "nccl" and params.get("dtype") == "bf16" \
                and g == 8 and params.get("bytes", 0) >= 16 << 20:
            factor = 1.12
        elif w == "train_step" and params.get("batch") == 256 and g == 8:
            factor = 1.05
            p["noisy"] = True
        scale_point(p, factor, rnd, 0.002)
        if w == "train_step" and params.get("batch") == 32 and g == 2:
            p["status"] = "failed"
            p["message"] = "worker exited with signal 11 (SIGSEGV)"
            p["samples"] = []
        kept.append(p)
    extra = copy.deepcopy(next(p for p in kept if p["workload"] == "gemm" and p["gpus"] == 1
                               and p["status"] == "ok"))
    for k in ("m", "n", "k"):
        extra["params"][k] = 16384
    scale_point(extra, 7.6, rnd, 0.002)  # 8x the work in 7.6x the time
    for k in ("tflops_per_gpu", "tflops_aggregate"):
        if k in extra["metrics"]:
            extra["metrics"][k] *= 8
    kept.append(extra)
    for i, p in enumerate(kept):
        p["index"] = i
    # Scaling rows point at indices of the base document: map them through the point keys.
    old_keys = [json.dumps([p["workload"], p["params"], p["gpus"]], sort_keys=True)
                for p in doc["points"]]
    new_index = {json.dumps([p["workload"], p["params"], p["gpus"]], sort_keys=True): i
                 for i, p in enumerate(kept)}
    for series in new.get("scaling", []):
        rows = []
        for row in series.get("rows", []):
            i = row.get("point_index")
            key = old_keys[i] if i is not None and i < len(old_keys) else None
            if key in new_index:
                row["point_index"] = new_index[key]
                rows.append(row)
        series["rows"] = rows
    new["points"] = kept
    refresh_scaling(new)
    return new


def sample_cloud(doc):
    rnd = random.Random(11)
    new = copy.deepcopy(doc)
    new["host"] = "vm-h200x8-1"
    host = new["environment"].setdefault("host", {})
    if isinstance(host, dict):
        host["hostname"] = "vm-h200x8-1"
        host["virtualization"] = "KVM"
        host["hypervisor_flag"] = True
    for p in new["points"]:
        scale_point(p, 1.04, rnd, 0.002)
    refresh_scaling(new)
    return new


def hostile_new(doc):
    rnd = random.Random(13)
    new = copy.deepcopy(doc)
    new["environment"]["driver_version"] = HOSTILE_HOST
    new["environment"]["host"] = {"hostname": HOSTILE_HOST, "kernel": "</table><script>alert(5)"}
    new["host"] = HOSTILE_HOST
    for p in new["points"]:
        scale_point(p, 1.2 if p["gpus"] == 2 else 1.0, rnd, 0.002)
    refresh_scaling(new)
    return new


def write_fixtures(source, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    data = os.path.join(source, "tests", "data")
    with open(os.path.join(data, "report_sample.json"), encoding="utf-8") as f:
        sample = json.load(f)
    with open(os.path.join(data, "report_hostile.json"), encoding="utf-8") as f:
        hostile = json.load(f)
    out = {"sample": os.path.join(data, "report_sample.json"),
           "hostile": os.path.join(data, "report_hostile.json")}
    for name, doc in (("sample_new", sample_new(sample)), ("sample_cloud", sample_cloud(sample)),
                      ("hostile_new", hostile_new(hostile))):
        path = os.path.join(out_dir, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        out[name] = path
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    for name, path in write_fixtures(sys.argv[1], sys.argv[2]).items():
        print(f"{name}: {path}")
