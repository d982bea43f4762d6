#include "mgbench/model/placement.hpp"

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_number.hpp"

namespace mgbench {

const char* to_string(ProcessModel model) {
  return model == ProcessModel::processes ? "processes" : "threads";
}

const char* to_string(Launcher launcher) {
  switch (launcher) {
    case Launcher::local: return "local";
    case Launcher::mpirun: return "mpirun";
    case Launcher::srun: return "srun";
  }
  return "local";
}

ProcessModel process_model_from_string(const std::string& text) {
  for (ProcessModel m : {ProcessModel::threads, ProcessModel::processes}) {
    if (text == to_string(m)) return m;
  }
  throw UsageError(fmt::format("unknown process model '{}' (threads or processes)", text));
}

Launcher launcher_from_string(const std::string& text) {
  for (Launcher l : {Launcher::local, Launcher::mpirun, Launcher::srun}) {
    if (text == to_string(l)) return l;
  }
  throw UsageError(fmt::format("unknown launcher '{}' (local, mpirun or srun)", text));
}

void write_placement(Json& point, const Placement& placement) {
  point["process_model"] = to_string(placement.process_model);
  point["launcher"] = to_string(placement.launcher);
  point["nodes"] = placement.nodes;
  point["hosts"] = placement.hosts;
  point["gpus_per_node"] = placement.gpus_per_node;
}

Placement read_placement(const Json& point, int gpus) {
  Placement p;
  p.gpus_per_node = gpus;
  if (point.contains("process_model")) {
    p.process_model = process_model_from_string(point.at("process_model").get<std::string>());
  }
  if (point.contains("launcher")) {
    p.launcher = launcher_from_string(point.at("launcher").get<std::string>());
  }
  if (point.contains("nodes")) p.nodes = json_integer<int>(point.at("nodes"), "nodes", 1);
  if (point.contains("gpus_per_node")) {
    p.gpus_per_node = json_integer<int>(point.at("gpus_per_node"), "gpus_per_node", 1);
  }
  if (point.contains("hosts")) {
    const Json& hosts = point.at("hosts");
    if (!hosts.is_array()) throw UsageError("point hosts is not an array");
    for (const Json& h : hosts) p.hosts.push_back(h.get<std::string>());
  }
  if (!p.hosts.empty() && p.hosts.size() != static_cast<std::size_t>(p.nodes)) {
    throw UsageError(fmt::format("point lists {} hosts for {} nodes", p.hosts.size(), p.nodes));
  }
  return p;
}

}  // namespace mgbench
