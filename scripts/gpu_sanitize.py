#!/usr/bin/env python3
"""Run the GPU test cases under compute-sanitizer and count what each tool reports.

    scripts/gpu_sanitize.sh [--tools memcheck,racecheck,synccheck] [--cases FILE]
                            [--scale N] [--case-timeout S] [--budget S] [--jobs N]
                            [--out DIR] [--sanitizer PATH] TEST_BINARY

Every (tool, case) pair runs in its own process group: a case that crashes or times out costs
that case only (a time-out kills the sanitizer and the test binary under it), and each count
belongs to one case. --jobs N runs N pairs at a time: a sanitizer spends most of its time on
the host, so pairs side by side finish sooner on a many-core host. A pair that failed, timed
out or crashed beside others (a case that measures, or one that fills the GPU's memory, may
fail only for sharing the GPU) runs again alone after the rest while the budget lasts, and
its row is the one from the lone run; "beside_others" keeps the first result. Errors a tool
reported are never run again: they stand. --resume DIR keeps the rows of an earlier run
written to DIR and runs only the pairs it left "not run" (a budget spread over several
sessions on a GPU machine).

The test binary gets MGBENCH_GPU_TEST_TIME_SCALE=N (default 30): its group and start-gate
time-outs, hence NCCL's watchdog deadline, and its device-side spin deadlines are stretched by
N, since a sanitizer slows GPU work by one to three orders of magnitude. NCCL_NVLS_ENABLE=0 is
set as in every mgbench process.

--kernels TEXT checks only the kernels whose name contains TEXT (compute-sanitizer's
--kernel-name kns=TEXT; "mgbench" is every kernel of the project, all in namespace
mgbench::kernels); cuBLAS's and NCCL's kernels then run unchecked. racecheck tracks every
shared-memory access of every instrumented kernel on the host: over cuBLAS's GEMMs in the
training-step and telemetry cases it exhausts 128 GiB of host memory and the kernel's OOM
killer ends the case (status 9). With any filter, even one that matches no kernel, racecheck
stops the cases that run cuBLASLt's bf16 GEMMs with "Internal Sanitizer Error: The Sanitizer
failed to handle a hardware exception" (CUDA error 700 after it), which memcheck of the same
cases and runs without a sanitizer do not show. Each row records the filter ("kernels").

--cases FILE names one case per line (a comma escaped as "\\," or not); without it every case
the binary lists runs. --budget stops starting cases after S seconds; those left are "not run".

A row's result: "clean" (the case passed or skipped, the tool reported 0 errors), "errors"
(the tool reported errors), "failed" (the case failed), "timeout", "crashed" (no summary line),
"not run". Each row also has the least host memory available (MemAvailable, MiB) seen while
it ran, to tell a case killed for host memory from other ends. Writes sanitize.tsv,
sanitize.json (with the last lines of every row that is not clean; rewritten as each pair
ends, so a killed run keeps what finished) and each case's whole output
(logs/<tool>-<n>.log) to --out. Exit 0 when every row is clean, 1 otherwise, 2 for bad
usage, 4 when the sanitizer or the test binary cannot be run.
"""
import argparse
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_ENV = 0, 1, 2, 4
TOOLS = ("memcheck", "racecheck", "synccheck")
SKIPPED = 77
TIMED_OUT = 124

# "========= ERROR SUMMARY: 3 errors" (memcheck, synccheck) and
# "========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)" (racecheck).
ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


# The first line of each report: "========= Invalid __global__ read of size 4 bytes", ...
FINDING = re.compile(r"^=+ (Invalid|Race|Barrier|Program hit|Leaked|Uninitialized|Error:)")


def tool_errors(text):
    """The error count a sanitizer printed, or None when it printed no summary (a crash)."""
    race = RACE_SUMMARY.findall(text)
    if race:
        return sum(int(errors) for _, errors, _ in race)
    found = ERROR_SUMMARY.findall(text)
    return sum(int(n) for n in found) if found else None


def classify(returncode, errors):
    if returncode == TIMED_OUT:
        return "timeout"
    if errors is None:
        return "crashed"
    if errors > 0:
        return "errors"
    if returncode not in (0, SKIPPED):
        return "failed"
    return "clean"


def catch_name(name):
    """A case name as a Catch2 positional argument: commas escaped, each exactly once."""
    return name.replace("\\,", ",").replace(",", "\\,")


def read_cases(path):
    with open(path, encoding="utf-8") as f:
        names = [line.rstrip("\n") for line in f]
    return [n.replace("\\,", ",") for n in names if n.strip() and not n.startswith("#")]


def list_cases(binary):
    """Every case the Catch2 binary lists (Catch2 3, then Catch2 2 spelling)."""
    for argv in ([binary, "--list-tests", "--verbosity", "quiet"],
                 [binary, "--list-test-names-only"]):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"cannot list the cases of {binary}: {e}") from e
        names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
        if out.returncode == 0 and names:
            return names
    raise RuntimeError(f"{binary} listed no test case")


def sanitizer_argv(sanitizer, tool, kernels=None):
    argv = [sanitizer, "--tool", tool, "--target-processes", "all", "--print-limit", "20",
            "--report-api-errors", "no"]
    if tool == "memcheck":
        argv += ["--leak-check", "full"]
    if kernels:
        argv += ["--kernel-name", f"kns={kernels}"]
    return argv


class MemoryWatch:
    """Samples MemAvailable from /proc/meminfo twice a second; least(t0, t1) is the lowest
    sample between two monotonic times (None where /proc/meminfo cannot be read)."""

    def __init__(self, path="/proc/meminfo"):
        self.path, self.samples, self.stop = path, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def read(self):
        try:
            with open(self.path, encoding="ascii") as f:
                for line in f:
                    if line.startswith("MemAvailable:"):
                        return int(line.split()[1]) // 1024
        except (OSError, ValueError, IndexError):
            pass
        return None

    def _run(self):
        while not self.stop.is_set():
            value = self.read()
            if value is not None:
                self.samples.append((time.monotonic(), value))
            self.stop.wait(0.5)

    def least(self, t0, t1):
        seen = [v for t, v in list(self.samples) if t0 <= t <= t1]
        return min(seen) if seen else None


def run_process(argv, env, timeout):
    """(exit code, output) of argv in its own process group; a time-out kills the whole group
    (the sanitizer and the test binary under it) and gives TIMED_OUT."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = TIMED_OUT
    return code, out.decode(errors="replace")


def run_case(args, tool, name, env, log_path, memory):
    argv = sanitizer_argv(args.sanitizer, tool, args.kernels) + [args.binary, catch_name(name)]
    started = time.monotonic()
    code, text = run_process(argv, env, args.case_timeout)
    ended = time.monotonic()
    errors = tool_errors(text)
    with open(log_path, "w", encoding="utf-8") as f:
        f.write(text)
    findings = sorted({line.strip() for line in text.splitlines() if FINDING.match(line)})
    result = classify(code, errors)
    return {"tool": tool, "case": name, "kernels": args.kernels, "result": result, "exit": code,
            "errors": errors, "seconds": round(ended - started, 1),
            "min_mem_available_mib": memory.least(started, ended) if memory else None,
            "findings": findings[:5], "log": os.path.basename(log_path),
            "tail": [] if result == "clean" else text.splitlines()[-12:]}


def not_run(tool, name):
    return {"tool": tool, "case": name, "result": "not run", "exit": None, "errors": None,
            "seconds": 0.0, "min_mem_available_mib": None, "findings": [], "log": None,
            "tail": []}


RUN_AGAIN_ALONE = ("failed", "timeout", "crashed")


def run_all(args, cases):
    """Every (tool, case) row, in --tools then case order."""
    env = dict(os.environ, MGBENCH_GPU_TEST_TIME_SCALE=str(args.scale), NCCL_NVLS_ENABLE="0")
    deadline = time.monotonic() + args.budget if args.budget else None
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    memory = MemoryWatch()
    earlier = earlier_rows(args.resume)
    # Case by case, every tool of a case in turn: a budget that runs out leaves each tool
    # with about the same coverage.
    pairs = [(tool, i, name) for i, name in enumerate(cases) for tool in args.tools]

    def one(pair, suffix=""):
        tool, i, name = pair
        if not suffix and (tool, name) in earlier:
            return earlier[(tool, name)]
        if deadline is not None and time.monotonic() > deadline:
            return not_run(tool, name)
        log = os.path.join(args.out, "logs", f"{tool}-{i + 1:03d}{suffix}.log")
        row = run_case(args, tool, name, env, log, memory)
        print(format_row(row), flush=True)
        return row

    done, lock = {}, threading.Lock()

    def one_and_save(k):
        row = one(pairs[k])
        with lock:  # what has finished is on disk even if this script is killed
            done[k] = row
            write_outputs(args.out, [done.get(j) or not_run(t, n) for j, (t, _, n) in enumerate(pairs)])
        return row

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(one_and_save, range(len(pairs))))
    if args.jobs > 1:
        for k, row in enumerate(rows):
            if row["result"] in RUN_AGAIN_ALONE:
                alone = one(pairs[k], "-alone")
                if alone["result"] != "not run":
                    rows[k] = dict(alone, beside_others=row["result"])
    memory.stop.set()
    order = {tool: k for k, tool in enumerate(args.tools)}
    return [row for _, row in sorted(zip(pairs, rows), key=lambda pr: (order[pr[0][0]], pr[0][1]))]


def earlier_rows(path):
    """{(tool, case): row} of an earlier run's sanitize.json (a file or its --out directory),
    every row but those "not run"; {} without --resume."""
    if not path:
        return {}
    if os.path.isdir(path):
        path = os.path.join(path, "sanitize.json")
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    return {(r["tool"], r["case"]): dict(r, earlier=True) for r in rows
            if r.get("result") != "not run"}


def format_row(row):
    errors = "-" if row["errors"] is None else str(row["errors"])
    return f"{row['tool']:<9} {row['result']:<8} {errors:>6} {row['seconds']:>7.1f} s  {row['case']}"


def write_outputs(out_dir, rows):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "sanitize.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(out_dir, "sanitize.tsv"), "w", encoding="utf-8") as f:
        f.write("tool\tresult\terrors\texit\tseconds\tmin_mem_available_mib\tbeside_others\tcase\n")
        for r in rows:
            f.write(f"{r['tool']}\t{r['result']}\t{r['errors']}\t{r['exit']}\t{r['seconds']}\t"
                    f"{r.get('min_mem_available_mib')}\t{r.get('beside_others', '')}\t{r['case']}\n")


def summary(rows):
    lines = []
    for tool in dict.fromkeys(r["tool"] for r in rows):
        mine = [r for r in rows if r["tool"] == tool]
        counts = {}
        for r in mine:
            counts[r["result"]] = counts.get(r["result"], 0) + 1
        errors = sum(r["errors"] or 0 for r in mine)
        parts = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        lines.append(f"{tool}: {len(mine)} cases ({parts}); {errors} errors reported")
    return lines


def parse_args(argv):
    p = argparse.ArgumentParser(prog="gpu_sanitize.sh", description=__doc__.split("\n")[0])
    p.add_argument("binary", help="the GPU test binary (build/ci/bin/mgbench_gpu_tests)")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--cases", help="file with one case name per line (default: every case)")
    p.add_argument("--scale", type=float, default=30.0)
    p.add_argument("--case-timeout", type=float, default=900.0)
    p.add_argument("--budget", type=float, default=0.0, help="seconds; 0: no limit")
    p.add_argument("--jobs", type=int, default=1, help="(tool, case) pairs run at a time")
    p.add_argument("--resume", help="an earlier run's --out (or its sanitize.json): its rows "
                                    "are kept, and only the pairs it did not run are run")
    p.add_argument("--out", default="sanitize-out")
    p.add_argument("--sanitizer", default=None)
    p.add_argument("--kernels", help="check only kernels whose name contains this text "
                                     "(mgbench: the project's own); the others run unchecked")
    args = p.parse_args(argv)
    args.tools = [t for t in args.tools.split(",") if t]
    bad = [t for t in args.tools if t not in TOOLS]
    if bad or not args.tools:
        p.error(f"--tools takes {', '.join(TOOLS)}, not '{','.join(bad) or args.tools}'")
    if not 1 <= args.scale <= 1000:
        p.error("--scale must be in [1, 1000]")
    if args.case_timeout <= 0 or args.budget < 0:
        p.error("--case-timeout must be > 0 and --budget >= 0")
    if not 1 <= args.jobs <= 64:
        p.error("--jobs must be in [1, 64]")
    return args


def find_sanitizer(given):
    for candidate in (given, shutil.which("compute-sanitizer"),
                      "/usr/local/cuda/bin/compute-sanitizer"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def main(argv):
    args = parse_args(argv)
    args.sanitizer = find_sanitizer(args.sanitizer)
    if args.sanitizer is None:
        print("gpu_sanitize: compute-sanitizer not found (CUDA toolkit's bin/)", file=sys.stderr)
        return EXIT_ENV
    if not os.access(args.binary, os.X_OK):
        print(f"gpu_sanitize: {args.binary} is not an executable test binary", file=sys.stderr)
        return EXIT_ENV
    try:
        cases = read_cases(args.cases) if args.cases else list_cases(args.binary)
        earlier_rows(args.resume)
    except (OSError, RuntimeError, ValueError, KeyError, TypeError) as e:
        print(f"gpu_sanitize: {e}", file=sys.stderr)
        return EXIT_ENV if isinstance(e, RuntimeError) and not args.cases else EXIT_USAGE
    rows = run_all(args, cases)
    write_outputs(args.out, rows)
    for line in summary(rows):
        print(line)
    return EXIT_OK if all(r["result"] == "clean" for r in rows) else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
