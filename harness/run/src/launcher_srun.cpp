// The srun launcher (Slurm): one job step per group inside the allocation, a process per GPU;
// srun passes the whole environment, and the nodes are the hosts given or the allocation's.
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launchers.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench {
namespace {

class SrunLauncher final : public GroupLauncher {
 public:
  Launcher kind() const override { return Launcher::srun; }
  bool processes_per_gpu() const override { return true; }

  std::vector<std::string> prefix(const LaunchOptions&, const Placement& placement,
                                  const std::string& hostfile) const override {
    const int ranks = placement.nodes * placement.gpus_per_node;
    std::vector<std::string> cmd{"srun",
                                 fmt::format("--nodes={}", placement.nodes),
                                 fmt::format("--ntasks={}", ranks),
                                 fmt::format("--ntasks-per-node={}", placement.gpus_per_node),
                                 "--input=0",  // the group's request goes to rank 0 only
                                 "--kill-on-bad-exit=1",
                                 // No CPU binding of srun's own (by default one CPU per task,
                                 // wherever): mgbench pins each rank to its GPU's local CPUs.
                                 "--cpu-bind=none"};
    if (!placement.hosts.empty()) {
      // A node list holding a '/' is read from that file.
      cmd.push_back("--nodelist=" + (hosts_need_file(placement)
                                         ? hostfile
                                         : fmt::format("{}", fmt::join(placement.hosts, ","))));
    }
    return cmd;
  }

  std::string hostfile_text(const Placement& placement) const override {
    std::string text;
    for (const auto& h : placement.hosts) text += h + "\n";
    return text;
  }

  // The hosts given, else the allocation's nodes (0: not known outside an allocation).
  int max_nodes(const LaunchOptions& options) const override {
    if (!options.hosts.empty()) return static_cast<int>(options.hosts.size());
    const char* nodes = std::getenv("SLURM_JOB_NUM_NODES");
    if (nodes == nullptr) return 0;
    const int n = std::atoi(nodes);
    return n > 0 ? n : 0;
  }

  void check_options(const LaunchOptions& options) const override {
    if (!options.forward_env.empty()) {
      throw UsageError("--forward-env is an mpirun option (srun passes the whole environment)");
    }
    if (options.oversubscribe) throw UsageError("--oversubscribe is an mpirun option");
  }

  std::string install_hint() const override {
    return "the Slurm client (Debian/Ubuntu: slurm-client) and run inside an allocation";
  }

  void check_nodes(const LaunchOptions&, int) const override {}
};

}  // namespace

const GroupLauncher& srun_launcher() {
  static const SrunLauncher launcher;
  return launcher;
}

}  // namespace mgbench
