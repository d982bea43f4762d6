// `mgbench sweep`: parse, plan, run every group in workers, write results.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <cxxopts.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "mgbench/cli.hpp"
#include "mgbench/command.hpp"
#include "mgbench/error.hpp"
#include "mgbench/logging.hpp"
#include "mgbench/orchestrator.hpp"
#include "mgbench/plan.hpp"
#include "mgbench/sweep.hpp"
#include "mgbench/version.hpp"

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
    o.scaling = ScalingModeOption::weak;
  } else if (scaling == "strong") {
    o.scaling = ScalingModeOption::strong;
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
    o.settings.extra["test_slowdown"] = parse_double(slowdown, "MGBENCH_TEST_SLOWDOWN");
  }
  if (o.batch_auto) o.settings.extra["batch_auto"] = true;
  return o;
}

namespace {

void print_plan(const Plan& plan, std::ostream& out) {
  out << fmt::format("Plan: {} group(s), {} point(s), GPU counts {}, devices {}, estimated {:.0f} s\n",
                     plan.groups.size(), plan.total_points, fmt::join(plan.gpu_counts, ","),
                     fmt::join(plan.devices, ","), plan.estimated_s);
  for (const auto& g : plan.groups) {
    out << fmt::format("  group {:>3}  {:<12} GPUs {:<16} {:>4} point(s){}\n", g.index,
                       g.workload, fmt::join(g.devices, ","), g.points.size(),
                       g.purpose == "baseline" ? "  (baseline each)" : "");
    for (const auto& p : g.points) {
      out << fmt::format("      #{:<5} {}\n", p.index, describe_params(p.params));
    }
  }
}

int sweep_main(int argc, char** argv) {
  SweepOptions options = parse_sweep_options(argc, argv);
  std::map<std::size_t, PointResult> finished;
  std::vector<std::string> original_argv;
  for (int i = 0; i < argc; ++i) original_argv.emplace_back(argv[i]);
  if (!options.resume_dir.empty()) {
    // Resume: re-read the interrupted run's command line and finished points.
    const std::string dir = options.resume_dir;
    const JournalReplay replay = replay_journal(dir + "/journal.jsonl");
    if (!replay.header.is_object() || !replay.header.contains("argv")) {
      throw UsageError(fmt::format("'{}/journal.jsonl' has no header: cannot resume", dir));
    }
    original_argv = replay.header.at("argv").get<std::vector<std::string>>();
    std::vector<char*> args;
    for (auto& a : original_argv) args.push_back(a.data());
    options = parse_sweep_options(static_cast<int>(args.size()), args.data());
    options.resume_dir = dir;
    options.out_dir = dir;
    for (const auto& p : replay.points) {
      if (p.status != Status::skipped) finished[p.index] = p;
    }
    spdlog::info("resuming {}: {} point(s) already finished", dir, finished.size());
  }
  set_log_verbosity(options.verbosity);
  return run_sweep(options, original_argv, std::move(finished));
}

}  // namespace

int run_sweep(const SweepOptions& options, const std::vector<std::string>& argv,
              std::map<std::size_t, PointResult> finished) {
  // Devices: a dry run with --gpus needs no GPU at all.
  ProbeResult probed;
  int visible = -1;
  if (!(options.dry_run && !options.gpu_counts.empty())) {
    probed = probe(options.isolation, !options.skip_doctor && !options.dry_run);
    visible = static_cast<int>(probed.inventory.devices.size());
  }
  const Plan plan = make_plan(options, visible);
  if (options.dry_run) {
    print_plan(plan, std::cout);
    return 0;
  }

  RunResult run;
  run.tool = Json{{"name", "mgbench"},
                  {"version", MGBENCH_VERSION_STRING},
                  {"git_revision", MGBENCH_GIT_REVISION}};
  run.argv = argv;
  run.started_at = utc_now_iso8601();
  run.host = host_name();
  run.environment = probed.environment;
  run.environment["inventory"] = probed.inventory;
  run.doctor = probed.doctor;
  run.settings = options.settings;
  run.settings["isolation"] = options.isolation == Isolation::process ? "process" : "none";
  run.settings["scaling"] = options.scaling == ScalingModeOption::weak ? "weak" : "strong";
  run.settings["baseline_each"] = options.baseline_each;
  if (options.price_per_gpu_hour > 0) run.settings["price_per_gpu_hour"] = options.price_per_gpu_hour;
  run.plan = plan_to_json(plan);

  const std::string out_dir = options.out_dir.empty() ? default_out_dir() : options.out_dir;
  std::filesystem::create_directories(out_dir);
  const bool resuming = !options.resume_dir.empty();
  Journal journal(out_dir + "/journal.jsonl",
                  Json{{"argv", argv}, {"started_at", run.started_at}, {"plan", run.plan}},
                  resuming);
  spdlog::info("{} point(s) in {} group(s); results in {}", plan.total_points, plan.groups.size(),
               out_dir);

  install_interrupt_handlers();
  Orchestrator orchestrator(options, plan, &journal, std::move(finished));
  orchestrator.run();
  run.points = orchestrator.results();
  run.interrupted = orchestrator.interrupted();
  run.finished_at = utc_now_iso8601();
  return finish_sweep(options, run, out_dir);
}

MGBENCH_REGISTER_COMMAND("sweep", "run the benchmark sweep (see `mgbench sweep --help`)",
                         sweep_main);

}  // namespace mgbench
