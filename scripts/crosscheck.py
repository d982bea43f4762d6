#!/usr/bin/env python3
"""Cross-check mgbench against independent tools on this GPU machine (scripts/crosscheck.sh).

collectives each NCCL collective against its nccl-tests binary (-d float; sums for the
            reductions, root 0 for broadcast and reduce): allreduce / all_reduce_perf,
            allgather / all_gather_perf, reducescatter / reduce_scatter_perf, alltoall /
            alltoall_perf, broadcast / broadcast_perf, reduce / reduce_perf, sendrecv /
            sendrecv_perf. Out-of-place time per op, against mgbench's fp32 out-of-place points
            on --gpus N GPUs (all-reduce: impl=nccl) measured with timing=host and cache=hot, at the same
            sizes: nccl-tests' `size` column is the total that mgbench's `bytes` is (the
            collectives that split it over the ranks start at 16 bytes, below which nccl-tests
            rounds a rank's share to nothing). nccl-tests launches its operations back to back
            from the host, so
            host timing is the like-for-like mgbench mode. In a sweep from -b to -e it moves its
            buffers by one message per iteration inside the largest size's allocation. Up to
            8 MiB (both buffers 16 MiB, inside L2) one process sweeps every size (-b 8 -e 8M
            -f 2): its buffers stay in L2, as mgbench's cache=hot pair does, and each run draws
            one launch-cost level for all the launch-bound sizes, as one mgbench sweep does.
            Above 8 MiB it runs once per size (-b S -e S), reusing one buffer pair as
            cache=hot does; a sweep would read memory the L2 does not hold. -n is chosen so
            that a run of one size times about 50 ms of operations (20 to 2000 iterations).
            Tolerance: 3 % from 1 MiB up, 10 % below.
            --gpus N (default 1) takes the GPUs --device .. --device + N - 1 for both tools:
            mgbench --gpus N --devices LIST (its local launcher: one thread per GPU) against
            nccl-tests -t N -g 1 (one thread per GPU too) with CUDA_VISIBLE_DEVICES=LIST.
gemm        torch.matmul in sustained mode (scripts/torch_matmul_reference.py --seconds S)
            against mgbench's cuBLASLt points (impl=cublas, cache=hot: torch reuses its
            operands) at M = N = K = 4096 and 8192, for bf16, fp16, tf32, fp32 and fp8.
            Tolerance: 3 %.

delta % = (mgbench - reference) / reference x 100, on time per op (collectives) and TFLOP/s
(gemm). Prints one table per workload and writes crosscheck.json, crosscheck.csv and
crosscheck.md to --out.
Exit codes: 0 every compared row within tolerance; 1 a row beyond tolerance or missing on one
side; 2 usage; 4 mgbench or a reference tool failed to run; 77 nothing failed, but a reference
tool is absent (nccl-tests not found, or python3 without torch/CUDA), so its part was skipped.

--repeats R runs both sides of each collective's check R times, alternating, and compares the median
over the runs of each tool's figure. A host-launched operation of a few microseconds costs what
the host's launch path costs, and on some hosts that cost is drawn per process: it holds for
the life of one process and differs from the next by up to a third. Each run of either tool is
one process for all the launch-bound sizes, so each run draws one level and both tools draw
from the same host. The fastest of R runs is the extreme of those draws and moves with the
spread; the median over the runs is the stable figure, so it is the one judged (R >= 8 for
sizes below 16 MiB on such hosts). "delta fastest %" compares the fastest runs (shown, not
judged), and "runs %" is the larger of the two tools' run-to-run spreads ((max - min) / median).
--cpus LIST runs both tools on the same CPUs. Where the launch cost depends on the core that
launches (a core far from the GPU, a virtual CPU on another socket), it takes that variable out
of the comparison. --only takes a comma list (e.g. --only allgather,sendrecv); --sizes a comma
list of sizes in bytes (ascending, x2 apart where below 8 MiB) instead of 8 B .. 1 GiB.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
from datetime import datetime, timezone

from crosscheck_output import render_section, size_label, write_outputs

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_ENV, EXIT_SKIPPED = 0, 1, 2, 4, 77
MIB = 1 << 20
COLLECTIVE_SIZES = [8 << i for i in range(28)]  # 8 B .. 1 GiB, x2
# name: (its nccl-tests binary, that binary's arguments beyond -b -e -f -g -d -c -n -w, mgbench
# --param values beyond dtype, inplace, bytes, timing and cache, whether nccl-tests splits the
# size over the ranks (its smallest size is then 16 bytes per rank)).
COLLECTIVES = {
    "allreduce": ("all_reduce_perf", ["-o", "sum"], ["impl=nccl"], False),
    "allgather": ("all_gather_perf", [], [], True),
    "reducescatter": ("reduce_scatter_perf", ["-o", "sum"], [], True),
    "alltoall": ("alltoall_perf", [], [], True),
    "broadcast": ("broadcast_perf", ["-r", "0"], ["root=0"], False),
    "reduce": ("reduce_perf", ["-o", "sum", "-r", "0"], ["root=0"], False),
    "sendrecv": ("sendrecv_perf", [], [], False),
}
WORKLOADS = list(COLLECTIVES) + ["gemm"]
GEMM_SIZES = [4096, 8192]
GEMM_DTYPES = ["bf16", "fp16", "tf32", "fp32", "fp8"]
SCRIPTS = os.path.dirname(os.path.abspath(__file__))


class ToolError(Exception):
    """A tool ran but its output cannot be used (exit 4)."""


# ---- parsing -------------------------------------------------------------------------------


def parse_nccl_tests_perf(text, tool="all_reduce_perf"):
    """Rows of a nccl-tests table (every *_perf binary prints the same columns):
    {bytes: {time_us, algbw, busbw, wrong}}, out-of-place.

    The column header line ('#  size  count  type  redop  root  time  algbw ...') names the
    columns; the first time/algbw/busbw/#wrong after 'root' (or 'redop' in older versions) are
    the out-of-place ones. Raises ToolError (naming `tool`) when there is no header or no row."""
    columns = None
    rows = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "#" and "size" in fields and "redop" in fields and "count" in fields:
            columns = fields[1:]
            continue
        if columns is None or line.lstrip().startswith("#") or not fields[0].isdigit():
            continue
        if len(fields) < len(columns) - 1:  # a trailing timestamp column may be empty
            continue
        named = {}
        for name, value in zip(columns, fields):
            named.setdefault(name, value)  # the first occurrence: out-of-place
        rows[int(named["size"])] = {
            "time_us": number(named.get("time", named.get("cputime"))),
            "algbw": number(named.get("algbw")),
            "busbw": number(named.get("busbw")),
            "wrong": named.get("#wrong"),
        }
    if columns is None:
        raise ToolError(f"no {tool} column header ('# size count type redop ...') found")
    if not rows:
        raise ToolError(f"{tool} printed its header but no result row")
    return rows


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


TORCH_LINE = re.compile(r"^torch_([a-z0-9]+)_(\d+)_(tflops|skipped)\s+(.*)$")


def parse_torch_reference(text):
    """Lines of scripts/torch_matmul_reference.py: {(dtype, n): tflops or 'skipped: why'}."""
    out = {}
    for line in text.splitlines():
        match = TORCH_LINE.match(line.strip())
        if not match:
            continue
        dtype, n, kind, value = match.group(1), int(match.group(2)), match.group(3), match.group(4)
        out[(dtype, n)] = number(value) if kind == "tflops" else "skipped: " + value.strip()
    return out


def mgbench_points(results, workload):
    """The points of one workload in a results.json document."""
    return [p for p in results.get("points", []) if p.get("workload") == workload]


def point_setting(point, name):
    """timing / cache of a point: a parameter or a field of the point, whichever is recorded."""
    value = point.get("params", {}).get(name, point.get(name))
    return str(value) if value is not None else None


def mgbench_collective(results, workload="allreduce", gpus=1):
    """{bytes: value} for the collective's NCCL fp32 out-of-place root-0 points on `gpus` GPUs: a
    dict of figures, or a string saying why the point has none (its status and message)."""
    out = {}
    for p in mgbench_points(results, workload):
        params = p.get("params", {})
        if (params.get("impl", "nccl"), params.get("dtype"), p.get("gpus")) != ("nccl", "fp32", gpus):
            continue
        if str(params.get("inplace")).lower() == "true" or int(params.get("root", 0)) != 0:
            continue
        out[int(params["bytes"])] = point_figures(p, {"time_us": "time_us", "algbw": "algbw_GBps"})
    return out


def mgbench_gemm(results):
    """{(dtype, n): value} for cuBLASLt square points on 1 GPU (see mgbench_allreduce)."""
    out = {}
    for p in mgbench_points(results, "gemm"):
        params = p.get("params", {})
        if params.get("impl") != "cublas" or params.get("shape", "square") != "square":
            continue
        if p.get("gpus") != 1:
            continue
        out[(params.get("dtype"), int(params["m"]))] = point_figures(p, {"tflops": "tflops_per_gpu"})
    return out


def point_figures(point, names):
    if point.get("status") != "ok":
        return f"mgbench {point.get('status')}: {point.get('message', '')}".strip()
    metrics = point.get("metrics", {})
    figures = {key: number(metrics.get(metric)) for key, metric in names.items()}
    figures["timing"] = point_setting(point, "timing")
    figures["cache"] = point_setting(point, "cache")
    return figures


# ---- the decision --------------------------------------------------------------------------


def collective_tolerance(nbytes):
    return 0.03 if nbytes >= MIB else 0.10


GEMM_TOLERANCE = 0.03
COLLECTIVE_SETTINGS = {"timing": "host", "cache": "hot"}
GEMM_SETTINGS = {"cache": "hot", "timing": "host"}


def compare(key, mine, reference, tolerance, field, expect=None):
    """One row: mgbench vs reference with delta % and ok / FAIL / missing / skipped. `expect`
    ({"timing": "host", ...}): settings the point must have recorded, else a note says so."""
    row = {"key": key, "tolerance_pct": tolerance * 100.0, "mgbench": None, "reference": None,
           "delta_pct": None, "status": "missing", "note": ""}
    if isinstance(reference, str) and reference.startswith("skipped"):
        row.update(status="skipped", note=reference)
        return row
    if isinstance(mine, dict):
        row["mgbench"] = mine.get(field)
        wrong = [f"{n}={mine.get(n)} (asked {v})" for n, v in (expect or {}).items()
                 if mine.get(n) != v]
        row["note"] = "mgbench recorded " + ", ".join(wrong) if wrong else ""
    elif isinstance(mine, str):
        row["note"] = mine
    if isinstance(reference, (int, float)):
        row["reference"] = float(reference)
    if row["mgbench"] is None or row["reference"] is None or row["reference"] <= 0:
        if not row["note"]:
            row["note"] = "no mgbench figure" if row["mgbench"] is None else "no reference figure"
        return row
    delta = (row["mgbench"] - row["reference"]) / row["reference"]
    row["delta_pct"] = delta * 100.0
    row["status"] = "ok" if abs(delta) <= tolerance + 1e-12 else "FAIL"
    return row


def collective_rows(mine, reference):
    """Rows by size, judged on `time_us`; figures that carry "runs" and "fastest" (over_runs)
    add their run-to-run spread and the delta of the fastest runs."""
    rows = []
    for nbytes in sorted(set(mine) | set(reference)):
        ref = reference.get(nbytes, {})
        row = compare(size_label(nbytes), mine.get(nbytes), ref.get("time_us"),
                      collective_tolerance(nbytes), "time_us", COLLECTIVE_SETTINGS)
        own = mine.get(nbytes) if isinstance(mine.get(nbytes), dict) else {}
        row["runs_pct"] = run_spread_pct([own.get("runs"), ref.get("runs")])
        fastest = own.get("fastest"), ref.get("fastest")
        row["fastest_delta_pct"] = ((fastest[0] - fastest[1]) / fastest[1] * 100.0
                                    if None not in fastest and fastest[1] > 0 else None)
        rows.append(row)
    return rows


def gemm_rows(mine, reference):
    rows = []
    for dtype, n in sorted(set(mine) | set(reference), key=lambda k: (GEMM_DTYPES.index(k[0])
                                                                      if k[0] in GEMM_DTYPES
                                                                      else 99, k[1])):
        rows.append(compare(f"{dtype} M=N=K={n}", mine.get((dtype, n)), reference.get((dtype, n)),
                            GEMM_TOLERANCE, "tflops", GEMM_SETTINGS))
    return rows


def exit_code(sections):
    """0 all ok; 1 any FAIL or missing row; 77 no failure but a section or row was skipped."""
    rows = [r for s in sections for r in s["rows"]]
    if any(r["status"] in ("FAIL", "missing") for r in rows):
        return EXIT_FAIL
    if any(s.get("skipped") for s in sections) or any(r["status"] == "skipped" for r in rows):
        return EXIT_SKIPPED
    return EXIT_OK


# ---- running the tools ---------------------------------------------------------------------


MAX_CPU = 65535  # far above any Linux CPU number (NR_CPUS is at most 8192)


def parse_cpus(text):
    """A CPU list ("2", "0-3", "1,5-6") as a set; ValueError when it is not one or names a CPU
    above MAX_CPU (checked before the set is built: "0-99999999999" is refused at once)."""
    cpus = set()
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or int(hi or lo) < int(lo):
            raise ValueError(f"'{text}' is not a CPU list such as 2 or 0-3 or 1,5-6")
        if int(hi or lo) > MAX_CPU:
            raise ValueError(f"CPU {int(hi or lo)} is above {MAX_CPU}, the largest CPU number")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def usage_error(message):
    """One line on stderr and exit 2 (argparse's own errors print the usage first)."""
    print(f"crosscheck: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def prepare_out(out):
    """Creates the --out directory before anything is measured; a path that cannot be one (an
    existing file, no permission) is a usage error, not a traceback after the measurements."""
    if os.path.exists(out) and not os.path.isdir(out):
        usage_error(f"--out {out!r} exists and is not a directory")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        usage_error(f"--out {out!r}: {e.strerror or e}")
    if not os.access(out, os.W_OK | os.X_OK):
        usage_error(f"--out {out!r} is not writable")


CPUS = None  # --cpus: both tools run on these CPUs only


def run_tool(argv, env=None, timeout=None):
    """stdout of a command (on the --cpus CPUs when given); ToolError with the tail of its
    output when it fails."""
    pin = (lambda: os.sched_setaffinity(0, CPUS)) if CPUS else None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                              preexec_fn=pin)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"{argv[0]}: {e}")
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ToolError(f"{os.path.basename(argv[0])} exited {done.returncode}: " + " | ".join(tail))
    return done.stdout


def settings_params(settings):
    return [f"{name}={value}" for name, value in settings.items()]


def devices(args, gpus):
    """The CUDA devices of a check on `gpus` GPUs, from --device on: "2,3"."""
    return ",".join(str(args.device + i) for i in range(gpus))


def run_mgbench(args, workload, params, out_name, gpus=1):
    out = os.path.join(args.out, out_name)
    argv = [args.mgbench, "sweep", "--gpus", str(gpus), "--devices", devices(args, gpus),
            "--workloads", workload, "--out", out, "--no-history", "--no-report", "--skip-doctor",
            "--quiet"]
    for param in params + args.mgbench_param:
        argv += ["--param", param]
    run_tool(argv + args.mgbench_arg)
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        return json.load(f)


def find_nccl_tests_binary(nccl_tests, binary="all_reduce_perf"):
    if nccl_tests:
        for candidate in (os.path.join(nccl_tests, "build", binary),
                          os.path.join(nccl_tests, binary)):
            if os.access(candidate, os.X_OK):
                return candidate
        return None
    return shutil.which(binary)


def nccl_tests_iterations(nbytes):
    """(-n, -w) for one nccl-tests size: about 50 ms of operations, 20 to 2000 of them."""
    estimate_s = 5e-6 + 2.0 * nbytes / 3e12  # launch cost, then a copy at HBM speed
    iters = int(min(2000, max(20, 0.05 / estimate_s)))
    return iters, max(5, iters // 10)


L2_RESIDENT_MAX = 8 * MIB  # sizes up to this one: one nccl-tests sweep per run


def run_nccl_tests_perf(tool, sizes, args, env, tool_args=("-o", "sum")):
    """The out-of-place figures {bytes: figures} of sizes (ascending, x2 apart) from one
    nccl-tests process; -n from the largest size."""
    iters, warmup = nccl_tests_iterations(sizes[-1])
    text = run_tool([tool, "-b", str(sizes[0]), "-e", str(sizes[-1]), "-f", "2", "-t",
                     str(args.gpus), "-g", "1", "-d", "float"] + list(tool_args) +
                    ["-c", "1", "-n", str(iters), "-w", str(warmup)] + args.nccl_arg, env=env)
    name = os.path.basename(tool)
    rows = parse_nccl_tests_perf(text, name)
    missing = [n for n in sizes if n not in rows]
    if missing:
        raise ToolError(f"{name} -b {sizes[0]} -e {sizes[-1]} printed no row for "
                        f"{missing[0]} bytes")
    return {n: rows[n] for n in sizes}


def nccl_tests_run(tool, sizes, args, env, tool_args):
    """One run of the reference over `sizes`: one sweep over the L2-resident sizes, then one
    process per larger size."""
    small = [n for n in sizes if n <= L2_RESIDENT_MAX]
    figures = run_nccl_tests_perf(tool, small, args, env, tool_args) if small else {}
    for n in sizes[len(small):]:
        figures.update(run_nccl_tests_perf(tool, [n], args, env, tool_args))
    return figures


def collective_sizes(args, splits):
    """The sizes of one collective's check: --sizes, else 8 B .. 1 GiB; from 16 bytes for the
    collectives nccl-tests splits over the ranks (it rounds a rank's share to 16 bytes)."""
    sizes = args.sizes or COLLECTIVE_SIZES
    return [n for n in sizes if not splits or n >= 16]


def over_runs(runs, field):
    """Runs of {key: figures dict, or a string saying why there is none} -> one such mapping:
    per key the median of `field` over the runs, with the smallest (the fastest run, for
    times) under "fastest" and the run values under "runs". A key with a string in any run
    keeps the first string."""
    merged = {}
    for key in {k for run in runs for k in run}:
        values = [run.get(key) for run in runs]
        failed = [v for v in values if not isinstance(v, dict)]
        if failed:
            merged[key] = failed[0] if isinstance(failed[0], str) else "absent from a run"
            continue
        figures = [v.get(field) for v in values]
        complete = None not in figures
        merged[key] = dict(values[0], runs=figures, fastest=min(figures) if complete else None)
        merged[key][field] = statistics.median(figures) if complete else None
    return merged


def run_spread_pct(row_runs):
    """The larger run-to-run spread, (max - min) / median in %, of the lists given."""
    spreads = [(max(r) - min(r)) / statistics.median(r) * 100.0 for r in row_runs
               if r and None not in r and len(r) > 1 and statistics.median(r) > 0]
    return max(spreads) if spreads else None


def collective_section(args, name):
    binary, tool_args, own_params, splits = COLLECTIVES[name]
    sizes = collective_sizes(args, splits)
    section = {"name": name, "title": f"{name}: mgbench NCCL vs nccl-tests {binary}",
               "method": f"fp32{' sum' if '-o' in tool_args else ''}, out-of-place, "
                         f"{args.gpus} GPU(s) (devices {devices(args, args.gpus)}); time "
                         f"per op in us; mgbench timing=host cache=hot, {binary} "
                         f"{' '.join(tool_args) + ' ' if tool_args else ''}-b {sizes[0]} -e 8M "
                         f"-f 2 then -b S -e S above; the median over {args.repeats} alternating "
                         f"run(s) of each" +
                         (f"; both on CPUs {sorted(args.cpus)}" if args.cpus else ""),
               "key": "size", "unit": "us", "rows": []}
    tool = find_nccl_tests_binary(args.nccl_tests, binary)
    if tool is None:
        where = f"in {args.nccl_tests} (or its build/)" if args.nccl_tests else "on PATH"
        section["skipped"] = f"{binary} not found {where}; pass --nccl-tests DIR"
        return section
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=devices(args, args.gpus))
    params = own_params + ["dtype=fp32", f"bytes={','.join(str(s) for s in sizes)}"]
    if name not in ("alltoall", "sendrecv"):
        params.append("inplace=false")
    mine, reference = [], []
    for rep in range(args.repeats):
        results = run_mgbench(args, name, params + settings_params(COLLECTIVE_SETTINGS),
                              f"mgbench-{name}-{rep + 1}", args.gpus)
        mine.append(mgbench_collective(results, name, args.gpus))
        reference.append(nccl_tests_run(tool, sizes, args, env, tool_args))
    section["rows"] = collective_rows(over_runs(mine, "time_us"), over_runs(reference, "time_us"))
    return section


def gemm_section(args):
    section = {"name": "gemm", "title": "GEMM: mgbench cuBLASLt vs torch.matmul (sustained)",
               "method": f"C = A*B^T, M = N = K; TFLOP/s per GPU; torch: 1 s warm-up then "
                         f"{args.torch_seconds:g} s of CUDA-event-timed calls; mgbench impl=cublas "
                         f"cache=hot (torch reuses its operands)",
               "key": "case", "unit": "TFLOP/s", "rows": []}
    try:
        probe = subprocess.run([args.python, "-c", "import torch,sys; sys.exit(0 if "
                                "torch.cuda.is_available() else 1)"], capture_output=True).returncode
    except OSError:
        probe = -1
    if probe != 0:
        section["skipped"] = f"{args.python} has no torch with a CUDA device"
        return section
    sizes = ",".join(str(n) for n in GEMM_SIZES)
    text = run_tool([args.python, os.path.join(SCRIPTS, "torch_matmul_reference.py"),
                     "--dtype", ",".join(GEMM_DTYPES), "--size", sizes, "--device",
                     str(args.device), "--seconds", str(args.torch_seconds)])
    reference = parse_torch_reference(text)
    results = run_mgbench(args, "gemm", ["impl=cublas", "dtype=" + ",".join(GEMM_DTYPES),
                                         f"size={sizes}"] + settings_params(GEMM_SETTINGS),
                          "mgbench-gemm")
    section["rows"] = gemm_rows(mgbench_gemm(results), reference)
    return section


def default_mgbench():
    built = os.path.join(os.path.dirname(SCRIPTS), "build", "ci", "bin", "mgbench")
    return built if os.access(built, os.X_OK) else (shutil.which("mgbench") or "mgbench")


def parse_only(parser, text):
    """--only as a list of known workloads (None: every one)."""
    if text is None:
        return None
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or not names:
        parser.error(f"--only: unknown workload {unknown[0] if unknown else repr(text)} "
                     f"(expected a comma list of {', '.join(WORKLOADS)})")
    return names


def parse_sizes(parser, text):
    """--sizes as ascending positive byte counts (None: the default list)."""
    if text is None:
        return None
    try:
        sizes = [int(n) for n in text.split(",")]
    except ValueError:
        parser.error(f"--sizes: '{text}' is not a comma list of byte counts")
    if not sizes or min(sizes) <= 0 or sizes != sorted(set(sizes)) or max(sizes) > 1 << 34:
        parser.error("--sizes: sizes must be positive, ascending, distinct and at most 16 GiB")
    return sizes


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/crosscheck.sh",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--mgbench", default=default_mgbench(), help="the mgbench binary")
    parser.add_argument("--nccl-tests", help="nccl-tests directory (its build/ holds "
                                             "all_reduce_perf and the other *_perf binaries); "
                                             "default: the binaries on PATH")
    parser.add_argument("--python", default="python3", help="python with torch (default python3)")
    parser.add_argument("--only", help="comma list of the workloads to check: "
                                       + ", ".join(WORKLOADS) + " (default: all)")
    parser.add_argument("--sizes", help="comma list of collective sizes in bytes, ascending "
                                        "(default 8 B .. 1 GiB in x2 steps)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device (default 0); the "
                                                             "first of --gpus N")
    parser.add_argument("--gpus", type=int, default=1,
                        help="GPUs of the collectives' checks, from --device on (default 1; "
                             "gemm: 1)")
    parser.add_argument("--repeats", type=int, default=8,
                        help="alternating runs of mgbench and each nccl-tests binary; medians "
                             "compared (default 8)")
    parser.add_argument("--torch-seconds", type=float, default=3.0,
                        help="timed seconds per torch case after its 1 s warm-up (default 3)")
    parser.add_argument("--out", default=None, help="output directory (default "
                                                    "results/crosscheck-<UTC time>)")
    parser.add_argument("--cpus", help="run both tools on these CPUs only (a list such as 2 or "
                                         "0-3): the same launch path for both")
    parser.add_argument("--nccl-arg", action="append", default=[],
                        help="extra argument of every nccl-tests binary (repeatable)")
    parser.add_argument("--mgbench-param", action="append", default=[],
                        help="extra mgbench --param NAME=V for both sweeps (repeatable)")
    parser.add_argument("--mgbench-arg", action="append", default=[],
                        help="extra mgbench sweep argument, e.g. --mgbench-arg=--max-time-per-point"
                             " --mgbench-arg=0.5 (repeatable)")
    args = parser.parse_args(argv)
    if args.device < 0 or args.torch_seconds <= 0 or args.repeats < 1 or not 1 <= args.gpus <= 64:
        parser.error("--device must be >= 0, --gpus 1 to 64, --torch-seconds > 0 and "
                     "--repeats >= 1")
    if args.cpus is not None:
        try:
            args.cpus = parse_cpus(args.cpus)
        except ValueError as e:
            parser.error(f"--cpus: {e}")
        if not args.cpus <= os.sched_getaffinity(0):
            parser.error(f"--cpus: CPUs {sorted(args.cpus - os.sched_getaffinity(0))} are not "
                         f"available to this process")
    args.only = parse_only(parser, args.only)
    args.sizes = parse_sizes(parser, args.sizes)
    if args.out is None:
        args.out = os.path.join("results", "crosscheck-" +
                                datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
    prepare_out(args.out)
    return args


def main(argv):
    global CPUS
    args = parse_args(argv)
    CPUS = args.cpus
    sections = []
    try:
        for name in WORKLOADS:
            if args.only is None or name in args.only:
                sections.append(gemm_section(args) if name == "gemm"
                                else collective_section(args, name))
                print(render_section(sections[-1]), flush=True)
    except (ToolError, OSError, ValueError, KeyError) as e:
        print(f"crosscheck: {e}", file=sys.stderr)
        return EXIT_ENV
    code = exit_code(sections)
    try:
        write_outputs(args.out, sections, code)
    except OSError as e:
        print(f"crosscheck: cannot write the tables in {args.out}: {e}", file=sys.stderr)
        return EXIT_ENV
    verdict = {EXIT_OK: "every row within tolerance", EXIT_FAIL: "FAILED: rows beyond tolerance "
               "or missing", EXIT_SKIPPED: "skipped: a reference tool is absent (exit 77)"}[code]
    print(f"crosscheck: {verdict}; tables in {os.path.join(args.out, 'crosscheck.json')}, .csv "
          f"and .md")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
