#!/usr/bin/env bash
# A throw-away single-node Slurm cluster on localhost: munged, slurmctld and slurmd with their
# configuration, state and logs in a temporary directory. It waits until the node is idle, runs
# the given command inside an allocation (`salloc -n TASKS COMMAND...`, so SLURM_JOB_ID is set
# and the command may call srun), then stops every daemon it started, whatever happened.
#
#   tests/slurm/slurm_cluster.sh [-n TASKS] [-k] COMMAND [ARG...]
#     -n TASKS   tasks in the allocation (default 4); the node claims max(TASKS, nproc) CPUs
#     -k         keep the temporary directory (its path is printed)
#
# Exit: the command's status; 77 (skipped) with the exact reason when the daemons cannot be
# installed or started on this machine; 2 on bad usage. Needs root (slurmd starts job steps as
# the submitting user, which only root can do); no cgroups, no systemd.
set -uo pipefail

tasks=4
keep=0
while getopts "n:k" opt; do
  case "$opt" in
    n) tasks=$OPTARG ;;
    k) keep=1 ;;
    *) echo "usage: $0 [-n TASKS] [-k] COMMAND [ARG...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [[ $# -eq 0 || ! "$tasks" =~ ^[1-9][0-9]{0,2}$ ]]; then
  echo "usage: $0 [-n TASKS] [-k] COMMAND [ARG...]" >&2
  exit 2
fi

skip() { echo "slurm cluster: SKIPPED: $*" >&2; exit 77; }
say() { echo "slurm cluster: $*" >&2; }

export PATH="$PATH:/usr/sbin:/sbin"
for tool in munged slurmctld slurmd salloc srun sinfo scontrol; do
  command -v "$tool" >/dev/null ||
    skip "$tool not found (install slurmctld slurmd slurm-client munge: scripts/setup.sh --deps)"
done
[[ $(id -u) -eq 0 ]] || skip "slurmd must run as root to start job steps (running as $(id -un))"

dir=$(mktemp -d /tmp/mgbench-slurm.XXXXXX)
chmod 700 "$dir"
pids=()

# shellcheck disable=SC2317  # called by the EXIT trap
stop_all() {
  local pid i
  scancel --full --quiet --user="$(id -un)" >/dev/null 2>&1 || true
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do  # slurmd, then slurmctld, then munged
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ $keep -eq 1 ]]; then say "kept $dir"; else rm -rf "$dir"; fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# A free TCP port on localhost (the kernel picks one; the tiny race is acceptable for a test).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start_munge() {
  dd if=/dev/urandom of="$dir/munge.key" bs=1 count=1024 status=none
  chmod 600 "$dir/munge.key"
  munged --foreground --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
    >>"$dir/munged.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do [[ -S "$dir/munge.sock" ]] && return 0; sleep 0.1; done
  skip "munged did not start: $(tail -n 3 "$dir/munged.log" | tr '\n' ' ')"
}

write_config() {
  local cpus=$(( tasks > $(nproc) ? tasks : $(nproc) ))
  # PMIx lets srun bootstrap OpenMPI ranks (what `mgbench sweep --launcher srun` starts).
  local mpi_default=none
  compgen -G "/usr/lib/*/slurm-wlm/mpi_pmix.so" >/dev/null && mpi_default=pmix
  mkdir -p "$dir/state" "$dir/spool"
  : >"$dir/plugstack.conf"
  cat >"$dir/slurm.conf" <<EOF
ClusterName=mgbenchtest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=$mpi_default
ReturnToService=2
SchedulerType=sched/builtin
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$dir/slurm.conf"
}

# Starts one daemon in the foreground of a background job; skips when it dies at once.
start_daemon() {
  local name=$1; shift
  "$name" -D -f "$SLURM_CONF" "$@" >>"$dir/$name.out" 2>&1 &
  pids+=($!)
  sleep 1
  kill -0 "${pids[-1]}" 2>/dev/null ||
    skip "$name exited at start: $(tail -n 3 "$dir/$name.log" "$dir/$name.out" 2>/dev/null |
                                   grep -v '^==>' | tr '\n' ' ')"
}

wait_idle() {
  local state
  for _ in $(seq 60); do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -n1)
    [[ "$state" == idle ]] && return 0
    sleep 0.5
  done
  skip "the node never became idle (state '${state:-none}'): $(tail -n 3 "$dir/slurmd.log" | tr '\n' ' ')"
}

start_munge
write_config
start_daemon slurmctld -i
start_daemon slurmd -N localhost
wait_idle
say "node idle ($(sinfo -h -N -o '%N %c CPUs %t')); running in salloc -n $tasks: $*"
salloc --quiet -n "$tasks" --time=10 "$@"
status=$?
say "command exited $status"
exit $status
