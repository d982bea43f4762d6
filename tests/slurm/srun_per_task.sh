#!/usr/bin/env bash
# Run inside a Slurm allocation of 4 tasks (tests/slurm/slurm_cluster.sh -n 4 ...): a selftest
# sweep through `--launcher srun` whose orchestrator sees no GPU (no fake devices, no GPU here;
# srun's --export does not override a variable the environment has) while srun gives the ranks
# two fake GPUs, one visible per task (the per-task binding hook, by
# SLURM_LOCALID). Checked: every point ok, and the two ranks of the 2-GPU point on two different
# GPUs, each its own ordinal 0.
#
#   tests/slurm/srun_per_task.sh MGBENCH
#
# Exit 0 on success, 1 on a failed check, 77 (skipped) when this mgbench cannot launch through
# srun (built without MPI), with the reason.
set -uo pipefail
mgbench=${1:?usage: $0 MGBENCH}
out=$(mktemp -d /tmp/mgbench-srun-per-task.XXXXXX)
trap 'rm -rf "$out"' EXIT

[[ -n "${SLURM_JOB_ID:-}" ]] || { echo "srun per task: not inside a Slurm allocation" >&2; exit 1; }
env -u MGBENCH_TEST_FAKE_DEVICES MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_GPU_PER_TASK=1 \
  "$mgbench" sweep --launcher srun --workloads selftest --gpus 1,2 --gpus-per-node 2 \
  --launcher-arg=--export=ALL,MGBENCH_TEST_FAKE_DEVICES=2 --out "$out" \
  --no-history --no-report --skip-doctor --no-telemetry 2>"$out/stderr"
status=$?
cat "$out/stderr" >&2
if [[ $status -eq 4 ]] && grep -q 'without MPI' "$out/stderr"; then
  echo "srun per task: SKIPPED: $(grep 'without MPI' "$out/stderr" | head -n1)" >&2
  exit 77
fi
[[ $status -eq 0 ]] || { echo "srun per task: mgbench sweep exited $status" >&2; exit 1; }

python3 - "$out/results.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
points = run["points"]
problems = []
if sorted(p["gpus"] for p in points) != [1, 2]:
    problems.append("GPU counts %s, expected 1, 2" % sorted(p["gpus"] for p in points))
for p in points:
    if p.get("status") != "ok":
        problems.append("point %s: status %s: %s" % (p.get("index"), p.get("status"),
                                                      p.get("message", "")))
two = [p for p in points if p["gpus"] == 2 and p.get("status") == "ok"]
if two:
    ranks = two[0]["extra"]["process_group"]["ranks"]
    buses = sorted(r.get("bus_id") for r in ranks)
    if buses != ["0000:00:00.0", "0000:00:01.0"]:
        problems.append("the two ranks' GPUs are %s, expected fake GPUs 0 and 1" % buses)
    if any(r.get("device") != 0 for r in ranks):
        problems.append("ordinals %s, expected 0 for each task" % [r.get("device") for r in ranks])
if run["environment"].get("gpu_count") != 1:
    problems.append("the probe's task saw %s GPU(s), expected its one"
                    % run["environment"].get("gpu_count"))
for line in problems:
    print("srun per task: " + line, file=sys.stderr)
if problems:
    sys.exit(1)
print("srun per task: %d points ok, each task on its own GPU" % len(points))
PY
