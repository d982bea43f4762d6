"""Unit tests of scripts/process_vs_thread.py: the headline chosen per point, medians over
repeated runs, the noise a repeat shows, and the verdict and exit code (no GPU, no MPI)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import process_vs_thread as pvt  # noqa: E402

PRESENTATION = {"gemm": {"headline": {"name": "tflops_per_gpu", "unit": "TFLOP/s"}},
                "allreduce": {"headline": {"name": "busbw_GBps", "unit": "GB/s"}}}


def point(workload, params, metrics, status="ok", ci=0.005, model="threads"):
    return {"workload": workload, "params": params, "metrics": metrics, "status": status,
            "spread": {"median_ci_half_width": ci}, "process_model": model}


def run(gemm_tflops, allreduce_us, model="threads", allreduce_status="ok"):
    return {"presentation": PRESENTATION, "points": [
        point("gemm", {"dtype": "bf16"}, {"tflops_per_gpu": gemm_tflops}, model=model),
        point("allreduce", {"bytes": 8}, {"time_us": allreduce_us}, allreduce_status,
              model=model)]}


class Table(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def files(self, *docs):
        paths = []
        for doc in docs:
            path = os.path.join(self.dir.name, "r%d.json" % len(os.listdir(self.dir.name)))
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            paths.append(path)
        return paths

    def main(self, threads, processes):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = pvt.main(threads + ["--"] + processes)
        return code, printed.getvalue()

    def test_a_gap_inside_the_run_to_run_spread_agrees(self):
        # Threads repeat 5.0 and 6.0 us (20 % apart); processes at 5.9 are within that.
        code, printed = self.main(self.files(run(700, 5.0), run(702, 6.0)),
                                  self.files(run(701, 5.9, "processes"),
                                             run(703, 5.8, "processes")))
        self.assertEqual(code, 0, printed)
        self.assertIn("2 of 2 points agree within noise (run-to-run spread of 2+2 runs)", printed)
        self.assertRegex(printed, r"allreduce\s+bytes=8\s+time_us \[us\]\s+5\.5 \(runs 18\.2 %\)")
        self.assertIn("process model of the mpirun runs: processes", printed)

    def test_a_gap_beyond_the_noise_differs_and_fails(self):
        code, printed = self.main(self.files(run(700, 5.0), run(700.7, 5.0)),
                                  self.files(run(650, 5.0, "processes"),
                                             run(651, 5.0, "processes")))
        self.assertEqual(code, 1)
        self.assertRegex(printed, r"gemm\s+dtype=bf16\s+tflops_per_gpu \[TFLOP/s\].*0\.929\s+"
                                  r"1\.0 %\s+DIFFERS")
        self.assertIn("1 of 2 points agree", printed)

    def test_one_run_a_side_uses_twice_the_within_run_ci(self):
        code, printed = self.main(self.files(run(700, 5.0)),
                                  self.files(run(707, 5.05, "processes")))
        self.assertEqual(code, 0, printed)
        self.assertIn("within-run CI only (one run a side)", printed)
        code, _ = self.main(self.files(run(700, 5.0)), self.files(run(708, 5.0, "processes")))
        self.assertEqual(code, 1)

    def test_a_point_failed_on_one_side_is_not_comparable(self):
        code, printed = self.main(self.files(run(700, 5.0)),
                                  self.files(run(700, 5.0, "processes", "failed")))
        self.assertEqual(code, 1)
        self.assertRegex(printed, r"allreduce.*failed\s+-\s+-\s+not comparable")

    def test_bad_input_is_exit_2(self):
        self.assertEqual(self.main([], self.files(run(1, 1)))[0], 2)
        self.assertEqual(self.main([os.path.join(self.dir.name, "none.json")],
                                   self.files(run(1, 1)))[0], 2)


if __name__ == "__main__":
    unittest.main()
