// `mgbench report RESULTS.json [-o FILE] [--format html|md|csv|text] [--redact] [--json]`:
// renders a results file, or writes it back (redacted) for sharing.
#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/reports/console.hpp"
#include "mgbench/reports/csv.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/redact.hpp"

namespace mgbench {
namespace {

std::string format_from_path(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".md" || ext == ".markdown") return "md";
  if (ext == ".csv") return "csv";
  if (ext == ".txt") return "text";
  return "html";
}

// The export path: the (redacted) results document, to share.
int export_results(const RunResult& run, const std::string& output) {
  if (output.empty()) {
    std::cout << dump_json(Json(run), 1) << '\n';
  } else {
    save_results(run, output);
    std::cout << "wrote " << one_line(output) << '\n';
  }
  return 0;
}

}  // namespace

int cmd_report(int argc, char** argv) {
  cxxopts::Options options("mgbench report",
                           "Render a results file as HTML (default), Markdown, CSV or text");
  options.positional_help("RESULTS.json");
  options.add_options()(
      "o,output", "output file (default: report.<ext> beside the results; CSV and text: stdout)",
      cxxopts::value<std::string>())(
      "format", "html, md, csv or text (default: from the output file's extension, else html)",
      cxxopts::value<std::string>())(
      "redact", "leave the host name, CUDA_/NCCL_/OMPI_/SLURM_ values, GPU serials and other "
                "processes out of the output (docs/SHARING.md)")(
      "json", "write the (redacted, with --redact) results document instead of a report")(
      "results", "results JSON file",
                                     cxxopts::value<std::vector<std::string>>())("h,help",
                                                                                 "show this help");
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
  if (format != "html" && format != "md" && format != "csv" && format != "text") {
    throw UsageError("unknown --format '" + format + "' (expected html, md, csv or text)");
  }

  const RunResult loaded = load_results(inputs.front());
  const RunResult run = args.count("redact") ? redact_run(loaded) : loaded;
  if (args.count("json")) return export_results(run, output);

  if (output.empty() && (format == "csv" || format == "text")) {
    if (format == "csv") {
      reports::write_csv(run, std::cout);
    } else {
      reports::render_console(run, std::cout);
    }
    return 0;
  }
  std::string path = output;
  if (path.empty()) {
    const auto dir = std::filesystem::path(inputs.front()).parent_path();
    path = (dir / (format == "md" ? "report.md" : "report.html")).string();
  }
  if (format == "html") {
    reports::write_html(run, path);
  } else if (format == "md") {
    reports::write_markdown(run, path);
  } else if (format == "csv") {
    reports::write_csv_file(run, path);
  } else {
    std::ostringstream text;
    reports::render_console(run, text, reports::ConsoleOptions{});
    write_file_atomic(path, text.str());
  }
  std::cout << "wrote " << one_line(path) << '\n';
  return 0;
}

}  // namespace mgbench

