#!/usr/bin/env python3
"""Writes the synthetic results files of tests/data/compare (deterministic; schema_version 2).

usage: generate.py OUT_DIR
base.json    1-GPU GEMM bf16 at sizes 4096 and 8192, driver 570.86.15.
rerun.json   the same configuration again (other noise): `compare` says same, exit 0.
slower.json  8 % longer sample times, driver 580.65.06 and a new VBIOS: slower, exit 1.
cloud.json   3 % slower, in a KVM guest: a third offer for `compare --offers` / --price.
The GPU reports power capping (sw_power_cap, throttle_fraction 0.4): by default not throttling.
Each file carries GEMM's presentation as a sweep stores it (presentation.json here).
"""
import json
import os
import random
import statistics
import sys

out = sys.argv[1]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "presentation.json")) as f:
    PRESENTATION = json.load(f)
def stats(s):
    s2 = sorted(s); n = len(s2)
    def pct(q):
        h = (n - 1) * q; lo = int(h); hi = min(lo + 1, n - 1)
        return s2[lo] + (h - lo) * (s2[hi] - s2[lo])
    mean = statistics.fmean(s2); sd = statistics.stdev(s2)
    med = statistics.median(s2)
    return {"n": n, "median": med, "mean": mean, "min": s2[0], "max": s2[-1], "stdev": sd,
            "rel_stdev": sd / mean, "p05": pct(0.05), "p95": pct(0.95),
            "ci_low": pct(0.4), "ci_high": pct(0.6)}
def run(name, seed, factor, driver, host="gpu-node-1", started="2025-03-01T10:00:00.000Z",
        hypervisor=None):
    """One 1-GPU GEMM bf16 run (sizes 4096, 8192); sample times scaled by `factor`."""
    rnd = random.Random(seed)
    env = {
        "versions": {"driver": driver, "nvml": "12." + driver, "cuda_driver": "12.8" if driver.startswith("570") else "13.0",
                     "cuda_runtime": "13.0", "cublas": "13.0.0", "nccl_built": "2.28.9", "nccl_loaded": "2.28.9"},
        "gpu_count": 1,
        "gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-%08x" % rnd.getrandbits(32),
                  "pci_bus_id": "0000:19:00.0", "memory_bytes": 150754820096, "sm_count": 132,
                  "compute_capability": "9.0", "serial": None,
                  "vbios": "96.00.74.00.01" if driver.startswith("570") else "96.00.89.00.01",
                  "power_limit_w": {"enforced": 700.0, "default": 700.0, "min": 200.0, "max": 700.0},
                  "clocks_mhz": {"sm_max": 1980, "mem_max": 3201, "sm": 345 + rnd.randint(0, 50), "mem": 3201},
                  "pcie": {"gen_current": 1, "gen_max": 5, "width_current": 16, "width_max": 16},
                  "nvlink": {"links_total": 18, "links_up": 0}}],
        "host": {"hostname": host, "os": "Ubuntu 24.04.1 LTS", "kernel": "6.8.0-45-generic",
                 "cpu_model": "Intel(R) Xeon(R) Platinum 8480+", "hypervisor_flag": hypervisor is not None,
                 "virtualization": hypervisor},
        "env": {},
        "fingerprint_hash": "5eed00000000000%d" % (1 if driver.startswith("580") else 0),
    }
    points = []
    for i, size in enumerate([4096, 8192]):
        base_t = {4096: 2.1e-4, 8192: 1.6e-3}[size] * factor
        samples = [base_t * (1 + rnd.uniform(-0.003, 0.003)) for _ in range(20)]
        st = stats(samples)
        tflops = 2 * size ** 3 / st["median"] / 1e12
        power = 640.0 + rnd.uniform(-10, 10)
        points.append({
            "index": i, "workload": "gemm",
            "params": {"dtype": "bf16", "impl": "cublas", "size": size},
            "gpus": 1, "devices": [0], "status": "ok", "message": "", "noisy": False,
            "ops_per_sample": 4, "samples": samples, "stats": st,
            "ranks": [{"rank": 0, "device": 0, "median_s": st["median"], "mean_s": st["mean"]}],
            "metrics": {"tflops_per_gpu": tflops, "tflops_aggregate": tflops,
                        "tflops_aggregate_per_watt": tflops / power},
            "memory": {}, "verification": {"ok": True},
            "telemetry": {"interval_s": 0.1, "duration_s": 0.5,
                          "gpus": [{"device": 0, "pci_bus_id": "0000:19:00.0", "samples": 5,
                                    "avg_power_w": power, "throttle_fraction": 0.4,
                                    "throttle_reasons": ["sw_power_cap"]}]},
            "extra": {}, "wall_s": 1.5, "started_at": started,
        })
    doc = {"schema_version": 2,
           "tool": {"name": "mgbench", "version": "0.1.0", "git_revision": "synthetic"},
           "argv": ["mgbench", "sweep", "--gpus", "1", "--workloads", "gemm", "--dtypes", "bf16"],
           "started_at": started, "finished_at": started.replace("10:00", "10:01"),
           "host": host, "interrupted": False, "environment": env,
           "settings": {"min_samples": 10, "min_time_s": 0.5, "max_time_s": 5.0, "max_noise": 0.005,
                        "profile": "standard"},
           "plan": {"total_points": 2}, "points": points, "scaling": [], "verdicts": [],
           "summaries": {}, "presentation": PRESENTATION, "doctor": None,
           "telemetry_series": None}
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
run("base", 1, 1.0, "570.86.15")
run("rerun", 2, 1.0, "570.86.15", started="2025-03-01T11:00:00.000Z")
run("slower", 3, 1.08, "580.65.06", started="2025-03-02T10:00:00.000Z")
run("cloud", 4, 1.03, "570.86.15", host="vm-h200-1", started="2025-03-03T10:00:00.000Z", hypervisor="KVM")
