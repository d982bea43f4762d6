// The launchers: host lists, the GPUs per node, and the command line of one group's launch
// (launcher.hpp).
#include "mgbench/run/launcher.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/platform/command_capture.hpp"

extern char** environ;

namespace mgbench {

Launcher default_launcher() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job != nullptr && *job != '\0' ? Launcher::srun : Launcher::local;
}

namespace {

// A host name as mpirun and srun take it: letters, digits, '.', '-', '_' (IPv4 too).
bool valid_host(const std::string& host) {
  if (host.empty() || host.size() > 253 || host.front() == '-') return false;
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

int parse_slots(const std::string& text, const std::string& where) {
  try {
    const std::int64_t n = parse_positive_int(text, where);
    if (n > 4096) throw UsageError("");
    return static_cast<int>(n);
  } catch (const UsageError&) {
    throw UsageError(fmt::format("invalid slot count '{}' in {}: expected 1..4096", text, where));
  }
}

void add_host(std::vector<HostSlots>& hosts, HostSlots entry, const std::string& where) {
  if (!valid_host(entry.host)) {
    throw UsageError(fmt::format("invalid host name '{}' in {}", entry.host, where));
  }
  for (const auto& h : hosts) {
    if (h.host == entry.host) {
      throw UsageError(fmt::format("host '{}' appears twice in {}", entry.host, where));
    }
  }
  hosts.push_back(std::move(entry));
}

}  // namespace

std::vector<HostSlots> parse_host_list(const std::string& text) {
  std::vector<HostSlots> hosts;
  for (const auto& item : split_list(text, "--hosts")) {
    HostSlots entry;
    const auto colon = item.find(':');
    entry.host = item.substr(0, colon);
    if (colon != std::string::npos) entry.slots = parse_slots(item.substr(colon + 1), "--hosts");
    add_host(hosts, std::move(entry), "--hosts");
  }
  return hosts;
}

std::vector<HostSlots> parse_hostfile_text(const std::string& text, const std::string& path) {
  std::vector<HostSlots> hosts;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    HostSlots entry;
    if (!(words >> entry.host)) continue;  // blank or comment
    const std::string where = fmt::format("hostfile {} line {}", path, number);
    for (std::string word; words >> word;) {
      const auto eq = word.find('=');
      const std::string key = word.substr(0, eq);
      if (eq == std::string::npos || (key != "slots" && key != "max_slots" && key != "max-slots")) {
        throw UsageError(fmt::format("invalid '{}' in {}: expected slots=N", word, where));
      }
      const int n = parse_slots(word.substr(eq + 1), where);
      if (key == "slots") entry.slots = n;
    }
    add_host(hosts, std::move(entry), where);
  }
  if (hosts.empty()) throw UsageError(fmt::format("hostfile {} names no host", path));
  return hosts;
}

std::vector<HostSlots> parse_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read hostfile '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1u << 20)) {
    throw UsageError(fmt::format("hostfile '{}' is larger than 1 MiB", path));
  }
  return parse_hostfile_text(text.str(), path);
}

int planned_gpus_per_node(const LaunchOptions& options, int local_devices) {
  if (options.gpus_per_node > 0) return options.gpus_per_node;
  int slots = 0;
  for (const auto& h : options.hosts) {
    if (h.slots == 0) continue;
    if (slots != 0 && h.slots != slots) {
      throw UsageError("the hosts have different slot counts: give --gpus-per-node");
    }
    slots = h.slots;
  }
  return slots > 0 ? slots : local_devices;
}

int max_nodes(const LaunchOptions& options) {
  if (options.launcher == Launcher::local) return 1;
  if (!options.hosts.empty()) return static_cast<int>(options.hosts.size());
  if (options.launcher == Launcher::mpirun) return 1;  // no host list: this host
  const char* nodes = std::getenv("SLURM_JOB_NUM_NODES");
  if (nodes == nullptr) return 0;
  const int n = std::atoi(nodes);
  return n > 0 ? n : 0;
}

namespace {

// The variables mpirun hands to remote ranks (local ranks inherit everything): NCCL's
// settings and mgbench's own.
std::vector<std::string> forwarded_variables() {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("NCCL_", 0) == 0 || name.rfind("MGBENCH_", 0) == 0) names.push_back(name);
  }
  return names;
}

std::vector<std::string> mpirun_prefix(const LaunchOptions& options, const Placement& placement) {
  const int ranks = placement.nodes * placement.gpus_per_node;
  std::vector<std::string> cmd{"mpirun", "-np", std::to_string(ranks)};
  if (!placement.hosts.empty()) {
    std::vector<std::string> hosts;
    for (const auto& h : placement.hosts) {
      hosts.push_back(h + ":" + std::to_string(placement.gpus_per_node));
    }
    cmd.insert(cmd.end(), {"--host", fmt::format("{}", fmt::join(hosts, ","))});
  }
  if (options.oversubscribe) cmd.push_back("--oversubscribe");
  // mgbench pins each rank to its GPU's local CPUs itself.
  cmd.insert(cmd.end(), {"--bind-to", "none"});
  for (const auto& name : forwarded_variables()) cmd.insert(cmd.end(), {"-x", name});
  return cmd;
}

std::vector<std::string> srun_prefix(const Placement& placement) {
  const int ranks = placement.nodes * placement.gpus_per_node;
  std::vector<std::string> cmd{"srun",
                               fmt::format("--nodes={}", placement.nodes),
                               fmt::format("--ntasks={}", ranks),
                               fmt::format("--ntasks-per-node={}", placement.gpus_per_node),
                               "--input=0",  // the group's request goes to rank 0 only
                               "--kill-on-bad-exit=1"};
  if (!placement.hosts.empty()) {
    cmd.push_back(fmt::format("--nodelist={}", fmt::join(placement.hosts, ",")));
  }
  return cmd;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_=.,:/@%+") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::vector<std::string> launch_prefix(const LaunchOptions& options, const Placement& placement) {
  switch (options.launcher) {
    case Launcher::local: return {};
    case Launcher::mpirun: return mpirun_prefix(options, placement);
    case Launcher::srun: return srun_prefix(placement);
  }
  return {};
}

std::vector<std::string> worker_arguments(Launcher launcher) {
  if (launcher == Launcher::local) return {"worker", "--result-fd", "3"};
  return {"worker", "--mpi"};
}

std::string launch_command_line(const LaunchOptions& options, const Placement& placement) {
  std::vector<std::string> words = launch_prefix(options, placement);
  words.push_back("mgbench");
  for (const auto& w : worker_arguments(options.launcher)) words.push_back(w);
  std::string line;
  for (const auto& w : words) line += (line.empty() ? "" : " ") + shell_quote(w);
  return line;
}

void check_launcher_available(Launcher launcher, bool need_program) {
  if (launcher == Launcher::local) return;
  const std::string name = to_string(launcher);
  if (!built_with_mpi()) {
    throw EnvironmentError(fmt::format(
        "--launcher {} needs one process per GPU, and this mgbench was built without MPI: "
        "install an MPI (Debian/Ubuntu: libopenmpi-dev) and rebuild (MGBENCH_WITH_MPI)",
        name));
  }
  if (!need_program || !find_program(name).empty()) return;
  throw EnvironmentError(
      launcher == Launcher::mpirun
          ? "mpirun is not on PATH: install OpenMPI (Debian/Ubuntu: openmpi-bin)"
          : "srun is not on PATH: install the Slurm client (Debian/Ubuntu: slurm-client) and run "
            "inside an allocation");
}

}  // namespace mgbench
