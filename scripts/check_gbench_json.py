#!/usr/bin/python3
"""Checks files in Google Benchmark's JSON output format against what Google Benchmark's
comparison tooling (tools/compare.py with tools/gbench/util.py and report.py) relies on.

Usage: check_gbench_json.py FILE [FILE...]        every file must pass; exit 1 otherwise
       check_gbench_json.py --pair BASE NEW        also: the benchmarks compare.py would match

Rules (from how that tooling reads the files):
  - the document has "context" (an object) and "benchmarks" (a list); context.json_schema_version,
    when present, is 1 (util.load_benchmark_results refuses anything else);
  - the context has the keys the JSON reporter writes: date, host_name, executable, num_cpus,
    mhz_per_cpu, caches (objects with type, level, size, num_sharing), library_build_type;
  - every benchmark has name, run_name, run_type ("iteration" or "aggregate"), repetitions,
    threads, iterations, real_time, cpu_time (finite numbers) and time_unit (ns, us, ms, s):
    report.is_potentially_comparable_benchmark and calculate_geomean read these on every entry;
  - an aggregate has aggregate_name and aggregate_unit ("time" or "percentage") and is named
    run_name + "_" + aggregate_name; an iteration has repetition_index and is named run_name;
  - the iterations of one run_name are repetition_index 0..repetitions-1, and one name keeps one
    time_unit (report.partition_benchmarks drops entries of another unit);
  - family_index and per_family_instance_index are integers (util.sort_benchmark_results);
  - any other key (a user counter) is a number.
Python standard library only.
"""
import json
import math
import sys

CONTEXT_KEYS = ["date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "caches",
                "library_build_type"]
ENTRY_KEYS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
              "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
              "iterations", "real_time", "cpu_time", "time_unit", "label", "error_occurred",
              "error_message", "skipped", "skip_message"}
TIME_UNITS = {"ns", "us", "ms", "s"}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return (is_int(v) or isinstance(v, float)) and math.isfinite(v)


def check_context(ctx, errors):
    if not isinstance(ctx, dict):
        errors.append("context is not an object")
        return
    if ctx.get("json_schema_version", 1) != 1:
        errors.append("context.json_schema_version is not 1")
    for key in CONTEXT_KEYS:
        if key not in ctx:
            errors.append(f"context.{key} missing")
    for key in ("num_cpus", "mhz_per_cpu"):
        if key in ctx and not is_int(ctx[key]):
            errors.append(f"context.{key} is not an integer")
    for cache in ctx.get("caches", []):
        if not all(k in cache for k in ("type", "level", "size", "num_sharing")):
            errors.append("context.caches: an entry lacks type/level/size/num_sharing")
    if ctx.get("library_build_type") not in ("release", "debug"):
        errors.append("context.library_build_type is not release or debug")


def check_entry(b, errors):
    where = f"benchmark {b.get('name', '?')!r}"
    for key in ("name", "run_name", "run_type", "repetitions", "threads", "iterations",
                "real_time", "cpu_time", "time_unit", "family_index",
                "per_family_instance_index"):
        if key not in b:
            errors.append(f"{where}: {key} missing")
    if errors:
        return
    if not isinstance(b["name"], str) or not isinstance(b["run_name"], str) or not b["run_name"]:
        errors.append(f"{where}: name/run_name not a non-empty string")
    for key in ("repetitions", "threads", "iterations", "family_index",
                "per_family_instance_index"):
        if not is_int(b[key]) or b[key] < 0:
            errors.append(f"{where}: {key} is not a non-negative integer")
    for key in ("real_time", "cpu_time"):
        if not is_number(b[key]) or b[key] < 0:
            errors.append(f"{where}: {key} is not a finite non-negative number")
    if b["time_unit"] not in TIME_UNITS:
        errors.append(f"{where}: time_unit {b['time_unit']!r}")
    if b["run_type"] == "aggregate":
        if b.get("aggregate_unit") not in ("time", "percentage"):
            errors.append(f"{where}: aggregate_unit missing or unknown")
        if b["name"] != b["run_name"] + "_" + str(b.get("aggregate_name")):
            errors.append(f"{where}: an aggregate is named run_name + '_' + aggregate_name")
    elif b["run_type"] == "iteration":
        if not is_int(b.get("repetition_index")):
            errors.append(f"{where}: repetition_index missing")
        if b["name"] != b["run_name"]:
            errors.append(f"{where}: an iteration is named run_name")
    else:
        errors.append(f"{where}: run_type {b['run_type']!r}")
    for key, value in b.items():
        if key not in ENTRY_KEYS and not is_number(value):
            errors.append(f"{where}: counter {key!r} is not a finite number")


def check_runs(benchmarks, errors):
    units, reps = {}, {}
    for b in benchmarks:
        if units.setdefault(b["name"], b["time_unit"]) != b["time_unit"]:
            errors.append(f"benchmark {b['name']!r}: more than one time_unit")
        if b["run_type"] == "iteration":
            reps.setdefault(b["run_name"], []).append((b["repetition_index"], b["repetitions"]))
    for name, entries in reps.items():
        indices = sorted(i for i, _ in entries)
        if indices != list(range(len(entries))) or {n for _, n in entries} != {len(entries)}:
            errors.append(f"benchmark {name!r}: repetition_index not 0..repetitions-1")


def check(path):
    """The errors found in one file (empty when it passes), and the document."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return [f"cannot read: {e}"], None
    errors = []
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        return ["no 'benchmarks' list"], None
    check_context(doc.get("context"), errors)
    for b in doc["benchmarks"]:
        entry_errors = []
        check_entry(b, entry_errors) if isinstance(b, dict) else entry_errors.append("not object")
        errors += entry_errors
    if not errors:
        check_runs(doc["benchmarks"], errors)
    return errors, doc


def matched(base, new):
    """Names compare.py would pair (report.partition_benchmarks: same name, same time unit)."""
    units = {b["name"]: b["time_unit"] for b in new["benchmarks"]}
    return [b["name"] for b in base["benchmarks"]
            if b["run_type"] == "iteration" and units.get(b["name"]) == b["time_unit"]]


def main(argv):
    pair = argv[:1] == ["--pair"]
    paths = argv[1:] if pair else argv
    if not paths or (pair and len(paths) != 2):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    docs, failed = [], False
    for path in paths:
        errors, doc = check(path)
        docs.append(doc)
        for e in errors[:20]:
            print(f"{path}: {e}", file=sys.stderr)
        failed |= bool(errors)
        if not errors:
            print(f"{path}: ok ({len(doc['benchmarks'])} entries)")
    if pair and not failed:
        names = set(matched(docs[0], docs[1]))
        print(f"compare.py would match {len(names)} benchmarks")
        failed = not names
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
