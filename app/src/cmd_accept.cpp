// `mgbench accept`: the acceptance run of a new server (docs/ACCEPT.md). Parses the options, hands
// the run layer its sinks (each stage's report; the accept report and the checklist in --lang)
// and returns the verdict's exit code: 0 ready, 1 not ready, 4 could not run.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/reports/accept_render.hpp"
#include "mgbench/run/accept.hpp"

namespace mgbench {

namespace {

RunSinks accept_sinks(reports::Lang lang, bool colour) {
  return {{"report",
           [lang](const RunResult& run, const std::string& dir) {
             reports::write_accept_reports(run, lang, dir);
             logging::info("report: {}/report.html ({}/report.md)", dir, dir);
           }},
          {"checklist", [lang, colour](const RunResult& run, const std::string&) {
             reports::render_accept_console(run, lang, std::cout, colour);
           }}};
}

// --from: the saved run's checklist and report again, in --lang, into --out (default: beside it).
int render_saved(const AcceptOptions& options, reports::Lang lang, bool colour) {
  const RunResult run = load_results(options.from);
  const AcceptResult result = accept_of(run);
  const std::string dir = options.out_dir.empty()
                              ? std::filesystem::absolute(options.from).parent_path().string()
                              : options.out_dir;
  for (const auto& sink : accept_sinks(lang, colour)) sink.write(run, dir);
  return accept_exit_code(result.verdict);
}

}  // namespace

int cmd_accept(int argc, char** argv) {
  const std::vector<std::string> given(argv, argv + argc);
  const AcceptOptions options = parse_accept_options(argc, argv);
  const reports::Lang lang = reports::lang_from_string(options.lang);
  if (parse_only()) return 0;
  set_log_verbosity(options.verbosity);
  const bool colour = ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  if (!options.from.empty()) return render_saved(options, lang, colour);
  SweepOptions stage;  // each stage writes its own report, no console tables
  stage.verbosity = -1;
  return run_accept(options, given, sweep_sinks(stage), accept_sinks(lang, colour));
}

}  // namespace mgbench
