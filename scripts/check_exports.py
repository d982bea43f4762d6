#!/usr/bin/python3
"""The export formats checked by their own tools' checkers, with the real binary.

Usage: check_exports.py prom|junit|gbench MGBENCH SOURCE_DIR

  prom    `mgbench report --format prom` of tests/data/report_sample.json and report_hostile.json
          through `promtool check metrics` (Debian package prometheus). It must parse; the only
          lint remarks accepted are the naming ones that come from outside mgbench: dcgm-exporter's
          camelCase label `modelName`, and unit abbreviations in the workloads' metric names
          ("samples_per_s"). With those renamed, promtool must report nothing at all.
  junit   `mgbench compare --junit` of the sample and the hostile fixture against their changed
          copies (scripts/compare_fixtures.py) through `xmllint --schema tests/data/junit.xsd`
          (Debian package libxml2-utils); the failures and skipped counts must match the verdicts
          of `compare --json`.
  gbench  `mgbench report --format gbench` of both fixtures and the changed sample through
          scripts/check_gbench_json.py (the rules Google Benchmark's compare.py relies on).

Exit 0 passed, 1 failed, 77 skipped (the checker tool is missing: never reported as passed).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kw)


def need(tool, package):
    path = shutil.which(tool)
    if not path:
        print(f"SKIP: {tool} not found (install the {package} package)")
        sys.exit(SKIP)
    return path


def fixtures(source, tmp):
    out = run([sys.executable, os.path.join(source, "scripts/compare_fixtures.py"), source, tmp])
    if out.returncode != 0:
        sys.exit(f"compare_fixtures.py failed: {out.stderr}")
    data = os.path.join(source, "tests/data")
    return {"sample": os.path.join(data, "report_sample.json"),
            "hostile": os.path.join(data, "report_hostile.json"),
            "sample_new": os.path.join(tmp, "sample_new.json"),
            "hostile_new": os.path.join(tmp, "hostile_new.json")}


def report(mgbench, fmt, results, dest):
    out = run([mgbench, "report", results, "--format", fmt, "-o", dest])
    if out.returncode != 0:
        sys.exit(f"mgbench report --format {fmt} {results}: exit {out.returncode}: {out.stderr}")


LINT_ALLOWED = [re.compile(r"label names should be written in 'snake_case' not 'camelCase'$"),
                re.compile(r"metric names should not contain abbreviated units$")]


def promtool(tool, text):
    return run([tool, "check", "metrics"], input=text)


def check_prom(mgbench, source, tmp):
    tool = need("promtool", "prometheus")
    files = fixtures(source, tmp)
    failed = False
    for name in ("sample", "hostile"):
        dest = os.path.join(tmp, name + ".prom")
        report(mgbench, "prom", files[name], dest)
        text = open(dest, encoding="utf-8").read()
        out = promtool(tool, text)
        remarks = [l for l in (out.stdout + out.stderr).splitlines() if l.strip()]
        bad = [l for l in remarks if not any(p.search(l) for p in LINT_ALLOWED)]
        if out.returncode not in (0, 3) or bad:
            print(f"{name}: promtool exit {out.returncode}:\n" + "\n".join(remarks))
            failed = True
            continue
        # The same file with the outside names renamed: no remark at all.
        renamed = re.sub(r"\bmodelName=", "model_name=", text)
        renamed = re.sub(r"^(mgbench_\w*?)_s(\{| )", r"\1_seconds\2", renamed, flags=re.M)
        renamed = re.sub(r"^(# (?:HELP|TYPE) mgbench_\w*?)_s ", r"\1_seconds ", renamed, flags=re.M)
        again = promtool(tool, renamed)
        if again.returncode != 0:
            print(f"{name}: after renaming, promtool exit {again.returncode}: "
                  f"{again.stdout}{again.stderr}")
            failed = True
            continue
        series = sum(1 for l in text.splitlines() if l and not l.startswith("#"))
        print(f"{name}: promtool ok ({series} series; accepted remarks: {len(remarks)})")
    return 1 if failed else 0


def check_junit(mgbench, source, tmp):
    tool = need("xmllint", "libxml2-utils")
    files = fixtures(source, tmp)
    schema = os.path.join(source, "tests/data/junit.xsd")
    failed = False
    for name in ("sample", "hostile"):
        junit = os.path.join(tmp, name + ".junit.xml")
        cmp = run([mgbench, "compare", files[name], files[name + "_new"], "--json",
                   "--junit", junit])
        if cmp.returncode not in (0, 1) or not os.path.exists(junit):
            print(f"{name}: compare exit {cmp.returncode}: {cmp.stderr}")
            failed = True
            continue
        lint = run([tool, "--noout", "--schema", schema, junit])
        if lint.returncode != 0:
            print(f"{name}: xmllint --schema: {lint.stderr}")
            failed = True
            continue
        verdicts = [p["verdict"] for p in json.loads(cmp.stdout)["points"]]
        xml = open(junit, encoding="utf-8").read()
        counts = (xml.count("<failure "), verdicts.count("slower"), cmp.returncode)
        if counts[0] != counts[1] or (counts[1] > 0) != (counts[2] == 1):
            print(f"{name}: {counts[0]} <failure> for {counts[1]} slower points, exit {counts[2]}")
            failed = True
            continue
        print(f"{name}: schema ok, {counts[0]} failures, {xml.count('<skipped ')} skipped")
    return 1 if failed else 0


def check_gbench(mgbench, source, tmp):
    files = fixtures(source, tmp)
    outputs = []
    for name in ("sample", "hostile", "sample_new"):
        dest = os.path.join(tmp, name + ".gbench.json")
        report(mgbench, "gbench", files[name], dest)
        outputs.append(dest)
    checker = os.path.join(source, "scripts/check_gbench_json.py")
    single = run([sys.executable, checker] + outputs)
    pair = run([sys.executable, checker, "--pair", outputs[0], outputs[2]])
    print(single.stdout + single.stderr + pair.stdout + pair.stderr)
    return 0 if single.returncode == 0 and pair.returncode == 0 else 1


def main(argv):
    if len(argv) != 3 or argv[0] not in ("prom", "junit", "gbench"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, mgbench, source = argv
    with tempfile.TemporaryDirectory(prefix="mgbench-exports-") as tmp:
        return {"prom": check_prom, "junit": check_junit, "gbench": check_gbench}[kind](
            mgbench, source, tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
