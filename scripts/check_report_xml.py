#!/usr/bin/python3
"""Renders the fixed results files with `mgbench report` and parses every SVG as XML.

Usage: check_report_xml.py MGBENCH_BINARY SOURCE_DIR

For each of tests/data/report_sample.json and report_hostile.json: the Markdown report's
chart files and every <svg> element inlined in the HTML report must be well-formed XML in
the SVG namespace, with at least one data element (class "data ...") each. The same holds for
the comparison reports of `mgbench compare ... --report cmp.html` (two runs and offers, on the
inputs of compare_fixtures.py and tests/data/compare/). Exit 0 when all pass, 1 otherwise (one
line per problem on stderr).
"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import compare_fixtures

SVG_NS = "{http://www.w3.org/2000/svg}"


def check_svg(text, where, problems):
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        problems.append(f"{where}: not well-formed XML: {e}")
        return
    if root.tag != SVG_NS + "svg":
        problems.append(f"{where}: root element is {root.tag}, not svg")
        return
    data = [el for el in root.iter() if "data" in (el.get("class") or "").split()]
    if not data:
        problems.append(f"{where}: no data elements")
    for el in root.iter():
        if el.tag.endswith("script") or el.tag.endswith("foreignObject"):
            problems.append(f"{where}: unexpected <{el.tag}> element")


def compare_reports(binary, source, tmp):
    """(name, argv) of the comparison reports to check; the inputs are written under tmp."""
    fx = compare_fixtures.write_fixtures(source, os.path.join(tmp, "fixtures"))
    data = os.path.join(source, "tests", "data", "compare")
    return [
        ("compare: sample vs upgrade", [fx["sample"], fx["sample_new"]]),
        ("compare: offers", [fx["sample"], fx["sample_new"], fx["sample_cloud"],
                             "--price", "report_sample=2.49", "--price", "sample_new=2.10"]),
        ("compare: hostile", [fx["hostile"], fx["hostile_new"], "--label", "<b>x</b>",
                              "--label", "\"><script>alert(9)</script>"]),
        ("compare: base vs slower", [os.path.join(data, "base.json"),
                                     os.path.join(data, "slower.json")]),
    ]


def check_compare(binary, source, problems):
    checked = 0
    with tempfile.TemporaryDirectory(prefix="mgbench-xml-cmp-") as tmp:
        for i, (name, args) in enumerate(compare_reports(binary, source, tmp)):
            page = os.path.join(tmp, f"cmp{i}.html")
            r = subprocess.run([binary, "compare"] + args + ["--report", page],
                               capture_output=True, text=True)
            if r.returncode not in (0, 1) or not os.path.exists(page):
                problems.append(f"{name}: mgbench compare exited {r.returncode}: "
                                f"{r.stderr.strip()}")
                continue
            with open(page, encoding="utf-8") as fh:
                inline = re.findall(r"<svg\b.*?</svg>", fh.read(), flags=re.S)
            if not inline:
                problems.append(f"{name}: no charts in the comparison report")
            for k, svg in enumerate(inline):
                check_svg(svg, f"{name}: inline chart {k}", problems)
                checked += 1
    return checked


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, source = sys.argv[1], sys.argv[2]
    problems = []
    checked = 0
    for name in ("report_sample.json", "report_hostile.json"):
        data = os.path.join(source, "tests", "data", name)
        with tempfile.TemporaryDirectory(prefix="mgbench-xml-") as tmp:
            md = os.path.join(tmp, "report.md")
            html = os.path.join(tmp, "report.html")
            for args in (["--format", "md", "-o", md], ["-o", html]):
                r = subprocess.run([binary, "report", data] + args, capture_output=True, text=True)
                if r.returncode != 0:
                    problems.append(f"{name}: mgbench report {' '.join(args)} exited "
                                    f"{r.returncode}: {r.stderr.strip()}")
            charts = os.path.join(tmp, "report_charts")
            files = sorted(os.listdir(charts)) if os.path.isdir(charts) else []
            if not files:
                problems.append(f"{name}: the Markdown report wrote no chart files")
            for f in files:
                with open(os.path.join(charts, f), encoding="utf-8") as fh:
                    check_svg(fh.read(), f"{name}: {f}", problems)
                checked += 1
            if os.path.exists(html):
                with open(html, encoding="utf-8") as fh:
                    page = fh.read()
                inline = re.findall(r"<svg\b.*?</svg>", page, flags=re.S)
                if len(inline) != len(files):
                    problems.append(f"{name}: {len(inline)} inline charts in HTML, "
                                    f"{len(files)} chart files for Markdown")
                for i, svg in enumerate(inline):
                    check_svg(svg, f"{name}: inline chart {i}", problems)
                    checked += 1
    checked += check_compare(binary, source, problems)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{checked} SVG documents checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
