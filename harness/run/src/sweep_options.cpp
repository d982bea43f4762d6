// `mgbench sweep`'s options: what the user asked for, validated before any device is probed.
#include <cstdlib>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/run/sweep.hpp"

namespace mgbench {

namespace {

cxxopts::Options sweep_cli() {
  cxxopts::Options options("mgbench sweep",
                           "Run workloads on 1..N GPUs and batch sizes; record throughput, "
                           "telemetry and scaling efficiency.");
  options.add_options()
      ("gpus", "GPU counts, e.g. 1,2,4,8 (default: powers of two up to the visible count, "
               "plus the count)", cxxopts::value<std::string>())
      ("devices", "physical CUDA devices to use, e.g. 0,1,2,3 (default: all visible)",
       cxxopts::value<std::string>())
      ("workloads", "workloads, e.g. gemm,allreduce (default: all; see `mgbench list`)",
       cxxopts::value<std::string>())
      ("batch-sizes", "per-GPU batch sizes for workloads with a batch axis, or `auto` (grow x2 "
                      "until out of memory)", cxxopts::value<std::string>())
      ("dtypes", "data types, e.g. bf16,fp32", cxxopts::value<std::string>())
      ("param", "override a workload axis: NAME=V1,V2 (repeatable)",
       cxxopts::value<std::vector<std::string>>())
      ("profile", "quick | standard | full", cxxopts::value<std::string>()->default_value("standard"))
      ("min-samples", "minimum samples per point", cxxopts::value<std::string>())
      ("min-time", "minimum measured seconds per point", cxxopts::value<std::string>())
      ("max-noise", "relative stdev target in percent (default 0.5)", cxxopts::value<std::string>())
      ("max-time-per-point", "seconds of sampling before a point stops as noisy",
       cxxopts::value<std::string>())
      ("out", "output directory (default results/<UTC timestamp>-<host>/)",
       cxxopts::value<std::string>())
      ("json", "also write the results JSON here", cxxopts::value<std::string>())
      ("csv", "also write one CSV row per point here", cxxopts::value<std::string>())
      ("dry-run", "print the plan and run nothing")
      ("isolation", "process (a worker per group) | none (in-process, debugging)",
       cxxopts::value<std::string>()->default_value("process"))
      ("group-timeout", "kill a group's worker after this many seconds without progress",
       cxxopts::value<std::string>())
      ("resume", "continue the interrupted sweep in this output directory",
       cxxopts::value<std::string>())
      ("scaling", "weak (per-GPU batch fixed) | strong (global batch fixed)",
       cxxopts::value<std::string>()->default_value("weak"))
      ("baseline", "`each`: also run the 1-GPU points on every selected GPU",
       cxxopts::value<std::string>())
      ("telemetry-interval", "NVML sampling period in milliseconds (default 100)",
       cxxopts::value<std::string>())
      ("no-telemetry", "do not sample NVML")
      ("skip-doctor", "skip the cheap doctor checks before the sweep")
      ("no-report", "do not write report.html / report.md")
      ("no-history", "do not record the run in the history database")
      ("db", "history database path", cxxopts::value<std::string>())
      ("price-per-gpu-hour", "USD per GPU-hour, for throughput per dollar",
       cxxopts::value<std::string>())
      ("v,verbose", "more logging")
      ("q,quiet", "only errors and the final table")
      ("h,help", "this help");
  return options;
}

}  // namespace

SweepOptions parse_sweep_options(int argc, char** argv) {
  auto cli = sweep_cli();
  const cxxopts::ParseResult args = parse_command_line(cli, argc, argv);
  SweepOptions o;
  auto str = [&](const char* name) { return args[name].as<std::string>(); };
  o.verbosity = args.count("quiet") ? -1 : (args.count("verbose") ? 1 : 0);
  o.profile = profile_from_string(str("profile"));
  switch (o.profile) {
    case Profile::quick:
      o.settings.stopping = {5, 0.1, 1.0, 0.005, 100000};
      break;
    case Profile::standard:
      o.settings.stopping = {10, 0.5, 3.0, 0.005, 100000};
      break;
    case Profile::full:
      o.settings.stopping = {20, 1.0, 10.0, 0.005, 100000};
      break;
  }
  o.settings.profile = to_string(o.profile);
  if (args.count("gpus")) o.gpu_counts = parse_gpu_counts(str("gpus"), -1);
  if (args.count("devices")) o.devices = parse_device_list(str("devices"), -1);
  if (args.count("workloads")) o.workloads = split_list(str("workloads"), "--workloads");
  if (args.count("batch-sizes")) {
    if (str("batch-sizes") == "auto") {
      o.batch_auto = true;
    } else {
      o.batch_sizes = split_list(str("batch-sizes"), "--batch-sizes");
      for (const auto& b : o.batch_sizes) parse_positive_int(b, "--batch-sizes value");
    }
  }
  if (args.count("dtypes")) o.dtypes = split_list(str("dtypes"), "--dtypes");
  if (args.count("param")) {
    // cxxopts splits vector values at commas: glue "a=1", "2" back into "a=1,2".
    std::vector<std::string> items;
    for (const auto& piece : args["param"].as<std::vector<std::string>>()) {
      if (piece.find('=') == std::string::npos && !items.empty()) {
        items.back() += "," + piece;
      } else {
        items.push_back(piece);
      }
    }
    for (const auto& item : items) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw UsageError(fmt::format("invalid --param '{}': expected NAME=V1,V2", item));
      }
      o.param_overrides[item.substr(0, eq)] =
          split_list(item.substr(eq + 1), "--param " + item.substr(0, eq));
    }
  }
  if (args.count("min-samples")) {
    o.settings.stopping.min_samples =
        static_cast<std::size_t>(parse_positive_int(str("min-samples"), "--min-samples"));
  }
  if (args.count("min-time")) {
    o.settings.stopping.min_time_s = parse_double(str("min-time"), "--min-time");
    if (o.settings.stopping.min_time_s < 0) throw UsageError("invalid --min-time: must be >= 0");
  }
  if (args.count("max-noise")) {
    std::string text = str("max-noise");
    if (!text.empty() && text.back() == '%') text.pop_back();
    const double pct = parse_double(text, "--max-noise");
    if (pct <= 0 || pct >= 100) {
      throw UsageError(fmt::format("invalid --max-noise '{}': expected a percentage in (0, 100)",
                                   str("max-noise")));
    }
    o.settings.stopping.max_noise = pct / 100.0;
  }
  if (args.count("max-time-per-point")) {
    o.settings.stopping.max_time_s = parse_double(str("max-time-per-point"), "--max-time-per-point");
    if (o.settings.stopping.max_time_s <= 0) {
      throw UsageError("invalid --max-time-per-point: must be > 0");
    }
  }
  if (args.count("out")) o.out_dir = str("out");
  if (args.count("json")) o.json_path = str("json");
  if (args.count("csv")) o.csv_path = str("csv");
  if (args.count("resume")) o.resume_dir = str("resume");
  o.dry_run = args.count("dry-run") > 0;
  const std::string isolation = str("isolation");
  if (isolation == "process") {
    o.isolation = Isolation::process;
  } else if (isolation == "none") {
    o.isolation = Isolation::none;
  } else {
    throw UsageError(fmt::format("invalid --isolation '{}': expected process or none", isolation));
  }
  if (args.count("group-timeout")) {
    o.settings.group_timeout_s = parse_double(str("group-timeout"), "--group-timeout");
    if (o.settings.group_timeout_s <= 0) throw UsageError("invalid --group-timeout: must be > 0");
  } else {
    o.settings.group_timeout_s = std::max(300.0, 20 * o.settings.stopping.max_time_s);
  }
  const std::string scaling = str("scaling");
  if (scaling == "weak") {
    o.scaling = ScalingMode::weak;
  } else if (scaling == "strong") {
    o.scaling = ScalingMode::strong;
  } else {
    throw UsageError(fmt::format("invalid --scaling '{}': expected weak or strong", scaling));
  }
  if (args.count("baseline")) {
    if (str("baseline") != "each") {
      throw UsageError(fmt::format("invalid --baseline '{}': expected each", str("baseline")));
    }
    o.baseline_each = true;
  }
  if (args.count("telemetry-interval")) {
    o.settings.telemetry_interval_s =
        static_cast<double>(parse_positive_int(str("telemetry-interval"), "--telemetry-interval")) /
        1000.0;
  }
  o.settings.telemetry = args.count("no-telemetry") == 0;
  o.skip_doctor = args.count("skip-doctor") > 0;
  o.no_report = args.count("no-report") > 0;
  o.no_history = args.count("no-history") > 0;
  if (args.count("db")) o.db_path = str("db");
  if (args.count("price-per-gpu-hour")) {
    o.price_per_gpu_hour = parse_double(str("price-per-gpu-hour"), "--price-per-gpu-hour");
    if (o.price_per_gpu_hour <= 0) throw UsageError("invalid --price-per-gpu-hour: must be > 0");
  }
  if (const char* slowdown = std::getenv("MGBENCH_TEST_SLOWDOWN")) {
    o.settings.test_slowdown = parse_double(slowdown, "MGBENCH_TEST_SLOWDOWN");
  }
  o.settings.batch_auto = o.batch_auto;
  return o;
}

}  // namespace mgbench
