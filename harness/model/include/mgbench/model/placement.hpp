#pragma once
// Where and how a point's ranks ran: one thread per GPU inside one worker process, or one
// process per GPU started by mpirun or srun, on one or several nodes.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

enum class ProcessModel { threads, processes };
enum class Launcher { local, mpirun, srun };

const char* to_string(ProcessModel model);
const char* to_string(Launcher launcher);
ProcessModel process_model_from_string(const std::string& text);  // throws UsageError
Launcher launcher_from_string(const std::string& text);           // throws UsageError

struct Placement {
  ProcessModel process_model = ProcessModel::threads;
  Launcher launcher = Launcher::local;
  int nodes = 1;
  std::vector<std::string> hosts;  // one per node, in rank order (empty: not known)
  int gpus_per_node = 1;           // ranks of this point on each node (gpus / nodes)
};

// Written as flat keys of the point object ("process_model", "launcher", "nodes", "hosts",
// "gpus_per_node"). Reading a point without them (files written before them) gives one
// thread per GPU on one node of `gpus` GPUs; malformed values throw UsageError.
void write_placement(Json& point, const Placement& placement);
Placement read_placement(const Json& point, int gpus);

}  // namespace mgbench
