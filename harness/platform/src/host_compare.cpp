// Compares the environment fingerprints of the hosts of one multi-host run.
#include "mgbench/platform/host_compare.hpp"

#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mgbench {

namespace {

using ValueOf = std::function<std::string(const Json& env)>;

std::string version(const Json& env, const char* key) {
  const Json* versions = env.contains("versions") ? &env["versions"] : nullptr;
  if (versions == nullptr || !versions->is_object() || !versions->contains(key)) return "?";
  const Json& v = (*versions)[key];
  return v.is_string() && !v.get<std::string>().empty() ? v.get<std::string>() : "?";
}

// The sorted distinct values of one per-GPU field, joined with "/" ("?" when none is known).
std::string per_gpu(const Json& env, const std::function<std::string(const Json& gpu)>& field) {
  std::set<std::string> values;
  if (env.contains("gpus") && env["gpus"].is_array()) {
    for (const auto& g : env["gpus"]) {
      if (g.is_object()) values.insert(field(g));
    }
  }
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : "/") + v;
  return out.empty() ? "?" : out;
}

std::string number_at(const Json& gpu, const char* object, const char* key, const char* unit) {
  if (!gpu.contains(object) || !gpu[object].is_object()) return "?";
  const Json& v = gpu[object].value(key, Json());
  return v.is_number() ? fmt::format("{:.0f} {}", v.get<double>(), unit) : "?";
}

// One check: `name` passes when every host gives the same value, else gets `differ`.
DoctorCheck same_everywhere(const std::vector<HostFingerprint>& hosts, const char* name,
                            const char* what, CheckStatus differ, const ValueOf& value_of,
                            const char* next_step) {
  std::map<std::string, std::vector<std::string>> by_value;
  for (const auto& h : hosts) {
    if (h.error.empty()) by_value[value_of(h.environment)].push_back(h.host);
  }
  if (by_value.empty()) return {name, CheckStatus::skip, "no host gave a fingerprint", ""};
  if (by_value.size() == 1 && by_value.begin()->first == "?") {
    return {name, CheckStatus::skip, fmt::format("{} not known on any host", what), ""};
  }
  if (by_value.size() == 1) {
    return {name, CheckStatus::pass, fmt::format("{} {} on every host", what,
                                                 by_value.begin()->first), ""};
  }
  std::string finding = fmt::format("{} differs:", what);
  const char* sep = " ";
  for (const auto& [value, names] : by_value) {
    finding += fmt::format("{}{} on {}", sep, value, fmt::join(names, ","));
    sep = "; ";
  }
  return {name, differ, finding, next_step};
}

DoctorCheck reached(const std::vector<HostFingerprint>& hosts) {
  std::vector<std::string> failed;
  for (const auto& h : hosts) {
    if (!h.error.empty()) failed.push_back(fmt::format("{} ({})", h.host, h.error));
  }
  if (hosts.empty()) {
    return {"hosts_reached", CheckStatus::fail, "no host answered",
            "check the host list and that mgbench is installed at the same path on every host"};
  }
  if (failed.empty()) {
    return {"hosts_reached", CheckStatus::pass,
            fmt::format("{} host(s) gave a fingerprint", hosts.size()), ""};
  }
  return {"hosts_reached", CheckStatus::fail,
          fmt::format("no usable fingerprint from {}", fmt::join(failed, "; ")),
          "run `mgbench doctor` on that host to see why"};
}

}  // namespace

std::vector<DoctorCheck> compare_host_fingerprints(const std::vector<HostFingerprint>& hosts) {
  constexpr auto fail = CheckStatus::fail;
  constexpr auto warn = CheckStatus::warn;
  const char* same_stack = "install the same driver, CUDA and NCCL on every host (one image)";
  std::vector<DoctorCheck> checks{reached(hosts)};
  checks.push_back(same_everywhere(
      hosts, "hosts_gpu_model", "GPU model", fail,
      [](const Json& e) { return per_gpu(e, [](const Json& g) {
                            return g.value("name", std::string("?")); }); },
      "run one sweep per GPU model: numbers across models are not one scaling curve"));
  checks.push_back(same_everywhere(hosts, "hosts_driver", "driver", fail,
                                   [](const Json& e) { return version(e, "driver"); },
                                   same_stack));
  checks.push_back(same_everywhere(hosts, "hosts_cuda_runtime", "CUDA runtime", fail,
                                   [](const Json& e) { return version(e, "cuda_runtime"); },
                                   same_stack));
  checks.push_back(same_everywhere(hosts, "hosts_nccl", "NCCL", fail,
                                   [](const Json& e) { return version(e, "nccl_loaded"); },
                                   same_stack));
  checks.push_back(same_everywhere(
      hosts, "hosts_gpu_count", "GPU count", fail,
      [](const Json& e) {
        return e.contains("gpu_count") ? e["gpu_count"].dump() : std::string("?");
      },
      "give every node the same number of GPUs (--gpus-per-node) or leave the odd host out"));
  checks.push_back(same_everywhere(
      hosts, "hosts_power_limit", "enforced power limit", warn,
      [](const Json& e) { return per_gpu(e, [](const Json& g) {
                            return number_at(g, "power_limit_w", "enforced", "W"); }); },
      "set the same power limit everywhere (nvidia-smi -pl) or expect slower ranks"));
  checks.push_back(same_everywhere(
      hosts, "hosts_clocks", "maximum SM/memory clocks", warn,
      [](const Json& e) { return per_gpu(e, [](const Json& g) {
                            const std::string sm = number_at(g, "clocks_mhz", "sm_max", "MHz");
                            const std::string mem = number_at(g, "clocks_mhz", "mem_max", "MHz");
                            return sm == "?" && mem == "?" ? sm : sm + " SM " + mem + " mem"; }); },
      "check for locked or capped clocks on the odd host (nvidia-smi -q -d CLOCK)"));
  return checks;
}

}  // namespace mgbench
