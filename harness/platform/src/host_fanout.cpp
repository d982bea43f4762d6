#include "mgbench/platform/host_fanout.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/limits.hpp"

namespace mgbench {

std::vector<HostFingerprint> parse_fingerprint_lines(const std::string& output,
                                                     std::size_t expected) {
  std::vector<HostFingerprint> hosts;
  std::istringstream lines(output);
  std::string line;
  const std::string marker = kFingerprintMarker;
  while (std::getline(lines, line)) {
    const auto at = line.find(marker);
    if (at == std::string::npos) continue;
    HostFingerprint h;
    try {
      const Json j = parse_json_bounded(std::string_view(line).substr(at + marker.size()),
                                        "a host fingerprint", limits::kLine);
      h.host = one_line(j.value("host", std::string("?")));
      h.environment = j.value("environment", Json::object());
      h.error = one_line(j.value("error", std::string()));
      if (!h.environment.is_object()) throw UsageError("its environment is not an object");
      if (j.contains("nics")) h.environment["nics"] = j["nics"];
    } catch (const std::exception& e) {
      h.host = fmt::format("answer {}", hosts.size() + 1);
      h.error = one_line(e.what());
    }
    hosts.push_back(std::move(h));
  }
  if (expected > hosts.size()) {
    hosts.push_back({"(missing)", Json::object(),
                     fmt::format("{} of {} hosts did not answer", expected - hosts.size(),
                                 expected)});
  }
  return hosts;
}

}  // namespace mgbench
