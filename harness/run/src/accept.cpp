// `mgbench accept`: the four stages in order, each through the command that owns it (the doctor,
// run_sweep, run_soak), judged into the checklist as it goes; an early stop when a stage makes the
// rest meaningless; results.json of kind "accept", then the sinks. See accept.hpp.
#include "mgbench/run/accept.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/analysis/accept_judge.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/platform/command_capture.hpp"
#include "mgbench/run/directory_lock.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/run/soak.hpp"
#include "mgbench/run/sweep.hpp"
#include "mgbench/store/history.hpp"

namespace mgbench {
namespace {

constexpr double kDoctorTimeoutS = 900;
constexpr std::size_t kDoctorMaxBytes = std::size_t{16} << 20;
constexpr double kSoakLongestWindowS = 10;

// Test mode (docs/TESTING-HOOKS.md): stage -> selftest behaviour; nullopt in a normal run.
using TestLoad = std::optional<std::map<std::string, std::string>>;

TestLoad read_test_load() {
  const auto hook = test_hooks::read(test_hooks::kAcceptLoad);
  if (!hook) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto& item : split_list(*hook, test_hooks::kAcceptLoad)) {
    if (item == "ok") continue;
    const auto eq = item.find('=');
    const std::string stage = item.substr(0, eq);
    if (eq == std::string::npos ||
        (stage != "communication" && stage != "scaling" && stage != "soak")) {
      throw UsageError(
          fmt::format("{}: expected ok or STAGE=BEHAVIOR (communication, scaling, "
                      "soak), got '{}'",
                      test_hooks::kAcceptLoad, one_line(item)));
    }
    out[stage] = item.substr(eq + 1);
  }
  return out;
}

std::string test_behavior(const TestLoad& test, const std::string& stage) {
  const auto it = test->find(stage);
  return it == test->end() ? "ok" : it->second;
}

// What a measuring stage runs: the registry's workloads of the stage's categories, or in test
// mode the selftest workload in one of their parts.
struct StageLoad {
  AcceptRoles roles;
  std::map<std::string, std::vector<std::string>> params;
};

StageLoad stage_load(const std::string& stage, const TestLoad& test) {
  StageLoad load;
  const bool communication = stage == "communication";
  if (test) {
    load.roles["selftest"] =
        communication ? WorkloadCategory::collective : WorkloadCategory::compute;
    load.params["behavior"] = {test_behavior(test, stage)};
    return load;
  }
  for (const auto& w : workloads()) {
    const WorkloadCategory c = w.category();
    const bool talks = c == WorkloadCategory::peer || c == WorkloadCategory::collective;
    if (c != WorkloadCategory::other && talks == communication) load.roles[w.name()] = c;
  }
  return load;
}

// The doctor's checks: `mgbench doctor --json` in a child process (its GEMM load creates the CUDA
// contexts there, never here), or the test hook's file.
Json doctor_checks() {
  if (const auto file = test_hooks::read(test_hooks::kAcceptDoctor)) {
    return read_json_file(*file, "the test doctor file");
  }
  const CapturedOutput out =
      run_and_capture({self_executable(), "doctor", "--json"}, kDoctorTimeoutS, kDoctorMaxBytes);
  if (out.timed_out) {
    throw EnvironmentError(
        fmt::format("the doctor did not finish within {:.0f} s", kDoctorTimeoutS));
  }
  // Exit 4 with its checks is a doctor whose check failed; without them it could not run.
  try {
    Json checks = parse_json_bounded(out.out, "the doctor's output");
    if (checks.is_object() && checks.contains("checks")) return checks;
  } catch (const UsageError&) {
  }
  throw EnvironmentError("the doctor could not run (" + out.exit.describe() + ")");
}

double soak_window_s(double soak_s) {
  return std::max({kSoakMinWindowS, std::min(kSoakLongestWindowS, soak_s / 6),
                   soak_s / static_cast<double>(kSoakMaxWindows)});
}

class AcceptRunner {
 public:
  AcceptRunner(const AcceptOptions& o, const std::vector<std::string>& argv,
               const RunSinks& stage_sinks, std::string out_dir)
      : o_(o),
        argv_(argv),
        stage_sinks_(stage_sinks),
        out_dir_(std::move(out_dir)),
        test_(read_test_load()) {}

  // Runs the stages in order until one stops the run (or cannot run, or is interrupted).
  void run_stages();
  AcceptResult& result() { return result_; }
  RunResult& document() { return document_; }

 private:
  bool configuration(AcceptStage& st);
  bool communication(AcceptStage& st);
  bool scaling(AcceptStage& st);
  bool soak(AcceptStage& st);
  RunResult sweep_stage(AcceptStage& st, const StageLoad& load, std::vector<int> counts);
  // Adds a stage's items; false when they make the stages after it meaningless.
  bool judged(const std::vector<AcceptItem>& items) {
    result_.items.insert(result_.items.end(), items.begin(), items.end());
    return !accept_stops_after(items);
  }

  const AcceptOptions& o_;
  const std::vector<std::string>& argv_;
  const RunSinks& stage_sinks_;
  std::string out_dir_;
  TestLoad test_;
  std::vector<int> devices_;
  AcceptResult result_;
  RunResult document_;
};

void could_not_run(AcceptStage& st, const std::exception& e) {
  st.state = "could_not_run";
  st.note = accept_text("stage.could_not_run", {one_line(e.what())});
  logging::error("accept: {} could not run: {}", st.id, e.what());
}

void AcceptRunner::run_stages() {
  const std::vector<std::function<bool(AcceptStage&)>> steps = {
      [this](AcceptStage& s) { return configuration(s); },
      [this](AcceptStage& s) { return communication(s); },
      [this](AcceptStage& s) { return scaling(s); }, [this](AcceptStage& s) { return soak(s); }};
  for (const char* id : kAcceptStages) {
    result_.stages.emplace_back();
    result_.stages.back().id = id;
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    AcceptStage& st = result_.stages[i];
    logging::info("accept: stage {}/{}, {}", i + 1, steps.size(), st.id);
    const double t0 = monotonic_seconds();
    bool go_on = false;
    try {
      go_on = steps[i](st);
    } catch (const UsageError& e) {
      if (i == 0) throw;  // --gpus naming a device that does not exist: bad input, exit 2
      could_not_run(st, e);
    } catch (const std::exception& e) {
      could_not_run(st, e);
    }
    st.wall_s = monotonic_seconds() - t0;
    if (interrupt_flag().load()) {
      st.state = "interrupted";
      st.note = accept_text("stage.interrupted");
      break;
    }
    if (st.state == "could_not_run") break;
    if (!go_on) {
      result_.stopped_after = st.id;
      result_.stop_reason = accept_text("stop." + st.id);
      logging::warn("accept: stopping after {}: the stages after it would be meaningless", st.id);
      break;
    }
  }
  for (auto& st : result_.stages) {
    if (st.state == "not_run") st.note = accept_text("stage.not_run");
  }
}

bool AcceptRunner::configuration(AcceptStage& st) {
  const ProbeResult probed = probe(Isolation::process, false);
  const int visible = static_cast<int>(probed.inventory.devices.size());
  for (int d : o_.devices) {
    if (d >= visible) {
      throw UsageError(
          fmt::format("--gpus {} does not exist: {} CUDA device(s) visible", d, visible));
    }
  }
  devices_ = o_.devices;
  for (int i = 0; o_.devices.empty() && i < visible; ++i) devices_.push_back(i);
  if (devices_.empty()) throw EnvironmentError("no CUDA device visible");
  result_.devices = devices_;
  result_.gpu_name = probed.inventory.devices.at(static_cast<std::size_t>(devices_.front())).name;
  document_.environment = probed.environment.is_object() ? probed.environment : Json::object();
  document_.environment["inventory"] = probed.inventory;
  const auto hooks = test_hooks::active();
  if (!hooks.empty()) document_.environment["test_hooks"] = hooks;
  logging::info("accept: {} GPU(s) {} ({}); the doctor's checks", devices_.size(),
                fmt::join(devices_, ","), result_.gpu_name);
  document_.doctor = doctor_checks();
  st.state = "ran";
  return judged({judge_configuration(document_.doctor, o_.criteria)});
}

RunResult AcceptRunner::sweep_stage(AcceptStage& st, const StageLoad& load,
                                    std::vector<int> counts) {
  SweepOptions s;
  for (const auto& [workload, category] : load.roles) s.workloads.push_back(workload);
  s.devices = devices_;
  s.gpu_counts = std::move(counts);
  s.profile = Profile::quick;
  s.settings.stopping = profile_stopping(s.profile);
  s.settings.profile = to_string(s.profile);
  s.param_overrides = load.params;
  s.out_dir = out_dir_ + "/" + st.id;
  s.no_history = o_.no_history;
  s.force = o_.force;  // its stage directories were cleared (prepare_out_dir)
  s.db_path = o_.db_path;
  s.verbosity = o_.verbosity;
  st.workloads = s.workloads;
  st.results = st.id;
  logging::info("accept: {}: {} at {} GPU(s)", st.id, fmt::join(s.workloads, ", "),
                fmt::join(s.gpu_counts, " and "));
  (void)run_sweep(s, argv_, {}, stage_sinks_);  // its points decide, through the items
  st.state = "ran";
  RunResult run = load_results(s.out_dir + "/results.json");
  const auto figures = accept_figures(run, st.id);
  result_.figures.insert(result_.figures.end(), figures.begin(), figures.end());
  return run;
}

bool AcceptRunner::communication(AcceptStage& st) {
  const StageLoad load = stage_load(st.id, test_);
  if (devices_.size() < 2 || load.roles.empty()) {
    st.state = "skipped";
    st.note = accept_text(devices_.size() < 2 ? "stage.one_gpu" : "stage.no_workloads");
    return true;
  }
  const int n = static_cast<int>(devices_.size());
  const RunResult run = sweep_stage(st, load, {n});
  return judged(judge_communication(run, o_.criteria, load.roles, document_.doctor));
}

bool AcceptRunner::scaling(AcceptStage& st) {
  const StageLoad load = stage_load(st.id, test_);
  if (load.roles.empty()) {
    st.state = "skipped";
    st.note = accept_text("stage.no_workloads");
    return true;
  }
  const int n = static_cast<int>(devices_.size());
  const RunResult run = sweep_stage(st, load, n > 1 ? std::vector<int>{1, n} : std::vector<int>{1});
  return judged(judge_scaling(run, o_.criteria, load.roles));
}

bool AcceptRunner::soak(AcceptStage& st) {
  if (o_.soak_s <= 0) {
    st.state = "skipped";
    st.note = accept_text("stage.soak_skipped");
    return true;
  }
  SoakOptions so;
  so.duration_s = o_.soak_s;
  so.window_s = soak_window_s(o_.soak_s);
  if (test_) {
    so.workload = "selftest";
    so.param_overrides = {{"behavior", {test_behavior(test_, st.id)}}};
  } else {
    so.param_overrides = soak_default_params(so.workload);
  }
  so.devices = devices_;
  so.thresholds.max_degradation = o_.criteria.soak_degradation_max;
  so.thresholds.max_gpu_spread = o_.criteria.soak_gpu_spread_max;
  so.out_dir = out_dir_ + "/" + st.id;
  so.no_history = o_.no_history;
  so.db_path = o_.db_path;
  so.verbosity = o_.verbosity;
  st.workloads = {so.workload};
  st.results = st.id;
  logging::info("accept: soak: {} for {:.4g} s in {:.3g} s windows", so.workload, so.duration_s,
                so.window_s);
  (void)run_soak(so, argv_, stage_sinks_);  // its verdict is judged from its results
  st.state = "ran";
  return judged(judge_soak(load_results(so.out_dir + "/results.json"), o_.criteria));
}

// An earlier accept run in `dir`: refused without --force; with it, its stage directories go.
void prepare_out_dir(const std::string& dir, bool force) {
  namespace fs = std::filesystem;
  std::vector<fs::path> earlier;
  for (const char* name : {"results.json", "communication", "scaling", "soak"}) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / name, ec)) earlier.push_back(fs::path(dir) / name);
  }
  if (earlier.empty()) return;
  if (!force) {
    throw UsageError(
        fmt::format("{} holds an earlier run ({}): give --force to start over, or "
                    "another --out",
                    one_line(dir), one_line(earlier.front().string())));
  }
  for (const auto& p : earlier) {
    std::error_code ec;
    if (p.filename() != "results.json") fs::remove_all(p, ec);
  }
}

void fill_document(RunResult& doc, const AcceptResult& r) {
  doc.run_id = make_run_id();
  RunSettings settings;
  settings.stopping = profile_stopping(Profile::quick);
  settings.profile = to_string(Profile::quick);
  doc.settings = settings;
  doc.settings["mode"] = "accept";
  doc.finished_at = utc_now_iso8601();
  doc.interrupted = r.verdict == "interrupted";
  doc.accept = r;
}

}  // namespace

int run_accept(const AcceptOptions& options, const std::vector<std::string>& argv,
               const RunSinks& stage_sinks, const RunSinks& accept_sinks) {
  const std::string out_dir = options.out_dir.empty() ? default_out_dir() : options.out_dir;
  prepare_out_dir(out_dir, options.force);
  const DirectoryLock lock(out_dir);
  AcceptRunner runner(options, argv, stage_sinks, out_dir);
  AcceptResult& result = runner.result();
  result.soak_s = options.soak_s;
  result.criteria = options.criteria;
  result.criteria_source = options.criteria_path;
  RunResult& doc = runner.document();
  doc = started_run(argv);
  install_interrupt_handlers();
  logging::info("accept: criteria {}; results in {}",
                options.criteria_path.empty() ? "built in" : one_line(options.criteria_path),
                out_dir);
  runner.run_stages();
  result.verdict = accept_verdict(result);
  fill_document(doc, result);
  save_results(doc, out_dir + "/results.json");
  int code = accept_exit_code(result.verdict);
  for (const auto& sink : accept_sinks) {
    try {
      sink.write(doc, out_dir);
    } catch (const std::exception& e) {
      logging::error("{}: {}", sink.name, e.what());
      if (code == 0) code = static_cast<int>(ExitCode::environment);
    }
  }
  logging::info("results: {}/results.json", out_dir);
  return code;
}

}  // namespace mgbench
