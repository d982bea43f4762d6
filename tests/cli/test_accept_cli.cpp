// `mgbench accept` end to end on the CPU: fake devices, the selftest workload in every measuring
// stage (MGBENCH_TEST_ACCEPT_LOAD) and the doctor's checks from a file
// (MGBENCH_TEST_ACCEPT_DOCTOR), docs/TESTING-HOOKS.md. The stage order, the early stops, the
// criteria file, the verdict and its exit codes, both languages and the saved result rendered
// again.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/analysis/accept.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::read_text;
using mgbench::test::run_mgbench;

namespace {

const std::string kFlags = " --soak 1s --no-history";

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A doctor file: every check passes, or the named one fails.
std::string doctor_file(const std::string& dir, const std::string& failing = "") {
  std::string checks = R"({"name":"nvml","status":"pass","finding":"NVML loaded","next_step":""})";
  if (!failing.empty()) {
    checks +=
        R"(,{"name":")" + failing +
        R"(","status":"fail","finding":"GPU 1 power limit 300 W, default 700 W","next_step":"x"})";
  }
  const std::string path = dir + "/doctor.json";
  write(path, R"({"checks":[)" + checks + "]}");
  return path;
}

std::string env_of(const std::string& doctor, const std::string& load = "ok", int gpus = 2) {
  return "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=" + std::to_string(gpus) +
         " MGBENCH_TEST_SOAK_FAKE=ok MGBENCH_TEST_ACCEPT_LOAD=" + load +
         " MGBENCH_TEST_ACCEPT_DOCTOR=" + doctor;
}

mgbench::AcceptResult accept_in(const std::string& out) {
  return mgbench::accept_of(mgbench::load_results(out + "/results.json"));
}


}  // namespace

TEST_CASE("accept: the four stages in order, a ready verdict (exit 0), both reports") {
  const std::string dir = mgbench::test::temp_dir("accept-ok"), out = dir + "/out";
  const auto r = run_mgbench("accept --out " + out + kFlags, env_of(doctor_file(dir)));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The stages ran in order, each logged before the next.
  const auto s1 = r.err.find("stage 1/4, configuration"),
             s2 = r.err.find("stage 2/4, communication");
  const auto s3 = r.err.find("stage 3/4, scaling"), s4 = r.err.find("stage 4/4, soak");
  CHECK(s1 < s2);
  CHECK(s2 < s3);
  CHECK(s3 < s4);
  CHECK(s4 != std::string::npos);
  const auto result = accept_in(out);
  CHECK(result.verdict == "ready");
  REQUIRE(result.stages.size() == 4);
  for (const auto& stage : result.stages) CHECK(stage.state == "ran");
  CHECK(result.stages[1].workloads == std::vector<std::string>{"selftest"});
  // Each stage kept its own results and report.
  for (const char* stage : {"communication", "scaling", "soak"}) {
    CHECK(std::filesystem::exists(out + "/" + stage + "/results.json"));
    CHECK(std::filesystem::exists(out + "/" + stage + "/report.html"));
  }
  CHECK(result.items.front().id == "doctor");
  CHECK(result.items.back().stage == "soak");
  // The answer closes the console: the verdict, then one line per item.
  CHECK(r.out.find("READY: this server meets every acceptance criterion.") <
        r.out.find("Checklist:"));
  CHECK(r.out.find("PASS  Configuration: the doctor's checks") > r.out.find("Checklist:"));
  CHECK(r.out.find("Criteria used: the built-in defaults") != std::string::npos);
  const std::string html = read_text(out + "/report.html");
  CHECK(html.find("<h2>Checklist</h2>") < html.find("<h2>Stages</h2>"));
  CHECK(read_text(out + "/report.md").find("## Checklist") != std::string::npos);
  mgbench::test::check_results_schema(out + "/results.json");
  // `mgbench report` renders an accept run as its own report, never as an empty sweep's.
  const auto rep = run_mgbench("report " + out + "/results.json -o " + dir + "/r.html");
  CHECK(rep.exit_code == 0);
  CHECK(read_text(dir + "/r.html").find("<h2>Checklist</h2>") != std::string::npos);
  // The same directory again needs --force.
  const auto again = run_mgbench("accept --out " + out + kFlags, env_of(doctor_file(dir)));
  CHECK(again.exit_code == 2);
  CHECK(again.err.find("--force") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accept: communication that fails stops the run before the other stages (exit 1)") {
  const std::string dir = mgbench::test::temp_dir("accept-comm"), out = dir + "/out";
  const auto r =
      run_mgbench("accept --out " + out + kFlags, env_of(doctor_file(dir), "communication=wrong"));
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const auto result = accept_in(out);
  CHECK(result.verdict == "not_ready");
  CHECK(result.stopped_after == "communication");
  CHECK(result.stages[1].state == "ran");
  CHECK(result.stages[2].state == "not_run");
  CHECK(result.stages[3].state == "not_run");
  CHECK_FALSE(std::filesystem::exists(out + "/scaling"));
  CHECK(r.out.find("Stopped early after the communication stage") != std::string::npos);
  CHECK(
      r.out.find("FAIL  Every point of the stage ran and verified its result: 0 of 1 points ok") !=
      std::string::npos);
  CHECK(r.out.find("wrong: selftest: deliberately wrong") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accept: a failing configuration check stops after stage 1 with its cause, in Chinese") {
  const std::string dir = mgbench::test::temp_dir("accept-doctor"), out = dir + "/out";
  const auto r = run_mgbench("accept --lang zh --out " + out + kFlags,
                             env_of(doctor_file(dir, "power_limit")));
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const auto result = accept_in(out);
  CHECK(result.stopped_after == "configuration");
  CHECK(result.stages[1].state == "not_run");
  CHECK(r.out.find("验收未通过：1 项不合格") != std::string::npos);
  CHECK(r.out.find("失败") != std::string::npos);
  CHECK(r.out.find("- power_limit: GPU 1 power limit 300 W, default 700 W — 原因：GPU "
                   "的功耗上限低于默认值") != std::string::npos);
  CHECK(r.out.find("在“配置检查”阶段之后提前停止") != std::string::npos);
  CHECK(read_text(out + "/report.html").find("<html lang=\"zh-CN\">") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accept: one GPU skips communication and scaling, --soak 0 skips the soak") {
  const std::string dir = mgbench::test::temp_dir("accept-one"), out = dir + "/out";
  const auto r =
      run_mgbench("accept --soak 0 --no-history --out " + out, env_of(doctor_file(dir), "ok", 1));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const auto result = accept_in(out);
  CHECK(result.stages[1].state == "skipped");
  CHECK(result.stages[1].note.key == "stage.one_gpu");
  CHECK(result.stages[2].state == "ran");
  CHECK(result.stages[3].state == "skipped");
  CHECK(
      r.out.find("N/A   selftest scaling efficiency at all GPUs: one GPU: no scaling to measure") !=
      std::string::npos);
  // The saved result renders again, in Chinese, with the same verdict (exit 0).
  const auto zh =
      run_mgbench("accept --from " + out + "/results.json --lang zh --out " + dir + "/zh");
  INFO(zh.err);
  CHECK(zh.exit_code == 0);
  CHECK(zh.out.find("验收通过：本服务器满足全部验收标准。") != std::string::npos);
  CHECK(read_text(dir + "/zh/report.html").find("<h2>检查清单</h2>") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accept: a bad criteria file is refused with its line (exit 2), nothing runs") {
  const std::string dir = mgbench::test::temp_dir("accept-crit"), out = dir + "/out";
  write(dir + "/crit.txt", "# mine\ngemm_scaling_min = 95 %\nsoak_degradation_max = 3\n");
  const auto r = run_mgbench("accept --criteria " + dir + "/crit.txt --out " + out + kFlags,
                             env_of(doctor_file(dir)));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("crit.txt line 3: soak_degradation_max = '3': expected a percentage") !=
        std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK(run_mgbench("accept --lang fr --out " + out).exit_code == 2);
  CHECK(run_mgbench("accept --soak 0.5s --out " + out).exit_code == 2);
  const auto gpus = run_mgbench("accept --gpus 2 --out " + dir + "/g" + kFlags,
                                env_of(doctor_file(dir)));  // devices 0 and 1 exist
  CHECK(gpus.exit_code == 2);
  CHECK(gpus.err.find("--gpus 2 does not exist: 2 CUDA device(s) visible") != std::string::npos);
  // A good file: its criteria are used, printed and stored.
  write(dir + "/crit.txt", "gemm_scaling_min = 95 %\n");
  const auto ok = run_mgbench("accept --criteria " + dir + "/crit.txt --out " + out + kFlags,
                              env_of(doctor_file(dir)));
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("gemm_scaling_min = 95 %") != std::string::npos);
  CHECK(accept_in(out).criteria.gemm_scaling_min == Approx(0.95));
  std::filesystem::remove_all(dir);
}

TEST_CASE("accept: no GPU means it could not run (exit 4), with the reason saved") {
  const std::string dir = mgbench::test::temp_dir("accept-none"), out = dir + "/out";
  const auto r = run_mgbench("accept --out " + out + kFlags, env_of(doctor_file(dir), "ok", 0));
  CHECK(r.exit_code == 4);
  const auto result = accept_in(out);
  CHECK(result.verdict == "could_not_run");
  CHECK(result.stages[0].state == "could_not_run");
  CHECK(r.out.find("COULD NOT RUN") != std::string::npos);
  CHECK(r.out.find("no CUDA device visible") != std::string::npos);
  CHECK(r.out.find("0 GPU(s)") == std::string::npos);  // no summary of GPUs it never found
  CHECK(r.out.find("Checklist:") == std::string::npos);  // nor an empty checklist
  std::filesystem::remove_all(dir);
}
