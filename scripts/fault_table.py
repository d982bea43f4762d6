#!/usr/bin/env python3
"""The fault table: every injected fault once, through the real binary, and what it cost.

    scripts/fault_table.py BUILD/bin/mgbench [--rounds N]

Runs the CPU `selftest` workload on fake devices (the test-only hooks of docs/TESTING-HOOKS.md)
with one fault per sweep, then reads what the sweep left on disk. A point counts as finished
when its line is in the journal; it is lost when results.json does not hold it as `ok` with the
same start time (missing, overwritten, misattributed or run again). Kills and interrupts are
followed by `--resume`, and the resumed results.json is the one judged. Prints a Markdown table,
one row per fault, and exits 1 when any row lost a finished point, 77 when it cannot run (not
root: the tmpfs rows need mount).
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

QUIET = ["--no-report", "--skip-doctor", "--no-telemetry", "-q"]


class Sweeps:
    def __init__(self, binary, devices=2):
        self.binary = binary
        self.env = dict(os.environ, MGBENCH_ENABLE_TEST_WORKLOADS="1",
                        MGBENCH_TEST_FAKE_DEVICES=str(devices), NCCL_NVLS_ENABLE="0")

    def start(self, args, extra_env=None):
        env = dict(self.env, **(extra_env or {}))
        return subprocess.Popen([self.binary] + args, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    def run(self, args, extra_env=None, timeout=300):
        return self.start(args, extra_env).wait(timeout=timeout)


def selftest(behaviors, out, gpus="1", history=False, more=()):
    args = ["sweep", "--workloads", "selftest", "--param", "behavior=" + behaviors,
            "--gpus", gpus, "--out", out] + list(more)
    return args + (QUIET[:] if history else ["--no-history"] + QUIET)


def journal_points(out):
    """index -> list of (status, started_at), one entry per point line of the journal."""
    points = {}
    try:
        lines = open(os.path.join(out, "journal.jsonl"), encoding="utf-8", errors="replace")
    except OSError:
        return points
    with lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") == "point":
                r = record["result"]
                points.setdefault(r["index"], []).append((r.get("status"), r.get("started_at")))
    return points


def results_points(out):
    try:
        with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
            return {p["index"]: p for p in json.load(f)["points"]}
    except (OSError, ValueError, KeyError):
        return {}


def lost(finished, out):
    """Finished ok points (journal lines) missing from results.json, or run more than once."""
    results = results_points(out)
    final = journal_points(out)
    n = 0
    for index, lines in finished.items():
        status, started = lines[0]
        if status != "ok":
            continue
        p = results.get(index)
        if not p or p.get("status") != "ok" or p.get("started_at") != started:
            n += 1
        elif len(final.get(index, [])) > 1:
            n += 1
    return n


def tally(out):
    """'4 ok, 2 skipped': the statuses results.json holds."""
    counts = {}
    for p in results_points(out).values():
        counts[p.get("status")] = counts.get(p.get("status"), 0) + 1
    return ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())) or "no results.json"


def status_of(out, index):
    p = results_points(out).get(index)
    return p.get("status", "?") if p else "absent"


def one_fault(sw, tmp, name, behaviors, faulty, gpus="1", more=(), env=None, devices=None):
    out = os.path.join(tmp, name)
    runner = Sweeps(sw.binary, devices) if devices else sw
    rc = runner.run(selftest(behaviors, out, gpus, more=more), env)
    return [name, "`behavior=%s`" % behaviors, status_of(out, faulty), str(rc),
            lost(journal_points(out), out)]


def resume(sw, out):
    return sw.run(["sweep", "--resume", out] + ["--no-history"] + QUIET)


def killed_then_resumed(sw, tmp, rounds):
    codes, total, ok = set(), 0, 0
    plan = ["--param", "batch=1,2,3,4,5,6"]
    for k in range(rounds):
        out = os.path.join(tmp, "sigkill%d" % k)
        p = sw.start(selftest("brief", out, "1,2", more=plan))
        time.sleep(random.uniform(0.2, 1.8))
        p.send_signal(signal.SIGKILL)
        p.wait()
        before = journal_points(out)
        if os.path.exists(os.path.join(out, "journal.jsonl")):
            codes.add(resume(sw, out))
        else:
            codes.add(sw.run(selftest("brief", out, "1,2", more=list(plan) + ["--force"])))
        total += lost(before, out)
        ok += sum(p.get("status") == "ok" for p in results_points(out).values())
    return ["SIGKILL of the orchestrator x%d, then --resume" % rounds,
            "random moment, 0.2-1.8 s", "after resume: %d/%d ok" % (ok, 12 * rounds),
            "137, then " + ",".join(map(str, sorted(codes))), total]


def signalled(sw, tmp, sig):
    out = os.path.join(tmp, "sig%d" % sig)
    p = sw.start(selftest(",".join(["slow"] * 6), out))
    deadline = time.time() + 30
    while time.time() < deadline and not journal_points(out):
        time.sleep(0.02)
    p.send_signal(sig)
    rc = p.wait()
    before, first = journal_points(out), tally(out)
    n = lost(before, out)
    rc2 = resume(sw, out)
    return ["%s to the orchestrator, then --resume" % signal.Signals(sig).name,
            "after the first point", "%s; then %s" % (first, tally(out)),
            "%d, then %d" % (rc if rc >= 0 else 128 - rc, rc2), n + lost(before, out)]


def interrupted(sw, tmp):
    out = os.path.join(tmp, "interrupt")
    rc = sw.run(selftest("ok,interrupt,ok", out))
    before, kept = journal_points(out), status_of(out, 1)
    n = lost(before, out)
    rc2 = resume(sw, out)
    return ["Ctrl-C while a point is on the pipe, then --resume", "`behavior=ok,interrupt,ok`",
            kept, "%d, then %d" % (rc, rc2), n + lost(before, out)]


def orphan(sw, tmp):
    """SIGKILL of the orchestrator while its worker hangs: the worker must die with it."""
    out = os.path.join(tmp, "orphan")
    p = sw.start(selftest("hang", out))
    kids, deadline = [], time.time() + 30
    while time.time() < deadline and not kids:
        time.sleep(0.02)
        kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True,
                              text=True).stdout.split()
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(0.5)
    alive = [k for k in kids if os.path.exists("/proc/%s" % k) and
             open("/proc/%s/stat" % k).read().rsplit(")", 1)[1].split()[0] != "Z"]
    for k in alive:
        os.kill(int(k), signal.SIGKILL)
    return ["SIGKILL of the orchestrator while its worker hangs", "`behavior=hang`",
            "worker survived" if alive or not kids else "worker died with it", "137",
            lost(journal_points(out), out)]


def tmpfs(out, options):
    os.makedirs(out, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", out]).returncode == 0


def read_only(sw, tmp):
    out = os.path.join(tmp, "readonly")
    if not tmpfs(out, "ro,size=1m"):
        return None
    rc = sw.run(selftest("ok,ok", out))
    subprocess.run(["umount", out])
    return ["read-only `--out` (tmpfs)", "mount -o ro", "nothing run", str(rc), 0]


def full_disk(sw, tmp):
    out = os.path.join(tmp, "enospc")
    if not tmpfs(out, "size=16k"):
        return None
    batches = ",".join(str(b) for b in range(1, 41))
    rc = sw.run(["sweep", "--workloads", "selftest", "--param", "batch=" + batches, "--gpus", "1",
                 "--out", out, "--no-history"] + QUIET)
    # The full disk takes results.json too: the finished points are those of the journal,
    # judged once there is space again.
    before, first = journal_points(out), tally(out)
    subprocess.run(["mount", "-o", "remount,size=8m", out])
    rc2 = resume(sw, out)
    row = ["ENOSPC: 16 KiB tmpfs, then space and --resume", "40 points",
           "%d in the journal, %s; then %s" % (len(before), first, tally(out)),
           "%d, then %d" % (rc, rc2), lost(before, out)]
    subprocess.run(["umount", out])
    return row


def journal_fails(sw, tmp):
    out = os.path.join(tmp, "journalfail")
    rc = sw.run(selftest("ok,ok,ok", out, "1,2"), {"MGBENCH_TEST_JOURNAL_FAIL_AFTER": "2"})
    before, first = journal_points(out), tally(out)
    n = lost(before, out)
    rc2 = resume(sw, out)
    return ["journal append fails (ENOSPC hook), then --resume", "after 2 points",
            "%s; then %s" % (first, tally(out)), "%d, then %d" % (rc, rc2),
            n + lost(before, out)]


def busy_out(sw, tmp):
    out = os.path.join(tmp, "busy")
    first = sw.start(selftest(",".join(["slow"] * 8), out))
    deadline = time.time() + 30
    while time.time() < deadline and not os.path.exists(os.path.join(out, "journal.jsonl")):
        time.sleep(0.01)
    rc2 = sw.run(selftest("ok", out))
    rc = first.wait()
    again = sw.run(selftest("ok", out))
    return ["second sweep on a busy, then a used `--out`", "same --out", "refused",
            "%d, %d (first: %d)" % (rc2, again, rc), lost(journal_points(out), out)]


def changed_plan(sw, tmp):
    out = os.path.join(tmp, "changed")
    sw.run(selftest("ok,ok", out))
    before = journal_points(out)
    rc = sw.run(["sweep", "--resume", out, "--param", "behavior=ok,wrong", "--no-history"] + QUIET)
    return ["--resume with a changed plan", "`--param behavior=ok,wrong`", "refused", str(rc),
            lost(before, out)]


def history(sw, tmp, kind):
    out, db = os.path.join(tmp, "hist-" + kind), os.path.join(tmp, "hist-%s.db" % kind)
    holder = None
    if kind == "corrupt":
        open(db, "w").write("x" * 4096)
    elif kind == "newer":
        c = sqlite3.connect(db)
        c.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        c.execute("INSERT INTO schema_version (version) VALUES (99)")
        c.commit()
        c.close()
    else:
        sw.run(selftest("ok", os.path.join(tmp, "hist-first"), history=True, more=["--db", db]))
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    rc = sw.run(selftest("ok,brief", out, "1,2", history=True, more=["--db", db]))
    if holder:
        holder.close()
    return ["%s history database at the end" % kind, "--db", tally(out), str(rc),
            lost(journal_points(out), out)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--rounds", type=int, default=10, help="SIGKILL rounds (default 10)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("fault_table: needs root (tmpfs mounts): skipped", file=sys.stderr)
        return 77
    sw = Sweeps(os.path.abspath(args.binary))
    tmp = tempfile.mkdtemp(prefix="mgbench-faults-")
    rows = [one_fault(sw, tmp, f, b, i, g, m, devices=d) for f, b, i, g, m, d in [
        ("nan", "ok,nan,ok", 1, "1", (), None),
        ("silent-exit", "ok,silent-exit,ok", 1, "1", (), None),
        ("chatty", "chatty,ok", 0, "1", (), None),
        ("garbage", "ok,garbage,ok", 1, "1", (), None),
        ("bad-index", "ok,bad-index,ok", 1, "1", (), None),
        ("crash", "ok,crash,ok", 1, "1", (), None),
        ("hang", "ok,hang,ok", 1, "1", ("--group-timeout", "5"), None),
        ("wrong", "ok,wrong,ok", 1, "1", (), None),
        ("setup-crash (rank 2 of 3)", "ok,setup-crash,ok", 1, "3", ("--group-timeout", "40"), 3),
        ("hang-in-collective (rank 2 of 3)", "ok,hang-in-collective,ok", 1, "3",
         ("--group-timeout", "40"), 3)]]
    rows += [interrupted(sw, tmp), killed_then_resumed(sw, tmp, args.rounds),
             signalled(sw, tmp, signal.SIGTERM), signalled(sw, tmp, signal.SIGHUP),
             orphan(sw, tmp),
             read_only(sw, tmp), full_disk(sw, tmp), journal_fails(sw, tmp), busy_out(sw, tmp),
             changed_plan(sw, tmp)]
    rows += [history(sw, tmp, k) for k in ("corrupt", "locked", "newer")]
    rows = [r for r in rows if r]
    print("| fault | injected | faulty point | exit code | finished points lost |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %d |" % tuple(r))
    subprocess.run(["rm", "-rf", tmp])
    return 1 if any(r[4] for r in rows) or any("survived" in r[2] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
