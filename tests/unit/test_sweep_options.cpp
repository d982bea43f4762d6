// Bad input on the sweep command line: a clear UsageError naming the value, nothing run.
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/sweep.hpp"

namespace {

mgbench::SweepOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "sweep");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return mgbench::parse_sweep_options(static_cast<int>(argv.size()), argv.data());
}

// Parses and plans against `visible` devices; returns the UsageError message or "".
// Test-only workloads: one declares a sustained (power-bound) warm-up, one does not.
const bool kRegistered =
    mgbench::register_workload(mgbench::Workload("zz_test_power_bound").sustained(1.0, 0.02)) &&
    mgbench::register_workload(mgbench::Workload("zz_test_quick"));

std::string usage_error(std::vector<std::string> args, int visible = 8) {
  try {
    const auto options = parse(std::move(args));
    (void)mgbench::make_plan(options, visible);
  } catch (const mgbench::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("option --gpus rejects zero, negative, non-numeric, duplicates and empty lists") {
  CHECK(usage_error({"--gpus", "0"}).find("'0'") != std::string::npos);
  CHECK(usage_error({"--gpus", "-1"}) != "");
  CHECK(usage_error({"--gpus", "two"}).find("'two'") != std::string::npos);
  CHECK(usage_error({"--gpus", "1,1"}).find("duplicate") != std::string::npos);
  CHECK(usage_error({"--gpus", ""}).find("empty") != std::string::npos);
  CHECK(usage_error({"--gpus", "1,,2"}).find("empty item") != std::string::npos);
  CHECK(usage_error({"--gpus", "1.5"}).find("'1.5'") != std::string::npos);
}

TEST_CASE("option --gpus larger than the visible or listed devices is a usage error") {
  CHECK(usage_error({"--gpus", "16"}, 8).find("more GPUs than the 8 available") !=
        std::string::npos);
  CHECK(usage_error({"--gpus", "4", "--devices", "0,1"}, 8).find("2 available") !=
        std::string::npos);
  CHECK(usage_error({"--devices", "9"}, 8).find("does not exist") != std::string::npos);
  CHECK(usage_error({"--devices", "0,0"}, 8).find("duplicate") != std::string::npos);
}

TEST_CASE("unknown workloads, dtypes, flags and malformed numbers are usage errors") {
  CHECK(usage_error({"--workloads", "nope"}).find("unknown workload 'nope'") != std::string::npos);
  CHECK(usage_error({"--dtypes", "fp7"}).find("unknown dtype 'fp7'") != std::string::npos);
  CHECK(usage_error({"--frobnicate"}).find("frobnicate") != std::string::npos);
  CHECK(usage_error({"--min-samples", "ten"}).find("'ten'") != std::string::npos);
  CHECK(usage_error({"--min-samples", "0"}).find("'0'") != std::string::npos);
  CHECK(usage_error({"--max-noise", "abc"}).find("'abc'") != std::string::npos);
  CHECK(usage_error({"--max-noise", "150"}).find("150") != std::string::npos);
  CHECK(usage_error({"--max-time-per-point", "-3"}) != "");
  CHECK(usage_error({"--group-timeout", "1e999"}).find("1e999") != std::string::npos);
  CHECK(usage_error({"--profile", "turbo"}).find("'turbo'") != std::string::npos);
  CHECK(usage_error({"--isolation", "thread"}).find("'thread'") != std::string::npos);
  CHECK(usage_error({"--batch-sizes", "8,x"}).find("'x'") != std::string::npos);
  CHECK(usage_error({"--param", "nonsense"}).find("NAME=V1,V2") != std::string::npos);
  CHECK(usage_error({"--param", "nosuchaxis=1"}).find("unknown parameter 'nosuchaxis'") !=
        std::string::npos);
  CHECK(usage_error({"extra-positional"}).find("extra-positional") != std::string::npos);
  CHECK(usage_error({"--workloads", ""}).find("empty") != std::string::npos);
}

TEST_CASE("default GPU counts are powers of two up to the visible count, plus the count") {
  CHECK(mgbench::default_gpu_counts(1) == std::vector<int>{1});
  CHECK(mgbench::default_gpu_counts(4) == std::vector<int>{1, 2, 4});
  CHECK(mgbench::default_gpu_counts(6) == std::vector<int>{1, 2, 4, 6});
  CHECK(mgbench::default_gpu_counts(8) == std::vector<int>{1, 2, 4, 8});
}

TEST_CASE("profiles set the stopping rule, explicit flags override them") {
  const auto quick = parse({"--profile", "quick"});
  const auto standard = parse({});
  CHECK(quick.settings.stopping.max_time_s < standard.settings.stopping.max_time_s);
  CHECK(standard.settings.stopping.min_samples == 10);
  CHECK(standard.settings.stopping.max_noise == Approx(0.005));
  const auto custom = parse({"--min-samples", "25", "--max-noise", "1.5%"});
  CHECK(custom.settings.stopping.min_samples == 25);
  CHECK(custom.settings.stopping.max_noise == Approx(0.015));
}

TEST_CASE("choice and number options name the option and what it expects, word for word") {
  CHECK(usage_error({"--isolation", "thread"}) ==
        "invalid --isolation 'thread': expected process or none");
  CHECK(usage_error({"--scaling", "medium"}) ==
        "invalid --scaling 'medium': expected weak or strong");
  CHECK(usage_error({"--baseline", "all"}) == "invalid --baseline 'all': expected each");
  CHECK(usage_error({"--min-time=-1"}) == "invalid --min-time: must be >= 0");
  CHECK(usage_error({"--max-time-per-point", "0"}) == "invalid --max-time-per-point: must be > 0");
  CHECK(usage_error({"--group-timeout", "0"}) == "invalid --group-timeout: must be > 0");
  CHECK(usage_error({"--price-per-gpu-hour", "0"}) == "invalid --price-per-gpu-hour: must be > 0");
  // The first bad option in the command's own order wins: selection before sampling.
  CHECK(usage_error({"--min-time=-1", "--gpus", "0"}).find("'0'") != std::string::npos);
}

TEST_CASE("sweep options land in the settings: profile, overrides, time-out and flags") {
  const auto o = parse({"--profile", "quick", "--min-time", "0", "--max-time-per-point", "2",
                        "--scaling", "strong", "--isolation", "none", "--baseline", "each",
                        "--param", "m=1,2", "--no-telemetry", "--telemetry-interval", "250"});
  CHECK(o.settings.stopping.min_samples == 5);
  CHECK(o.settings.stopping.min_time_s == 0);
  CHECK(o.settings.stopping.max_time_s == 2);
  CHECK(o.settings.group_timeout_s == 300);
  CHECK(o.scaling == mgbench::ScalingMode::strong);
  CHECK(o.isolation == mgbench::Isolation::none);
  CHECK(o.baseline_each);
  CHECK(o.param_overrides.at("m") == std::vector<std::string>{"1", "2"});
  CHECK_FALSE(o.settings.telemetry);
  CHECK(o.settings.telemetry_interval_s == 0.25);
}

TEST_CASE("power-bound workloads warm up 1 s unless --warmup says otherwise, and sample longer") {
  using mgbench::settings_for_workload;
  REQUIRE(kRegistered);
  const auto defaults = parse({});
  CHECK(settings_for_workload(defaults.settings, "zz_test_power_bound").warmup_s == 1.0);
  CHECK(settings_for_workload(defaults.settings, "zz_test_quick").warmup_s == 0.05);
  CHECK(settings_for_workload(defaults.settings, "zz_test_power_bound").target_sample_s == 0.02);
  CHECK(settings_for_workload(defaults.settings, "zz_test_quick").target_sample_s == 0.002);
  const auto fixed = parse({"--warmup", "0.2"});
  CHECK(settings_for_workload(fixed.settings, "zz_test_power_bound").warmup_s == 0.2);
  CHECK(settings_for_workload(fixed.settings, "zz_test_quick").warmup_s == 0.2);
  // The worker gets the settings as JSON: the flag must survive the trip.
  const mgbench::Json j = fixed.settings;
  CHECK(j.get<mgbench::RunSettings>().warmup_given);
  CHECK_FALSE(mgbench::Json(defaults.settings).get<mgbench::RunSettings>().warmup_given);
  CHECK(usage_error({"--warmup", "-1"}).find("must be >= 0") != std::string::npos);
  CHECK(usage_error({"--warmup", "200", "--group-timeout", "300"})
            .find("under half the group timeout") != std::string::npos);
}

TEST_CASE("launch options: --launcher, the nodes, and the default inside Slurm") {
  const auto o = parse({"--launcher", "mpirun", "--hosts", "a:2,b:2", "--oversubscribe"});
  CHECK(o.launch.launcher == mgbench::Launcher::mpirun);
  REQUIRE(o.launch.hosts.size() == 2);
  CHECK(o.launch.hosts[1].host == "b");
  CHECK(o.launch.oversubscribe);
  CHECK(usage_error({"--launcher", "pbs"}).find("invalid --launcher 'pbs'") != std::string::npos);
  CHECK(usage_error({"--launcher", "local", "--gpus-per-node", "4"}).find("need --launcher") !=
        std::string::npos);
  CHECK(usage_error({"--launcher", "srun", "--oversubscribe"}).find("mpirun option") !=
        std::string::npos);
  CHECK(usage_error({"--launcher", "mpirun", "--hosts", "a:2", "--hostfile", "f"})
            .find("not both") != std::string::npos);
  CHECK(usage_error({"--launcher", "mpirun", "--isolation", "none"}).find("--isolation none") !=
        std::string::npos);
  ::setenv("SLURM_JOB_ID", "7", 1);
  CHECK(parse({}).launch.launcher == mgbench::Launcher::srun);
  CHECK(parse({"--isolation", "none"}).launch.launcher == mgbench::Launcher::local);
  CHECK(parse({"--launcher", "local"}).launch.launcher == mgbench::Launcher::local);
  ::unsetenv("SLURM_JOB_ID");
  CHECK(parse({}).launch.launcher == mgbench::Launcher::local);
}
