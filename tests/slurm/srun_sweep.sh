#!/usr/bin/env bash
# Run inside a Slurm allocation of 4 tasks (tests/slurm/slurm_cluster.sh -n 4 ...): a selftest
# sweep of 1, 2 and 4 fake GPUs through `--launcher srun`, then its results.json checked: every
# point ok, one process per GPU started by srun, the three GPU counts present.
#
# With `per-task`: a sweep of 1 and 2 GPUs whose orchestrator sees no GPU (no fake devices, no GPU
# here; srun's --export cannot override a variable the environment has) while srun gives the
# ranks two fake GPUs, one visible per task (the per-task binding hook, by SLURM_LOCALID); also
# checked: the two ranks of the 2-GPU point on two different GPUs, each its own ordinal 0.
#
#   tests/slurm/srun_sweep.sh MGBENCH [per-task]
#
# Exit 0 on success, 1 on a failed check, 77 (skipped) when this mgbench cannot launch through
# srun (built without MPI), with the reason.
set -uo pipefail
mgbench=${1:?usage: $0 MGBENCH [per-task]}
mode=${2:-plain}
out=$(mktemp -d /tmp/mgbench-srun-sweep.XXXXXX)
trap 'rm -rf "$out"' EXIT

[[ -n "${SLURM_JOB_ID:-}" ]] || { echo "srun sweep: not inside a Slurm allocation" >&2; exit 1; }
if [[ $mode == per-task ]]; then
  setting=(-u MGBENCH_TEST_FAKE_DEVICES MGBENCH_ENABLE_TEST_WORKLOADS=1
           MGBENCH_TEST_FAKE_GPU_PER_TASK=1)
  plan=(--gpus 1,2 --gpus-per-node 2 --launcher-arg=--export=ALL,MGBENCH_TEST_FAKE_DEVICES=2)
else
  setting=(MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=4)
  plan=(--gpus 1,2,4)
fi
env "${setting[@]}" "$mgbench" sweep --launcher srun --workloads selftest "${plan[@]}" \
  --out "$out" --no-history --no-report --skip-doctor --no-telemetry 2>"$out/stderr"
status=$?
cat "$out/stderr" >&2
if [[ $status -eq 4 ]] && grep -q 'without MPI' "$out/stderr"; then
  echo "srun sweep: SKIPPED: $(grep 'without MPI' "$out/stderr" | head -n1)" >&2
  exit 77
fi
[[ $status -eq 0 ]] || { echo "srun sweep: mgbench sweep exited $status" >&2; exit 1; }

python3 - "$out/results.json" "$mode" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
per_task = sys.argv[2] == "per-task"
points = run["points"]
problems = []
counts = [1, 2] if per_task else [1, 2, 4]
if sorted(p["gpus"] for p in points) != counts:
    problems.append("GPU counts %s, expected %s" % (sorted(p["gpus"] for p in points), counts))
two = [p for p in points if p["gpus"] == 2 and p.get("status") == "ok"]
if per_task and two:
    ranks = two[0]["extra"]["process_group"]["ranks"]
    if sorted(r.get("bus_id") for r in ranks) != ["0000:00:00.0", "0000:00:01.0"]:
        problems.append("the two ranks' GPUs are %s, expected fake GPUs 0 and 1"
                        % sorted(r.get("bus_id") for r in ranks))
    if any(r.get("device") != 0 for r in ranks):
        problems.append("ordinals %s, expected 0 for each task" % [r.get("device") for r in ranks])
for p in points:
    where = "point %s (%s GPUs)" % (p.get("index"), p.get("gpus"))
    if p.get("status") != "ok":
        problems.append("%s: status %s: %s" % (where, p.get("status"), p.get("message", "")))
    if p.get("process_model") != "processes":
        problems.append("%s: process_model %s" % (where, p.get("process_model")))
    if p.get("launcher") != "srun":
        problems.append("%s: launcher %s" % (where, p.get("launcher")))
    if p.get("nodes") != 1:
        problems.append("%s: nodes %s" % (where, p.get("nodes")))
for line in problems:
    print("srun sweep: " + line, file=sys.stderr)
if problems:
    sys.exit(1)
print("srun sweep: %d points ok through srun: %s" % (len(points), ", ".join(
    "%d GPU(s) on %s" % (p["gpus"], ",".join(p.get("hosts") or ["?"])) for p in points)))
PY
