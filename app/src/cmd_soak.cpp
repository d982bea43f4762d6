// `mgbench soak`: sustained load, windows over time, health counters and the "runs stably"
// verdict (docs/SOAK.md).
#include <string>
#include <vector>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/run/soak.hpp"

namespace mgbench {

int cmd_soak(int argc, char** argv) {
  const std::vector<std::string> given(argv, argv + argc);
  const SoakOptions options = parse_soak_options(argc, argv);
  if (parse_only()) return 0;
  set_log_verbosity(options.verbosity);
  // The report and the history as a sweep writes them; the verdict replaces the console table.
  SweepOptions sinks;
  sinks.verbosity = -1;
  sinks.no_report = options.no_report;
  return run_soak(options, given, sweep_sinks(sinks));
}

}  // namespace mgbench
