// The mpirun launcher (OpenMPI): one launch of `mpirun -np G` per group, a process per GPU, on the
// hosts given (--hosts, --hostfile) or on this host; the variables every rank needs are passed
// with -x (forwarded_variables).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launchers.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench {
namespace {

class MpirunLauncher final : public GroupLauncher {
 public:
  Launcher kind() const override { return Launcher::mpirun; }
  bool processes_per_gpu() const override { return true; }

  std::vector<std::string> prefix(const LaunchOptions& options, const Placement& placement,
                                  const std::string& hostfile) const override {
    const int ranks = placement.nodes * placement.gpus_per_node;
    std::vector<std::string> cmd{"mpirun", "-np", std::to_string(ranks)};
    if (!placement.hosts.empty() && hosts_need_file(placement)) {
      cmd.insert(cmd.end(), {"--hostfile", hostfile});
    } else if (!placement.hosts.empty()) {
      std::vector<std::string> hosts;
      for (const auto& h : placement.hosts) {
        hosts.push_back(h + ":" + std::to_string(placement.gpus_per_node));
      }
      cmd.insert(cmd.end(), {"--host", fmt::format("{}", fmt::join(hosts, ","))});
    }
    if (options.oversubscribe) cmd.push_back("--oversubscribe");
    // mgbench pins each rank to its GPU's local CPUs itself.
    cmd.insert(cmd.end(), {"--bind-to", "none"});
    for (const auto& name : forwarded_variables(options.forward_env)) {
      cmd.insert(cmd.end(), {"-x", name});
    }
    return cmd;
  }

  std::string hostfile_text(const Placement& placement) const override {
    std::string text;
    for (const auto& h : placement.hosts) {
      text += fmt::format("{} slots={}\n", h, placement.gpus_per_node);
    }
    return text;
  }

  int max_nodes(const LaunchOptions& options) const override {
    // No host list: this host.
    return options.hosts.empty() ? 1 : static_cast<int>(options.hosts.size());
  }

  void check_options(const LaunchOptions&) const override {}

  std::string install_hint() const override { return "OpenMPI (Debian/Ubuntu: openmpi-bin)"; }

  // Without --hosts every rank runs here: more GPUs per node than this host has is refused, as
  // the local launcher refuses more GPUs than it sees.
  void check_nodes(const LaunchOptions& options, int gpus_here) const override {
    if (!options.hosts.empty() || options.gpus_per_node <= gpus_here) return;
    throw UsageError(fmt::format(
        "--gpus-per-node {} asks for more GPUs than the {} of this host: mpirun without --hosts "
        "runs every rank here (give --hosts for other nodes)",
        options.gpus_per_node, gpus_here));
  }
};

}  // namespace

const GroupLauncher& mpirun_launcher() {
  static const MpirunLauncher launcher;
  return launcher;
}

}  // namespace mgbench
