// `mgbench accept`'s options, validated (and the criteria file read) before any device is probed.
#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/run/accept.hpp"
#include "mgbench/run/soak.hpp"

namespace mgbench {

namespace {

cxxopts::Options accept_cli() {
  cxxopts::Options options(
      "mgbench accept",
      "The acceptance run of a new server: configuration, communication first, single card vs "
      "all cards, a soak; one checklist line per item, pass/warn/fail, with the likely cause and "
      "the next step. Exit 0 ready, 1 not ready, 4 could not run (docs/ACCEPT.md).");
  // clang-format off
  options.add_options()
      ("gpus", "the GPUs to accept: all, or CUDA devices such as 0,1,2,3",
       cxxopts::value<std::string>()->default_value("all"))
      ("soak", "how long the soak runs, e.g. 10m, 2m, 90s; 0 skips it",
       cxxopts::value<std::string>()->default_value("10m"))
      ("criteria", "a criteria file (`name = value` lines, docs/ACCEPT.md); default: the "
                   "built-in criteria", cxxopts::value<std::string>())
      ("lang", "the language of the checklist and the report: en or zh",
       cxxopts::value<std::string>()->default_value("en"))
      ("out", "output directory (default results/<UTC timestamp>-<host>/)",
       cxxopts::value<std::string>())
      ("from", "render the checklist and the report of this accept results.json again (in "
               "--lang, into --out or beside it); nothing is run", cxxopts::value<std::string>())
      ("force", "start over in an --out directory that holds an earlier accept run")
      ("no-history", "do not record the stages' runs in the history database")
      ("db", "history database path", cxxopts::value<std::string>())
      ("v,verbose", "more logging")
      ("q,quiet", "only errors and the checklist")
      ("h,help", "this help");
  // clang-format on
  return options;
}

std::string str(const cxxopts::ParseResult& args, const char* name) {
  return args[name].as<std::string>();
}

// "0" (or 0s, 0m...) skips the soak; anything else is a duration of at least kAcceptMinSoakS.
double parse_soak(const std::string& text) {
  if (!text.empty() && text[0] == '0' && text.find_first_not_of("0.hms") == std::string::npos &&
      text.find_first_of("123456789") == std::string::npos) {
    return 0;
  }
  const double s = parse_duration(text, "--soak");
  if (s < kAcceptMinSoakS || s > kSoakMaxDurationS) {
    throw UsageError(fmt::format("invalid --soak '{}': 0 (no soak) or from {:g} s to {:.0f} h",
                                 text, kAcceptMinSoakS, kSoakMaxDurationS / 3600));
  }
  return s;
}

}  // namespace

AcceptOptions parse_accept_options(int argc, char** argv) {
  auto cli = accept_cli();
  const auto args = parse_command_line(cli, argc, argv);
  AcceptOptions o;
  const std::string gpus = str(args, "gpus");
  if (gpus != "all") o.devices = parse_device_list(gpus, -1);
  o.soak_s = parse_soak(str(args, "soak"));
  o.lang = str(args, "lang");
  if (args.count("out")) o.out_dir = str(args, "out");
  if (args.count("from")) o.from = str(args, "from");
  if (args.count("db")) o.db_path = str(args, "db");
  o.force = args.count("force") > 0;
  o.no_history = args.count("no-history") > 0;
  o.verbosity = args.count("quiet") ? -1 : args.count("verbose") ? 1 : 0;
  if (args.count("criteria")) {
    o.criteria_path = str(args, "criteria");
    if (!parse_only()) o.criteria = read_accept_criteria(o.criteria_path);
  }
  return o;
}

}  // namespace mgbench
