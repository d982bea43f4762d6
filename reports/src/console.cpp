// Console tables at the end of a sweep.
#include "mgbench/reports/console.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "mgbench/reports/accept_render.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/peaks.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {

void render_console(const RunResult& run, std::ostream& out) {
  ConsoleOptions options;
  options.colour =
      &out == &std::cout && ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
  render_console(run, out, options);
}

namespace {

// Which datasheet row "% of peak" uses, and the values below what their GPU model usually
// reaches.
void render_peak_lines(const RunResult& run, std::ostream& out) {
  const std::string note = gpu_model_note(run);
  if (!note.empty()) out << '\n' << note << '\n';
  const auto below = below_range_lines(run);
  if (below.empty()) return;
  out << "\nBelow what this GPU model usually reaches\n";
  for (const auto& line : below) out << "  - " << line << '\n';
}

}  // namespace

void render_console(const RunResult& run, std::ostream& out, const ConsoleOptions& options) {
  TextStyle style;
  style.colour = options.colour;
  style.indent = 2;
  bool first = true;
  for (const auto& workload : workloads_of(run)) {
    for (const auto& table : workload_tables(run, workload)) {
      if (!first) out << '\n';
      first = false;
      render_text(table, out, style);
    }
  }
  if (run.points.empty()) out << "No points were run.\n";
  const Table verdicts = verdicts_table(run);
  if (!verdicts.empty() || !verdicts.notes.empty()) {
    out << "\nVerdicts\n";
    for (std::size_t i = 0; i < verdicts.rows.size(); ++i) {
      const auto& row = verdicts.rows[i];
      // Columns after drop_empty_columns: find by header.
      std::string text, anomalies;
      for (std::size_t c = 0; c < verdicts.columns.size() && c < row.size(); ++c) {
        if (verdicts.columns[c].header == "verdict") text = row[c];
        if (verdicts.columns[c].header == "anomalies") anomalies = row[c];
      }
      out << "  - " << one_line(text) << '\n';
      if (!anomalies.empty()) {
        out << "    " << (options.colour ? "\x1b[33m" : "") << "anomalies: " << one_line(anomalies)
            << (options.colour ? "\x1b[0m" : "") << '\n';
      }
    }
    for (const auto& note : verdicts.notes) out << "  - " << one_line(note) << '\n';
  }
  render_peak_lines(run, out);
  out << '\n'
      << "Points: " << status_counts(run) << (run.interrupted ? " (interrupted)" : "") << '\n';
}

void ConsolePrinter::print(const Printable& what, std::ostream& out) const {
  if (what.run.accept.is_null()) {
    render_console(what.run, out);
  } else {
    render_accept_console(what.run, Lang::en, out);  // an accept run: its checklist
  }
}

}  // namespace mgbench::reports
