#pragma once
// How a group's worker is started: one local process that runs a thread per GPU, or one launch
// of mpirun or srun that runs a process per GPU, on one node or several. Each launcher is one
// GroupLauncher in its own file (launcher_local.cpp, launcher_mpirun.cpp, launcher_srun.cpp); the
// functions below dispatch through it. The orchestrator keeps its guarantees whichever it is
// (subprocess.hpp runs the command line).
#include <string>
#include <vector>

#include "mgbench/model/placement.hpp"

namespace cxxopts {
class Options;
class ParseResult;
}

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
  // --launcher-arg: words given to mpirun or srun as they are, after mgbench's own (so that they
  // win where the launcher takes the last of two settings), e.g. --allow-run-as-root.
  std::vector<std::string> launcher_args;
  // --forward-env: more variables mpirun passes to every rank (NAME, or PREFIX* for a family).
  std::vector<std::string> forward_env;
};

// One launcher: what it starts and the command line that starts it. Adding one is a file beside
// the others, its name in the model's Launcher (placement.hpp) and one line in group_launcher().
class GroupLauncher {
 public:
  virtual ~GroupLauncher() = default;
  virtual Launcher kind() const = 0;
  // One process per GPU (mpirun, srun), or one local worker with a thread per GPU.
  virtual bool processes_per_gpu() const = 0;
  // The command line in front of the worker's own for a group of `placement` (empty: the worker
  // runs as it is); `hostfile` names the file holding the hosts when hosts_need_file().
  virtual std::vector<std::string> prefix(const LaunchOptions& options, const Placement& placement,
                                          const std::string& hostfile) const = 0;
  // That file's contents.
  virtual std::string hostfile_text(const Placement& placement) const = 0;
  // The nodes a group may use at most (0: no limit known).
  virtual int max_nodes(const LaunchOptions& options) const = 0;
  // The launch options it cannot take (UsageError naming them).
  virtual void check_options(const LaunchOptions& options) const = 0;
  // What to install when its program is missing from PATH (empty: it runs no program).
  virtual std::string install_hint() const = 0;
  // What the probe found on the first node (`gpus_here` GPUs) against the options: UsageError
  // where this launcher would put more ranks there than it has.
  virtual void check_nodes(const LaunchOptions& options, int gpus_here) const = 0;
};

// The implementation of `kind`.
const GroupLauncher& group_launcher(Launcher kind);

// `--launcher` when it is not given: srun inside a Slurm allocation (SLURM_JOB_ID set), local
// otherwise.
Launcher default_launcher();
// "h1:8,h2:8" (slots optional: "h1,h2"). UsageError (exit 2) on a malformed list.
std::vector<HostSlots> parse_host_list(const std::string& text);
// An OpenMPI hostfile: "host [slots=N] [max_slots=N]" per line, '#' comments, blank lines.
// UsageError (exit 2) when unreadable or malformed.
std::vector<HostSlots> parse_hostfile(const std::string& path);
std::vector<HostSlots> parse_hostfile_text(const std::string& text, const std::string& path);
// The checks of both on a list already typed (a resumed sweep's plan, read from its journal):
// valid names, none twice, slots 0 (not given) or 1..4096. UsageError naming `where`.
std::vector<HostSlots> checked_hosts(const std::vector<HostSlots>& hosts, const std::string& where);

// The GPUs per node the plan fills: --gpus-per-node, else the hosts' slots (which must agree),
// else `local_devices` (what this host has). UsageError when the slots differ.
int planned_gpus_per_node(const LaunchOptions& options, int local_devices);
// The nodes a group of `gpus` ranks may use at most (0: no limit known: srun without
// SLURM_JOB_NUM_NODES, or local: 1).
int max_nodes(const LaunchOptions& options);

// The variables mpirun passes to every rank besides those --forward-env adds (ranks on this host
// inherit the whole environment; remote ones get only these): NCCL_*, MGBENCH_*, CUDA_* (with
// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER), UCX_*, OMPI_MCA_*, PMIX_MCA_* and
// LD_LIBRARY_PATH. Never a launcher's per-process variables (OMPI_COMM_WORLD_*, PMIX_RANK...).
bool forwarded_by_default(const std::string& name);
// The names of this environment that mpirun forwards: the defaults, then `extra` (a name, or a
// prefix ending in '*'), each once, in the environment's order.
std::vector<std::string> forwarded_variables(const std::vector<std::string>& extra);
// Checks a --forward-env entry: a variable name, or a prefix followed by '*'. UsageError.
void check_forward_name(const std::string& name);
// --launcher-arg (every occurrence, in order, whole: a word may hold commas) and --forward-env
// of a command line (sweep, doctor). UsageError on a bad name.
void read_launcher_words(const cxxopts::ParseResult& args, LaunchOptions& launch);
std::vector<std::string> launcher_words(const cxxopts::ParseResult& args);
std::vector<std::string> forward_env_names(const std::string& text);
// The help lines of the launch options, written once for every command that takes them.
struct LaunchOptionHelp {
  const char* launcher;
  const char* hosts;
  const char* hostfile;
  const char* gpus_per_node;
  const char* oversubscribe;
  const char* launcher_arg;
  const char* forward_env;
};
inline constexpr LaunchOptionHelp kLaunchHelp{
    "local (a thread per GPU) | mpirun | srun (a process per GPU); default: srun inside a Slurm "
    "allocation, local elsewhere",
    "nodes for the launcher, e.g. h1:8,h2:8 (host:slots)",
    "nodes for the launcher, OpenMPI hostfile syntax (host slots=N)",
    "GPUs per node (default: the hosts' slots, else this host's GPUs)",
    "mpirun: allow more ranks than a host's slots",
    "give mpirun or srun this word as it is, after mgbench's own (repeatable; write "
    "--launcher-arg=--allow-run-as-root for a word starting with -)",
    "mpirun: pass these variables to every rank too (NAME or PREFIX*, comma-separated; "
    "docs/DISTRIBUTED.md lists those always passed)"};
// The options of a command that launches groups (sweep, screen): --launcher, --hosts,
// --hostfile, --gpus-per-node, --oversubscribe, --launcher-arg and --forward-env.
void add_launch_options(cxxopts::Options& options);
// Reads them (`fallback`: the launcher when --launcher is not given), with their checks: one
// list of nodes, node options only with mpirun or srun, mpirun's own options only with it.
// UsageError (exit 2).
LaunchOptions read_launch_options(const cxxopts::ParseResult& args, Launcher fallback);
// The values of --launcher and --gpus-per-node (at most 4096); UsageError (exit 2) otherwise.
Launcher launcher_option(const std::string& text);
int gpus_per_node_option(const std::string& text);

// A host list longer than this goes to the launcher through a temporary file (mpirun --hostfile,
// srun --nodelist=FILE): one argument of a few hundred thousand characters makes exec fail
// (E2BIG).
inline constexpr std::size_t kMaxHostListChars = 4096;
bool hosts_need_file(const Placement& placement);
// That file's contents: "host slots=N" lines for mpirun, one host per line for srun.
std::string hostfile_text(Launcher launcher, const Placement& placement);

// The launch of one group of `placement`: the command line in front of the worker's own
// (`mgbench worker ...`); empty for the local launcher. When hosts_need_file(), `hostfile`
// names the file that holds them.
std::vector<std::string> launch_prefix(const LaunchOptions& options, const Placement& placement,
                                       const std::string& hostfile = "");
// The worker's arguments after the prefix; a launched worker is told its node's devices, so
// that each rank selects its GPU before MPI starts (a CUDA-aware MPI uses the current device).
std::vector<std::string> worker_arguments(Launcher launcher, const std::vector<int>& devices = {});
// One line for --dry-run: the prefix, the worker and its arguments, shell-quoted.
std::string launch_command_line(const LaunchOptions& options, const Placement& placement,
                                const std::vector<int>& devices = {});

// A launch about to start: its command line, and the temporary hostfile it names (removed with
// this object). Throws EnvironmentError when the file cannot be written.
class PreparedLaunch {
 public:
  PreparedLaunch(const LaunchOptions& options, const Placement& placement);
  ~PreparedLaunch();
  PreparedLaunch(const PreparedLaunch&) = delete;
  PreparedLaunch& operator=(const PreparedLaunch&) = delete;
  const std::vector<std::string>& prefix() const { return prefix_; }

 private:
  std::string hostfile_;
  std::vector<std::string> prefix_;
};

// The device probe of a sweep whose ranks run elsewhere: one rank on each known node (the hosts
// given, the allocation's nodes under srun, else this host), so that the orchestrator loads no
// CUDA and every node is reached once before the first group.
Placement probe_placement(const LaunchOptions& options);

// One line for a launch that ended (`how`: "exit code 1") before any rank said hello, from what
// the launcher printed: the cause and the fix where they are known (OpenMPI's refusal to run as
// root, too few slots, a remote host not reached, mgbench missing there), else the launcher's
// first line of output.
std::string launch_failure_line(Launcher launcher, const std::string& how,
                                const std::string& output);

// Throws EnvironmentError (exit 4) with one line when the launcher cannot be used here: a build
// without MPI, or (with `need_program`) mpirun or srun not on PATH, saying what to install.
void check_launcher_available(Launcher launcher, bool need_program);
// Whether this build can run a group as one process per GPU (MGBENCH_WITH_MPI).
bool built_with_mpi();

}  // namespace mgbench
