#include "mgbench/run/host_fanout.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/limits.hpp"

namespace mgbench {

namespace {

bool valid_host_name(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == '_';
  });
}

bool valid_slots(const std::string& text) {
  return !text.empty() && text.size() <= 4 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         std::stoi(text) > 0;
}

// "h1" or "h1:8" -> "h1"; `where` names the source in the error.
std::string host_entry(const std::string& entry, const std::string& where) {
  const auto colon = entry.find(':');
  const std::string name = entry.substr(0, colon);
  if (!valid_host_name(name)) {
    throw UsageError(fmt::format("{}: bad host name '{}'", where, one_line(name)));
  }
  if (colon != std::string::npos && !valid_slots(entry.substr(colon + 1))) {
    throw UsageError(fmt::format("{}: bad slot count in '{}' (expected HOST:N, N > 0)", where,
                                 one_line(entry)));
  }
  return name;
}

void add_unique(std::vector<std::string>& hosts, const std::string& name,
                const std::string& where) {
  if (std::find(hosts.begin(), hosts.end(), name) != hosts.end()) {
    throw UsageError(fmt::format("{}: host '{}' given twice", where, name));
  }
  hosts.push_back(name);
}

}  // namespace

std::vector<std::string> parse_host_list(const std::string& text) {
  std::vector<std::string> hosts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    add_unique(hosts, host_entry(text.substr(start, end - start), "--hosts"), "--hosts");
    start = end + 1;
  }
  return hosts;
}

std::vector<std::string> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--hostfile: cannot read '{}'", one_line(path)));
  std::vector<std::string> hosts;
  std::string line;
  for (int number = 1; std::getline(in, line) && number <= 100000; ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string entry, option;
    if (!(words >> entry)) continue;
    const std::string where = fmt::format("--hostfile line {}", number);
    while (words >> option) {
      if (option.rfind("slots=", 0) != 0 && option.rfind("max_slots=", 0) != 0) {
        throw UsageError(fmt::format("{}: unknown field '{}'", where, one_line(option)));
      }
    }
    add_unique(hosts, host_entry(entry, where), where);
  }
  if (hosts.empty()) throw UsageError(fmt::format("--hostfile: no host in '{}'", one_line(path)));
  return hosts;
}

std::vector<std::string> fanout_command(FanoutLauncher launcher,
                                        const std::vector<std::string>& hosts,
                                        const std::vector<std::string>& command) {
  std::vector<std::string> argv;
  const std::string list = fmt::format("{}", fmt::join(hosts, ","));
  if (launcher == FanoutLauncher::mpirun) {
    argv = {"mpirun", "--host", hosts.empty() ? "localhost" : list,
            "-np", std::to_string(std::max<std::size_t>(1, hosts.size())),
            "--map-by", "ppr:1:node"};
  } else {
    argv = {"srun", "--ntasks-per-node=1"};
    if (!hosts.empty()) {
      argv.push_back(fmt::format("--nodes={}", hosts.size()));
      argv.push_back("--nodelist=" + list);
    }
  }
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

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
