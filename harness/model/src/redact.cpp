#include "mgbench/model/redact.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace mgbench {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// Replaces `host` in every string of `node` (iteratively: no recursion on untrusted depth).
void scrub_host(Json& root, const std::string& host, const std::string& label) {
  if (host.size() < 2) return;  // a one-letter host name would mangle every word
  std::vector<Json*> stack{&root};
  while (!stack.empty()) {
    Json* node = stack.back();
    stack.pop_back();
    if (node->is_string()) {
      std::string text = node->get<std::string>();
      replace_all(text, host, label);
      *node = text;
    } else if (node->is_structured()) {
      for (auto& child : *node) stack.push_back(&child);
    }
  }
}

void hash_field(Json& object, const char* key) {
  if (object.is_object() && object.contains(key) && object[key].is_string()) {
    object[key] = redacted_label(object[key].get<std::string>());
  }
}

void redact_environment(Json& env) {
  if (!env.is_object()) return;
  if (env.contains("env") && env["env"].is_object()) {
    for (auto it = env["env"].begin(); it != env["env"].end(); ++it) {
      if (is_redacted_variable(it.key()) && !it->is_null()) {
        *it = redacted_label(it->is_string() ? it->get<std::string>() : it->dump());
      }
    }
  }
  if (env.contains("gpus") && env["gpus"].is_array()) {
    for (Json& gpu : env["gpus"]) {
      for (const char* key : {"serial", "uuid", "nvml_uuid"}) hash_field(gpu, key);
      if (gpu.is_object() && gpu.contains("nvml")) {
        for (const char* key : {"serial", "uuid", "nvml_uuid"}) hash_field(gpu["nvml"], key);
      }
    }
  }
}

// Other users' processes appear in the doctor's `other_processes` finding.
void redact_doctor(Json& doctor) {
  if (!doctor.is_object() || !doctor.contains("checks") || !doctor["checks"].is_array()) return;
  for (Json& check : doctor["checks"]) {
    if (check.is_object() && check.value("name", "") == "other_processes" &&
        check.value("status", "") == "warn") {
      check["finding"] = "other compute processes were running (details redacted)";
    }
  }
}

}  // namespace

std::string redacted_label(const std::string& value) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("redacted-{:016x}", h);
}

bool is_redacted_variable(const std::string& name) {
  for (const char* prefix : {"CUDA_", "NCCL_", "OMPI_", "SLURM_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

namespace {

// The hosts of a multi-node point: their names become labels in the point, its message and
// the command line (--hosts).
void redact_point_hosts(PointResult& point, std::vector<std::string>& argv) {
  for (std::string& name : point.placement.hosts) {
    if (name.size() < 2) continue;
    const std::string label = redacted_label(name);
    replace_all(point.message, name, label);
    for (std::string& arg : argv) replace_all(arg, name, label);
    name = label;
  }
}

// `mgbench screen`'s nodes: their facts as the environment's, their names as labels wherever the
// section (messages, findings) or the command line says them.
void redact_screen(Json& screen, std::vector<std::string>& argv) {
  if (!screen.is_object() || !screen.contains("nodes") || !screen["nodes"].is_array()) return;
  std::vector<std::string> hosts;
  for (Json& node : screen["nodes"]) {
    if (!node.is_object()) continue;
    if (node.contains("host") && node["host"].is_string()) {
      hosts.push_back(node["host"].get<std::string>());
    }
    if (node.contains("facts") && node["facts"].is_object()) {
      Json& facts = node["facts"];
      if (facts.contains("environment")) redact_environment(facts["environment"]);
      if (facts.contains("doctor")) redact_doctor(facts["doctor"]);
    }
  }
  for (const std::string& host : hosts) {
    if (host.size() < 2) continue;
    const std::string label = redacted_label(host);
    scrub_host(screen, host, label);
    for (std::string& arg : argv) replace_all(arg, host, label);
  }
}

}  // namespace

RunResult redact_run(const RunResult& run) {
  RunResult out = run;
  std::string host = run.host;
  if (out.environment.is_object() && out.environment.contains("host") &&
      out.environment["host"].is_object() && out.environment["host"].contains("hostname") &&
      out.environment["host"]["hostname"].is_string()) {
    if (host.empty()) host = out.environment["host"]["hostname"].get<std::string>();
    out.environment["host"]["hostname"] = redacted_label(host);
  }
  const std::string label = redacted_label(host);
  if (!out.host.empty()) out.host = label;
  redact_environment(out.environment);
  redact_doctor(out.doctor);
  for (PointResult& p : out.points) {
    std::string message = p.message;
    replace_all(message, host, host.size() < 2 ? host : label);
    p.message = message;
    scrub_host(p.extra, host, label);
    redact_point_hosts(p, out.argv);
  }
  redact_screen(out.screen, out.argv);
  scrub_host(out.environment, host, label);
  scrub_host(out.doctor, host, label);
  for (std::string& arg : out.argv) replace_all(arg, host, host.size() < 2 ? host : label);
  if (out.settings.is_object() && !out.settings.empty()) out.settings["redacted"] = true;
  return out;
}

}  // namespace mgbench
