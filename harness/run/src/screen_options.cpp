// `mgbench screen`'s options, validated before any node is probed.
#include <algorithm>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/run/screen.hpp"

namespace mgbench {

namespace {

cxxopts::Options screen_cli() {
  cxxopts::Options options(
      "mgbench screen",
      "Find the slow GPU, link or node of a fleet: per-GPU work on every node at once, each "
      "node's GPUs together, pairs of nodes, each figure against its peers (docs/SCREEN.md).");
  add_launch_options(options);
  options.add_options()
      ("stages", "stages to run, e.g. 1,2 (default 1,2,3)", cxxopts::value<std::string>())
      ("threshold", "flag a figure more than this many percent below its peers (default 5)",
       cxxopts::value<std::string>())
      ("group-timeout", "seconds without progress after which a launch is ended and its node "
                        "(or pair) reported (default 120)", cxxopts::value<std::string>())
      ("parallel", "launches at once, at most (default 32)", cxxopts::value<std::string>())
      ("exclude-list", "write the hosts and GPUs to leave out here, one per line (host or "
                       "host:gpu; docs/SCREEN.md)", cxxopts::value<std::string>())
      ("dry-run", "print the schedule and its estimated time; run nothing")
      ("out", "output directory (default results/<UTC timestamp>-<host>/)",
       cxxopts::value<std::string>())
      ("json", "also write the results JSON here", cxxopts::value<std::string>())
      ("no-telemetry", "do not sample NVML")
      ("no-report", "do not write report.html / report.md")
      ("no-history", "do not record the run in the history database")
      ("db", "history database path", cxxopts::value<std::string>())
      ("v,verbose", "more logging")
      ("q,quiet", "only errors and the table")
      ("h,help", "this help");
  return options;
}

std::string str(const cxxopts::ParseResult& args, const char* name) {
  return args[name].as<std::string>();
}

std::vector<int> parse_stages(const std::string& text) {
  std::vector<int> stages;
  for (const auto& item : split_list(text, "--stages")) {
    if (item != "1" && item != "2" && item != "3") {
      throw UsageError(fmt::format("invalid --stages '{}': expected stages 1, 2 and 3, e.g. 1,2",
                                   text));
    }
    const int stage = item[0] - '0';
    if (std::find(stages.begin(), stages.end(), stage) == stages.end()) stages.push_back(stage);
  }
  std::sort(stages.begin(), stages.end());
  return stages;
}

// --NAME as a number in (lo, hi].
double number_in(const cxxopts::ParseResult& args, const char* name, double lo, double hi) {
  const double value = parse_double(str(args, name), std::string("--") + name);
  if (!(value > lo && value <= hi)) {
    throw UsageError(fmt::format("invalid --{} '{}': expected a number above {} and at most {}",
                                 name, str(args, name), lo, hi));
  }
  return value;
}

// Short points: the quick profile's stopping rule (sustained workloads keep their warm-up).
RunSettings screen_settings() {
  RunSettings s;
  s.stopping = {10, 0.2, 2.0, 0.005, 100000};
  s.profile = "quick";
  s.group_timeout_s = 120;
  return s;
}

}  // namespace

ScreenOptions parse_screen_options(int argc, char** argv) {
  auto cli = screen_cli();
  const cxxopts::ParseResult args = parse_command_line(cli, argc, argv);
  ScreenOptions o;
  o.verbosity = args.count("quiet") ? -1 : (args.count("verbose") ? 1 : 0);
  o.launch = read_launch_options(args, default_launcher());
  if (args.count("stages")) o.stages = parse_stages(str(args, "stages"));
  if (args.count("threshold")) {
    std::string text = str(args, "threshold");
    if (!text.empty() && text.back() == '%') text.pop_back();
    const double pct = parse_double(text, "--threshold");
    if (!(pct > 0 && pct < 100)) {
      throw UsageError(fmt::format("invalid --threshold '{}': expected a percentage in (0, 100)",
                                   str(args, "threshold")));
    }
    o.thresholds.gap = pct / 100.0;
  }
  o.settings = screen_settings();
  if (args.count("group-timeout")) o.settings.group_timeout_s = number_in(args, "group-timeout", 0, 1e6);
  if (args.count("parallel")) {
    o.parallel = static_cast<int>(number_in(args, "parallel", 0, 4096));
    if (std::to_string(o.parallel) != str(args, "parallel")) {
      throw UsageError(fmt::format("invalid --parallel '{}': expected a whole number",
                                   str(args, "parallel")));
    }
  }
  o.settings.telemetry = args.count("no-telemetry") == 0;
  if (args.count("exclude-list")) o.exclude_list = str(args, "exclude-list");
  o.dry_run = args.count("dry-run") > 0;
  if (args.count("out")) o.out_dir = str(args, "out");
  if (args.count("json")) o.json_path = str(args, "json");
  o.no_report = args.count("no-report") > 0;
  o.no_history = args.count("no-history") > 0;
  if (args.count("db")) o.db_path = str(args, "db");
  (void)test_hooks::screen_faults();  // a malformed fault hook is refused before anything runs
  return o;
}

}  // namespace mgbench
