"""The cross-check's tables (scripts/crosscheck.py): the console text, crosscheck.md, .json and
.csv of its sections."""
import csv
import json
import os
from datetime import datetime, timezone

MIB = 1 << 20


def size_label(nbytes):
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def fmt(value, digits):
    return "—" if value is None else f"{value:.{digits}f}"


def signed(value):
    return "—" if value is None else f"{value:+.2f}"


def render_section(section):
    lines = [f"== {section['title']}", f"   {section['method']}"]
    if section.get("skipped"):
        lines.append(f"   skipped: {section['skipped']}")
        return "\n".join(lines)
    header = (section["key"], f"mgbench ({section['unit']})", f"reference ({section['unit']})",
              "delta %", "tol %", "delta fastest %", "runs %", "result", "note")
    body = [(r["key"], fmt(r["mgbench"], 2), fmt(r["reference"], 2), signed(r["delta_pct"]),
             f"{r['tolerance_pct']:g}", signed(r.get("fastest_delta_pct")),
             fmt(r.get("runs_pct"), 1), r["status"], r["note"])
            for r in section["rows"]]
    widths = [max(len(str(row[i])) for row in [header] + body) for i in range(len(header))]
    for row in [header] + body:
        cells = [str(c).ljust(w) if i in (0, 7, 8) else str(c).rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("   " + "  ".join(cells).rstrip())
    failed = sum(r["status"] in ("FAIL", "missing") for r in section["rows"])
    lines.append(f"   {len(section['rows']) - failed} of {len(section['rows'])} rows within tolerance")
    return "\n".join(lines)


def render_markdown(sections):
    """The tables as Markdown (crosscheck.md), one per section, for a closing note."""
    lines = ["# mgbench cross-check", ""]
    for section in sections:
        lines += [f"## {section['title']}", "", section["method"], ""]
        if section.get("skipped"):
            lines += [f"skipped: {section['skipped']}", ""]
            continue
        lines.append(f"| {section['key']} | mgbench ({section['unit']}) | reference "
                     f"({section['unit']}) | delta % | tol % | delta fastest % | runs % | result "
                     f"| note |")
        lines.append("|---|--:|--:|--:|--:|--:|--:|---|---|")
        for r in section["rows"]:
            note = r["note"].replace("|", "\\|")
            lines.append(f"| {r['key']} | {fmt(r['mgbench'], 2)} | {fmt(r['reference'], 2)} | "
                         f"{signed(r['delta_pct'])} | {r['tolerance_pct']:g} | "
                         f"{signed(r.get('fastest_delta_pct'))} | {fmt(r.get('runs_pct'), 1)} | "
                         f"{r['status']} | {note} |")
        lines.append("")
    return "\n".join(lines)


def write_outputs(out_dir, sections, code):
    os.makedirs(out_dir, exist_ok=True)
    document = {"generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "exit_code": code, "sections": sections}
    with open(os.path.join(out_dir, "crosscheck.json"), "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    with open(os.path.join(out_dir, "crosscheck.md"), "w", encoding="utf-8") as f:
        f.write(render_markdown(sections))
    with open(os.path.join(out_dir, "crosscheck.csv"), "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["workload", "case", "unit", "mgbench", "reference", "delta_pct",
                         "tolerance_pct", "fastest_delta_pct", "runs_pct", "status", "note"])
        for s in sections:
            for r in s["rows"]:
                writer.writerow([s["name"], r["key"], s["unit"], r["mgbench"], r["reference"],
                                 r["delta_pct"], r["tolerance_pct"], r.get("fastest_delta_pct"),
                                 r.get("runs_pct"),
                                 r["status"], r["note"]])
