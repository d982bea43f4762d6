// `mgbench list`: workloads with their parameters, defaults and requirements.
#include <iostream>
#include <ostream>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench {
namespace {

const char* kind_name(AxisKind kind) {
  switch (kind) {
    case AxisKind::integer: return "integer";
    case AxisKind::size: return "size";
    case AxisKind::text: return "text";
    case AxisKind::boolean: return "boolean";
  }
  return "text";
}

Json workloads_json() {
  Json out = Json::array();
  for (const auto& w : workloads()) {
    Json axes = Json::array();
    for (const auto& a : w.axes()) {
      axes.push_back({{"name", a.name},
                      {"kind", kind_name(a.kind)},
                      {"help", a.help},
                      {"quick", a.values_for(Profile::quick)},
                      {"standard", a.values_for(Profile::standard)},
                      {"full", a.values_for(Profile::full)},
                      {"allowed", a.allowed_values},
                      {"max", a.max_value > 0 ? Json(a.max_value) : Json()}});
    }
    out.push_back({{"name", w.name()},
                   {"summary", w.summary()},
                   {"formulas", w.formulas()},
                   {"requirements", w.requirements()},
                   {"notes", w.notes()},
                   {"min_gpus", w.min_gpus()},
                   {"throughput_metric", w.throughput_metric()},
                   {"throughput_unit", w.throughput_unit()},
                   {"axes", axes}});
  }
  return out;
}

// "  --param NAME KIND default V1,V2; quick ...; one of ...  - help".
void print_axis(std::ostream& out, const Axis& a) {
  out << fmt::format("  --param {:<10} {:<8} default {}", a.name, kind_name(a.kind),
                     a.standard_values.empty()
                         ? "(none)"
                         : fmt::format("{}", fmt::join(a.standard_values, ",")));
  if (!a.quick_values.empty()) out << fmt::format("; quick {}", fmt::join(a.quick_values, ","));
  if (!a.allowed_values.empty()) {
    out << fmt::format("; one of {}", fmt::join(a.allowed_values, ","));
  }
  if (a.max_value > 0) out << fmt::format("; at most {}", a.max_value);
  if (!a.help.empty()) out << "  - " << a.help;
  out << "\n";
}

void print_workloads(std::ostream& out) {
  for (const auto& w : workloads()) {
    out << fmt::format("{}: {}\n", w.name(), w.summary());
    if (!w.formulas().empty()) out << fmt::format("  measures: {}\n", w.formulas());
    out << fmt::format("  needs: {} GPU(s) or more{}{}\n", w.min_gpus(),
                       w.requirements().empty() ? "" : "; ", w.requirements());
    for (const auto& note : w.notes()) out << fmt::format("  note: {}\n", note);
    if (w.sustained_warmup() > 0) {
      out << fmt::format("  warm-up: {} s per point, so that clocks settle at the power limit "
                         "(--warmup overrides); samples of at least {} ms, so that the GPU "
                         "seldom idles\n",
                         w.sustained_warmup(), w.sustained_sample() * 1e3);
    }
    if (!w.throughput_metric().empty()) {
      out << fmt::format("  scaling metric: {} ({})\n", w.throughput_metric(),
                         w.throughput_unit());
    }
    for (const auto& a : w.axes()) print_axis(out, a);
    out << "\n";
  }
}

}  // namespace

int cmd_list(int argc, char** argv) {
  cxxopts::Options cli("mgbench list", "List workloads, their parameters and defaults.");
  cli.add_options()("json", "machine-readable output")("h,help", "this help");
  const cxxopts::ParseResult args = parse_command_line(cli, argc, argv);
  if (parse_only()) return 0;
  if (args.count("json")) {
    std::cout << workloads_json().dump(2) << "\n";
  } else {
    print_workloads(std::cout);
  }
  return 0;
}

}  // namespace mgbench
