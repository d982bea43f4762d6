#pragma once
// Markdown report: the same sections as the HTML report as text tables; charts are written
// as standalone .svg files in "<stem>_charts/" beside the .md file and linked, so the report
// renders in a Git forge or an issue.
#include <string>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench::reports {

// Writes `md_path` and its chart files; throws UsageError when they cannot be written.
// `prediction`: drawn on the efficiency charts (build_charts).
void write_markdown(const mgbench::RunResult& run, const std::string& md_path,
                    const Prediction* prediction = nullptr);
// The Markdown text alone; charts are linked as "<charts_dir>/<chart id>.svg".
std::string render_markdown_report(const mgbench::RunResult& run, const std::string& charts_dir,
                                   const Prediction* prediction = nullptr);
// "report.md" -> "report_charts".
std::string markdown_charts_dir_name(const std::string& md_path);

// "md": the report and its charts beside it (an accept run: its own report, in English). It
// writes files only: streams() is false.
class MarkdownPrinter final : public Printer {
 public:
  std::string name() const override { return "md"; }
  std::string default_file() const override { return "report.md"; }
  std::vector<std::string> extensions() const override { return {".md", ".markdown"}; }
  bool streams() const override { return false; }
  bool draws_charts() const override { return true; }
  void print(const Printable& what, std::ostream& out) const override;
  void write(const Printable& what, const std::string& path) const override;
};

}  // namespace mgbench::reports
