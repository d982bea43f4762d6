#!/usr/bin/python3
"""Opens generated HTML reports in headless Chromium.

Usage: check_report_browser.py MGBENCH_BINARY SOURCE_DIR OUT_DIR

For tests/data/report_sample.json and report_hostile.json: renders report.html with
`mgbench report`, loads it in headless Chromium and checks that
  - the page logs nothing to the console (it has no scripts: any console message is an
    error, e.g. a blocked load under its Content-Security-Policy, or an injected script);
  - the DOM holds every expected chart as an <svg class="chart"> with data elements;
  - hostile strings stayed text (no <script>/<img> elements, the text is visible);
and saves a full-page screenshot (1400 px wide) to OUT_DIR/<name>.png for a person to look at.
The comparison reports (`mgbench compare ... --report cmp.html`: two runs, offers, hostile
strings; inputs from compare_fixtures.py) get the same checks plus their expected sections,
charts and verdict markers, with screenshots OUT_DIR/compare-<name>.png.
Exit 0 on success, 1 on a failed check, 77 (skipped) when Chromium is not installed.
"""
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile

import compare_fixtures

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--mute-audio", "--disable-extensions"]

# Chart ids the sample run must produce (one per kind; see reports/charts.hpp).
SAMPLE_CHARTS = ["gemm-scaling-bf16-cublas-size-8192", "gemm-efficiency", "gemm-size-bf16",
                 "allreduce-busbw-fp32", "allreduce-time-fp32", "train-step-scaling-batch-256",
                 "train-step-efficiency", "train-step-throughput", "train-step-memory",
                 "train-step-breakdown", "telemetry-timeline-gpu-3-power-w"]
SAMPLE_CHART_COUNT = 43
# In page order: the answer (summary, flags) first, the settings and environment last.
SAMPLE_SECTIONS = ["summary", "flags", "verdicts", "doctor", "workload-gemm",
                   "workload-allreduce", "workload-train-step", "scaling", "telemetry", "points",
                   "settings", "environment"]


class Dom(html.parser.HTMLParser):
    """Collects charts (svg id -> number of data elements), elements, ids and text."""

    def __init__(self):
        super().__init__()
        self.charts = {}
        self.current = None
        self.tags = {}
        self.ids = set()
        self.id_order = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if "id" in a:
            self.ids.add(a["id"])
            self.id_order.append(a["id"])
        classes = (a.get("class") or "").split()
        if tag == "svg" and "chart" in classes:
            self.current = a.get("id", "")
            self.charts[self.current] = 0
        elif self.current is not None and "data" in classes:
            self.charts[self.current] += 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.current = None

    def handle_data(self, data):
        self.text.append(data)


def chromium():
    for name in (os.environ.get("CHROMIUM", ""), "/usr/bin/chromium", "chromium",
                 "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def run_chromium(exe, profile, extra, url):
    cmd = [exe] + CHROMIUM_FLAGS + [f"--user-data-dir={profile}"] + extra + [url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def check(binary, source, out_dir, exe, name, problems):
    data = os.path.join(source, "tests", "data", name + ".json")
    with tempfile.TemporaryDirectory(prefix="mgbench-browser-") as tmp:
        page = os.path.join(tmp, "report.html")
        r = subprocess.run([binary, "report", data, "-o", page], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"{name}: mgbench report exited {r.returncode}: {r.stderr.strip()}")
            return
        url = "file://" + page
        dom_run = run_chromium(exe, os.path.join(tmp, "profile-dom"),
                               ["--enable-logging=stderr", "--v=0", "--dump-dom"], url)
        if dom_run.returncode != 0 or "<html" not in dom_run.stdout:
            problems.append(f"{name}: chromium --dump-dom failed ({dom_run.returncode}): "
                            f"{dom_run.stderr.strip()[-300:]}")
            return
        console = [l for l in dom_run.stderr.splitlines()
                   if "CONSOLE" in l or "Uncaught" in l or "Refused to" in l]
        for line in console:
            problems.append(f"{name}: console: {line.strip()[:300]}")
        dom = Dom()
        dom.feed(dom_run.stdout)
        for tag in ("script", "img", "iframe", "object", "embed", "link"):
            if dom.tags.get(tag):
                problems.append(f"{name}: the page holds {dom.tags[tag]} <{tag}> element(s)")
        if not dom.charts:
            problems.append(f"{name}: no charts in the DOM")
        for chart, data_elements in sorted(dom.charts.items()):
            if data_elements == 0:
                problems.append(f"{name}: chart {chart} has no data elements")
        if name == "report_sample":
            for chart in SAMPLE_CHARTS:
                if chart not in dom.charts:
                    problems.append(f"{name}: expected chart {chart} is missing")
            if len(dom.charts) != SAMPLE_CHART_COUNT:
                problems.append(f"{name}: {len(dom.charts)} charts, expected {SAMPLE_CHART_COUNT}")
            for section in SAMPLE_SECTIONS:
                if section not in dom.ids:
                    problems.append(f"{name}: section #{section} is missing")
            order = [i for i in dom.id_order if i in SAMPLE_SECTIONS]
            if order != SAMPLE_SECTIONS:
                problems.append(f"{name}: sections in the order {order}, expected {SAMPLE_SECTIONS}")
        else:
            text = "".join(dom.text)
            for needle in ("<script>alert(1)</script>", "onerror=alert(2)>"):
                if needle not in text:
                    problems.append(f"{name}: hostile string {needle!r} is not shown as text")
        os.makedirs(out_dir, exist_ok=True)
        shot = os.path.join(out_dir, name + ".png")
        if os.path.exists(shot):
            os.remove(shot)
        height = 14000 if name == "report_sample" else 2600
        shot_run = run_chromium(exe, os.path.join(tmp, "profile-shot"),
                                [f"--window-size=1400,{height}", f"--screenshot={shot}"], url)
        if shot_run.returncode != 0 or not os.path.exists(shot) or os.path.getsize(shot) < 10000:
            problems.append(f"{name}: no screenshot ({shot_run.returncode}): "
                            f"{shot_run.stderr.strip()[-300:]}")
        else:
            print(f"{name}: {len(dom.charts)} charts, screenshot {shot}")


# Comparison reports: name -> (compare arguments from the fixture paths, expected exit code,
# section ids, chart id prefixes, marker series expected in the DOM, window height).
def compare_cases(fx, source):
    data = os.path.join(source, "tests", "data", "compare")
    return {
        "upgrade": ([fx["sample"], fx["sample_new"], "--label", "base", "--label", "upgrade"], 1,
                    ["summary", "environment", "verdicts", "unmatched", "workload-gemm",
                     "workload-allreduce", "workload-train-step", "inputs"],
                    ["cmp-gemm-scaling-", "cmp-gemm-efficiency", "cmp-gemm-size-",
                     "cmp-allreduce-size-", "cmp-train-step-scaling-", "cmp-train-step-size-"],
                    ["verdict: slower", "verdict: faster", "verdict: noisy", "verdict: same"],
                    16000),
        "offers": ([fx["sample"], fx["sample_new"], fx["sample_cloud"], "--label", "metal",
                    "--label", "upgrade", "--label", "cloud", "--price", "metal=2.49",
                    "--price", "upgrade=2.10", "--price", "cloud=3.10"], 0,
                   ["offers", "environment", "workload-gemm", "workload-allreduce",
                    "workload-train-step"],
                   ["cmp-gemm-scaling-", "cmp-gemm-efficiency", "cmp-allreduce-size-"], [],
                   14000),
        "hostile": ([fx["hostile"], fx["hostile_new"], "--label", "<b>base</b>", "--label",
                     "\"><script>alert(9)</script>"], 0,
                    ["summary", "environment", "verdicts", "unmatched", "inputs"],
                    ["cmp-gemm-scaling-", "cmp-gemm-size-"], ["verdict: same"], 3000),
        "slower": ([os.path.join(data, "base.json"), os.path.join(data, "slower.json")], 1,
                   ["summary", "environment", "verdicts", "workload-gemm", "inputs"],
                   ["cmp-gemm-size-"], ["verdict: slower"], 2000),
    }


class SeriesNames(html.parser.HTMLParser):
    """data-name of every <g class="series"> (the verdict marker series among them)."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "g" and "series" in (a.get("class") or "").split():
            self.names.add(a.get("data-name", ""))


def check_compare(binary, source, out_dir, exe, problems):
    with tempfile.TemporaryDirectory(prefix="mgbench-browser-cmp-") as tmp:
        fx = compare_fixtures.write_fixtures(source, os.path.join(tmp, "fixtures"))
        for name, (args, code, sections, charts, series, height) in compare_cases(fx,
                                                                                source).items():
            tag = "compare-" + name
            page = os.path.join(tmp, tag + ".html")
            r = subprocess.run([binary, "compare"] + args + ["--report", page],
                               capture_output=True, text=True)
            if r.returncode != code or not os.path.exists(page):
                problems.append(f"{tag}: mgbench compare exited {r.returncode} (expected {code}): "
                                f"{r.stderr.strip()[-300:]}")
                continue
            url = "file://" + page
            dom_run = run_chromium(exe, os.path.join(tmp, "profile-dom-" + name),
                                   ["--enable-logging=stderr", "--v=0", "--dump-dom"], url)
            if dom_run.returncode != 0 or "<html" not in dom_run.stdout:
                problems.append(f"{tag}: chromium --dump-dom failed ({dom_run.returncode})")
                continue
            for line in dom_run.stderr.splitlines():
                if "CONSOLE" in line or "Uncaught" in line or "Refused to" in line:
                    problems.append(f"{tag}: console: {line.strip()[:300]}")
            dom = Dom()
            dom.feed(dom_run.stdout)
            for t in ("script", "img", "iframe", "object", "embed", "link"):
                if dom.tags.get(t):
                    problems.append(f"{tag}: the page holds {dom.tags[t]} <{t}> element(s)")
            if not dom.charts:
                problems.append(f"{tag}: no charts in the DOM")
            for chart, data_elements in sorted(dom.charts.items()):
                if data_elements == 0:
                    problems.append(f"{tag}: chart {chart} has no data elements")
            for section in sections:
                if section not in dom.ids:
                    problems.append(f"{tag}: section #{section} is missing")
            for prefix in charts:
                if not any(c.startswith(prefix) for c in dom.charts):
                    problems.append(f"{tag}: no chart {prefix}*")
            names = SeriesNames()
            names.feed(dom_run.stdout)
            for s in series:
                if s not in names.names:
                    problems.append(f"{tag}: no {s!r} marker series")
            if name == "hostile":
                text = "".join(dom.text)
                for needle in ("<script>alert(1)</script>", "\"><script>alert(9)</script>",
                               "\"><svg onload=alert(4)>"):
                    if needle not in text:
                        problems.append(f"{tag}: hostile string {needle!r} is not shown as text")
            os.makedirs(out_dir, exist_ok=True)
            shot = os.path.join(out_dir, tag + ".png")
            if os.path.exists(shot):
                os.remove(shot)
            shot_run = run_chromium(exe, os.path.join(tmp, "profile-shot-" + name),
                                    [f"--window-size=1400,{height}", f"--screenshot={shot}"], url)
            if shot_run.returncode != 0 or not os.path.exists(shot) or \
                    os.path.getsize(shot) < 10000:
                problems.append(f"{tag}: no screenshot ({shot_run.returncode})")
            else:
                print(f"{tag}: {len(dom.charts)} charts, screenshot {shot}")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    exe = chromium()
    if not exe:
        print("SKIP: chromium is not installed", file=sys.stderr)
        return 77
    binary, source, out_dir = sys.argv[1:4]
    problems = []
    for name in ("report_sample", "report_hostile"):
        check(binary, source, out_dir, exe, name, problems)
    check_compare(binary, source, out_dir, exe, problems)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
