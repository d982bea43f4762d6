#pragma once
// How a group's worker is started: one local process that runs a thread per GPU, or one launch
// of mpirun or srun that runs a process per GPU, on one node or several. The orchestrator keeps
// its guarantees whichever it is (launch.cpp builds the command line; subprocess.hpp runs it).
#include <string>
#include <vector>

#include "mgbench/model/placement.hpp"

namespace mgbench {

struct HostSlots {
  std::string host;
  int slots = 0;  // 0: not given
};

struct LaunchOptions {
  Launcher launcher = Launcher::local;
  std::vector<HostSlots> hosts;  // --hosts or --hostfile, in node order (empty: none given)
  int gpus_per_node = 0;         // --gpus-per-node (0: from the hosts' slots or the probe)
  bool oversubscribe = false;    // mpirun --oversubscribe (more ranks than a host's slots)
};

// `--launcher` when it is not given: srun inside a Slurm allocation (SLURM_JOB_ID set), local
// otherwise.
Launcher default_launcher();
// "h1:8,h2:8" (slots optional: "h1,h2"). UsageError (exit 2) on a malformed list.
std::vector<HostSlots> parse_host_list(const std::string& text);
// An OpenMPI hostfile: "host [slots=N] [max_slots=N]" per line, '#' comments, blank lines.
// UsageError (exit 2) when unreadable or malformed.
std::vector<HostSlots> parse_hostfile(const std::string& path);
std::vector<HostSlots> parse_hostfile_text(const std::string& text, const std::string& path);

// The GPUs per node the plan fills: --gpus-per-node, else the hosts' slots (which must agree),
// else `local_devices` (what this host has). UsageError when the slots differ.
int planned_gpus_per_node(const LaunchOptions& options, int local_devices);
// The nodes a group of `gpus` ranks may use at most (0: no limit known: srun without
// SLURM_JOB_NUM_NODES, or local: 1).
int max_nodes(const LaunchOptions& options);

// The launch of one group of `placement`: the command line in front of the worker's own
// (`mgbench worker ...`); empty for the local launcher.
std::vector<std::string> launch_prefix(const LaunchOptions& options, const Placement& placement);
// The worker's arguments after the prefix.
std::vector<std::string> worker_arguments(Launcher launcher);
// One line for --dry-run: the prefix, the worker and its arguments, shell-quoted.
std::string launch_command_line(const LaunchOptions& options, const Placement& placement);

// Throws EnvironmentError (exit 4) with one line when the launcher cannot be used here: a build
// without MPI, or (with `need_program`) mpirun or srun not on PATH, saying what to install.
void check_launcher_available(Launcher launcher, bool need_program);
// Whether this build can run a group as one process per GPU (MGBENCH_WITH_MPI).
bool built_with_mpi();

}  // namespace mgbench
