// What every launcher shares (launcher.hpp): host lists, the GPUs per node, the variables mpirun
// forwards, the hostfile of a long host list, and the functions that dispatch to the launcher
// of the options (launcher_local.cpp, launcher_mpirun.cpp, launcher_srun.cpp).
#include "mgbench/run/launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <cxxopts.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/platform/command_capture.hpp"
#include "launchers.hpp"

extern char** environ;

namespace mgbench {

Launcher default_launcher() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job != nullptr && *job != '\0' ? Launcher::srun : Launcher::local;
}

const GroupLauncher& group_launcher(Launcher kind) {
  for (const GroupLauncher* l : {&local_launcher(), &mpirun_launcher(), &srun_launcher()}) {
    if (l->kind() == kind) return *l;
  }
  throw std::logic_error(fmt::format("no launcher '{}'", to_string(kind)));
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

constexpr int kMaxSlots = 4096;

int parse_slots(const std::string& text, const std::string& where) {
  try {
    const std::int64_t n = parse_positive_int(text, where);
    if (n > kMaxSlots) throw UsageError("");
    return static_cast<int>(n);
  } catch (const UsageError&) {
    throw UsageError(fmt::format("invalid slot count '{}' in {}: expected 1..4096", text, where));
  }
}

void add_host(std::vector<HostSlots>& hosts, HostSlots entry, const std::string& where) {
  if (!valid_host(entry.host)) {
    throw UsageError(fmt::format("invalid host name '{}' in {}", entry.host, where));
  }
  if (entry.slots < 0 || entry.slots > kMaxSlots) {
    throw UsageError(
        fmt::format("invalid slot count '{}' in {}: expected 1..4096", entry.slots, where));
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

std::vector<HostSlots> checked_hosts(const std::vector<HostSlots>& given,
                                     const std::string& where) {
  std::vector<HostSlots> hosts;
  for (const auto& h : given) add_host(hosts, h, where);
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
  return group_launcher(options.launcher).max_nodes(options);
}

namespace {

bool has_prefix(const std::string& name, const char* prefix) {
  return name.rfind(prefix, 0) == 0;
}

// `name` is taken by a --forward-env entry: equal, or under its PREFIX*.
bool matches(const std::string& name, const std::string& entry) {
  if (!entry.empty() && entry.back() == '*') {
    return name.compare(0, entry.size() - 1, entry, 0, entry.size() - 1) == 0;
  }
  return name == entry;
}

}  // namespace

bool forwarded_by_default(const std::string& name) {
  for (const char* prefix :
       {"NCCL_", "MGBENCH_", "CUDA_", "UCX_", "OMPI_MCA_", "PMIX_MCA_"}) {
    if (has_prefix(name, prefix)) return true;
  }
  return name == "LD_LIBRARY_PATH";
}

void check_forward_name(const std::string& name) {
  std::string base = name;
  if (!base.empty() && base.back() == '*') base.pop_back();
  bool ok = !base.empty() && base.size() <= 128 && !(base[0] >= '0' && base[0] <= '9');
  for (char c : base) {
    ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '_');
  }
  if (!ok) {
    throw UsageError(fmt::format(
        "invalid --forward-env '{}': expected a variable name, or a prefix followed by '*'",
        name));
  }
}

std::vector<std::string> launcher_words(const cxxopts::ParseResult& args) {
  std::vector<std::string> words;
  for (const auto& kv : args.arguments()) {
    if (kv.key() == "launcher-arg") words.push_back(kv.value());
  }
  return words;
}

std::vector<std::string> forward_env_names(const std::string& text) {
  std::vector<std::string> names = split_list(text, "--forward-env");
  for (const auto& name : names) check_forward_name(name);
  return names;
}

void read_launcher_words(const cxxopts::ParseResult& args, LaunchOptions& launch) {
  launch.launcher_args = launcher_words(args);
  if (args.count("forward-env") != 0) {
    launch.forward_env = forward_env_names(args["forward-env"].as<std::string>());
  }
}

void add_launch_options(cxxopts::Options& options) {
  const LaunchOptionHelp& h = kLaunchHelp;
  auto add = options.add_options();
  add("launcher", h.launcher, cxxopts::value<std::string>());
  add("hosts", h.hosts, cxxopts::value<std::string>());
  add("hostfile", h.hostfile, cxxopts::value<std::string>());
  add("gpus-per-node", h.gpus_per_node, cxxopts::value<std::string>());
  add("oversubscribe", h.oversubscribe);
  add("launcher-arg", h.launcher_arg, cxxopts::value<std::string>());
  add("forward-env", h.forward_env, cxxopts::value<std::string>());
}

Launcher launcher_option(const std::string& text) {
  for (Launcher l : {Launcher::local, Launcher::mpirun, Launcher::srun}) {
    if (text == to_string(l)) return l;
  }
  throw UsageError(
      fmt::format("invalid --launcher '{}': expected local or mpirun or srun", text));
}

int gpus_per_node_option(const std::string& text) {
  const auto n = parse_positive_int(text, "--gpus-per-node");
  if (n > 4096) throw UsageError("invalid --gpus-per-node: at most 4096");
  return static_cast<int>(n);
}

LaunchOptions read_launch_options(const cxxopts::ParseResult& args, Launcher fallback) {
  LaunchOptions l;
  l.launcher =
      args.count("launcher") ? launcher_option(args["launcher"].as<std::string>()) : fallback;
  if (args.count("hosts") && args.count("hostfile")) {
    throw UsageError("give --hosts or --hostfile, not both");
  }
  if (args.count("hosts")) l.hosts = parse_host_list(args["hosts"].as<std::string>());
  if (args.count("hostfile")) l.hosts = parse_hostfile(args["hostfile"].as<std::string>());
  if (args.count("gpus-per-node")) {
    l.gpus_per_node = gpus_per_node_option(args["gpus-per-node"].as<std::string>());
  }
  l.oversubscribe = args.count("oversubscribe") > 0;
  read_launcher_words(args, l);
  group_launcher(l.launcher).check_options(l);  // what this launcher cannot take
  return l;
}

std::vector<std::string> forwarded_variables(const std::vector<std::string>& extra) {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool take = forwarded_by_default(name);
    for (const auto& wanted : extra) take = take || matches(name, wanted);
    if (take && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

bool hosts_need_file(const Placement& placement) {
  std::size_t chars = 0;
  for (const auto& h : placement.hosts) chars += h.size() + 8;  // ":slots,"
  return chars > kMaxHostListChars;
}

std::string hostfile_text(Launcher launcher, const Placement& placement) {
  return group_launcher(launcher).hostfile_text(placement);
}

namespace {

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

std::vector<std::string> launch_prefix(const LaunchOptions& options, const Placement& placement,
                                       const std::string& hostfile) {
  const GroupLauncher& launcher = group_launcher(options.launcher);
  if (!launcher.processes_per_gpu()) return {};
  std::vector<std::string> cmd = launcher.prefix(options, placement, hostfile);
  cmd.insert(cmd.end(), options.launcher_args.begin(), options.launcher_args.end());
  return cmd;
}

std::vector<std::string> worker_arguments(Launcher launcher, const std::vector<int>& devices) {
  if (!group_launcher(launcher).processes_per_gpu()) return {"worker", "--result-fd", "3"};
  std::vector<std::string> args{"worker", "--mpi"};
  if (!devices.empty()) {
    args.insert(args.end(), {"--devices", fmt::format("{}", fmt::join(devices, ","))});
  }
  return args;
}

std::string launch_command_line(const LaunchOptions& options, const Placement& placement,
                                const std::vector<int>& devices) {
  std::vector<std::string> words = launch_prefix(options, placement, "TEMPORARY-HOSTFILE");
  words.push_back("mgbench");
  for (const auto& w : worker_arguments(options.launcher, devices)) words.push_back(w);
  std::string line;
  for (const auto& w : words) line += (line.empty() ? "" : " ") + shell_quote(w);
  return line;
}

void check_launcher_available(Launcher launcher, bool need_program) {
  const GroupLauncher& l = group_launcher(launcher);
  if (!l.processes_per_gpu()) return;
  const std::string name = to_string(launcher);
  if (!built_with_mpi()) {
    throw EnvironmentError(fmt::format(
        "--launcher {} needs one process per GPU, and this mgbench was built without MPI: "
        "install an MPI (Debian/Ubuntu: libopenmpi-dev) and rebuild (MGBENCH_WITH_MPI)",
        name));
  }
  if (!need_program || !find_program(name).empty()) return;
  throw EnvironmentError(fmt::format("{} is not on PATH: install {}", name, l.install_hint()));
}

PreparedLaunch::PreparedLaunch(const LaunchOptions& options, const Placement& placement) {
  const GroupLauncher& launcher = group_launcher(options.launcher);
  if (launcher.processes_per_gpu() && hosts_need_file(placement)) {
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                       "/mgbench-hosts.XXXXXX";
    const int fd = ::mkstemp(path.data());
    const std::string text = launcher.hostfile_text(placement);
    const int err = fd >= 0 ? write_fully(fd, text) : errno;
    if (fd >= 0) ::close(fd);
    if (err != 0) {
      if (fd >= 0) ::unlink(path.c_str());
      throw EnvironmentError(fmt::format("cannot write the hostfile of a launch of {} hosts in "
                                         "'{}': {}", placement.hosts.size(), path,
                                         std::strerror(err)));
    }
    hostfile_ = path;
  }
  prefix_ = launch_prefix(options, placement, hostfile_);
}

PreparedLaunch::~PreparedLaunch() {
  if (!hostfile_.empty()) ::unlink(hostfile_.c_str());
}

Placement probe_placement(const LaunchOptions& options) {
  Placement p;
  p.process_model = ProcessModel::processes;
  p.launcher = options.launcher;
  p.gpus_per_node = 1;
  for (const auto& h : options.hosts) p.hosts.push_back(h.host);
  p.nodes = p.hosts.empty() ? std::max(1, max_nodes(options)) : static_cast<int>(p.hosts.size());
  return p;
}

namespace {

// The first line of a launcher's output that says something (not blank, not a rule of dashes).
std::string first_message_line(const std::string& output) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    const std::string text = line.substr(start);
    if (text.find_first_not_of("-=*") == std::string::npos) continue;
    return one_line(text.substr(0, 240));
  }
  return "";
}

bool says(const std::string& output, const char* text) {
  return output.find(text) != std::string::npos;
}

}  // namespace

std::string launch_failure_line(Launcher launcher, const std::string& how,
                                const std::string& output) {
  const std::string name = to_string(launcher);
  const std::string head = fmt::format("{} failed before any rank started ({})", name, how);
  if (says(output, "attempt to run as root")) {
    return fmt::format("{}: it refuses to run as root; run the sweep as another user, or allow "
                       "it with --launcher-arg=--allow-run-as-root (or the variables "
                       "OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)",
                       head);
  }
  if (says(output, "not enough slots")) {
    return fmt::format("{}: a host has fewer slots than the ranks asked of it; give each host's "
                       "GPU count (--hosts h1:8,h2:8 or --gpus-per-node), or --oversubscribe",
                       head);
  }
  if (says(output, "unable to reliably start one or more daemons") ||
      says(output, "Host key verification failed") || says(output, "Could not resolve hostname")) {
    return fmt::format("{}: it could not start on a remote host; check that every host is "
                       "reachable by passwordless SSH from here and has OpenMPI installed",
                       head);
  }
  if (says(output, "unable to find the specified executable") ||
      says(output, "could not access\nor execute an executable") ||
      says(output, "No such file or directory")) {
    return fmt::format("{}: mgbench could not be started on a node; install it at the same path "
                       "on every node ({})", head, first_message_line(output));
  }
  const std::string first = first_message_line(output);
  return first.empty() ? head + " and printed nothing"
                       : fmt::format("{}: {} (-v shows all it printed)", head, first);
}

}  // namespace mgbench
