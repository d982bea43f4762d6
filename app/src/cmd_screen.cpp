// `mgbench screen`: find the bad GPU, link or node of a fleet (docs/SCREEN.md). Parses, hands
// the sinks to the run layer, and writes nothing itself.
#include <iostream>
#include <string>
#include <vector>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/reports/screen_render.hpp"
#include "mgbench/run/screen.hpp"

namespace mgbench {

namespace {

// The screen's table on the console, the report, and the exclude list when asked for.
RunSinks screen_sinks(const ScreenOptions& options) {
  SweepOptions reports;
  reports.verbosity = -1;  // the screen's own table replaces the sweep's tables
  reports.no_report = options.no_report;
  RunSinks sinks = sweep_sinks(reports);
  sinks.insert(sinks.begin(), {"screen table", [](const RunResult& run, const std::string&) {
                                 reports::render_screen_console(run, std::cout);
                                 std::cout.flush();
                               }});
  if (!options.exclude_list.empty()) {
    sinks.push_back({"exclude list", [path = options.exclude_list](const RunResult& run,
                                                                    const std::string&) {
                       const auto screen = reports::screen_of(run);
                       write_file_atomic(path, screen ? reports::screen_exclude_list(*screen)
                                                      : std::string());
                       logging::info("exclude list: {}", path);
                     }});
  }
  return sinks;
}

}  // namespace

int cmd_screen(int argc, char** argv) {
  const std::vector<std::string> given(argv, argv + argc);
  const ScreenOptions options = parse_screen_options(argc, argv);
  if (parse_only()) return 0;
  set_log_verbosity(options.verbosity);
  return run_screen(options, given, screen_sinks(options));
}

}  // namespace mgbench
