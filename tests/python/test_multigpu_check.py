"""scripts/multigpu_check.sh without a GPU: stand-ins for nvidia-smi and mgbench on PATH, so that
the stages' order, the GPU counts, the arguments each stage gives and the PASS/FAIL lines are
checked before a multi-GPU machine is spent on them."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "multigpu_check.sh")

NVIDIA_SMI = """#!/bin/sh
if [ "$1" = "-L" ]; then
  i=0; while [ $i -lt "$FAKE_GPUS" ]; do echo "GPU $i: NVIDIA H200 (UUID: GPU-$i)"; i=$((i+1)); done
else echo "fake nvidia-smi $*"; fi
"""

# mgbench: every call is logged; a sweep writes one ok point per GPU count of --gpus (busbw
# 100 GB/s per GPU), or with FAKE_WRONG=1 one value wrong on the largest count.
MGBENCH = """#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(" ".join(args) + "\\n")
def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default
cmd = args[0]
if cmd == "sweep":
    counts = [int(g) for g in opt("--gpus").split(",")]
    points = []
    for i, g in enumerate(counts):
        wrong = 1 if os.environ.get("FAKE_WRONG") and g == counts[-1] else 0
        points.append({"index": i, "workload": "allreduce", "gpus": g, "status": "ok",
                       "params": {"bytes": 1024}, "metrics": {"busbw_GBps": 100.0 * g},
                       "verification": {"ok": not wrong, "wrong": wrong}})
    os.makedirs(opt("--out"), exist_ok=True)
    json.dump({"points": points}, open(os.path.join(opt("--out"), "results.json"), "w"))
    print("results: done")
elif cmd == "predict":
    counts = [int(g) for g in opt("--gpus").split(",")]
    print(json.dumps({"series": [{"workload": "allreduce", "params": {"bytes": 1024},
                                  "metric": "busbw_GBps",
                                  "rows": [{"gpus": g, "throughput": 90.0 * g} for g in counts]}]}))
elif cmd == "compare" and "--json" in args:
    slower = [int(b) for b in os.environ.get("FAKE_SLOWER", "").split(",") if b]
    print(json.dumps({"points": [{"workload": "allreduce", "gpus": 2, "params": {"bytes": b},
                                  "verdict": "slower" if b in slower else "same",
                                  "change": 0.4 if b in slower else 0.0}
                                 for b in (1024, 1 << 20)]}))
elif cmd == "screen":
    sys.exit(int(os.environ.get("FAKE_SCREEN_RC", "0")))
else:
    print(cmd, "fine")
"""


class MultiGpuCheck(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.bin = os.path.join(d, "build", "bin")
        os.makedirs(self.bin)
        self.tool(os.path.join(d, "path", "nvidia-smi"), NVIDIA_SMI)
        self.tool(os.path.join(self.bin, "mgbench"), MGBENCH)
        self.log = os.path.join(d, "mgbench.log")
        self.out = os.path.join(d, "out")

    def tearDown(self):
        self.dir.cleanup()

    @staticmethod
    def tool(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)

    def run_stages(self, *stages, gpus=4, **env):
        environ = dict(os.environ, FAKE_GPUS=str(gpus), FAKE_LOG=self.log,
                       PATH=os.path.join(self.dir.name, "path") + os.pathsep + os.environ["PATH"],
                       NCCL_TESTS_SRC=os.path.join(self.dir.name, "absent"), **env)
        done = subprocess.run(["bash", SCRIPT, os.path.dirname(self.bin), self.out, *stages],
                              cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)
        with open(os.path.join(self.out, "summary.txt"), encoding="utf-8") as f:
            summary = f.read().splitlines()
        calls = []
        if os.path.exists(self.log):
            with open(self.log, encoding="utf-8") as f:
                calls = f.read().splitlines()
        return done, summary, calls

    def test_counts_arguments_and_a_clean_pass(self):
        done, summary, calls = self.run_stages("env", "sweep", "mpirun", "datapath", "predict",
                                               "screen", gpus=6)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([c.split()[0] for c in calls],
                         ["info", "info", "doctor", "sweep", "report", "sweep", "sweep", "sweep",
                          "sweep", "compare", "compare", "sweep", "predict", "screen", "screen"])
        self.assertIn("--gpus 1,2,4,6 --profile standard", calls[3])  # powers of two and the count
        self.assertIn("--format md -o", calls[4])
        self.assertIn("--workloads train_step,transformer_step --param overlap=false", calls[5])
        self.assertIn("--baseline each", calls[6])
        self.assertNotIn("--launcher", calls[7])
        self.assertIn("--launcher mpirun", calls[8])
        self.assertIn("--workloads allreduce,allgather,reducescatter,alltoall,broadcast,reduce,"
                      "sendrecv,gemm", calls[8])
        self.assertTrue(calls[10].endswith("--json"))  # compare, judged from 1 MiB up
        self.assertIn("--gpus 4,6 --json", calls[12])  # predicted: the counts above 2
        self.assertFalse([line for line in summary if line.startswith("FAIL")], summary)
        self.assertEqual(summary[-1], "MULTIGPU RESULT: 0 check(s) failed")
        with open(os.path.join(self.out, "predict.txt"), encoding="utf-8") as f:
            self.assertIn("allreduce at 4 GPUs: 1 series, median |error| 10.0 %", f.read())

    def test_one_gpu_skips_what_needs_more_and_passes_the_rest(self):
        done, summary, calls = self.run_stages("sweep", "predict", "screen", gpus=1)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([c.split()[0] for c in calls],
                         ["sweep", "report", "sweep", "sweep", "screen"])
        self.assertIn("--gpus 1 --profile standard", calls[0])
        self.assertEqual([line for line in summary if line.startswith("SKIP")],
                         ["SKIP predict (no count above 2 GPUs to predict)",
                          "SKIP screen without the last GPU (one GPU)"])
        self.assertEqual(summary[-1], "MULTIGPU RESULT: 0 check(s) failed")
        done, summary, calls = self.run_stages("sweep", "predict", gpus=3)  # 3 > 2: predicted
        self.assertIn("--gpus 3 --json", calls[-1])

    def test_threads_and_processes_are_judged_from_1_mib_up(self):
        done, summary, _ = self.run_stages("mpirun", gpus=2, FAKE_SLOWER="1024")
        self.assertEqual(done.returncode, 0, summary)
        self.assertIn("PASS threads vs processes: no point slower from 1 MiB up 2 compared, "
                      "0 slower from 1 MiB up, 1 below", summary)
        done, summary, _ = self.run_stages("mpirun", gpus=2, FAKE_SLOWER="1048576")
        self.assertEqual(done.returncode, 1)
        self.assertIn("FAIL threads vs processes: no point slower from 1 MiB up (rc 1) 2 compared, "
                      "1 slower from 1 MiB up, 0 below", summary)

    def test_a_wrong_value_and_a_flagged_gpu_fail_their_checks(self):
        done, summary, _ = self.run_stages("sweep", "screen", gpus=2, FAKE_WRONG="1",
                                           FAKE_SCREEN_RC="1")
        self.assertEqual(done.returncode, 1)
        failed = [line for line in summary if line.startswith("FAIL")]
        self.assertEqual(len(failed), 5, summary)  # three sweeps' points, both screens
        self.assertTrue(failed[0].startswith("FAIL sweep: every point ok or waived, 0 wrong"))
        self.assertEqual(summary[-1], "MULTIGPU RESULT: 5 check(s) failed")

    def test_no_gpu_is_exit_4_and_an_unknown_stage_exit_2(self):
        done = subprocess.run(["bash", SCRIPT, os.path.dirname(self.bin), self.out, "env"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, FAKE_GPUS="0", FAKE_LOG=self.log,
                                       PATH=os.path.join(self.dir.name, "path") + os.pathsep +
                                       os.environ["PATH"]))
        self.assertEqual(done.returncode, 4)
        self.assertEqual(done.stderr.strip(), "multigpu_check: nvidia-smi lists no GPU")
        done = subprocess.run(["bash", SCRIPT, os.path.dirname(self.bin), self.out, "env", "bogus"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, FAKE_GPUS="2", FAKE_LOG=self.log,
                                       PATH=os.path.join(self.dir.name, "path") + os.pathsep +
                                       os.environ["PATH"]))
        self.assertEqual(done.returncode, 2)
        self.assertIn("unknown stage 'bogus'", done.stderr)
        self.assertFalse(os.path.exists(self.log))  # refused before the env stage ran

    def test_crosscheck_without_the_nccl_tests_source_says_so(self):
        done, summary, calls = self.run_stages("crosscheck", gpus=2)
        self.assertEqual((done.returncode, calls), (0, []))
        self.assertTrue(summary[0].startswith("SKIP crosscheck (no nccl-tests source at"), summary)
        self.assertEqual(summary[-1], "MULTIGPU RESULT: 0 check(s) failed")


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    unittest.main()
