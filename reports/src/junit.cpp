// JUnit XML of a comparison (see junit.hpp).
#include "mgbench/reports/junit.hpp"

#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <vector>

#include "mgbench/core/error.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports {
namespace {

struct Case {
  std::string name, classname;
  double time = 0;
  std::string kind;  // "", "failure", "skipped"
  std::string message, body;
};

struct Suite {
  std::string name;
  std::vector<Case> cases;
  int count(const std::string& kind) const {
    int n = 0;
    for (const Case& c : cases) n += c.kind == kind ? 1 : 0;
    return n;
  }
  double time() const {
    double t = 0;
    for (const Case& c : cases) t += c.time;
    return t;
  }
};

std::string attr(const std::string& name, const std::string& value) {
  return " " + name + "=\"" + escape_xml(value) + "\"";
}

// xs:decimal (no exponent), 6 decimals.
std::string seconds(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(6) << (std::isfinite(s) && s > 0 ? s : 0.0);
  return out.str();
}

std::string case_name(const Params& params, int gpus) {
  return format_params(params) + " gpus=" + std::to_string(gpus);
}

// "690 TFLOP/s -> 654 TFLOP/s (-5.2 %)".
std::string values_text(const PointComparison& p) {
  return format_quantity(p.base_value, p.quantity.unit) + " -> " +
         format_quantity(p.new_value, p.quantity.unit) + " (" + format_change(p.change) + ")";
}

std::string p_text(const PointComparison& p) {
  return p.test ? format_p_value(p.test->p_value) : std::string("n/a (no raw samples)");
}

Case point_case(const Comparison& cmp, const PointComparison& p,
                const std::map<std::string, double>& wall) {
  Case c{case_name(p.params, p.gpus), p.workload, 0, "", "", ""};
  if (auto it = wall.find(p.key); it != wall.end()) c.time = it->second;
  const std::string what = p.quantity.metric.empty() ? "median time per op" : p.quantity.metric;
  const std::string numbers =
      what + ": " + cmp.base_label + " " + format_quantity(p.base_value, p.quantity.unit) + ", " +
      cmp.new_label + " " + format_quantity(p.new_value, p.quantity.unit) + ", change " +
      format_change(p.change) + ", threshold " + format_percent(p.threshold) + ", p-value " +
      p_text(p) + " (two-sided Mann-Whitney U, alpha " + format_p_value(cmp.options.alpha) + ")";
  c.body = "verdict " + std::string(to_string(p.verdict)) + ". " + numbers +
           (p.reason.empty() ? "" : ". " + p.reason);
  if (p.verdict == Verdict::slower) {
    c.kind = "failure";
    c.message = "slower: " + values_text(p) + ", p-value " + p_text(p);
  } else if (p.verdict == Verdict::noisy) {
    c.kind = "skipped";
    c.message = "noisy: " + (p.reason.empty() ? std::string("not judged") : p.reason);
  }
  return c;
}

Case not_compared_case(const Comparison& cmp, const NotCompared& p) {
  Case c{case_name(p.params, p.gpus), p.workload, 0, "skipped", "", ""};
  c.message = "not compared: " + cmp.base_label + " " + to_string(p.base_status) + ", " +
              cmp.new_label + " " + to_string(p.new_status) +
              (p.message.empty() ? "" : " (" + p.message + ")");
  return c;
}

std::vector<Suite> suites_of(const Comparison& cmp, const RunResult* next) {
  std::map<std::string, double> wall;
  if (next) {
    for (const PointResult& point : next->points) wall.emplace(point_key(point), point.wall_s);
  }
  std::vector<Suite> suites;
  auto suite = [&](const std::string& workload) -> Suite& {
    for (Suite& s : suites) {
      if (s.name == workload) return s;
    }
    suites.push_back(Suite{workload, {}});
    return suites.back();
  };
  for (const PointComparison& p : cmp.points)
    suite(p.workload).cases.push_back(point_case(cmp, p, wall));
  for (const NotCompared& p : cmp.not_compared) {
    suite(p.workload).cases.push_back(not_compared_case(cmp, p));
  }
  return suites;
}

void write_case(std::ostream& out, const Case& c) {
  out << "    <testcase" << attr("name", c.name) << attr("classname", c.classname)
      << attr("time", seconds(c.time)) << ">\n";
  if (c.kind == "failure") {
    out << "      <failure" << attr("message", c.message) << attr("type", "slower") << ">"
        << escape_xml(c.body) << "</failure>\n";
  } else if (c.kind == "skipped") {
    out << "      <skipped" << attr("message", c.message) << "/>\n";
  }
  if (!c.body.empty() && c.kind != "failure") {
    out << "      <system-out>" << escape_xml(c.body) << "</system-out>\n";
  }
  out << "    </testcase>\n";
}

// The environment changes as suite properties ("driver_version": "570.86 -> 580.65").
void write_properties(std::ostream& out, const Comparison& cmp) {
  out << "    <properties>\n"
      << "      <property" << attr("name", "base") << attr("value", cmp.base_path) << "/>\n"
      << "      <property" << attr("name", "new") << attr("value", cmp.new_path) << "/>\n";
  for (const EnvChange& e : cmp.environment) {
    out << "      <property" << attr("name", "environment." + e.path)
        << attr("value", e.before + " -> " + e.after) << "/>\n";
  }
  out << "    </properties>\n";
}

}  // namespace

void write_junit(const Comparison& cmp, const RunResult* next, std::ostream& out) {
  const std::vector<Suite> suites = suites_of(cmp, next);
  int tests = 0, failures = 0, skipped = 0;
  double time = 0;
  for (const Suite& s : suites) {
    tests += static_cast<int>(s.cases.size());
    failures += s.count("failure");
    skipped += s.count("skipped");
    time += s.time();
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"
      << attr("name", "mgbench compare " + cmp.base_label + " -> " + cmp.new_label)
      << attr("tests", std::to_string(tests)) << attr("failures", std::to_string(failures))
      << attr("errors", "0") << attr("skipped", std::to_string(skipped))
      << attr("time", seconds(time)) << ">\n";
  for (const Suite& s : suites) {
    out << "  <testsuite" << attr("name", s.name) << attr("tests", std::to_string(s.cases.size()))
        << attr("failures", std::to_string(s.count("failure"))) << attr("errors", "0")
        << attr("skipped", std::to_string(s.count("skipped"))) << attr("time", seconds(s.time()))
        << ">\n";
    write_properties(out, cmp);
    for (const Case& c : s.cases) write_case(out, c);
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

void JunitPrinter::print(const Printable& what, std::ostream& out) const {
  if (what.comparison == nullptr) throw UsageError("junit renders the comparison of two runs");
  write_junit(*what.comparison, &what.run, out);
}

}  // namespace mgbench::reports
