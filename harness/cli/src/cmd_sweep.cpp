// `mgbench sweep`: parse, plan, run every group in workers, write results.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <cxxopts.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/sweep.hpp"
#include "mgbench/version.hpp"

namespace mgbench {

int cmd_sweep(int argc, char** argv) {
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
  return run_sweep(options, original_argv, std::move(finished), sweep_sinks(options));
}

}  // namespace mgbench
