#!/usr/bin/env bash
# Run inside a Slurm allocation of 4 tasks (tests/slurm/slurm_cluster.sh -n 4 ...): a selftest
# sweep of 1, 2 and 4 fake GPUs through `--launcher srun`, then its results.json checked: every
# point ok, one process per GPU started by srun, the three GPU counts present.
#
#   tests/slurm/srun_sweep.sh MGBENCH
#
# Exit 0 on success, 1 on a failed check, 77 (skipped) when this mgbench cannot launch through
# srun (built without MPI), with the reason.
set -uo pipefail
mgbench=${1:?usage: $0 MGBENCH}
out=$(mktemp -d /tmp/mgbench-srun-sweep.XXXXXX)
trap 'rm -rf "$out"' EXIT

[[ -n "${SLURM_JOB_ID:-}" ]] || { echo "srun sweep: not inside a Slurm allocation" >&2; exit 1; }
MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=4 \
  "$mgbench" sweep --launcher srun --workloads selftest --gpus 1,2,4 --out "$out" \
  --no-history --no-report --skip-doctor --no-telemetry 2>"$out/stderr"
status=$?
cat "$out/stderr" >&2
if [[ $status -eq 4 ]] && grep -q 'without MPI' "$out/stderr"; then
  echo "srun sweep: SKIPPED: $(grep 'without MPI' "$out/stderr" | head -n1)" >&2
  exit 77
fi
[[ $status -eq 0 ]] || { echo "srun sweep: mgbench sweep exited $status" >&2; exit 1; }

python3 - "$out/results.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
points = run["points"]
problems = []
if sorted(p["gpus"] for p in points) != [1, 2, 4]:
    problems.append("GPU counts %s, expected 1, 2, 4" % sorted(p["gpus"] for p in points))
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
