"""Unit tests of scripts/gpu_sanitize.py: reading the sanitizers' summaries, judging each case,
passing case names to Catch2, and one end-to-end run against a stand-in sanitizer (no GPU)."""
import contextlib
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import textwrap
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gpu_sanitize  # noqa: E402


class Summaries(unittest.TestCase):
    def test_memcheck_and_synccheck_summaries_are_counted(self):
        self.assertEqual(gpu_sanitize.tool_errors("========= ERROR SUMMARY: 0 errors\n"), 0)
        self.assertEqual(gpu_sanitize.tool_errors("x\n========= ERROR SUMMARY: 1 error\n"), 1)
        # --target-processes all: one summary per process, all of them count.
        two = "========= ERROR SUMMARY: 2 errors\n========= ERROR SUMMARY: 3 errors\n"
        self.assertEqual(gpu_sanitize.tool_errors(two), 5)

    def test_racecheck_counts_errors_not_warnings(self):
        text = "========= RACECHECK SUMMARY: 3 hazards displayed (1 error, 2 warnings)\n"
        self.assertEqual(gpu_sanitize.tool_errors(text), 1)
        clean = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
        self.assertEqual(gpu_sanitize.tool_errors(clean), 0)

    def test_no_summary_is_unknown_not_zero(self):
        self.assertIsNone(gpu_sanitize.tool_errors("Segmentation fault\n"))


class Classify(unittest.TestCase):
    def test_each_outcome(self):
        self.assertEqual(gpu_sanitize.classify(0, 0), "clean")
        self.assertEqual(gpu_sanitize.classify(77, 0), "clean")  # a skipped case is not an error
        self.assertEqual(gpu_sanitize.classify(0, 2), "errors")
        self.assertEqual(gpu_sanitize.classify(1, 0), "failed")
        self.assertEqual(gpu_sanitize.classify(134, None), "crashed")
        self.assertEqual(gpu_sanitize.classify(124, None), "timeout")
        self.assertEqual(gpu_sanitize.classify(124, 0), "timeout")


class Memory(unittest.TestCase):
    def test_least_available_memory_within_a_case(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("MemTotal:  1000000 kB\nMemAvailable:  524288 kB\n")
        self.addCleanup(os.unlink, f.name)
        watch = gpu_sanitize.MemoryWatch(f.name)
        self.addCleanup(watch.stop.set)
        self.assertEqual(watch.read(), 512)
        watch.samples[:] = [(1.0, 900), (2.0, 300), (3.0, 700), (9.0, 100)]
        self.assertEqual(watch.least(1.5, 3.5), 300)
        self.assertIsNone(watch.least(4.0, 5.0))
        self.assertIsNone(gpu_sanitize.MemoryWatch("/nonexistent/meminfo").read())


class CaseNames(unittest.TestCase):
    def test_commas_are_escaped_once(self):
        self.assertEqual(gpu_sanitize.catch_name("a, b and c"), "a\\, b and c")
        self.assertEqual(gpu_sanitize.catch_name("a\\, b"), "a\\, b")

    def test_case_file_skips_blank_and_comment_lines_and_unescapes(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# long cases\none\\, two\n\nthree\n")
        try:
            self.assertEqual(gpu_sanitize.read_cases(f.name), ["one, two", "three"])
        finally:
            os.unlink(f.name)


FAKE_SANITIZER = textwrap.dedent("""\
    #!/bin/sh
    # Stand-in for compute-sanitizer: the last argument is the case; records the time scale.
    for last; do :; done
    here="$(dirname "$0")"
    echo "$MGBENCH_GPU_TEST_TIME_SCALE $NCCL_NVLS_ENABLE" > "$here/env.txt"
    echo "$last" >> "$here/calls.txt"
    echo "$*" >> "$here/argv.txt"
    case "$last" in
      *once*) echo "========= ERROR SUMMARY: 0 errors"
              [ -e "$here/once.seen" ] || { touch "$here/once.seen"; exit 1; }; exit 0 ;;
      *orphan*) sleep 30 & echo $! > "$here/orphan.pid"; wait ;;
      *leaky*) echo "========= Invalid __global__ read of size 4 bytes"
               echo "========= ERROR SUMMARY: 1 error"; exit 0 ;;
      *slow*) sleep 5 ;;
      *failing*) echo "========= ERROR SUMMARY: 0 errors"; exit 1 ;;
      *crash*) exit 134 ;;
      *) echo "========= ERROR SUMMARY: 0 errors"; exit 0 ;;
    esac
    """)


def executable(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class EndToEnd(unittest.TestCase):
    def run_script(self, cases, extra=()):
        tmp = self.tmp = tempfile.mkdtemp(prefix="gpu-sanitize-test-")
        self.addCleanup(shutil.rmtree, tmp, True)
        executable(os.path.join(tmp, "sanitizer"), FAKE_SANITIZER)
        executable(os.path.join(tmp, "tests"), "#!/bin/sh\nexit 0\n")
        with open(os.path.join(tmp, "cases.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(cases) + "\n")
        argv = ["--sanitizer", os.path.join(tmp, "sanitizer"), "--cases",
                os.path.join(tmp, "cases.txt"), "--out", os.path.join(tmp, "out"),
                "--scale", "25", "--case-timeout", "1", *extra, os.path.join(tmp, "tests")]
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            code = gpu_sanitize.main(argv)
        with open(os.path.join(tmp, "out", "sanitize.json"), encoding="utf-8") as f:
            rows = json.load(f)
        with open(os.path.join(tmp, "env.txt"), encoding="utf-8") as f:
            env = f.read().split()
        return code, rows, printed.getvalue(), env

    def test_clean_cases_exit_0_with_the_scale_and_nvls_off(self):
        code, rows, printed, env = self.run_script(["a, b", "c"], ["--tools", "memcheck,racecheck"])
        self.assertEqual(code, 0)
        self.assertEqual([(r["tool"], r["result"]) for r in rows],
                         [("memcheck", "clean"), ("memcheck", "clean"),
                          ("racecheck", "clean"), ("racecheck", "clean")])
        self.assertEqual(env, ["25.0", "0"])
        self.assertIn("memcheck: 2 cases (2 clean); 0 errors reported", printed)

    def test_a_kernel_filter_reaches_the_sanitizer_and_every_row(self):
        code, rows, _, _ = self.run_script(["a"], ["--tools", "racecheck", "--kernels", "mgbench"])
        self.assertEqual(code, 0)
        with open(os.path.join(self.tmp, "argv.txt"), encoding="utf-8") as f:
            argv = f.read().split()
        self.assertIn("--kernel-name", argv)
        self.assertEqual(argv[argv.index("--kernel-name") + 1], "kns=mgbench")
        self.assertEqual(rows[0]["kernels"], "mgbench")
        code, rows, _, _ = self.run_script(["a"], ["--tools", "racecheck"])
        with open(os.path.join(self.tmp, "argv.txt"), encoding="utf-8") as f:
            self.assertNotIn("--kernel-name", f.read())
        self.assertIsNone(rows[0]["kernels"])

    def test_every_bad_outcome_is_its_own_row_and_exit_1(self):
        code, rows, printed, _ = self.run_script(["leaky", "slow", "failing", "crash", "fine"],
                                                 ["--tools", "synccheck"])
        self.assertEqual(code, 1)
        self.assertEqual([r["result"] for r in rows],
                         ["errors", "timeout", "failed", "crashed", "clean"])
        self.assertEqual(rows[0]["findings"], ["========= Invalid __global__ read of size 4 bytes"])
        self.assertEqual(rows[2]["tail"], ["========= ERROR SUMMARY: 0 errors"])
        self.assertEqual(rows[4]["tail"], [])
        with open(os.path.join(self.tmp, "out", "logs", rows[0]["log"]), encoding="utf-8") as f:
            self.assertIn("ERROR SUMMARY: 1 error", f.read())
        self.assertIn("1 errors reported", printed)

    def test_budget_leaves_the_rest_not_run(self):
        code, rows, _, _ = self.run_script(["slow", "fine"], ["--tools", "memcheck", "--budget", "0.5"])
        self.assertEqual(code, 1)
        self.assertEqual([r["result"] for r in rows], ["timeout", "not run"])

    def test_jobs_keep_the_order_and_run_what_failed_beside_others_again_alone(self):
        code, rows, printed, _ = self.run_script(["once", "leaky", "fine", "crash"],
                                                 ["--tools", "memcheck", "--jobs", "3"])
        self.assertEqual(code, 1)
        self.assertEqual([r["case"] for r in rows], ["once", "leaky", "fine", "crash"])
        self.assertEqual([r["result"] for r in rows], ["clean", "errors", "clean", "crashed"])
        self.assertEqual(rows[0]["beside_others"], "failed")
        self.assertEqual(rows[0]["log"], "memcheck-001-alone.log")
        self.assertEqual(rows[3]["beside_others"], "crashed")  # crashed alone too
        self.assertNotIn("beside_others", rows[1])
        with open(os.path.join(self.tmp, "calls.txt"), encoding="utf-8") as f:
            calls = f.read().split()
        # Errors stand and clean rows are not run again; the failed and crashed ones are.
        self.assertEqual(sorted(calls), ["crash", "crash", "fine", "leaky", "once", "once"])

    def test_one_job_never_runs_a_case_twice(self):
        _, rows, _, _ = self.run_script(["once"], ["--tools", "memcheck"])
        self.assertEqual(rows[0]["result"], "failed")
        self.assertNotIn("beside_others", rows[0])

    def test_a_time_out_kills_the_test_process_under_the_sanitizer(self):
        _, rows, _, _ = self.run_script(["orphan"], ["--tools", "memcheck"])
        self.assertEqual(rows[0]["result"], "timeout")
        with open(os.path.join(self.tmp, "orphan.pid"), encoding="utf-8") as f:
            pid = int(f.read())
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.05)  # the kill is sent; the exit lands a moment later
        with open(f"/proc/{pid}/stat", encoding="ascii") if os.path.exists(f"/proc/{pid}") \
                else contextlib.nullcontext(None) as f:
            state = f.read().split()[2] if f else "gone"
        self.assertIn(state, ("gone", "Z"))

    def test_resume_keeps_the_rows_run_and_runs_only_those_not_run(self):
        code, rows, _, _ = self.run_script(["slow", "fine", "leaky"],
                                           ["--tools", "memcheck", "--budget", "0.5"])
        self.assertEqual([r["result"] for r in rows], ["timeout", "not run", "not run"])
        out = os.path.join(self.tmp, "out")
        argv = ["--sanitizer", os.path.join(self.tmp, "sanitizer"), "--cases",
                os.path.join(self.tmp, "cases.txt"), "--out", os.path.join(self.tmp, "again"),
                "--case-timeout", "1", "--tools", "memcheck,synccheck", "--resume", out,
                os.path.join(self.tmp, "tests")]
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(gpu_sanitize.main(argv), 1)
        with open(os.path.join(self.tmp, "again", "sanitize.json"), encoding="utf-8") as f:
            again = json.load(f)
        self.assertEqual([(r["tool"], r["case"], r["result"], r.get("earlier", False)) for r in again],
                         [("memcheck", "slow", "timeout", True), ("memcheck", "fine", "clean", False),
                          ("memcheck", "leaky", "errors", False),
                          ("synccheck", "slow", "timeout", False),
                          ("synccheck", "fine", "clean", False),
                          ("synccheck", "leaky", "errors", False)])
        with open(os.path.join(self.tmp, "calls.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read().split().count("slow"), 2)  # memcheck once, synccheck once
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(gpu_sanitize.main(argv[:-3] + ["--resume", self.tmp, argv[-1]]), 2)

    def test_bad_tool_is_usage(self):
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit) as e:
                gpu_sanitize.main(["--tools", "memchek", "bin"])
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
