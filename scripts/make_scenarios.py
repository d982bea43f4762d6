#!/usr/bin/env python3
"""Writes the scenario library: realistic multi-GPU results files for the verdict tests.

usage: make_scenarios.py OUT_DIR          write every scenario (tests/data/scenarios)
       make_scenarios.py --check DIR      exit 1 when DIR differs from what this script writes

No multi-GPU machine has run mgbench yet. These results sets stand in for one: each is a results
document (schema_version 2) with the points a sweep on that machine would record, built from the
committed real H200 run (reports/examples/h200-1gpu: GEMM bf16 4096^3 685 TFLOP/s per GPU at
0.2006 ms and ~1550 MHz under the 700 W cap, the training step's 1-GPU breakdown, the workloads'
presentation) and from public figures:
  - all-reduce bus bandwidth on 8 NVLink-4 GPUs without NVLink SHARP: ~370 GB/s at large sizes
    (nccl-tests all_reduce_perf on DGX/HGX H100), against 450 GB/s per GPU per direction
    (18 links x 25 GB/s);
  - all-reduce over PCIe without NVLink: ~20-24 GB/s busbw on 8 GPUs (nccl-tests on PCIe
    servers), against 63 GB/s of a Gen5 x16 link;
  - between nodes over 400 Gb/s InfiniBand, one NIC per GPU: ~45-50 GB/s busbw (nccl-tests
    multi-node); over 100 Gb/s Ethernet (RoCE) ~10 GB/s.
Times are derived from those figures with the formulas of the workloads (busbw = S/t x 2(n-1)/n;
the training step's gradients are 2 bytes per parameter, hidden^2 x layers parameters).

The expected verdicts are NOT produced here: the tests (tests/unit/test_scenarios.cpp) state them
by hand. Every scenario is described in tests/data/scenarios/README.md. Deterministic; Python
standard library only. Regenerate after changing this script, never edit the files by hand (a
CTest check compares them with this script's output).
"""
import copy
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "reports", "examples", "h200-1gpu", "results.json")

GEMM_FLOPS_4096 = 2 * 4096 ** 3


def load_example():
    with open(EXAMPLE) as f:
        return json.load(f)


def stats_of(median, n=5, jitter=0.002):
    """Five samples around `median` (+-0.2 %), their statistics (median exact)."""
    offsets = [0.0, -jitter, jitter, -jitter / 2, jitter / 2][:n]
    samples = [median * (1 + o) for o in offsets]
    s = sorted(samples)
    mean = statistics.fmean(s)
    sd = statistics.stdev(s)
    stats = {"n": n, "median": statistics.median(s), "mean": mean, "min": s[0], "max": s[-1],
             "stdev": sd, "rel_stdev": sd / mean, "p05": s[0], "p95": s[-1],
             "ci_low": s[1], "ci_high": s[-2]}
    return samples, stats


def gpu_env(example_gpu, index, nvlinks, pcie_gen, power_limit=700.0, name=None):
    g = copy.deepcopy(example_gpu)
    g["index"] = index
    g["pci_bus_id"] = "0000:%02x:00.0" % (0x18 + 0x10 * index)
    g["uuid"] = g["nvml_uuid"] = "GPU-5ce7a710-0000-0000-0000-%012d" % index
    g["serial"] = None
    g["nvlink"] = {"links_total": 18 if nvlinks else 0, "links_up": nvlinks}
    g["pcie"] = {"gen_current": pcie_gen, "gen_gpu_max": pcie_gen, "gen_max": pcie_gen,
                 "width_current": 16, "width_max": 16}
    g["power_limit_w"] = {"default": 700.0, "enforced": power_limit, "management": power_limit,
                          "max": 700.0, "min": 200.0}
    if name:
        g["name"] = g["nvml_name"] = name
    return g


def environment(example, gpus=8, nvlinks=18, pcie_gen=5, power=None, name=None, host="node-a",
                nics=None):
    """The submitting host's environment: `gpus` GPUs like the example's H200."""
    power = power or {}
    gpu0 = example["environment"]["gpus"][0]
    env = {
        "versions": copy.deepcopy(example["environment"]["versions"]),
        "gpu_count": gpus,
        "gpus": [gpu_env(gpu0, i, nvlinks, pcie_gen, power.get(i, 700.0), name)
                 for i in range(gpus)],
        "host": dict(copy.deepcopy(example["environment"]["host"]), hostname=host,
                     hypervisor_flag=False, virtualization=None, container=False),
        "env": {"NCCL_NVLS_ENABLE": "0"},
        "topology": {"devices": list(range(gpus)),
                     "matrix": [["X" if i == j else ("NV%d" % nvlinks if nvlinks else "SYS")
                                 for j in range(gpus)] for i in range(gpus)]},
        "peer_access": [[1] * gpus for _ in range(gpus)],
        "fingerprint_hash": "5ce0%012x" % (gpus * 1000 + nvlinks * 10 + pcie_gen),
    }
    if nics:
        env["nics"] = nics
    return env


def telemetry(devices, clocks=None, powers=None, reasons=None, nodes=1, hosts=None):
    """Per-GPU telemetry summaries: SM clock (MHz) and power (W) per device, 1550 MHz and 690 W
    unless given (the example's GEMM under the 700 W cap)."""
    clocks, powers, reasons = clocks or {}, powers or {}, reasons or {}
    gpus = []
    per_node = len(devices) // nodes
    for r, d in enumerate(devices):
        node = r // per_node
        clk = clocks.get((node, d), clocks.get(d, 1550.0))
        pw = powers.get((node, d), powers.get(d, 690.0))
        g = {"device": d, "avg_power_w": pw, "sm_clock_mhz": {"median": clk},
             "temp_c": {"max": 62.0}, "throttle_fraction": 1.0 if pw >= 480 else 0.0,
             "throttle_reasons": reasons.get(d, ["sw_power_cap"] if pw >= 480 else [])}
        if nodes > 1:
            g["node"] = node
            g["host"] = hosts[node]
        gpus.append(g)
    return {"duration_s": 0.5, "gpus": gpus}


class Run:
    """One results document under construction."""

    def __init__(self, example, env, scaling="weak", baseline_each=False, argv=None):
        self.example = example
        self.doc = {
            "schema_version": 2,
            "tool": {"name": "mgbench", "version": "0.1.0", "git_revision": "scenario"},
            "argv": argv or ["sweep"],
            "run_id": "5ce0",
            "started_at": "2027-01-10T09:00:00.000Z",
            "finished_at": "2027-01-10T09:30:00.000Z",
            "host": env["host"]["hostname"],
            "environment": env,
            "settings": dict(copy.deepcopy(example["settings"]), scaling=scaling,
                             baseline_each=baseline_each),
            "plan": {"groups": [], "total_points": 0},
            "points": [], "scaling": [], "verdicts": [], "summaries": {},
            "presentation": {}, "doctor": None, "telemetry_series": None,
            "interrupted": False,
        }

    def add(self, workload, params, devices, median_s, metrics, rank_s=None, rank_metrics=None,
            tel=None, nodes=1, hosts=None, status="ok", message="", timing="host",
            cache="cold"):
        """A point; rank_s: each rank's median seconds (default: all at median_s)."""
        index = len(self.doc["points"])
        gpus = len(devices)
        hosts = hosts or [self.doc["host"]]
        per_node = gpus // nodes
        samples, stats = stats_of(median_s) if status == "ok" else ([], None)
        rank_s = rank_s or [median_s] * gpus
        p = {
            "index": index, "workload": workload, "params": params, "gpus": gpus,
            "devices": devices[:per_node] if nodes > 1 else devices,
            "process_model": "processes" if nodes > 1 else "threads",
            "launcher": "mpirun" if nodes > 1 else "local",
            "nodes": nodes, "hosts": hosts[:nodes], "gpus_per_node": per_node,
            "status": status, "message": message, "noisy": False, "timing": timing,
            "cache": cache, "warmup_s": 1.0, "flags": [], "spread": None,
            "ops_per_sample": 8, "samples": samples,
            "stats": stats or {"n": 0, "median": 0, "mean": 0, "min": 0, "max": 0, "stdev": 0,
                               "rel_stdev": 0, "p05": 0, "p95": 0, "ci_low": 0, "ci_high": 0},
            "ranks": [] if status != "ok" else
            [{"rank": r, "device": devices[r % per_node] if nodes > 1 else devices[r],
              "median_s": t, "mean_s": t} for r, t in enumerate(rank_s)],
            "metrics": metrics if status == "ok" else {},
            "memory": {"peak_bytes": [2 ** 31] * gpus} if status == "ok" else {},
            "verification": {"ok": True} if status == "ok" else {},
            "telemetry": tel if status == "ok" else None,
            "extra": {"ranks": [{"rank": r, "details": {"metrics": m}}
                                for r, m in enumerate(rank_metrics)]} if rank_metrics else {},
            "wall_s": 2.0, "started_at": "2027-01-10T09:%02d:00.000Z" % (index % 60),
        }
        self.doc["points"].append(p)
        if workload not in self.doc["presentation"]:
            self.doc["presentation"][workload] = copy.deepcopy(
                self.example["presentation"][workload])
        return p

    def finish(self):
        groups = {}
        for p in self.doc["points"]:
            key = (p["workload"], tuple(p["devices"]), p["nodes"])
            g = groups.setdefault(key, {"index": len(groups), "workload": p["workload"],
                                        "devices": p["devices"], "points": []})
            g["points"].append({"index": p["index"], "params": p["params"]})
        self.doc["plan"] = {"groups": list(groups.values()),
                            "total_points": len(self.doc["points"])}
        return self.doc


# ---- workloads --------------------------------------------------------------------------------

GEMM = {"cache": "cold", "dtype": "bf16", "impl": "cublas", "k": 4096, "m": 4096, "n": 4096,
        "shape": "square", "timing": "host"}


def gemm_point(run, devices, rank_s, tel=None):
    """GEMM bf16 4096^3 on every GPU at once: the headline time is the slowest rank's."""
    t = max(rank_s)
    per_gpu = GEMM_FLOPS_4096 / t / 1e12
    metrics = {"tflops_per_gpu": per_gpu, "tflops_aggregate": per_gpu * len(devices),
               "time_ms": t * 1e3}
    return run.add("gemm", dict(GEMM), devices, t, metrics, rank_s=rank_s,
                   tel=tel or telemetry(devices))


def allreduce_points(run, devices, plateau, nodes=1, hosts=None, with_one=True):
    """NCCL all-reduce fp32 at 1 MiB .. 1 GiB; busbw rises to `plateau` GB/s at the largest
    sizes (latency-bound below). On one GPU busbw is undefined (no metric)."""
    n = len(devices)
    for size in (1 << 20, 1 << 26, 1 << 30):
        params = {"bytes": size, "cache": "cold", "count": size // 4, "dtype": "fp32",
                  "impl": "nccl", "inplace": False, "timing": "host"}
        if n == 1:
            if with_one:
                t = size / 1.3e12 + 4e-6  # a local copy
                run.add("allreduce", params, devices, t, {"algbw_GBps": size / t / 1e9,
                                                          "time_us": t * 1e6},
                        tel=telemetry(devices, powers={d: 130.0 for d in devices}))
            continue
        # busbw(S) = plateau x S / (S + S_half): half the plateau at 4 MiB on one node, 16 MiB
        # between nodes.
        half = (1 << 22) if nodes == 1 else (1 << 24)
        busbw = plateau * size / (size + half)
        algbw = busbw / (2 * (n - 1) / n)
        t = size / (algbw * 1e9)
        run.add("allreduce", params, devices, t,
                {"busbw_GBps": busbw, "algbw_GBps": algbw, "time_us": t * 1e6},
                tel=telemetry(devices, powers={d: 300.0 for d in devices}, nodes=nodes,
                              hosts=hosts), nodes=nodes, hosts=hosts)


def train_params(batch, hidden=1024, layers=12, overlap=True):
    return {"accum": 1, "batch": batch, "bucket_mb": 25, "dtype": "bf16", "h2d": True,
            "hidden": hidden, "impl": "nccl", "layers": layers, "overlap": overlap}


def train_point(run, devices, params, compute_s, exposed_s, comm_s, h2d_s, optimizer_s,
                rank_compute=None, nodes=1, hosts=None, status="ok", message=""):
    """One training step point: step = compute_only + exposed communication (the workload's
    formula); samples/s = batch x GPUs / step."""
    n = len(devices)
    step = compute_s + exposed_s
    overlap = (comm_s - exposed_s) / comm_s if comm_s > 0 else 1.0
    breakdown = {"compute_only_s": compute_s, "exposed_comm_s": exposed_s, "comm_s": comm_s,
                 "h2d_s": h2d_s, "optimizer_s": optimizer_s, "overlap_ratio": overlap,
                 "breakdown_step_s": step, "breakdown_samples": 5}
    metrics = dict(breakdown, step_time_s=step, global_batch=float(params["batch"] * n),
                   samples_per_s=params["batch"] * n / step,
                   samples_per_s_per_gpu=params["batch"] / step)
    rank_compute = rank_compute or [compute_s] * n
    rank_metrics = [{"compute_only_s": c} for c in rank_compute]
    return run.add("train_step", params, devices, step, metrics, rank_metrics=rank_metrics,
                   tel=telemetry(devices, powers={d: 560.0 for d in devices}, nodes=nodes,
                                 hosts=hosts),
                   nodes=nodes, hosts=hosts, status=status, message=message, cache="hot")


def comm_time(grad_bytes, n, busbw_GBps):
    """All-reduce time of the gradients: S x 2(n-1)/n / busbw."""
    return grad_bytes * 2 * (n - 1) / n / (busbw_GBps * 1e9)


GRAD_SMALL = 2 * 1024 * 1024 * 12   # hidden 1024, 12 layers, bf16 gradients: 25.2 MB
GRAD_LARGE = 2 * 4096 * 4096 * 8    # hidden 4096, 8 layers (the example's model): 268 MB


# ---- the scenarios ------------------------------------------------------------------------------

def gemm_straggler_gpu5(ex):
    """8x H200 NVLink, --baseline each: GPU 5 capped at 500 W runs GEMM 15 % slower alone and is
    the slowest rank of the 8-GPU point (17 % above the typical rank); the others lose ~2.5 %
    when all eight run (shared power and cooling)."""
    run = Run(ex, environment(ex, power={5: 500.0}), baseline_each=True,
              argv=["sweep", "--workloads", "gemm", "--gpus", "1,2,4,8", "--baseline", "each"])
    slow = {"clocks": {5: 1320.0}, "powers": {5: 500.0}}
    for d in range(8):
        t = 0.23600e-3 if d == 5 else 0.20050e-3 + 0.00002e-3 * d
        gemm_point(run, [d], [t], tel=telemetry([d], **slow))
    gemm_point(run, [0, 1], [0.20090e-3, 0.20110e-3])
    gemm_point(run, [0, 1, 2, 3], [0.20250e-3, 0.20270e-3, 0.20260e-3, 0.20280e-3])
    ranks = [0.2058, 0.2059, 0.2060, 0.2061, 0.2062, 0.2420, 0.2063, 0.2064]
    gemm_point(run, list(range(8)), [t * 1e-3 for t in ranks], tel=telemetry(range(8), **slow))
    return run.finish()


def gemm_straggler_gpu0(ex):
    """The same, but the power-capped GPU is GPU 0 and no --baseline each: the default 1-GPU
    baseline runs on the slow GPU, and every group with GPU 0 runs at its pace."""
    run = Run(ex, environment(ex, power={0: 500.0}),
              argv=["sweep", "--workloads", "gemm", "--gpus", "1,2,4,8"])
    slow = {"clocks": {0: 1320.0}, "powers": {0: 500.0}}
    gemm_point(run, [0], [0.23600e-3], tel=telemetry([0], **slow))
    gemm_point(run, [0, 1], [0.23620e-3, 0.20080e-3], tel=telemetry([0, 1], **slow))
    gemm_point(run, [0, 1, 2, 3], [t * 1e-3 for t in (0.2364, 0.2010, 0.2011, 0.2012)],
               tel=telemetry(range(4), **slow))
    ranks = [0.2432, 0.2058, 0.2059, 0.2060, 0.2061, 0.2062, 0.2063, 0.2064]
    gemm_point(run, list(range(8)), [t * 1e-3 for t in ranks], tel=telemetry(range(8), **slow))
    return run.finish()


def gemm_straggler_gpu0_each(ex):
    """GPU 0 capped again, now with --baseline each: the baseline is the median GPU alone, and
    the verdict says that GPU 0, the baseline a plain sweep takes, is the outlier."""
    run = Run(ex, environment(ex, power={0: 500.0}), baseline_each=True,
              argv=["sweep", "--workloads", "gemm", "--gpus", "1,2,4,8", "--baseline", "each"])
    slow = {"clocks": {0: 1320.0}, "powers": {0: 500.0}}
    for d in range(8):
        t = 0.23600e-3 if d == 0 else 0.20050e-3 + 0.00002e-3 * d
        gemm_point(run, [d], [t], tel=telemetry([d], **slow))
    gemm_point(run, [0, 1], [0.23620e-3, 0.20080e-3], tel=telemetry([0, 1], **slow))
    gemm_point(run, [0, 1, 2, 3], [t * 1e-3 for t in (0.2364, 0.2010, 0.2011, 0.2012)],
               tel=telemetry(range(4), **slow))
    ranks = [0.2432, 0.2058, 0.2059, 0.2060, 0.2061, 0.2062, 0.2063, 0.2064]
    gemm_point(run, list(range(8)), [t * 1e-3 for t in ranks], tel=telemetry(range(8), **slow))
    return run.finish()


def weak_train(run, devices_list, busbw, hidden, layers, batch, compute1, h2d, opt, grad,
               exposed_share, growth, overlaps=(True,)):
    """Weak-scaling training steps: compute grows by growth[n] (s), communication is the
    gradient all-reduce at busbw[n], `exposed_share` of it exposed with overlap on, all with
    overlap off."""
    for overlap in overlaps:
        params = train_params(batch, hidden, layers, overlap)
        for devices in devices_list:
            n = len(devices)
            if n == 1:
                train_point(run, devices, params, compute1, 0.0, 1.3e-6, h2d, opt)
                continue
            comm = comm_time(grad, n, busbw[n])
            exposed = comm * exposed_share if overlap else comm
            train_point(run, devices, params, compute1 + growth[n], exposed, comm, h2d, opt)


def pcie_weak(ex):
    """8x H200 NVL on PCIe Gen5 without NVLink bridges: a small model (hidden 1024, 12 layers,
    25.2 MB of bf16 gradients) at per-GPU batch 8192, overlap on and off, and the all-reduce.
    busbw 24 / 22 / 20 GB/s on 2 / 4 / 8 GPUs; overlap hides 28 % of the all-reduce."""
    run = Run(ex, environment(ex, nvlinks=0, name="NVIDIA H200 NVL"),
              argv=["sweep", "--workloads", "train_step,allreduce", "--gpus", "1,2,4,8"])
    counts = [[0], [0, 1], [0, 1, 2, 3], list(range(8))]
    weak_train(run, counts, {2: 24.0, 4: 22.0, 8: 20.0}, 1024, 12, 8192, 2.400e-3, 0.240e-3,
               0.144e-3, GRAD_SMALL, 0.722, {2: 0.004e-3, 4: 0.007e-3, 8: 0.010e-3},
               overlaps=(True, False))
    for devices, plateau in zip(counts, (0, 24.0, 22.0, 20.0)):
        allreduce_points(run, devices, plateau)
    return run.finish()


def hgx_nvlink(ex):
    """8x H200 HGX (18 NVLink 4 links per GPU): the example's training step (hidden 4096, 8
    layers, per-GPU batch 1024) with overlap hiding 92 % of the all-reduce, and the all-reduce
    at 352 / 362 / 370 GB/s busbw on 2 / 4 / 8 GPUs."""
    run = Run(ex, environment(ex), argv=["sweep", "--workloads", "train_step,allreduce",
                                         "--gpus", "1,2,4,8"])
    counts = [[0], [0, 1], [0, 1, 2, 3], list(range(8))]
    weak_train(run, counts, {2: 352.0, 4: 362.0, 8: 370.0}, 4096, 8, 1024, 2.528e-3, 0.313e-3,
               0.766e-3, GRAD_LARGE, 0.08, {2: 0.002e-3, 4: 0.004e-3, 8: 0.006e-3})
    for devices, plateau in zip(counts, (0, 352.0, 362.0, 370.0)):
        allreduce_points(run, devices, plateau)
    return run.finish()


def strong_train(run, hidden, layers, global_batch, steps, h2d_1, opt):
    """Strong scaling: per-GPU batch = global / n; steps[n] = (compute_only, exposed, comm)."""
    for n, (compute, exposed, comm) in sorted(steps.items()):
        batch = global_batch // n
        train_point(run, list(range(n)), train_params(batch, hidden, layers), compute, exposed,
                    comm, h2d_1 * batch / global_batch, opt)


def nvlink_strong(ex):
    """Strong scaling on the HGX: global batch 2048 of the example's model. At 256 per GPU the
    optimizer (0.77 ms, every GPU updates all weights) and the small GEMMs do not shrink."""
    run = Run(ex, environment(ex), scaling="strong",
              argv=["sweep", "--workloads", "train_step", "--gpus", "1,2,4,8", "--batch-sizes",
                    "2048", "--scaling", "strong"])
    strong_train(run, 4096, 8, 2048, {
        1: (5.050e-3, 0.0, 1.3e-6),
        2: (2.528e-3, 0.100e-3, comm_time(GRAD_LARGE, 2, 352.0)),
        4: (1.743e-3, 0.170e-3, comm_time(GRAD_LARGE, 4, 362.0)),
        8: (1.344e-3, 0.450e-3, comm_time(GRAD_LARGE, 8, 370.0))}, 0.626e-3, 0.766e-3)
    return run.finish()


def pcie_strong(ex):
    """Strong scaling on the PCIe server: global batch 16384 of the small model. The all-reduce
    does not shrink with the batch: 8 GPUs give less than 4."""
    run = Run(ex, environment(ex, nvlinks=0, name="NVIDIA H200 NVL"), scaling="strong",
              argv=["sweep", "--workloads", "train_step", "--gpus", "1,2,4,8", "--batch-sizes",
                    "16384", "--scaling", "strong"])
    strong_train(run, 1024, 12, 16384, {
        1: (4.800e-3, 0.0, 1.3e-6),
        2: (2.410e-3, 0.755e-3, comm_time(GRAD_SMALL, 2, 24.0)),
        4: (1.250e-3, 1.200e-3, comm_time(GRAD_SMALL, 4, 22.0)),
        8: (0.700e-3, 1.850e-3, comm_time(GRAD_SMALL, 8, 20.0))}, 0.480e-3, 0.144e-3)
    return run.finish()


def gemm_strong_superlinear(ex):
    """GEMM batch points (--batch-sizes 8192 --scaling strong, hidden 4096): 8192 tokens split
    over the GPUs. At 2 GPUs the time falls by 2.2x (110 %) with clean telemetry; 1024 tokens per
    GPU at 8 GPUs run less efficiently (92 %)."""
    run = Run(ex, environment(ex), scaling="strong",
              argv=["sweep", "--workloads", "gemm", "--gpus", "1,2,4,8", "--batch-sizes", "8192",
                    "--scaling", "strong"])
    for n, t in ((1, 0.800e-3), (2, 0.3636e-3), (4, 0.2020e-3), (8, 0.1090e-3)):
        tokens = 8192 // n
        per_gpu = 2 * tokens * 4096 * 4096 / t / 1e12
        params = {"batch": tokens, "cache": "cold", "dtype": "bf16", "hidden": 4096,
                  "impl": "cublas", "shape": "batch", "timing": "host"}
        run.add("gemm", params, list(range(n)), t,
                {"tflops_per_gpu": per_gpu, "tflops_aggregate": per_gpu * n, "time_ms": t * 1e3},
                tel=telemetry(range(n)))
    return run.finish()


def gemm_weak_throttled_baseline(ex):
    """Weak GEMM on 1 and 2 GPUs where the 1-GPU baseline ran thermally throttled (1350 MHz):
    2 GPUs appear 115 % efficient."""
    run = Run(ex, environment(ex), argv=["sweep", "--workloads", "gemm", "--gpus", "1,2"])
    gemm_point(run, [0], [0.2306e-3],
               tel=telemetry([0], clocks={0: 1350.0},
                             reasons={0: ["sw_power_cap", "sw_thermal_slowdown"]}))
    gemm_point(run, [0, 1], [0.2010e-3, 0.2012e-3])
    return run.finish()


IB_NICS = {"infiniband": [{"device": "mlx5_%d" % i, "port": 1, "state": "ACTIVE",
                           "rate": "400 Gb/sec (4X NDR)", "link_layer": "InfiniBand",
                           "netdevs": [], "numa_node": i // 4} for i in range(8)],
           "interfaces": [], "gpu_nic_affinity": []}


def two_node_ib(ex):
    """2 x 8 H200 with one 400 Gb/s InfiniBand NIC per GPU (environment.nics as mgbench doctor
    records it): the all-reduce at 47 GB/s busbw between nodes."""
    run = Run(ex, environment(ex, nics=IB_NICS),
              argv=["sweep", "--workloads", "allreduce", "--gpus", "1,2,4,8,16", "--launcher",
                    "mpirun", "--hosts", "node-a:8,node-b:8"])
    for devices, plateau in (([0], 0), ([0, 1], 352.0), ([0, 1, 2, 3], 362.0),
                             (list(range(8)), 370.0)):
        allreduce_points(run, devices, plateau)
    allreduce_points(run, list(range(8)) * 2, 47.0, nodes=2, hosts=["node-a", "node-b"])
    return run.finish()


def two_node_ethernet(ex):
    """2 x 8 H200 over 100 Gb/s Ethernet (RoCE, ~10 GB/s busbw; the NIC is not recorded): the small
    model's training step at per-GPU batch 8192 and the all-reduce."""
    run = Run(ex, environment(ex),
              argv=["sweep", "--workloads", "train_step,allreduce", "--gpus", "1,8,16",
                    "--launcher", "mpirun", "--hosts", "node-a:8,node-b:8"])
    params = train_params(8192)
    hosts = ["node-a", "node-b"]
    train_point(run, [0], params, 2.400e-3, 0.0, 1.3e-6, 0.240e-3, 0.144e-3)
    train_point(run, list(range(8)), params, 2.410e-3, 0.012e-3,
                comm_time(GRAD_SMALL, 8, 370.0), 0.240e-3, 0.144e-3)
    comm16 = GRAD_SMALL * 2 * 15 / 16 / 10e9
    train_point(run, list(range(8)) * 2, params, 2.412e-3, 3.200e-3, comm16, 0.240e-3, 0.144e-3,
                nodes=2, hosts=hosts)
    allreduce_points(run, [0], 0)
    allreduce_points(run, list(range(8)), 370.0)
    allreduce_points(run, list(range(8)) * 2, 10.2, nodes=2, hosts=hosts)
    return run.finish()


def failed_baseline(ex):
    """The HGX training step whose 1-GPU point failed (the worker was killed): 2, 4 and 8 GPUs
    are fine."""
    run = Run(ex, environment(ex), argv=["sweep", "--workloads", "train_step",
                                         "--gpus", "1,2,4,8"])
    params = train_params(1024, 4096, 8)
    train_point(run, [0], params, 1.0, 0, 0, 0, 0, status="failed",
                message="worker exited with signal 9 (killed)")
    for n, busbw in ((2, 352.0), (4, 362.0), (8, 370.0)):
        comm = comm_time(GRAD_LARGE, n, busbw)
        train_point(run, list(range(n)), params, 2.528e-3 + 0.0005e-3 * n, 0.08 * comm, comm,
                    0.313e-3, 0.766e-3)
    return run.finish()


def offer(ex, slower, gpu5_slow, vm=False, two_nodes=False):
    """An offer of 8 H200 GPUs: GEMM on each GPU alone (--baseline each) and on all 8, and the
    all-reduce on 1 and 8 GPUs; every time x `slower`. two_nodes: 2 x 4 GPUs (the submitting
    host lists 4), one GEMM 1-GPU point, the 8-GPU points across both nodes at 46 GB/s busbw."""
    env = environment(ex, gpus=4 if two_nodes else 8, host="offer-host")
    if vm:
        env["host"].update(hypervisor_flag=True, virtualization="KVM")
    run = Run(ex, env, baseline_each=not two_nodes, argv=["sweep", "--gpus", "1,8"])
    devices = [0] if two_nodes else list(range(8))
    for d in devices:
        t = (0.2360e-3 if (gpu5_slow and d == 5) else 0.2005e-3) * slower
        gemm_point(run, [d], [t])
    nodes, hosts = (2, ["offer-host", "offer-host-2"]) if two_nodes else (1, None)
    all8 = list(range(4)) * 2 if two_nodes else list(range(8))
    rank_s = [0.2060e-3 * slower] * 8
    run.add("gemm", dict(GEMM), all8, rank_s[0],
            {"tflops_per_gpu": GEMM_FLOPS_4096 / rank_s[0] / 1e12,
             "tflops_aggregate": 8 * GEMM_FLOPS_4096 / rank_s[0] / 1e12,
             "time_ms": rank_s[0] * 1e3},
            rank_s=rank_s, tel=telemetry(all8, nodes=nodes, hosts=hosts), nodes=nodes,
            hosts=hosts)
    allreduce_points(run, [0], 0)
    allreduce_points(run, all8, (47.0 if two_nodes else 370.0) / slower, nodes=nodes, hosts=hosts)
    return run.finish()


def compare_pair(ex):
    """Two runs of the HGX before and after a change that slows the 8-GPU all-reduce by 20 %:
    the training step's exposed communication grows from 0.10 to 0.60 ms; compute is the same.
    Both runs measured GEMM on every GPU alone (--baseline each)."""
    docs = []
    for busbw, exposed in ((370.0, 0.100e-3), (370.0 * 0.80, 0.600e-3)):
        run = Run(ex, environment(ex), baseline_each=True, argv=["sweep", "--gpus", "1,8"])
        params = train_params(1024, 4096, 8)
        train_point(run, [0], params, 2.528e-3, 0.0, 1.3e-6, 0.313e-3, 0.766e-3)
        train_point(run, list(range(8)), params, 2.534e-3, exposed,
                    comm_time(GRAD_LARGE, 8, busbw), 0.313e-3, 0.766e-3)
        allreduce_points(run, [0], 0)
        allreduce_points(run, list(range(8)), busbw)
        for d in range(8):
            gemm_point(run, [d], [(0.2360e-3 if d == 5 else 0.2005e-3)])
        docs.append(run.finish())
    return docs


def scenarios():
    ex = load_example()
    out = {
        "gemm-straggler-gpu5": gemm_straggler_gpu5(ex),
        "gemm-straggler-gpu0": gemm_straggler_gpu0(ex),
        "gemm-straggler-gpu0-each": gemm_straggler_gpu0_each(ex),
        "pcie-weak": pcie_weak(ex),
        "hgx-nvlink": hgx_nvlink(ex),
        "nvlink-strong": nvlink_strong(ex),
        "pcie-strong": pcie_strong(ex),
        "gemm-strong-superlinear": gemm_strong_superlinear(ex),
        "gemm-weak-throttled-baseline": gemm_weak_throttled_baseline(ex),
        "two-node-ib": two_node_ib(ex),
        "two-node-ethernet": two_node_ethernet(ex),
        "failed-baseline": failed_baseline(ex),
        "offer-hgx": offer(ex, 1.0, gpu5_slow=True),
        "offer-cloud": offer(ex, 1.01, gpu5_slow=False, vm=True),
        "offer-two-nodes": offer(ex, 1.08, gpu5_slow=False, two_nodes=True),
    }
    out["compare-base"], out["compare-new"] = compare_pair(ex)
    return out


def render(doc):
    """One key per line (diffable), no indentation (small)."""
    return json.dumps(doc, indent=0, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        bad = []
        for name, doc in scenarios().items():
            path = os.path.join(argv[2], name + ".json")
            try:
                with open(path) as f:
                    if f.read() == render(doc):
                        continue
            except OSError:
                pass
            bad.append(path)
        names = {n + ".json" for n in scenarios()}
        extra = sorted(f for f in os.listdir(argv[2]) if f.endswith(".json") and f not in names)
        for path in bad:
            print("differs from make_scenarios.py's output: " + path, file=sys.stderr)
        for f in extra:
            print("not written by make_scenarios.py: " + f, file=sys.stderr)
        return 1 if bad or extra else 0
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.splitlines()[2] + "\n" + __doc__.splitlines()[3], file=sys.stderr)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    for name, doc in scenarios().items():
        with open(os.path.join(argv[1], name + ".json"), "w") as f:
            f.write(render(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
