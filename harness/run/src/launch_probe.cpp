// The device probe of a launched sweep (launch_probe.hpp).
#include "mgbench/run/launch_probe.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/platform/host_compare.hpp"
#include "worker_attempt.hpp"

namespace mgbench {

ProbeResult probe_launched(const LaunchOptions& options, bool doctor, double timeout_s) {
  const PreparedLaunch launch(options, probe_placement(options));
  Json body;
  bool got = false;
  const auto outcome = run_worker(
      Json{{"mode", "probe"}, {"doctor", doctor}}, timeout_s,
      [&](const WorkerMessage& m) {
        if (m.kind != WorkerMessageKind::probe) return;
        body = m.body;
        got = true;
      },
      launch.prefix(), worker_arguments(options.launcher));
  if (!got) {
    const std::string why = launch_start_failure(outcome, options.launcher, timeout_s);
    if (!why.empty()) throw EnvironmentError(why);
    if (!outcome.fatal.empty()) throw EnvironmentError("device probe: " + outcome.fatal);
    throw EnvironmentError(fmt::format("device probe failed: {} {}", to_string(options.launcher),
                                       outcome.exit.describe()));
  }
  pass_on_output(outcome);
  ProbeResult result;
  try {
    result = probe_result(body);
    for (const auto& node : body.value("nodes", Json::array())) {
      result.nodes.push_back(node.get<NodeReport>());
    }
  } catch (const std::exception& e) {
    throw EnvironmentError(fmt::format("device probe: malformed answer: {}", one_line(e.what())));
  }
  for (const auto& node : result.nodes) {
    if (!node.error.empty()) {
      throw EnvironmentError(fmt::format("device probe: node {}: {}", one_line(node.host),
                                         one_line(node.error)));
    }
  }
  return result;
}

std::vector<HostSlots> distinct_hosts(const std::vector<HostSlots>& hosts,
                                      const std::vector<NodeReport>& nodes,
                                      std::vector<std::string>* warnings) {
  std::vector<HostSlots> kept;
  std::map<std::string, std::string> first_name;  // machine -> the name that reached it first
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string machine = i < nodes.size() ? nodes[i].node : "";
    const auto seen = first_name.find(machine);
    if (machine.empty() || seen == first_name.end()) {
      if (!machine.empty()) first_name[machine] = hosts[i].host;
      kept.push_back(hosts[i]);
      continue;
    }
    if (warnings != nullptr) {
      warnings->push_back(fmt::format(
          "--hosts: '{}' is the machine '{}' already reaches ({}): counted once, as one node",
          hosts[i].host, seen->second, one_line(nodes[i].host)));
    }
  }
  return kept;
}

std::vector<DoctorCheck> node_checks(const std::vector<NodeReport>& nodes) {
  if (nodes.size() < 2) return {};
  std::vector<HostFingerprint> hosts;
  for (const auto& n : nodes) hosts.push_back({n.host, n.environment, n.error});
  return compare_host_fingerprints(hosts);
}

void add_checks(Json& doctor, const std::vector<DoctorCheck>& checks) {
  if (checks.empty()) return;
  if (!doctor.is_object()) {
    doctor = doctor_to_json(checks);
    return;
  }
  Json& list = doctor["checks"];
  if (!list.is_array()) list = Json::array();
  const Json added = doctor_to_json(checks);
  for (const auto& c : added.at("checks")) list.push_back(c);
  Json summary{{"pass", 0}, {"warn", 0}, {"fail", 0}, {"skip", 0}};
  for (const auto& c : list) {
    const std::string status = c.value("status", "skip");
    if (summary.contains(status)) summary[status] = summary[status].get<int>() + 1;
  }
  doctor["summary"] = summary;
  doctor["ok"] = summary["fail"].get<int>() == 0;
}

void check_local_node_size(const LaunchOptions& options, const std::vector<NodeReport>& nodes) {
  if (options.launcher != Launcher::mpirun || !options.hosts.empty() || nodes.empty()) return;
  const int here = std::max(nodes[0].node_gpus, nodes[0].gpus_seen);
  if (options.gpus_per_node > here) {
    throw UsageError(fmt::format(
        "--gpus-per-node {} asks for more GPUs than the {} of this host: mpirun without --hosts "
        "runs every rank here (give --hosts for other nodes)",
        options.gpus_per_node, here));
  }
}

}  // namespace mgbench
