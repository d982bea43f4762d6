// `mgbench sweep`: parse, plan, run every group in workers, write results. On --resume the
// plan comes from the journal's header (typed, checked as untrusted input: with_recorded_plan);
// every path and every other setting comes from the current command line, and the journal's
// command line is information only.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/run/journal.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/run/sweep.hpp"
#include "mgbench/version.hpp"

namespace mgbench {

namespace {

// The journal's header, checked: an object written by this version, that records its plan.
// Returns the sweep's command line, for information only (results.json keeps it): `given` when
// the journal's is not a list of strings.
std::vector<std::string> journal_argv(const JournalReplay& replay, const std::string& path,
                                      const std::vector<std::string>& given) {
  const Json& header = replay.header;
  if (!header.is_object()) {
    throw UsageError(fmt::format("'{}' has no header: cannot resume", path));
  }
  const Json tool = header.value("tool", Json::object());
  if (tool.is_object() && tool.contains("version") &&
      tool["version"] != Json(MGBENCH_VERSION_STRING)) {
    throw UsageError(fmt::format(
        "cannot resume '{}': it was written by mgbench {}, this is {} (start over with --force)",
        path, dump_json(tool["version"]), MGBENCH_VERSION_STRING));
  }
  if (!header.contains("plan_options")) {
    throw UsageError(fmt::format("cannot resume '{}': its header records no plan (start over "
                                 "with --force)", path));
  }
  const Json argv = header.value("argv", Json());
  const bool readable = argv.is_array() && std::all_of(argv.begin(), argv.end(), [](const Json& a) {
                          return a.is_string();
                        });
  return readable ? argv.get<std::vector<std::string>>() : given;
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

}  // namespace

int cmd_sweep(int argc, char** argv) {
  const std::vector<std::string> given(argv, argv + argc);
  std::set<std::string> named;
  SweepOptions options = parse_sweep_options(argc, argv, &named);
  if (parse_only()) {
    validate_sweep_arguments(options);  // what run_sweep checks before any device is probed
    return 0;
  }
  set_log_verbosity(options.verbosity);
  if (options.resume_dir.empty()) {
    return run_sweep(options, given, {}, sweep_sinks(options));
  }
  const std::string dir = options.resume_dir;
  if (options.force) throw UsageError("--force and --resume cannot be combined");
  if (named.count("out") && options.out_dir != dir) {
    throw UsageError(fmt::format("--out '{}' differs from --resume '{}'", options.out_dir, dir));
  }
  const std::string path = dir + "/journal.jsonl";
  const JournalReplay replay = replay_journal(path);
  const std::vector<std::string> recorded = journal_argv(replay, path, given);
  options = with_recorded_plan(options, named, replay.header.at("plan_options"), dir);
  options.resume_dir = dir;
  options.out_dir = dir;
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
