// The acceptance criteria: defaults, the `name = value` file format and its JSON form.
#include "mgbench/analysis/accept_criteria.hpp"

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/text.hpp"

namespace mgbench {
namespace {

constexpr std::size_t kMaxCriteriaBytes = 64 * 1024;

// One criterion: its name and the member it sets (a percentage or a severity).
struct Criterion {
  const char* name;
  double AcceptCriteria::*percent;
  Severity AcceptCriteria::*severity;
};

const std::vector<Criterion>& criteria_table() {
  static const std::vector<Criterion> table = {
      {"doctor_warnings", nullptr, &AcceptCriteria::doctor_warnings},
      {"below_expected_range", nullptr, &AcceptCriteria::below_expected_range},
      {"gemm_scaling_min", &AcceptCriteria::gemm_scaling_min, nullptr},
      {"train_scaling_min", &AcceptCriteria::train_scaling_min, nullptr},
      {"p2p_pair_min", &AcceptCriteria::p2p_pair_min, nullptr},
      {"throttling", nullptr, &AcceptCriteria::throttling},
      {"soak_degradation_max", &AcceptCriteria::soak_degradation_max, nullptr},
      {"soak_gpu_spread_max", &AcceptCriteria::soak_gpu_spread_max, nullptr},
      {"health_events", nullptr, &AcceptCriteria::health_events},
  };
  return table;
}

const Criterion* find_criterion(const std::string& name) {
  for (const auto& c : criteria_table()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

const char* severity_text(Severity s) { return s == Severity::fail ? "fail" : "warn"; }

// "90 %" or "90%" -> 0.9; throws std::invalid_argument with the reason.
double parse_percent(const std::string& value) {
  if (value.empty() || value.back() != '%') {
    throw std::invalid_argument("expected a percentage such as 90 %");
  }
  const std::string number = trim(value.substr(0, value.size() - 1));
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || !std::isfinite(v)) {
    throw std::invalid_argument("expected a percentage such as 90 %");
  }
  if (v < 0 || v > 100) throw std::invalid_argument("a percentage from 0 to 100");
  return v / 100.0;
}

Severity parse_severity(const std::string& value) {
  if (value == "warn") return Severity::warn;
  if (value == "fail") return Severity::fail;
  throw std::invalid_argument("expected warn or fail");
}

void set_value(AcceptCriteria& c, const Criterion& criterion, const std::string& value) {
  if (criterion.percent != nullptr) {
    c.*criterion.percent = parse_percent(value);
  } else {
    c.*criterion.severity = parse_severity(value);
  }
}

std::string known_names() {
  std::string names;
  for (const auto& c : criteria_table()) names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

}  // namespace

const std::vector<std::string>& accept_criterion_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& c : criteria_table()) out.emplace_back(c.name);
    return out;
  }();
  return names;
}

std::vector<std::pair<std::string, std::string>> accept_criteria_lines(const AcceptCriteria& c) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& criterion : criteria_table()) {
    const std::string value = criterion.percent != nullptr
                                  ? fmt::format("{:g} %", c.*criterion.percent * 100)
                                  : severity_text(c.*criterion.severity);
    out.emplace_back(criterion.name, value);
  }
  return out;
}

AcceptCriteria parse_accept_criteria(const std::string& text, const std::string& source) {
  AcceptCriteria c;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    const std::string where = fmt::format("{} line {}: ", source, line);
    const std::string content = trim(raw.substr(0, raw.find('#')));
    if (content.empty()) continue;
    const auto eq = content.find('=');
    if (eq == std::string::npos) {
      throw UsageError(where + "expected `name = value`, got '" + one_line(content) + "'");
    }
    const std::string name = trim(content.substr(0, eq));
    const std::string value = trim(content.substr(eq + 1));
    const Criterion* criterion = find_criterion(name);
    if (criterion == nullptr) {
      throw UsageError(where + "unknown criterion '" + one_line(name) +
                       "' (known: " + known_names() + ")");
    }
    if (!seen.insert(name).second) throw UsageError(where + name + " is given twice");
    try {
      set_value(c, *criterion, value);
    } catch (const std::invalid_argument& e) {
      throw UsageError(where + fmt::format("{} = '{}': {}", name, one_line(value), e.what()));
    }
  }
  return c;
}

AcceptCriteria read_accept_criteria(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the criteria file '" + one_line(path) + "'");
  std::string text;
  text.resize(kMaxCriteriaBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxCriteriaBytes) {
    throw UsageError(fmt::format("the criteria file '{}' is larger than {} KiB", one_line(path),
                                 kMaxCriteriaBytes / 1024));
  }
  return parse_accept_criteria(text, path);
}

void to_json(Json& j, const AcceptCriteria& c) {
  j = Json::object();
  for (const auto& criterion : criteria_table()) {
    if (criterion.percent != nullptr) {
      j[criterion.name] = c.*criterion.percent;
    } else {
      j[criterion.name] = severity_text(c.*criterion.severity);
    }
  }
}

void from_json(const Json& j, AcceptCriteria& c) {
  if (!j.is_object()) throw UsageError("accept criteria: expected an object");
  c = AcceptCriteria{};
  for (const auto& criterion : criteria_table()) {
    if (!j.contains(criterion.name)) continue;
    const Json& v = j.at(criterion.name);
    const bool ok = criterion.percent != nullptr
                        ? v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1
                        : v.is_string() && (v == "warn" || v == "fail");
    if (!ok) throw UsageError(std::string("accept criteria: bad ") + criterion.name);
    if (criterion.percent != nullptr) {
      c.*criterion.percent = v.get<double>();
    } else {
      c.*criterion.severity = parse_severity(v.get<std::string>());
    }
  }
}

}  // namespace mgbench
