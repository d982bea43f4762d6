// `sweep --nvls on|off|auto` and NCCL_NVLS_ENABLE through the real binary (selftest, fake
// devices): without either, NCCL's default reaches the workers (mgbench no longer turns NVLink
// SHARP off by itself); the setting each run had is in results.json; the option and the
// variable never silently disagree; a resumed sweep keeps the journal's choice.
#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::kQuiet;
using mgbench::test::kSelftestEnv;
using mgbench::test::run_mgbench;

namespace {

// The environment of a selftest sweep with NCCL_NVLS_ENABLE unset, then `env` added.
std::string sweep_env(const std::string& env = "") {
  return "env -u NCCL_NVLS_ENABLE " + kSelftestEnv + (env.empty() ? "" : " " + env);
}

// results.json's environment.nccl_nvls after `sweep ARGS` (exit code checked 0).
std::string recorded_nvls(const std::string& args, const std::string& env) {
  const std::string out = mgbench::test::temp_dir("nvls");
  const auto r = run_mgbench("sweep --workloads selftest --gpus 1 " + args + " --out " + out +
                                 kQuiet,
                             env);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto run = mgbench::load_results(out + "/results.json");
  std::filesystem::remove_all(out);
  return run.environment.value("nccl_nvls", std::string("(absent)"));
}

}  // namespace

TEST_CASE("nvls: a sweep leaves NCCL's default alone and records it") {
  CHECK(recorded_nvls("", sweep_env()) == "auto (NCCL's default)");
  CHECK(recorded_nvls("", sweep_env("NCCL_NVLS_ENABLE=0")) == "off (NCCL_NVLS_ENABLE=0)");
}

TEST_CASE("nvls: --nvls on, off and auto reach the workers and are recorded") {
  CHECK(recorded_nvls("--nvls on", sweep_env()) == "on (NCCL_NVLS_ENABLE=1)");
  CHECK(recorded_nvls("--nvls off", sweep_env()) == "off (NCCL_NVLS_ENABLE=0)");
  CHECK(recorded_nvls("--nvls auto", sweep_env("NCCL_NVLS_ENABLE=2")) ==
        "auto (NCCL's default)");
}

TEST_CASE("nvls: --nvls that contradicts NCCL_NVLS_ENABLE, or a bad value, is one line, exit 2") {
  const auto conflict = run_mgbench("sweep --workloads selftest --gpus 1 --dry-run --nvls off",
                                    sweep_env("NCCL_NVLS_ENABLE=1"));
  CHECK(conflict.exit_code == 2);
  CHECK(conflict.err.find("--nvls off conflicts with NCCL_NVLS_ENABLE=1") != std::string::npos);
  CHECK(mgbench::test::line_count(conflict.err) == 1);
  const auto bad = run_mgbench("sweep --workloads selftest --gpus 1 --dry-run --nvls maybe",
                               sweep_env());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("invalid --nvls 'maybe': expected on or off or auto") != std::string::npos);
}

TEST_CASE("nvls: --resume keeps the journal's --nvls and refuses another") {
  const std::string out = mgbench::test::temp_dir("nvls-resume");
  const std::string plan = "sweep --workloads selftest --gpus 1 --param behavior=ok,crash,ok "
                           "--nvls off --out " + out + kQuiet;
  CHECK(run_mgbench(plan, sweep_env()).exit_code == 4);  // the crash fails its point
  const auto other = run_mgbench("sweep --resume " + out + " --nvls on" + kQuiet, sweep_env());
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("--nvls conflicts with the plan being resumed") != std::string::npos);
  const auto resumed = run_mgbench("sweep --resume " + out + kQuiet, sweep_env());
  CHECK(resumed.exit_code == 4);
  const auto run = mgbench::load_results(out + "/results.json");
  CHECK(run.environment.value("nccl_nvls", std::string()) == "off (NCCL_NVLS_ENABLE=0)");
  std::filesystem::remove_all(out);
}
