// Test-only environment hooks: read only behind the MGBENCH_ENABLE_TEST_WORKLOADS switch.
#include "mgbench/core/test_hooks.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"

namespace mgbench::test_hooks {

bool enabled() {
  const char* v = std::getenv(kEnable);
  return v != nullptr && std::string(v) == "1";
}

std::optional<std::string> read(const char* name) {
  if (!enabled()) return std::nullopt;
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<double> read_number(const char* name, double lo, double hi) {
  const auto text = read(name);
  if (!text) return std::nullopt;
  const double value = parse_double(*text, name);
  if (value < lo || value > hi) {
    throw UsageError(fmt::format("{}={}: expected a number from {} to {}", name, *text, lo, hi));
  }
  return value;
}

std::map<std::string, std::string> active() {
  std::map<std::string, std::string> hooks;
  // The hooks that change what is measured. A failing journal (kJournalFailAfter) changes no
  // figure: a sweep it stopped must resume without it.
  for (const char* name :
       {kFakeDevices, kSlowdown, kTrainDoubleReduce, kRanksPerNode, kFakeTelemetry,
        kPeerAccessFail, kFakeGpuPerTask, kScreenFault, kAcceptLoad, kAcceptDoctor}) {
    if (auto value = read(name)) hooks[name] = *value;
  }
  return hooks;
}

namespace {

// A GPU number 0..4095, -1 when `text` is not one.
int gpu_index(const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  const int n = std::stoi(text);
  return n < 4096 ? n : -1;
}

ScreenFault parse_fault(const std::string& entry) {
  const auto bad = [&] {
    return UsageError(fmt::format("{}: invalid entry '{}': expected gpu:D@F, gpu:HOST:D@F, "
                                  "host:HOST@F, pair:HOST+HOST@F, link:I-J@F, link:HOST:I-J@F "
                                  "or hang:HOST",
                                  kScreenFault, entry));
  };
  ScreenFault f;
  std::string body = entry;
  const auto at = entry.rfind('@');
  if (at != std::string::npos) {
    f.factor = parse_double(entry.substr(at + 1), kScreenFault);
    if (!(f.factor >= 0 && f.factor <= kMaxSlowdown)) throw bad();
    body = entry.substr(0, at);
  }
  const auto colon = body.find(':');
  if (colon == std::string::npos) throw bad();
  f.kind = body.substr(0, colon);
  std::string rest = body.substr(colon + 1);
  if ((f.kind == "hang") != (at == std::string::npos) || rest.empty()) throw bad();
  const auto last = rest.rfind(':');
  if ((f.kind == "gpu" || f.kind == "link") && last != std::string::npos) {
    f.host = rest.substr(0, last);
    rest = rest.substr(last + 1);
  }
  if (f.kind == "gpu" || f.kind == "link") {
    const auto dash = rest.find('-');
    if ((f.kind == "link") != (dash != std::string::npos)) throw bad();
    f.gpu = gpu_index(rest.substr(0, dash));
    if (f.gpu < 0) throw bad();
    if (dash != std::string::npos) {
      f.peer = gpu_index(rest.substr(dash + 1));
      if (f.peer < 0 || f.peer == f.gpu) throw bad();
    }
  } else if (f.kind == "pair") {
    const auto plus = rest.find('+');
    if (plus == std::string::npos) throw bad();
    f.host = rest.substr(0, plus);
    f.other = rest.substr(plus + 1);
  } else if (f.kind == "host" || f.kind == "hang") {
    f.host = rest;
  } else {
    throw bad();
  }
  return f;
}

bool has(const std::vector<std::string>& hosts, const std::string& host) {
  return std::find(hosts.begin(), hosts.end(), host) != hosts.end();
}

}  // namespace

std::vector<ScreenFault> screen_faults() {
  std::vector<ScreenFault> out;
  const auto text = read(kScreenFault);
  if (!text || text->empty()) return out;
  std::size_t start = 0;
  while (start <= text->size()) {
    const auto comma = text->find(',', start);
    const std::string entry = text->substr(start, comma == std::string::npos ? std::string::npos
                                                                             : comma - start);
    out.push_back(parse_fault(entry));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

double screen_slowdown(const std::vector<ScreenFault>& faults, const std::vector<std::string>& hosts,
                       const std::string& host, int gpu, int peer) {
  double factor = 1.0;
  for (const auto& f : faults) {
    const bool here = f.host.empty() || f.host == host;
    bool hit = false;
    if (f.kind == "gpu") hit = here && (f.gpu == gpu || f.gpu == peer);
    if (f.kind == "host") hit = has(hosts, f.host);
    if (f.kind == "pair") hit = has(hosts, f.host) && has(hosts, f.other);
    if (f.kind == "link") {
      hit = here && peer >= 0 &&
            ((f.gpu == gpu && f.peer == peer) || (f.gpu == peer && f.peer == gpu));
    }
    if (hit) factor += f.factor;
  }
  return factor;
}

bool screen_hangs(const std::vector<ScreenFault>& faults, const std::vector<std::string>& hosts) {
  for (const auto& f : faults) {
    if (f.kind == "hang" && has(hosts, f.host)) return true;
  }
  return false;
}

}  // namespace mgbench::test_hooks
