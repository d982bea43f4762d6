// The local launcher: the orchestrator starts the group's worker itself, one process on this host
// that runs a thread per GPU (the worker's results come on its fd 3).
#include "launchers.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench {
namespace {

class LocalLauncher final : public GroupLauncher {
 public:
  Launcher kind() const override { return Launcher::local; }
  bool processes_per_gpu() const override { return false; }
  std::vector<std::string> prefix(const LaunchOptions&, const Placement&,
                                  const std::string&) const override {
    return {};
  }
  std::string hostfile_text(const Placement&) const override { return ""; }
  int max_nodes(const LaunchOptions&) const override { return 1; }
  void check_options(const LaunchOptions& l) const override {
    if (!l.hosts.empty() || l.gpus_per_node > 0 || l.oversubscribe || !l.launcher_args.empty() ||
        !l.forward_env.empty()) {
      throw UsageError("--hosts, --hostfile, --gpus-per-node, --oversubscribe, --launcher-arg "
                       "and --forward-env need --launcher mpirun or srun");
    }
  }
  std::string install_hint() const override { return ""; }
  void check_nodes(const LaunchOptions&, int) const override {}
};

}  // namespace

const GroupLauncher& local_launcher() {
  static const LocalLauncher launcher;
  return launcher;
}

}  // namespace mgbench
