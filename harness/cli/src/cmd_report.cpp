// `mgbench report RESULTS.json [-o FILE] [--format html|md|csv|text|prom|gbench] [--redact]
// [--json]`: renders a results file, or writes it back (redacted) for sharing.
#include <cxxopts.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/reports/accept_render.hpp"
#include "mgbench/reports/console.hpp"
#include "mgbench/reports/csv.hpp"
#include "mgbench/reports/gbench_json.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/reports/prom.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/redact.hpp"
#include "mgbench/run/sweep.hpp"

namespace mgbench {
namespace {

std::string format_from_path(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".md" || ext == ".markdown") return "md";
  if (ext == ".csv") return "csv";
  if (ext == ".txt") return "text";
  if (ext == ".prom") return "prom";
  return "html";
}

// The formats written as one stream (to stdout without -o).
void write_to(const RunResult& run, const std::string& format, std::ostream& out) {
  if (format == "csv") {
    reports::write_csv(run, out);
  } else if (format == "prom") {
    reports::write_prom(run, out);
  } else if (format == "gbench") {
    reports::write_gbench_json(run, out);
  } else if (!run.accept.is_null()) {
    reports::render_accept_console(run, reports::Lang::en, out);  // an accept run: its checklist
  } else {
    reports::render_console(run, out);
  }
}

// "wrote PATH" after a file is written; nothing when the output went to stdout (-o -).
void say_wrote(const std::string& path) {
  if (!is_stdout_path(path)) std::cout << "wrote " << one_line(path) << '\n';
}

// The export path: the (redacted) results document, to share.
int export_results(const RunResult& run, const std::string& output) {
  if (output.empty()) {
    std::cout << dump_json(Json(run), 1) << '\n';
  } else {
    save_results(run, output);
    say_wrote(output);
  }
  return 0;
}

}  // namespace

int cmd_report(int argc, char** argv) {
  cxxopts::Options options("mgbench report",
                           "Render a results file as HTML (default), Markdown, CSV, text, "
                           "Prometheus text exposition (prom) or Google Benchmark JSON (gbench)");
  options.positional_help("RESULTS.json");
  // clang-format off
  options.add_options()
      ("o,output", "output file, - for stdout (default: report.<ext> beside the results; csv, "
       "text, prom and gbench: stdout)", cxxopts::value<std::string>())
      ("format", "html, md, csv, text, prom or gbench (default: from the output file's "
       "extension, else html)", cxxopts::value<std::string>())
      ("redact", "leave the host name, CUDA_/NCCL_/OMPI_/SLURM_ values, GPU serials and other "
       "processes out of the output (docs/SHARING.md)")
      ("json", "write the (redacted, with --redact) results document instead of a report")
      ("results", "results JSON file", cxxopts::value<std::vector<std::string>>())
      ("h,help", "show this help");
  // clang-format on
  options.parse_positional({"results"});
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  if (args.count("help")) throw HelpRequested(options.help());
  if (!args.count("results")) throw UsageError("missing RESULTS.json argument");
  const auto inputs = args["results"].as<std::vector<std::string>>();
  if (inputs.size() != 1) {
    throw UsageError("expected one results file, got " + std::to_string(inputs.size()));
  }
  const std::string output = args.count("output") ? args["output"].as<std::string>() : "";
  std::string format = args.count("format") ? args["format"].as<std::string>()
                                            : (output.empty() ? "html" : format_from_path(output));
  if (format == "markdown") format = "md";
  const std::vector<std::string> formats = {"html", "md", "csv", "text", "prom", "gbench"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    throw UsageError("unknown --format '" + format +
                     "' (expected html, md, csv, text, prom or gbench)");
  }
  if (format == "md" && is_stdout_path(output)) {
    throw UsageError("--format md writes its charts beside the report: give a file, not -o -");
  }
  if (parse_only()) return 0;

  RunResult loaded = load_results(inputs.front());
  refresh_derived(loaded);
  const RunResult run = args.count("redact") ? redact_run(loaded) : loaded;
  if (args.count("json")) return export_results(run, output);

  if (output.empty() && format != "html" && format != "md") {
    write_to(run, format, std::cout);
    return 0;
  }
  std::string path = output;
  if (path.empty()) {
    const auto dir = std::filesystem::path(inputs.front()).parent_path();
    path = (dir / (format == "md" ? "report.md" : "report.html")).string();
  }
  if (!run.accept.is_null() && (format == "html" || format == "md")) {
    // An accept run: its own report (`mgbench accept --from` renders it in another language).
    const reports::Lang en = reports::Lang::en;
    write_file_atomic(path, format == "html" ? reports::render_accept_html(run, en)
                                             : reports::render_accept_markdown(run, en));
  } else if (format == "html") {
    reports::write_html(run, path);
  } else if (format == "md") {
    reports::write_markdown(run, path);
  } else {
    write_file_atomic(path, [&](std::ostream& out) { write_to(run, format, out); });
  }
  say_wrote(path);
  return 0;
}

}  // namespace mgbench

