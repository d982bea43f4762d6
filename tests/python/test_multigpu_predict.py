"""Unit tests of scripts/multigpu_predict.py: the basis cut at --upto GPUs, predicted rows matched
to the measured points of the same series, the error summary and the exit codes (no GPU; a
stand-in mgbench prints a fixed prediction)."""
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import multigpu_predict as mp  # noqa: E402

P = {"bytes": 1024, "impl": "nccl"}


def point(gpus, value, status="ok", params=P, workload="allreduce"):
    return {"workload": workload, "gpus": gpus, "status": status, "params": params,
            "metrics": {"busbw_GBps": value}}


def prediction(rows, params=P):
    return {"series": [{"workload": "allreduce", "params": params, "metric": "busbw_GBps",
                        "rows": [{"gpus": g, "throughput": t} for g, t in rows]}]}


class Basis(unittest.TestCase):
    def test_points_up_to_and_including_upto_are_kept(self):
        doc = {"settings": {"x": 1}, "points": [point(1, 1), point(2, 2), point(3, 3), point(4, 4)]}
        cut = mp.restrict(doc, 2)
        self.assertEqual([p["gpus"] for p in cut["points"]], [1, 2])
        self.assertEqual(cut["settings"], {"x": 1})
        self.assertEqual(len(doc["points"]), 4)  # the input is left as it was


class Matching(unittest.TestCase):
    def test_only_counts_above_upto_with_an_ok_measured_point_are_compared(self):
        results = {"points": [point(2, 100), point(4, 200), point(8, 400, status="failed")]}
        rows = mp.comparisons(prediction([(2, 90), (4, 150), (8, 300)]), results, 2)
        self.assertEqual([(r[1], r[4], r[5]) for r in rows], [(4, 150, 200)])
        self.assertAlmostEqual(rows[0][6], 0.75)

    def test_other_params_or_a_missing_metric_do_not_match(self):
        other = dict(P, bytes=2048)
        results = {"points": [point(4, 200, params=other),
                              dict(point(8, 0), metrics={}), point(8, 0)]}
        self.assertEqual(mp.comparisons(prediction([(4, 150), (8, 300)]), results, 2), [])

    def test_summary_gives_the_median_absolute_and_the_worst_signed_error(self):
        rows = [("allreduce", 4, P, "m", 0, 0, r) for r in (0.9, 1.05, 0.7)]
        rows.append(("allreduce", 8, P, "m", 0, 0, 1.2))
        got = mp.summary(rows)
        n, median, worst = got[("allreduce", 4)]
        self.assertEqual(n, 3)
        self.assertAlmostEqual(median, 0.1)
        self.assertAlmostEqual(worst, -0.3)
        self.assertAlmostEqual(got[("allreduce", 8)][2], 0.2)


class Main(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.dir.name, "results.json")
        with open(self.results, "w", encoding="utf-8") as f:
            json.dump({"points": [point(1, 50), point(2, 100), point(4, 200)]}, f)

    def tearDown(self):
        self.dir.cleanup()

    def tool(self, body):
        path = os.path.join(self.dir.name, "mgbench")
        with open(path, "w", encoding="utf-8") as f:
            f.write("#!/usr/bin/env python3\nimport json, sys\n" + body)
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        return path

    def run_main(self, argv):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            code = mp.main(argv)
        return code, printed.getvalue()

    def test_the_basis_holds_two_gpus_and_the_prediction_asks_for_the_rest(self):
        out = os.path.join(self.dir.name, "out")
        mg = self.tool("open(sys.argv[0] + '.args', 'w').write(' '.join(sys.argv[2:]))\n"
                       f"print(json.dumps({prediction([(4, 180)])!r}))\n")
        code, printed = self.run_main([mg, self.results, out])
        self.assertEqual(code, 0, printed)
        self.assertIn("| allreduce | 4 |", printed)
        self.assertIn("allreduce at 4 GPUs: 1 series, median |error| 10.0 %, worst -10.0 %", printed)
        with open(mg + ".args", encoding="utf-8") as f:
            self.assertEqual(f.read(), os.path.join(out, "basis.json") + " --gpus 4 --json")
        with open(os.path.join(out, "basis.json"), encoding="utf-8") as f:
            self.assertEqual([p["gpus"] for p in json.load(f)["points"]], [1, 2])

    def test_exit_codes(self):
        out = os.path.join(self.dir.name, "out")
        failing = self.tool("sys.stderr.write('boom'); sys.exit(3)\n")
        self.assertEqual(self.run_main([failing, self.results, out])[0], 4)
        self.assertEqual(self.run_main([failing, self.results, out, "--upto", "4"])[0], 1)
        self.assertEqual(self.run_main([failing, self.results])[0], 2)
        empty = self.tool("print(json.dumps({'series': []}))\n")
        self.assertEqual(self.run_main([empty, self.results, out])[0], 1)


if __name__ == "__main__":
    unittest.main()
