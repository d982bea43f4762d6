// `mgbench sweep`: parse, plan, run every group in workers, write results. On --resume the
// plan-defining options come from the journal (an allow-list); every path and every other
// setting comes from the current command line.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/sweep.hpp"
#include "mgbench/version.hpp"

namespace mgbench {

namespace {

// The options that define a sweep's plan: the only ones a resumed sweep takes from its journal.
const std::set<std::string> kPlanOptions = {
    "workloads", "gpus",    "devices",  "param",       "dtypes",   "batch-sizes",
    "profile",   "scaling", "baseline", "min-samples", "min-time", "max-noise",
    "max-time-per-point", "warmup", "launcher", "hosts", "hostfile", "gpus-per-node",
    "oversubscribe", "nvls"};
// Long options without a value (every other long option takes one).
const std::set<std::string> kFlags = {"dry-run",   "no-telemetry", "skip-doctor",
                                      "no-report", "no-history",   "verbose",
                                      "quiet",     "help",         "force",
                                      "redact",    "oversubscribe"};

// One long option of a command line, with the tokens it spans ("--a=1", or "--a" "1").
struct LongOption {
  std::string name;
  std::vector<std::string> tokens;
};

std::vector<LongOption> long_options(const std::vector<std::string>& argv) {
  std::vector<LongOption> options;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& token = argv[i];
    if (token.rfind("--", 0) != 0 || token.size() == 2) continue;  // short flags, stray values
    const auto eq = token.find('=');
    LongOption option{token.substr(2, eq == std::string::npos ? std::string::npos : eq - 2),
                      {token}};
    if (eq == std::string::npos && !kFlags.count(option.name) && i + 1 < argv.size()) {
      option.tokens.push_back(argv[++i]);
    }
    options.push_back(std::move(option));
  }
  return options;
}

// An option's resolved value, for comparing the journal's plan with the command line's.
Json plan_value(const SweepOptions& o, const std::string& name) {
  const StoppingCriteria& s = o.settings.stopping;
  if (name == "workloads") return o.workloads;
  if (name == "gpus") return o.gpu_counts;
  if (name == "devices") return o.devices;
  if (name == "param") return o.param_overrides;
  if (name == "dtypes") return o.dtypes;
  if (name == "batch-sizes") return Json{o.batch_sizes, o.batch_auto};
  if (name == "profile") return to_string(o.profile);
  if (name == "scaling") return to_string(o.scaling);
  if (name == "baseline") return o.baseline_each;
  if (name == "min-samples") return s.min_samples;
  if (name == "min-time") return s.min_time_s;
  if (name == "max-noise") return s.max_noise;
  if (name == "launcher") return to_string(o.launch.launcher);
  if (name == "hosts" || name == "hostfile") {
    Json hosts = Json::array();
    for (const auto& h : o.launch.hosts) hosts.push_back({h.host, h.slots});
    return hosts;
  }
  if (name == "gpus-per-node") return o.launch.gpus_per_node;
  if (name == "oversubscribe") return o.launch.oversubscribe;
  if (name == "nvls") return o.nvls;
  return s.max_time_s;  // max-time-per-point
}

void take_plan(const SweepOptions& from, SweepOptions& to) {
  to.gpu_counts = from.gpu_counts;
  to.devices = from.devices;
  to.workloads = from.workloads;
  to.batch_sizes = from.batch_sizes;
  to.batch_auto = from.batch_auto;
  to.settings.batch_auto = from.settings.batch_auto;
  to.dtypes = from.dtypes;
  to.param_overrides = from.param_overrides;
  to.profile = from.profile;
  to.settings.profile = from.settings.profile;
  to.settings.stopping = from.settings.stopping;
  to.scaling = from.scaling;
  to.baseline_each = from.baseline_each;
  // How to launch (--launcher-arg, --forward-env) is the current command line's, like paths.
  LaunchOptions launch = from.launch;
  launch.launcher_args = to.launch.launcher_args;
  launch.forward_env = to.launch.forward_env;
  to.launch = std::move(launch);
  to.nvls = from.nvls;
}

SweepOptions parse(const std::vector<std::string>& argv) {
  std::vector<std::string> store = argv;
  std::vector<char*> args;
  for (auto& a : store) args.push_back(a.data());
  return parse_sweep_options(static_cast<int>(args.size()), args.data());
}

// The journal's command line, checked: a list of strings written by this version.
std::vector<std::string> journal_argv(const JournalReplay& replay, const std::string& path) {
  const Json& header = replay.header;
  if (!header.is_object() || !header.contains("argv") || !header["argv"].is_array()) {
    throw UsageError(fmt::format("'{}' has no header: cannot resume", path));
  }
  std::vector<std::string> argv;
  for (const auto& a : header["argv"]) {
    if (!a.is_string()) throw UsageError(fmt::format("'{}': malformed header argv", path));
    argv.push_back(a.get<std::string>());
  }
  const Json tool = header.value("tool", Json::object());
  if (tool.is_object() && tool.contains("version") &&
      tool["version"] != Json(MGBENCH_VERSION_STRING)) {
    throw UsageError(fmt::format(
        "cannot resume '{}': it was written by mgbench {}, this is {} (start over with --force)",
        path, dump_json(tool["version"]), MGBENCH_VERSION_STRING));
  }
  return argv;
}

// The run id the journal's sweep recorded (kept, so the history updates that run's row), and
// its test hooks, which must be the ones in effect now: a resumed sweep never mixes points
// measured with and without a hook (the journal's values are not taken over: refused instead).
std::string journal_run_id(const JournalReplay& replay, const std::string& path) {
  const Json& header = replay.header;
  const Json hooks = header.value("test_hooks", Json::object());
  const Json now = test_hooks::active();
  if (hooks != now) {
    throw UsageError(fmt::format(
        "cannot resume '{}': its sweep ran with test hooks {}, the environment now has {} "
        "(set the same MGBENCH_TEST_* variables, or start a new sweep)",
        path, hooks.dump(), now.dump()));
  }
  const Json id = header.value("run_id", Json());
  if (!id.is_string()) return "";  // a journal from before run ids: a new one
  const std::string text = id.get<std::string>();
  const bool hex = text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex) throw UsageError(fmt::format("'{}': malformed header run_id", path));
  return text;
}

// Options for --resume: the plan from the journal, the rest from `current` (argv `given`).
SweepOptions resumed_options(const SweepOptions& current, const std::vector<std::string>& given,
                             const std::vector<std::string>& recorded, const std::string& dir) {
  std::vector<std::string> plan_argv{"sweep"};
  for (const auto& o : long_options(recorded)) {
    if (kPlanOptions.count(o.name)) {
      plan_argv.insert(plan_argv.end(), o.tokens.begin(), o.tokens.end());
    }
  }
  const SweepOptions planned = parse(plan_argv);
  std::set<std::string> named;
  for (const auto& o : long_options(given)) {
    named.insert(o.name);
    if (kPlanOptions.count(o.name) && plan_value(current, o.name) != plan_value(planned, o.name)) {
      throw UsageError(fmt::format(
          "--{} conflicts with the plan being resumed ({}); leave it out, or start a new sweep",
          o.name, dump_json(plan_value(planned, o.name))));
    }
  }
  if (named.count("force")) throw UsageError("--force and --resume cannot be combined");
  if (named.count("out") && current.out_dir != dir) {
    throw UsageError(fmt::format("--out '{}' differs from --resume '{}'", current.out_dir, dir));
  }
  SweepOptions options = current;
  take_plan(planned, options);
  if (!named.count("group-timeout")) {
    options.settings.group_timeout_s = std::max(300.0, 20 * options.settings.stopping.max_time_s);
  }
  options.resume_dir = dir;
  options.out_dir = dir;
  logging::info("resuming '{}' with the plan of its journal: {}", dir,
                fmt::join(plan_argv.begin() + 1, plan_argv.end(), " "));
  return options;
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  std::vector<std::string> given(argv, argv + argc);
  // --force (start over in an --out that holds a journal) is seen by run_sweep in argv.
  std::vector<std::string> parsed = given;
  parsed.erase(std::remove(parsed.begin() + (parsed.empty() ? 0 : 1), parsed.end(), "--force"),
               parsed.end());
  SweepOptions options = parse(parsed);
  if (parse_only()) {
    validate_sweep_arguments(options);  // what run_sweep checks before any device is probed
    return 0;
  }
  set_log_verbosity(options.verbosity);
  if (options.resume_dir.empty()) {
    return run_sweep(options, given, {}, sweep_sinks(options));
  }
  const std::string dir = options.resume_dir;
  const std::string path = dir + "/journal.jsonl";
  const JournalReplay replay = replay_journal(path);
  const std::vector<std::string> recorded = journal_argv(replay, path);
  options = resumed_options(options, given, recorded, dir);
  options.run_id = journal_run_id(replay, path);
  if (replay.bad_lines > 0) {
    logging::warn("'{}': {} unreadable line(s) skipped (cut by a crash, or garbage)", path,
                  replay.bad_lines);
  }
  std::map<std::size_t, PointResult> finished;
  std::size_t again = 0;
  for (const auto& p : replay.points) {
    if (p.status != Status::skipped) finished[p.index] = p;
    again += p.status == Status::skipped;
  }
  logging::info("{} point(s) already finished are kept; {} skipped point(s) run again",
                finished.size(), again);
  return run_sweep(options, recorded, std::move(finished), sweep_sinks(options));
}

}  // namespace mgbench
