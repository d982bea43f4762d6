// `mgbench soak`'s options, validated before any device is probed.
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/run/soak.hpp"

namespace mgbench {

namespace {

cxxopts::Options soak_cli() {
  cxxopts::Options options("mgbench soak",
                           "Sustained load on every GPU of a set; throughput, temperature, "
                           "power, clocks and throttling per window; the \"runs stably\" verdict.");
  options.add_options()
      ("duration", "how long, e.g. 10m, 9m30s, 90s (at most 720h)",
       cxxopts::value<std::string>()->default_value("10m"))
      ("window", "measurement window, e.g. 10s (at least 0.1s, at most 10000 windows)",
       cxxopts::value<std::string>()->default_value("10s"))
      ("workload", "the load: gemm, train_step or allreduce",
       cxxopts::value<std::string>()->default_value("gemm"))
      ("gpus", "CUDA devices to load, e.g. 0 or 0,1,2,3 (default: all visible)",
       cxxopts::value<std::string>())
      ("param", "override the load's parameter: NAME=VALUE (repeatable)",
       cxxopts::value<std::vector<std::string>>())
      ("telemetry-interval", "NVML sampling period in milliseconds (default 100)",
       cxxopts::value<std::string>())
      ("out", "output directory (default results/<UTC timestamp>-<host>/)",
       cxxopts::value<std::string>())
      ("json", "also write the results JSON here", cxxopts::value<std::string>())
      ("no-report", "do not write report.html / report.md")
      ("no-history", "do not record the run in the history database")
      ("db", "history database path", cxxopts::value<std::string>())
      ("v,verbose", "more logging")
      ("q,quiet", "only errors and the verdict")
      ("h,help", "this help");
  return options;
}

std::string str(const cxxopts::ParseResult& args, const char* name) {
  return args[name].as<std::string>();
}

void take_params(const std::vector<std::string>& items, SoakOptions& o) {
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw UsageError(fmt::format("invalid --param '{}': expected NAME=VALUE", item));
    }
    o.param_overrides[item.substr(0, eq)] = {item.substr(eq + 1)};
  }
}

}  // namespace

double parse_duration(const std::string& text, const std::string& what) {
  const auto bad = [&] {
    return UsageError(fmt::format("invalid {} '{}': expected e.g. 10m, 9m30s, 90s or 1h",
                                  what, text));
  };
  double total = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) {
      ++j;
    }
    if (j == i) throw bad();
    double value = 0;
    try {
      std::size_t used = 0;
      value = std::stod(text.substr(i, j - i), &used);
      if (used != j - i) throw bad();  // "1.2.3"
    } catch (const std::invalid_argument&) {
      throw bad();
    } catch (const std::out_of_range&) {
      throw bad();
    }
    double unit = 1;
    if (j < text.size()) {
      const char u = text[j++];
      unit = u == 'h' ? 3600 : u == 'm' ? 60 : u == 's' ? 1 : -1;
      if (unit < 0) throw bad();
    } else if (any) {
      throw bad();  // "9m30": the last number needs its unit too
    }
    total += value * unit;
    any = true;
    i = j;
  }
  if (!any || !std::isfinite(total) || total <= 0) throw bad();
  return total;
}

std::map<std::string, std::vector<std::string>> soak_default_params(const std::string& workload) {
  if (workload == "gemm") {
    return {{"impl", {"cublas"}}, {"dtype", {"bf16"}}, {"size", {"8192"}}};
  }
  if (workload == "train_step") return {{"dtype", {"bf16"}}};
  if (workload == "allreduce") return {{"dtype", {"bf16"}}, {"bytes", {"256M"}}};
  return {};
}

RunSettings soak_window_settings(RunSettings settings, double window_s) {
  settings.stopping.min_samples = 2;
  settings.stopping.min_time_s = window_s;
  settings.stopping.max_time_s = window_s;
  // No early stop: the stop rule looks at the noise only once the samples add up to a whole
  // window, so every window samples for window_s. The noise target stays the sweep's, so a
  // window is `noisy` only when its median is uncertain (not merely power-capped ripple).
  settings.target_sample_s = std::min(0.05, window_s / 20);
  settings.group_timeout_s = std::max(settings.group_timeout_s, 10 * window_s + 60);
  return settings;
}

std::size_t soak_window_count(double duration_s, double window_s) {
  return static_cast<std::size_t>(std::ceil(duration_s / window_s));
}

namespace {

// The bounds of soak.hpp, each refused with the limit it passes.
void check_soak_bounds(double duration_s, double window_s) {
  if (duration_s > kSoakMaxDurationS) {
    throw UsageError(fmt::format("invalid --duration: {:.6g} s is longer than {:.0f} h, the "
                                 "longest soak",
                                 duration_s, kSoakMaxDurationS / 3600));
  }
  if (window_s < kSoakMinWindowS) {
    throw UsageError(fmt::format("invalid --window: {:.6g} s is shorter than {} s",
                                 window_s, kSoakMinWindowS));
  }
  if (window_s > duration_s) {
    throw UsageError(fmt::format("invalid --window: {} s is longer than --duration ({} s)",
                                 window_s, duration_s));
  }
  if (soak_window_count(duration_s, window_s) > kSoakMaxWindows) {
    throw UsageError(fmt::format(
        "invalid --window: {:.6g} s makes {} windows of --duration {:.6g} s, at most {} are "
        "measured (a window of {:.6g} s or more)",
        window_s, soak_window_count(duration_s, window_s), duration_s, kSoakMaxWindows,
        duration_s / static_cast<double>(kSoakMaxWindows)));
  }
}

}  // namespace

SoakOptions parse_soak_options(int argc, char** argv) {
  auto cli = soak_cli();
  const auto args = parse_command_line(cli, argc, argv);
  SoakOptions o;
  o.duration_s = parse_duration(str(args, "duration"), "--duration");
  o.window_s = parse_duration(str(args, "window"), "--window");
  check_soak_bounds(o.duration_s, o.window_s);
  o.workload = str(args, "workload");
  if (args.count("gpus")) o.devices = parse_device_list(str(args, "gpus"), -1);
  o.param_overrides = soak_default_params(o.workload);
  if (args.count("param")) take_params(args["param"].as<std::vector<std::string>>(), o);
  if (args.count("telemetry-interval")) {
    const double ms = parse_double(str(args, "telemetry-interval"), "--telemetry-interval");
    if (ms < 10) throw UsageError("invalid --telemetry-interval: must be >= 10 ms");
    o.settings.telemetry_interval_s = ms / 1000.0;
  }
  if (args.count("out")) o.out_dir = str(args, "out");
  if (args.count("json")) o.json_path = str(args, "json");
  if (args.count("db")) o.db_path = str(args, "db");
  o.no_report = args.count("no-report") > 0;
  o.no_history = args.count("no-history") > 0;
  o.verbosity = args.count("quiet") ? -1 : args.count("verbose") ? 1 : 0;
  return o;
}

}  // namespace mgbench
