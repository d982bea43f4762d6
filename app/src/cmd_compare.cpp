// `mgbench compare BASE NEW [...]`: the regression gate between two runs, or the side-by-side
// offer comparison of three or more (or --offers). Exit 1 when a point is slower, 2 on bad
// input. The rules are in mgbench/compare.hpp.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "mgbench/core/json_text.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/analysis/prediction.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/compare_report.hpp"
#include "mgbench/reports/printer.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/results.hpp"
#include "predict_options.hpp"

namespace mgbench {
namespace {

const char* const kDescription =
    "Compares results files. With two: each point matched by workload, parameters and GPU "
    "count gets a verdict (same, faster, slower, noisy) from a two-sided Mann-Whitney U test "
    "on the raw samples AND a minimum effect on the median; exit 1 when any point is slower. "
    "With three or more (or --offers): the side-by-side offer table (throughput, scaling "
    "efficiency, per watt, per dollar).";

// Labels: --label values in input order, then the file name without extension; a generic
// or repeated name ("results") is replaced by the name of the directory holding the file.
std::vector<std::string> make_labels(const std::vector<std::string>& paths,
                                     const std::vector<std::string>& explicit_labels) {
  namespace fs = std::filesystem;
  if (explicit_labels.size() > paths.size()) {
    throw UsageError("--label given " + std::to_string(explicit_labels.size()) + " times for " +
                     std::to_string(paths.size()) + " results files");
  }
  for (const std::string& path : paths) {
    if (path.empty()) throw UsageError("an empty results file name");
  }
  std::vector<std::string> labels(paths.size());
  std::map<std::string, int> stem_count;
  for (const std::string& path : paths) stem_count[fs::path(path).stem().string()]++;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (i < explicit_labels.size()) {
      if (explicit_labels[i].empty()) throw UsageError("--label: empty label");
      labels[i] = explicit_labels[i];
      continue;
    }
    const fs::path path(paths[i]);
    std::string label = path.stem().string();
    const bool generic = label == "results" || label == "result" || label == "run" ||
                         label == "mgbench" || stem_count[label] > 1;
    if (generic) {
      const std::string dir = fs::absolute(path).parent_path().filename().string();
      if (!dir.empty()) label = dir;
    }
    labels[i] = label.empty() ? "run" + std::to_string(i + 1) : label;
  }
  // Still repeated (same directory name...): number them.
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i < explicit_labels.size()) {
      if (seen[labels[i]]++ > 0) throw UsageError("--label " + labels[i] + ": given twice");
      continue;
    }
    std::string label = labels[i];
    for (int n = 2; seen.count(label); ++n) label = labels[i] + "#" + std::to_string(n);
    seen[label]++;
    labels[i] = label;
  }
  return labels;
}

std::map<std::string, double> parse_prices(const std::vector<std::string>& items,
                                           const std::vector<std::string>& labels) {
  std::map<std::string, double> prices;
  for (const std::string& item : items) {
    const auto eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw UsageError("--price " + item + ": expected LABEL=USD_PER_GPU_HOUR, e.g. a=2.49");
    }
    const std::string label = item.substr(0, eq);
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) {
      std::string known;
      for (const std::string& l : labels) known += (known.empty() ? "" : ", ") + l;
      throw UsageError("--price " + item + ": no input is labelled '" + label +
                       "' (labels: " + known + ")");
    }
    const double usd = parse_double(item.substr(eq + 1), "--price " + label);
    if (!(usd > 0) || !std::isfinite(usd)) {
      throw UsageError("--price " + item + ": the price per GPU-hour must be a positive number");
    }
    if (!prices.emplace(label, usd).second) throw UsageError("--price " + label + ": given twice");
  }
  return prices;
}

double parse_percent(std::string text, const std::string& what, double max_percent) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  const double value = parse_double(text, what);
  if (!(value >= 0) || !(value < max_percent)) {
    throw UsageError(what + " " + text + ": expected a percentage in [0, " +
                     std::to_string(static_cast<int>(max_percent)) + ")");
  }
  return value / 100.0;
}

// --predict-gpus: a positive GPU count, at most kMaxPredictGpus.
int parse_predict_gpus(const std::string& text) {
  constexpr std::int64_t kMaxPredictGpus = 1 << 20;
  const std::int64_t n = parse_positive_int(text, "--predict-gpus");
  if (n > kMaxPredictGpus) {
    throw UsageError("invalid --predict-gpus '" + text + "': at most " +
                     std::to_string(kMaxPredictGpus));
  }
  return static_cast<int>(n);
}

// `--baseline a.json b.json ...` takes every following argument up to the next option;
// `--baseline=a.json,b.json` works too. Returns the remaining arguments.
std::vector<std::string> take_baselines(int argc, char** argv,
                                        std::vector<std::string>& baselines) {
  std::vector<std::string> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i > 0 && arg == "--baseline") {
      int taken = 0;
      while (i + 1 < argc && argv[i + 1][0] != '-') {
        baselines.push_back(argv[++i]);
        ++taken;
      }
      if (taken == 0) throw UsageError("--baseline: expected one or more results files");
    } else if (i > 0 && arg.rfind("--baseline=", 0) == 0) {
      for (const std::string& item : split_list(arg.substr(11), "--baseline")) {
        baselines.push_back(item);
      }
    } else {
      rest.push_back(arg);
    }
  }
  return rest;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);
}

cxxopts::Options compare_cli() {
  cxxopts::Options options("mgbench compare", kDescription);
  options.positional_help("BASE.json NEW.json [MORE.json...]");
  // clang-format off
  options.add_options()
      ("threshold", "Minimum effect on the median to call a point faster/slower, in percent",
       cxxopts::value<std::string>()->default_value("3"), "PCT")
      ("alpha", "Significance level of the two-sided Mann-Whitney U test",
       cxxopts::value<std::string>()->default_value("0.05"), "P")
      ("baseline", "Several runs of the BASE configuration: per-point threshold = "
       "max(threshold, 3 x relative stdev of the point's medians over BASE and these runs)",
       cxxopts::value<std::vector<std::string>>(), "RUN.json...")
      ("json", "Print the comparison as JSON on stdout (for CI)")
      ("label", "Name of the next input (repeatable, in input order; default: file name)",
       cxxopts::value<std::vector<std::string>>(), "NAME")
      ("price", "Price per GPU-hour of an offer, in USD (repeatable)",
       cxxopts::value<std::vector<std::string>>(), "LABEL=USD")
      ("offers", "Side-by-side offer comparison even with two inputs")
      ("predict-gpus", "Offer table: add per parameter set a row predicted on N GPUs from each "
       "offer's own results and links (mgbench predict), with --price its per dollar",
       cxxopts::value<std::string>(), "N")
      ("junit", "Also write the gate as JUnit XML to FILE: a testcase per matched point, a "
       "failure per slower point, noisy points skipped", cxxopts::value<std::string>(), "FILE")
      ("report", "Also write the comparison report to FILE (*.json unless an HTML writer is "
       "built in)", cxxopts::value<std::string>(), "FILE")
      ("env-all", "Environment diff: also list volatile fields (timestamps, serials, host name)")
      ("strict-throttle", "Count time at the software power cap as throttling (such points "
       "become noisy)")
      ("h,help", "Show this help")
      ("inputs", "Results files", cxxopts::value<std::vector<std::string>>());
  // clang-format on
  options.parse_positional({"inputs"});
  return options;
}

std::vector<std::string> strings(const cxxopts::ParseResult& parsed, const char* name) {
  return parsed.count(name) ? parsed[name].as<std::vector<std::string>>()
                            : std::vector<std::string>{};
}

// What `mgbench compare` was asked, validated.
struct CompareArgs {
  std::vector<std::string> inputs, labels, baselines;
  CompareOptions options;
  bool offers_mode = false;
  std::map<std::string, double> prices;
  std::optional<int> predict_gpus;
  bool json = false;
  std::string report;
  std::string junit;
};

CompareArgs parse_compare_args(int argc, char** argv) {
  CompareArgs a;
  std::vector<std::string> args = take_baselines(argc, argv, a.baselines);
  cxxopts::Options options = compare_cli();
  std::vector<char*> cargs;
  for (std::string& arg : args) cargs.push_back(arg.data());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const std::exception& e) {
    throw UsageError(std::string("compare: ") + e.what() + " (see mgbench compare --help)");
  }
  if (parsed.count("help")) {
    throw HelpRequested(
        options.help() +
        "\nExit codes: 0 no point slower, 1 a point is slower (regression), 2 bad input,\n"
        "5 inconclusive (nothing matched, every point noisy or not ok, or a slower point between\n"
        "runs with different test hooks).\n"
        "Per dollar = throughput / (price per GPU-hour x GPUs), e.g. TFLOP/s per $/h.\n");
  }
  a.inputs = strings(parsed, "inputs");
  if (a.inputs.size() < 2) {
    throw UsageError("compare needs at least two results files (BASE.json NEW.json), got " +
                     std::to_string(a.inputs.size()));
  }
  CompareOptions& opts = a.options;
  opts.threshold = parse_percent(parsed["threshold"].as<std::string>(), "--threshold", 100.0);
  opts.alpha = parse_double(parsed["alpha"].as<std::string>(), "--alpha");
  if (!(opts.alpha > 0 && opts.alpha < 1)) {
    throw UsageError("--alpha " + parsed["alpha"].as<std::string>() +
                     ": expected a number in (0, 1)");
  }
  opts.env_all = parsed.count("env-all") > 0;
  opts.env_hostname = opts.env_all;
  opts.power_cap_throttles = parsed.count("strict-throttle") > 0;
  a.offers_mode = a.inputs.size() >= 3 || parsed.count("offers");
  a.labels = make_labels(a.inputs, strings(parsed, "label"));
  const std::vector<std::string> price_items = strings(parsed, "price");
  if (!a.offers_mode && !price_items.empty()) {
    throw UsageError("--price applies to the offer comparison (three or more inputs, or --offers)");
  }
  if (a.offers_mode && !a.baselines.empty()) {
    throw UsageError("--baseline applies to the comparison of two runs, not to --offers");
  }
  a.prices = parse_prices(price_items, a.labels);
  if (parsed.count("predict-gpus")) {
    if (!a.offers_mode) {
      throw UsageError(
          "--predict-gpus applies to the offer comparison (three or more inputs, or --offers)");
    }
    a.predict_gpus = parse_predict_gpus(parsed["predict-gpus"].as<std::string>());
  }
  a.json = parsed.count("json") > 0;
  a.report = parsed.count("report") ? parsed["report"].as<std::string>() : "";
  a.junit = parsed.count("junit") ? parsed["junit"].as<std::string>() : "";
  if (a.offers_mode && !a.junit.empty()) {
    throw UsageError("--junit applies to the comparison of two runs, not to --offers");
  }
  return a;
}

// The comparison on stdout (JSON, or rendered by `render`), and the report file when asked.
template <typename Result, typename Render>
void emit(const CompareArgs& a, const Json& document, const std::vector<RunResult>& runs,
          const Result& result, Render render) {
  if (a.json) {
    std::cout << dump_json(document, 2) << "\n";
  } else {
    // Everything printed passes the core sanitiser once more (the renderers already clean
    // their cells): the text comes from files made on other machines.
    std::ostringstream text;
    render(text);
    std::cout << sanitize_text(text.str(), true);
  }
  if (a.report.empty()) return;
  std::vector<const RunResult*> run_ptrs;
  for (const RunResult& r : runs) run_ptrs.push_back(&r);
  reports::CompareReportInput input(result, run_ptrs, a.labels);
  input.document = &document;
  reports::write_compare_report_file(a.report, input);
}

// --predict-gpus N: the offer's prediction on N GPUs, on nodes the size of its own and from its
// own links; `why` it has none when its results cannot give one.
OfferPrediction predict_offer(const RunResult& run, int gpus, std::optional<Prediction>& slot) {
  OfferPrediction out;
  out.gpus = gpus;
  PredictOptions o;
  o.gpu_counts = {gpus};
  o.gpus_per_node = gpus_per_node_of(run);
  if (gpus > o.gpus_per_node && gpus % o.gpus_per_node != 0) {
    out.why = std::to_string(gpus) + " GPUs do not fill whole nodes of " +
              std::to_string(o.gpus_per_node);
    return out;
  }
  try {
    slot = predict(run, o, registry_cost);
  } catch (const UsageError& e) {
    out.why = e.what();  // the model's own reason (an unknown link: mgbench predict --intra)
    return out;
  }
  if (slot->series.empty()) {
    out.why = "no point of its results could be predicted";
    for (const std::string& note : slot->notes) out.why += "; " + note;
    return out;
  }
  out.prediction = &*slot;
  return out;
}

int run_offers(const CompareArgs& a, const std::vector<RunResult>& runs) {
  std::vector<Offer> offers;
  std::vector<std::optional<Prediction>> predictions(runs.size());
  std::vector<OfferPrediction> predicted;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Offer offer{a.labels[i], a.inputs[i], &runs[i], std::nullopt};
    if (auto it = a.prices.find(a.labels[i]); it != a.prices.end()) {
      offer.price_per_gpu_hour = it->second;
    }
    if (a.predict_gpus) {
      predicted.push_back(predict_offer(runs[i], *a.predict_gpus, predictions[i]));
    }
    offers.push_back(std::move(offer));
  }
  const OfferComparison cmp = compare_offers(offers, a.options, predicted);
  emit(a, offers_to_json(cmp), runs, cmp,
       [&](std::ostream& out) { reports::render_offers(out, cmp); });
  return static_cast<int>(ExitCode::ok);
}

// Two runs: the regression gate.
int run_gate(const CompareArgs& a, const std::vector<RunResult>& runs) {
  std::vector<RunResult> baselines;
  for (const std::string& path : a.baselines) {
    if (same_file(path, a.inputs[0])) continue;  // BASE counts once
    baselines.push_back(load_results(path));
  }
  NoiseMap noise;
  if (!baselines.empty()) {
    std::vector<const RunResult*> noise_runs = {&runs[0]};
    for (const RunResult& r : baselines) noise_runs.push_back(&r);
    noise = estimate_noise(noise_runs, a.options);
  }
  Comparison cmp =
      compare_runs(runs[0], runs[1], a.options, baselines.empty() ? nullptr : &noise);
  cmp.base_label = a.labels[0];
  cmp.new_label = a.labels[1];
  cmp.base_path = a.inputs[0];
  cmp.new_path = a.inputs[1];
  Json document = comparison_to_json(cmp);
  document["baselines"] = a.baselines;
  emit(a, document, runs, cmp,
       [&](std::ostream& out) { reports::render_comparison(out, cmp); });
  if (!a.junit.empty()) reports::printer("junit").write({runs[1], &cmp}, a.junit);
  if (const std::string why = inconclusive_reason(cmp); !why.empty()) {
    std::cerr << "mgbench compare: " << why << "\n";
  }
  return comparison_exit_code(cmp);
}

}  // namespace

int cmd_compare(int argc, char** argv) {
  const CompareArgs args = parse_compare_args(argc, argv);
  if (parse_only()) return 0;
  std::vector<RunResult> runs;
  runs.reserve(args.inputs.size());
  for (const std::string& path : args.inputs) runs.push_back(load_results(path));
  return args.offers_mode ? run_offers(args, runs) : run_gate(args, runs);
}

}  // namespace mgbench
