"""Unit tests of scripts/crosscheck.py: parsing nccl-tests and torch output, the tolerance
decision, the exit codes, and one end-to-end run against stand-in tools (no GPU)."""
import argparse
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import crosscheck  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "data", "crosscheck")
FIXTURE = os.path.join(FIXTURES, "all_reduce_perf_1gpu.txt")
MIB = 1 << 20


def read_fixture(binary="all_reduce_perf"):
    with open(os.path.join(FIXTURES, f"{binary}_1gpu.txt"), encoding="utf-8") as f:
        return f.read()


class ParseAllReducePerf(unittest.TestCase):
    def test_every_size_from_8_bytes_to_1_gib_is_read_out_of_place(self):
        rows = crosscheck.parse_nccl_tests_perf(read_fixture())
        self.assertEqual(sorted(rows), [8 << i for i in range(28)])
        self.assertEqual(rows[8]["time_us"], 4.90)  # out-of-place, not the in-place 4.75
        self.assertEqual(rows[1 << 30]["time_us"], 508.20)
        self.assertEqual(rows[1 << 30]["algbw"], 2112.8)
        self.assertEqual(rows[16 * MIB]["time_us"], 11.08)
        self.assertEqual(rows[8]["wrong"], "0")

    def test_per_iteration_columns_keep_the_first_time_column(self):
        text = textwrap.dedent("""\
            #       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%
                    1024           256     float     sum      -1     7.50    0.14    0.00       0     7.10     9.00     8.90     3.10     7.20    0.14    0.00       0     7.00     8.00     7.90     2.00
            """)
        rows = crosscheck.parse_nccl_tests_perf(text)
        self.assertEqual(rows[1024]["time_us"], 7.50)

    def test_output_without_a_column_header_is_refused(self):
        with self.assertRaisesRegex(crosscheck.ToolError, "no all_reduce_perf column header"):
            crosscheck.parse_nccl_tests_perf("NCCL failure common.cu:1000 'unhandled cuda error'\n")

    def test_a_header_without_rows_is_refused(self):
        header = read_fixture().splitlines()[:11]
        with self.assertRaisesRegex(crosscheck.ToolError, "no result row"):
            crosscheck.parse_nccl_tests_perf("\n".join(header))
        with self.assertRaisesRegex(crosscheck.ToolError, "^sendrecv_perf printed its header"):
            crosscheck.parse_nccl_tests_perf("\n".join(header), "sendrecv_perf")


class ParseEveryNcclTestsBinary(unittest.TestCase):
    """The *_perf binaries of the other collectives print the same columns with their own
    redop and root, sizes rounded to 16 bytes per rank where the total is split, and N/A for
    the in-place errors nccl-tests does not check (all-to-all, send/recv)."""

    def test_every_binary_of_the_table_has_a_fixture_and_its_rows_are_read(self):
        for name, (binary, _, _, splits) in crosscheck.COLLECTIVES.items():
            with self.subTest(binary=binary):
                rows = crosscheck.parse_nccl_tests_perf(read_fixture(binary), binary)
                smallest = 16 if splits else 8
                self.assertEqual(sorted(n for n in rows if n),
                                 [smallest << i for i in range(28) if smallest << i <= 1 << 30])
                self.assertEqual(crosscheck.collective_sizes(argparse.Namespace(sizes=None),
                                                             splits)[0], smallest)
                self.assertIsNotNone(rows[1 << 30]["time_us"])

    def test_all_gather_perf_rounds_8_bytes_to_nothing_and_keeps_the_out_of_place_time(self):
        rows = crosscheck.parse_nccl_tests_perf(read_fixture("all_gather_perf"), "all_gather_perf")
        self.assertIn(0, rows)  # 8 bytes on one rank: 0 elements in 16-byte steps
        self.assertNotIn(8, rows)
        self.assertEqual(rows[16]["time_us"], 4.97)  # not the in-place 0.33
        self.assertEqual(rows[1 << 30]["algbw"], 2129.2)

    def test_broadcast_and_reduce_rows_carry_root_0(self):
        for binary in ("broadcast_perf", "reduce_perf"):
            text = read_fixture(binary)
            row = next(line for line in text.splitlines() if line.strip().startswith("1024 "))
            self.assertEqual(row.split()[4], "0")
            self.assertEqual(crosscheck.parse_nccl_tests_perf(text, binary)[1024]["wrong"], "0")

    def test_in_place_na_of_alltoall_and_sendrecv_does_not_shift_the_out_of_place_columns(self):
        for binary in ("alltoall_perf", "sendrecv_perf"):
            rows = crosscheck.parse_nccl_tests_perf(read_fixture(binary), binary)
            self.assertEqual(rows[1 << 20]["wrong"], "0")
            self.assertGreater(rows[1 << 20]["algbw"], 100.0)

    def test_a_truncated_table_names_its_binary(self):
        with self.assertRaisesRegex(crosscheck.ToolError, "no alltoall_perf column header"):
            crosscheck.parse_nccl_tests_perf("# nccl-tests version 2.19.6\n", "alltoall_perf")


class ParseTorchReference(unittest.TestCase):
    def test_figures_and_skipped_cases_are_read_and_other_lines_ignored(self):
        text = ("torch 2.5.1, CUDA 12.4, NVIDIA H200\n"
                "torch_bf16_8192_tflops 702.41\n"
                "torch_tf32_4096_tflops 351.07\n"
                "torch_fp8_8192_skipped fp8 needs compute capability >= 8.9\n")
        parsed = crosscheck.parse_torch_reference(text)
        self.assertEqual(parsed[("bf16", 8192)], 702.41)
        self.assertEqual(parsed[("tf32", 4096)], 351.07)
        self.assertEqual(parsed[("fp8", 8192)], "skipped: fp8 needs compute capability >= 8.9")
        self.assertEqual(len(parsed), 3)


class Tolerance(unittest.TestCase):
    def test_three_percent_from_one_mib_ten_below(self):
        self.assertEqual(crosscheck.collective_tolerance(MIB), 0.03)
        self.assertEqual(crosscheck.collective_tolerance(MIB - 1), 0.10)
        self.assertEqual(crosscheck.collective_tolerance(8), 0.10)

    def test_rows_within_and_beyond_tolerance(self):
        ok = crosscheck.compare("1 MiB", {"time_us": 102.9}, 100.0, 0.03, "time_us")
        self.assertEqual(ok["status"], "ok")
        self.assertAlmostEqual(ok["delta_pct"], 2.9)
        fail = crosscheck.compare("1 MiB", {"time_us": 96.8}, 100.0, 0.03, "time_us")
        self.assertEqual(fail["status"], "FAIL")
        self.assertAlmostEqual(fail["delta_pct"], -3.2)
        small = crosscheck.compare("8 B", {"time_us": 5.4}, 5.0, 0.10, "time_us")
        self.assertEqual(small["status"], "ok")

    def test_a_point_measured_otherwise_than_asked_says_so(self):
        mine = {"time_us": 5.0, "timing": "device", "cache": "hot"}
        row = crosscheck.compare("8 B", mine, 5.0, 0.1, "time_us", {"timing": "host", "cache": "hot"})
        self.assertEqual(row["note"], "mgbench recorded timing=device (asked host)")

    def test_a_point_without_a_figure_is_missing_with_its_reason(self):
        row = crosscheck.compare("8 B", "mgbench failed: NCCL error", 5.0, 0.10, "time_us")
        self.assertEqual(row["status"], "missing")
        self.assertEqual(row["note"], "mgbench failed: NCCL error")
        self.assertEqual(crosscheck.compare("8 B", None, 5.0, 0.1, "time_us")["note"],
                         "no mgbench figure")

    def test_exit_codes(self):
        ok = {"status": "ok"}
        self.assertEqual(crosscheck.exit_code([{"rows": [ok]}]), 0)
        self.assertEqual(crosscheck.exit_code([{"rows": [ok, {"status": "FAIL"}]}]), 1)
        self.assertEqual(crosscheck.exit_code([{"rows": [{"status": "missing"}]}]), 1)
        self.assertEqual(crosscheck.exit_code([{"rows": [ok]}, {"rows": [], "skipped": "x"}]), 77)
        self.assertEqual(crosscheck.exit_code([{"rows": [{"status": "FAIL"}]},
                                               {"rows": [], "skipped": "x"}]), 1)


class Repeats(unittest.TestCase):
    def test_the_median_run_is_compared_and_the_fastest_kept(self):
        runs = [{8: {"time_us": 6.0, "timing": "host"}}, {8: {"time_us": 5.0, "timing": "host"}},
                {8: {"time_us": 5.5, "timing": "host"}}]
        merged = crosscheck.over_runs(runs, "time_us")
        self.assertEqual(merged[8]["time_us"], 5.5)
        self.assertEqual(merged[8]["fastest"], 5.0)
        self.assertEqual(merged[8]["runs"], [6.0, 5.0, 5.5])
        self.assertEqual(merged[8]["timing"], "host")

    def test_a_failed_or_absent_run_keeps_its_reason(self):
        failed = crosscheck.over_runs([{8: {"time_us": 5.0}}, {8: "mgbench failed: x"}],
                                      "time_us")
        self.assertEqual(failed[8], "mgbench failed: x")
        absent = crosscheck.over_runs([{8: {"time_us": 5.0}, 16: {"time_us": 5.0}},
                                       {8: {"time_us": 5.0}}], "time_us")
        self.assertEqual(absent[16], "absent from a run")

    def test_per_process_launch_cost_is_judged_on_the_medians(self):
        # Both tools draw one launch-cost level per run; one lucky run of the reference makes
        # the fastest runs differ by 20 %, while the medians agree.
        mine = crosscheck.over_runs([{8: {"time_us": t, "timing": "host", "cache": "hot"}}
                                     for t in (5.6, 5.0, 6.1, 5.3, 5.8)], "time_us")
        ref = crosscheck.over_runs([{8: {"time_us": t}} for t in (5.5, 4.0, 6.0, 5.4, 5.9)],
                                   "time_us")
        row = crosscheck.collective_rows(mine, ref)[0]
        self.assertEqual(row["status"], "ok")
        self.assertAlmostEqual(row["delta_pct"], (5.6 - 5.5) / 5.5 * 100.0)
        self.assertAlmostEqual(row["fastest_delta_pct"], (5.0 - 4.0) / 4.0 * 100.0)
        # A gap of the medians fails, even where the fastest runs agree.
        slow = crosscheck.over_runs([{8: {"time_us": t, "timing": "host", "cache": "hot"}}
                                     for t in (6.5, 4.0, 6.4, 6.6, 6.2)], "time_us")
        row = crosscheck.collective_rows(slow, ref)[0]
        self.assertEqual(row["status"], "FAIL")
        self.assertAlmostEqual(row["fastest_delta_pct"], 0.0)

    def test_run_spread_is_the_larger_of_the_two_tools(self):
        self.assertAlmostEqual(crosscheck.run_spread_pct([[5.0, 5.5, 6.0], [5.0, 5.1]]),
                               1.0 / 5.5 * 100.0)
        self.assertIsNone(crosscheck.run_spread_pct([[5.0], None]))

    def test_iterations_time_about_50_ms_between_20_and_2000(self):
        self.assertEqual(crosscheck.nccl_tests_iterations(8), (2000, 200))
        iters, warmup = crosscheck.nccl_tests_iterations(1 << 30)
        self.assertEqual((iters, warmup), (69, 6))
        self.assertEqual(crosscheck.nccl_tests_iterations(1 << 40)[0], 20)

    def test_a_sweep_missing_one_of_its_sizes_is_refused(self):
        fixture = read_fixture()
        without_64 = "\n".join(line for line in fixture.splitlines()
                               if not line.split()[:1] == ["64"])
        saved = crosscheck.run_tool
        crosscheck.run_tool = lambda argv, env=None, timeout=None: without_64
        try:
            args = argparse.Namespace(nccl_arg=[], gpus=1)
            got = crosscheck.run_nccl_tests_perf("arp", [8, 16, 32], args, None)
            self.assertEqual(sorted(got), [8, 16, 32])
            with self.assertRaisesRegex(crosscheck.ToolError, "printed no row for 64 bytes"):
                crosscheck.run_nccl_tests_perf("arp", [8, 16, 32, 64, 128], args, None)
        finally:
            crosscheck.run_tool = saved


class MgbenchPoints(unittest.TestCase):
    def test_roots_other_than_0_and_other_workloads_are_left_out(self):
        def point(root, workload="broadcast"):
            return {"workload": workload, "gpus": 1, "status": "ok",
                    "params": {"dtype": "fp32", "inplace": False, "bytes": 64, "root": root},
                    "metrics": {"time_us": 5.0 + root, "algbw_GBps": 0.01}}
        picked = crosscheck.mgbench_collective({"points": [point(1), point(0),
                                                           point(0, "reduce")]}, "broadcast")
        self.assertEqual(picked[64]["time_us"], 5.0)
        self.assertEqual(len(picked), 1)

    def test_only_nccl_fp32_out_of_place_one_gpu_points_are_compared(self):
        def point(impl="nccl", dtype="fp32", inplace=False, gpus=1, status="ok"):
            return {"workload": "allreduce", "gpus": gpus, "status": status, "message": "boom",
                    "params": {"impl": impl, "dtype": dtype, "inplace": inplace, "bytes": 1024,
                               "timing": "host", "cache": "hot"},
                    "metrics": {"time_us": 6.5, "algbw_GBps": 0.16}}
        doc = {"points": [point(impl="mgbench"), point(dtype="bf16"), point(inplace=True),
                          point(gpus=2), point()]}
        picked = crosscheck.mgbench_collective(doc)
        self.assertEqual(picked[1024]["time_us"], 6.5)
        self.assertEqual((picked[1024]["timing"], picked[1024]["cache"]), ("host", "hot"))
        failed = crosscheck.mgbench_collective({"points": [point(status="failed")]})
        self.assertEqual(failed[1024], "mgbench failed: boom")
        two = crosscheck.mgbench_collective({"points": [point(), point(gpus=2, status="failed")]},
                                            "allreduce", 2)
        self.assertEqual(two[1024], "mgbench failed: boom")  # the 2-GPU point, not the 1-GPU one


FAKE_MGBENCH = """#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--out") + 1]
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(os.path.join(os.path.dirname(out), "mgbench.cpus"), "a") as f:
    f.write(",".join(str(c) for c in sorted(os.sched_getaffinity(0))) + "\\n")
params = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--param")
workload = args[args.index("--workloads") + 1]
with open(os.path.join(os.path.dirname(out), "mgbench.calls"), "a") as f:
    f.write(workload + " " + " ".join(sorted(a for a in params if a != "bytes")) + "\\n")
gpus = int(args[args.index("--gpus") + 1])
with open(os.path.join(os.path.dirname(out), "mgbench.devices"), "a") as f:
    f.write(f"{gpus} {args[args.index('--devices') + 1]}\\n")
scale = float(os.environ.get("FAKE_SCALE", "1"))
ref = {}
for line in open(os.path.join(os.environ["FAKE_REF_DIR"], workload + ".txt")):
    f = line.split()
    if f and f[0].isdigit():
        ref[int(f[0])] = float(f[5])
points = []
for b in params["bytes"].split(","):
    t = ref[int(b)] * (scale if int(b) == 1 << 30 else 1.0)
    own = {k: v for k, v in params.items() if k not in ("bytes", "inplace")}
    own.update({"bytes": int(b), "inplace": False})
    points.append({"workload": workload, "gpus": gpus, "status": "ok", "params": own,
                   "metrics": {"time_us": t, "algbw_GBps": int(b) / t / 1e3}})
os.makedirs(out, exist_ok=True)
json.dump({"points": points}, open(os.path.join(out, "results.json"), "w"))
"""


# nccl-tests' all_reduce_perf with -b B -e E -f 2: its header lines and the fixture's rows for
# the sizes from B to E.
FAKE_ALL_REDUCE_PERF = """#!/usr/bin/env python3
import sys
args = sys.argv[1:]
import os
cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
with open("{calls}", "a") as f:
    f.write(" ".join(args) + "\\n")
with open("{calls}.cpus", "a") as f:
    f.write(cpus + "\\n")
with open("{calls}.visible", "a") as f:
    f.write(os.environ.get("CUDA_VISIBLE_DEVICES", "-") + "\\n")
lo, hi = int(args[args.index("-b") + 1]), int(args[args.index("-e") + 1])
for line in open("{fixture}"):
    fields = line.split()
    if not fields or not fields[0].isdigit() or lo <= int(fields[0]) <= hi:
        print(line, end="")
"""


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tools = os.path.join(self.dir.name, "nccl-tests", "build")
        os.makedirs(self.tools)
        self.calls = os.path.join(self.dir.name, "calls.txt")
        # Every nccl-tests binary prints its own fixture; mgbench's figures come from the same.
        refs = os.path.join(self.dir.name, "refs")
        os.makedirs(refs)
        for name, (binary, _, _, _) in crosscheck.COLLECTIVES.items():
            fixture = os.path.join(FIXTURES, f"{binary}_1gpu.txt")
            calls = self.calls if name == "allreduce" else f"{self.calls}.{name}"
            self.write_tool(os.path.join(self.tools, binary),
                            FAKE_ALL_REDUCE_PERF.format(fixture=fixture, calls=calls))
            os.symlink(fixture, os.path.join(refs, name + ".txt"))
        self.mgbench = os.path.join(self.dir.name, "mgbench")
        self.write_tool(self.mgbench, FAKE_MGBENCH)
        os.environ["FAKE_REF_DIR"] = refs

    def tearDown(self):
        os.environ.pop("FAKE_SCALE", None)
        os.environ.pop("FAKE_REF_DIR", None)
        self.dir.cleanup()

    @staticmethod
    def write_tool(path, text):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)

    def run_main(self, *extra, only="allreduce"):
        out = os.path.join(self.dir.name, "out")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = crosscheck.main(["--only", only, "--mgbench", self.mgbench,
                                    "--out", out] + list(extra))
        return code, printed.getvalue(), out

    def test_every_collective_is_compared_with_its_own_binary_and_arguments(self):
        only = ",".join(n for n in crosscheck.COLLECTIVES if n != "allreduce")
        code, printed, out = self.run_main("--nccl-tests", os.path.dirname(self.tools),
                                           "--repeats", "1", "--sizes", "8,16,1024",
                                           only=only)
        self.assertEqual(code, 0, printed)
        for name, (binary, _, _, splits) in crosscheck.COLLECTIVES.items():
            if name == "allreduce":
                continue
            self.assertIn(f"{name}: mgbench NCCL vs nccl-tests {binary}", printed)
            with open(f"{self.calls}.{name}", encoding="utf-8") as f:
                calls = f.read().splitlines()
            first = 16 if splits else 8  # nccl-tests splits 8 bytes into nothing per rank
            self.assertEqual(calls[0].split()[:4], ["-b", str(first), "-e", "1024"], name)
            self.assertEqual(len(calls), 1, name)  # one sweep over the L2-resident sizes
        self.assertIn("2 of 2 rows within tolerance", printed)  # all-gather: 16 B, 1 KiB
        self.assertIn("3 of 3 rows within tolerance", printed)  # broadcast: from 8 B
        with open(f"{self.calls}.broadcast", encoding="utf-8") as f:
            self.assertIn("-d float -r 0 -c 1", f.read())
        with open(f"{self.calls}.reduce", encoding="utf-8") as f:
            self.assertIn("-d float -o sum -r 0 -c 1", f.read())
        with open(os.path.join(out, "mgbench.calls"), encoding="utf-8") as f:
            mgbench_calls = f.read().splitlines()
        self.assertIn("broadcast cache dtype inplace root timing", mgbench_calls)
        self.assertIn("alltoall cache dtype timing", mgbench_calls)  # no in-place variant

    def test_only_and_sizes_are_checked_before_anything_runs(self):
        for bad in (["--only", "allreduce,bcast"], ["--sizes", "16,8"], ["--sizes", "8,x"],
                    ["--sizes", "0"]):
            with contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit, msg=bad) as e:
                    crosscheck.parse_args(bad + ["--out", os.path.join(self.dir.name, "o")])
            self.assertEqual(e.exception.code, 2, bad)
        self.assertFalse(os.path.exists(self.calls))

    def test_matching_figures_pass_and_write_json_and_csv(self):
        code, printed, out = self.run_main("--nccl-tests", os.path.dirname(self.tools),
                                           "--repeats", "2")
        self.assertEqual(code, 0, printed)
        self.assertIn("28 of 28 rows within tolerance", printed)
        with open(self.calls, encoding="utf-8") as f:
            calls = f.read().splitlines()
        # Per repeat: one sweep over the L2-resident sizes (8 B .. 8 MiB), then one process per
        # larger size with one buffer pair (-b = -e), iterations chosen per size.
        self.assertEqual(len(calls), 2 * (1 + 7))
        self.assertEqual(calls.count("-b 8 -e 8388608 -f 2 -t 1 -g 1 -d float -o sum -c 1 -n 2000 -w 200"), 2)
        self.assertIn("-b 16777216 -e 16777216 -f 2 -t 1 -g 1 -d float -o sum -c 1 -n 2000 -w 200", calls)
        self.assertIn("-b 1073741824 -e 1073741824 -f 2 -t 1 -g 1 -d float -o sum -c 1 -n 69 -w 6", calls)
        with open(os.path.join(out, "crosscheck.json"), encoding="utf-8") as f:
            doc = json.load(f)
        rows = doc["sections"][0]["rows"]
        self.assertEqual(rows[-1]["key"], "1 GiB")
        self.assertEqual(rows[-1]["note"], "")
        self.assertEqual(rows[-1]["runs_pct"], 0.0)
        with open(os.path.join(out, "crosscheck.csv"), encoding="utf-8") as f:
            self.assertEqual(len(f.read().strip().splitlines()), 29)
        with open(os.path.join(out, "crosscheck.md"), encoding="utf-8") as f:
            table = [line for line in f.read().splitlines() if line.startswith("| ")]
        self.assertEqual(len(table), 1 + 28)  # the header and one row per size
        self.assertTrue(table[1].startswith("| 8 B | 4.90 | 4.90 | +0.00 | 10 |"), table[1])
        self.assertTrue(table[-1].startswith("| 1 GiB |"), table[-1])

    def test_gpus_takes_the_devices_from_device_on_for_both_tools(self):
        code, printed, out = self.run_main("--nccl-tests", os.path.dirname(self.tools),
                                           "--repeats", "1", "--sizes", "8,1024",
                                           "--device", "2", "--gpus", "2")
        self.assertEqual(code, 0, printed)
        self.assertIn("2 of 2 rows within tolerance", printed)
        self.assertIn("2 GPU(s) (devices 2,3)", printed)
        with open(os.path.join(out, "mgbench.devices"), encoding="utf-8") as f:
            self.assertEqual(f.read().splitlines(), ["2 2,3"])
        with open(self.calls, encoding="utf-8") as f:
            self.assertIn("-f 2 -t 2 -g 1 -d float", f.read())
        with open(self.calls + ".visible", encoding="utf-8") as f:
            self.assertEqual(f.read().splitlines(), ["2,3"])

    def test_gpus_out_of_range_is_refused(self):
        for bad in ("0", "65", "-1"):
            with contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit, msg=bad) as e:
                    crosscheck.parse_args(["--gpus", bad, "--out", os.path.join(self.dir.name, "o")])
            self.assertEqual(e.exception.code, 2, bad)

    def test_a_five_percent_gap_at_1_gib_fails(self):
        os.environ["FAKE_SCALE"] = "1.05"
        code, printed, _ = self.run_main("--nccl-tests", os.path.dirname(self.tools),
                                         "--repeats", "1")
        self.assertEqual(code, 1)
        self.assertRegex(printed, r"1 GiB\s+533\.61\s+508\.20\s+\+5\.00\s+3\s+\+5\.00\s+—\s+FAIL")

    def test_cpus_pins_both_tools(self):
        cpu = min(os.sched_getaffinity(0))
        code, printed, out = self.run_main("--nccl-tests", os.path.dirname(self.tools),
                                           "--cpus", str(cpu))
        self.assertEqual(code, 0, printed)
        with open(self.calls + ".cpus", encoding="utf-8") as f:
            self.assertEqual(set(f.read().split()), {str(cpu)})
        with open(os.path.join(out, "mgbench.cpus"), encoding="utf-8") as f:
            self.assertEqual(set(f.read().split()), {str(cpu)})
        self.assertIn(f"both on CPUs [{cpu}]", printed)

    def test_cpus_must_be_a_list_of_available_cpus(self):
        self.assertEqual(crosscheck.parse_cpus("1,3-5"), {1, 3, 4, 5})
        for bad in ("", "a", "3-1", "1,,2", "-2"):
            with self.assertRaises(ValueError, msg=bad):
                crosscheck.parse_cpus(bad)
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit) as e:
                crosscheck.parse_args(["--cpus", "100000"])
        self.assertEqual(e.exception.code, 2)

    def test_a_huge_cpu_range_is_refused_before_any_set_is_built(self):
        # Before the bound, "0-99999999999" built a set of 1e11 numbers (memory without end).
        with self.assertRaisesRegex(ValueError, "above 65535"):
            crosscheck.parse_cpus("0-99999999999")
        with self.assertRaisesRegex(ValueError, "above 65535"):
            crosscheck.parse_cpus("3,65536")
        self.assertEqual(crosscheck.parse_cpus("65535"), {65535})  # the bound itself is a CPU

    def test_out_an_existing_file_is_one_line_and_exit_2_before_measuring(self):
        existing = os.path.join(self.dir.name, "taken")
        with open(existing, "w", encoding="utf-8") as f:
            f.write("keep")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            with self.assertRaises(SystemExit) as e:
                crosscheck.main(["--only", "allreduce", "--mgbench", self.mgbench,
                                 "--nccl-tests", os.path.dirname(self.tools), "--out", existing])
        self.assertEqual(e.exception.code, 2)
        self.assertEqual(err.getvalue().count("\n"), 1, err.getvalue())
        self.assertIn("exists and is not a directory", err.getvalue())
        self.assertFalse(os.path.exists(self.calls))  # nothing was measured
        with open(existing, encoding="utf-8") as f:
            self.assertEqual(f.read(), "keep")

    def test_absent_nccl_tests_is_skipped_with_77(self):
        code, printed, _ = self.run_main("--nccl-tests", os.path.join(self.dir.name, "nowhere"))
        self.assertEqual(code, 77)
        self.assertIn("skipped: all_reduce_perf not found", printed)


if __name__ == "__main__":
    unittest.main()
