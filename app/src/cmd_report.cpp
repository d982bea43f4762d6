// `mgbench report RESULTS.json [-o FILE] [--format html|md|csv|text|prom|gbench] [--redact]
// [--json] [--predict [--gpus-per-node N] [--intra L] [--inter L] [--nvls on|off|auto]]`: renders
// a results file with the printer of its format (reports/printer.hpp), with the prediction drawn
// on the efficiency chart when asked, or writes it back (redacted) for sharing.
#include <cxxopts.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/reports/printer.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/redact.hpp"
#include "mgbench/run/sweep.hpp"
#include "predict_options.hpp"

namespace mgbench {
namespace {

// The formats that render a run (every printer but the comparisons'): "html, md, ... or gbench".
std::string format_names() {
  std::vector<std::string> names;
  for (const auto& p : reports::printers()) {
    if (!p->needs_comparison()) names.push_back(p->name());
  }
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return text;
}

// --format, else the format of -o's extension, else html.
const reports::Printer& chosen_format(const cxxopts::ParseResult& args, const std::string& output) {
  if (args.count("format") != 0) {
    const std::string name = args["format"].as<std::string>();
    const reports::Printer* p = reports::find_printer(name);
    if (p == nullptr || p->needs_comparison()) {
      throw UsageError("unknown --format '" + name + "' (expected " + format_names() + ")");
    }
    return *p;
  }
  const std::string ext = std::filesystem::path(output).extension().string();
  for (const auto& p : reports::printers()) {
    const auto exts = p->extensions();
    if (!output.empty() && !p->needs_comparison() &&
        std::find(exts.begin(), exts.end(), ext) != exts.end()) {
      return *p;
    }
  }
  return reports::printer("html");
}

// "wrote PATH" after a file is written; nothing when the output went to stdout (-o -).
void say_wrote(const std::string& path) {
  if (!is_stdout_path(path)) std::cout << "wrote " << one_line(path) << '\n';
}

// --predict: the prediction of the run's scaling series on its own GPU counts and the next power
// of two, on nodes the size of the run's (unless given) and its links (unless given); nullopt
// without a scaling series to draw it beside.
std::optional<Prediction> report_prediction(const cxxopts::ParseResult& args,
                                            const RunResult& run) {
  PredictOptions o;
  o.gpus_per_node = gpus_per_node_of(run);
  read_machine_options(args, o);
  o.gpu_counts = series_gpu_counts(run, o.gpus_per_node);
  if (o.gpu_counts.empty()) return std::nullopt;
  return predict(run, o, registry_cost);
}

// Checks --predict and the machine options against the format before anything is read.
void check_predict_options(const cxxopts::ParseResult& args, const reports::Printer& format) {
  PredictOptions o;
  const bool machine = read_machine_options(args, o);
  if (!args.count("predict")) {
    if (machine) {
      throw UsageError("--gpus-per-node, --intra, --inter and --nvls apply with --predict");
    }
    return;
  }
  if (!format.draws_charts() || args.count("json")) {
    throw UsageError("--predict draws on the efficiency chart: use --format html or md");
  }
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
      ("format", format_names() + " (default: from the output file's extension, else html)",
       cxxopts::value<std::string>())
      ("redact", "leave the host name, CUDA_/NCCL_/OMPI_/SLURM_ values, GPU serials and other "
       "processes out of the output (docs/SHARING.md)")
      ("json", "write the (redacted, with --redact) results document instead of a report")
      ("predict", "draw the predicted efficiency (mgbench predict) dashed beside each measured "
       "scaling series, on its GPU counts and the next power of two; with the options below");
  add_machine_options(options, "the run's");
  options.add_options()
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
  const reports::Printer& format = chosen_format(args, output);
  if (!format.streams() && is_stdout_path(output)) {
    throw UsageError("--format " + format.name() +
                     " writes its charts beside the report: give a file, not -o -");
  }
  check_predict_options(args, format);
  if (parse_only()) return 0;

  RunResult loaded = load_results(inputs.front());
  refresh_derived(loaded);
  const RunResult run = args.count("redact") ? redact_run(loaded) : loaded;
  if (args.count("json")) return export_results(run, output);

  const std::optional<Prediction> prediction =
      args.count("predict") ? report_prediction(args, run) : std::nullopt;
  const reports::Printable what{run, nullptr, prediction ? &*prediction : nullptr};
  if (output.empty() && format.default_file().empty()) {
    format.print(what, std::cout);
    return 0;
  }
  const std::string path =
      output.empty()
          ? (std::filesystem::path(inputs.front()).parent_path() / format.default_file()).string()
          : output;
  format.write(what, path);
  say_wrote(path);
  return 0;
}

}  // namespace mgbench
