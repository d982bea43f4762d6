#!/usr/bin/env bash
# mgbench across hosts with OpenMPI's mpirun, without a scheduler. Run it on the first host;
# every host needs mgbench at the same path, passwordless SSH for mpirun (mpirun's own start-up,
# mgbench adds none) and the same GPUs, driver, CUDA and NCCL.
#
#   scripts/mpirun/mgbench_mpirun.sh node1:8,node2:8 [SWEEP ARGS...]
#   HOSTFILE=hosts.txt scripts/mpirun/mgbench_mpirun.sh - --workloads allreduce
#
# hosts.txt in OpenMPI's syntax:   node1 slots=8
#                                  node2 slots=8
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 HOST:GPUS,HOST:GPUS[,...] | - (with HOSTFILE=...) [SWEEP ARGS...]" >&2
  exit 2
fi
hosts=$1
shift
MGBENCH=${MGBENCH:-mgbench}
if [[ "$hosts" == - ]]; then
  where=(--hostfile "${HOSTFILE:?HOSTFILE=FILE is needed with -}")
else
  where=(--hosts "$hosts")
fi

# NCCL settings every rank should get: mgbench forwards NCCL_* variables to its ranks.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

# 1. Same GPU model, driver, CUDA runtime, NCCL and GPU count on every host (exit 4 if not).
"$MGBENCH" doctor --launcher mpirun "${where[@]}"

# 2. The sweep: each group of G GPUs is one `mpirun -np G` launch, one process per GPU.
"$MGBENCH" sweep --launcher mpirun "${where[@]}" --gpus 1,2,4,8,16 "$@"
