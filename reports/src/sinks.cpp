// The run sinks reports/ provides to `mgbench sweep` (harness/include/mgbench/sinks.hpp):
// console tables on stdout, --csv FILE, and report.html + report.md in the output directory
// (unless --no-report).
#include <spdlog/spdlog.h>

#include <iostream>

#include "mgbench/reports/console.hpp"
#include "mgbench/reports/csv.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/sinks.hpp"

namespace mgbench::reports {
namespace {

void console_sink(const RunResult& run, const SinkContext& ctx) {
  if (ctx.options.verbosity < 0) return;  // --quiet
  std::cout << '\n';
  render_console(run, std::cout);
  std::cout.flush();
}

void csv_sink(const RunResult& run, const SinkContext& ctx) {
  if (ctx.options.csv_path.empty()) return;
  write_csv_file(run, ctx.options.csv_path);
  spdlog::info("csv: {}", ctx.options.csv_path);
}

void report_sink(const RunResult& run, const SinkContext& ctx) {
  if (ctx.options.no_report || ctx.out_dir.empty()) return;
  const std::string html = ctx.out_dir + "/report.html";
  const std::string md = ctx.out_dir + "/report.md";
  write_html(run, html);
  write_markdown(run, md);
  spdlog::info("report: {} ({})", html, md);
}

}  // namespace
}  // namespace mgbench::reports

MGBENCH_REGISTER_RUN_SINK("console tables", 10, mgbench::reports::console_sink);
MGBENCH_REGISTER_RUN_SINK("csv", 20, mgbench::reports::csv_sink);
MGBENCH_REGISTER_RUN_SINK("report", 30, mgbench::reports::report_sink);
