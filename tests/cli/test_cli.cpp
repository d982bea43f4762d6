// The real binary end to end: exit codes, one-line errors, dry run, and the orchestrator's
// fault handling (crash, hang, garbage, interrupt, resume) with the CPU-only selftest workload;
// the other faults are in test_sweep_faults.cpp and test_sweep_kill.cpp.
#include <cuda_runtime_api.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::kQuiet;
using mgbench::test::kSelftestEnv;
using mgbench::test::line_count;
using mgbench::test::run_mgbench;

namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace

TEST_CASE("option --version prints the version and exits 0") {
  const auto r = run_mgbench("--version");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("mgbench 0.") == 0);
}

TEST_CASE("an unknown command exits 2 with one line") {
  const auto r = run_mgbench("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
}

TEST_CASE("list names every workload with its parameters") {
  const auto r = run_mgbench("list");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("gemm:") != std::string::npos);
  CHECK(r.out.find("--param dtype") != std::string::npos);
  // The power-bound workloads say they warm up long enough for sustained clocks; others not.
  const std::string out = "\n" + r.out;
  const auto block = [&out](const std::string& name) {
    const auto at = out.find("\n" + name + ":");
    return at == std::string::npos ? std::string() : out.substr(at, out.find("\n\n", at + 1) - at);
  };
  CHECK(block("gemm").find("warm-up: 1 s per point") != std::string::npos);
  CHECK(block("train_step").find("warm-up: 1 s per point") != std::string::npos);
  CHECK(block("allreduce").find("warm-up:") == std::string::npos);
  CHECK_FALSE(block("allreduce").empty());
}

TEST_CASE("a dry run prints the plan and needs no GPU when --gpus is given") {
  const auto r = run_mgbench("sweep --dry-run --gpus 1,2,4,8");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Plan:") == 0);
  CHECK(r.out.find("GPU counts 1,2,4,8") != std::string::npos);
  CHECK(r.out.find("estimated") != std::string::npos);
}

TEST_CASE("bad sweep input exits 2 with one line naming the value, and runs nothing") {
  struct Case {
    std::string args;
    std::string needle;
  };
  const Case cases[] = {
      {"--gpus 0", "'0'"},
      {"--gpus=-2", "-2"},
      {"--gpus two", "'two'"},
      {"--gpus 1,1", "duplicate"},
      {"--gpus ''", "empty"},
      {"--gpus 4 --devices 0,1", "2 available"},
      {"--gpus 1 --workloads nope", "unknown workload 'nope'"},
      {"--gpus 1 --dtypes fp7", "unknown dtype 'fp7'"},
      {"--gpus 1 --workloads ''", "empty"},
      {"--gpus 1 --frobnicate", "frobnicate"},
      {"--gpus 1 --min-samples 1x", "'1x'"},
      {"--gpus 1 --max-noise -1", "-1"},
      {"--gpus 1 --max-time-per-point abc", "'abc'"},
      {"--gpus 1 --group-timeout 0", "group-timeout"},
      {"--gpus 1 --profile turbo", "'turbo'"},
      {"--gpus 1 --batch-sizes 0", "'0'"},
      {"--gpus 1 --telemetry-interval fast", "'fast'"},
      // Named before any device is probed: without --gpus, and without a GPU.
      {"--workloads nope", "unknown workload 'nope'"},
      {"--dtypes fp7", "unknown dtype 'fp7'"},
      {"--param nope=1", "unknown parameter 'nope'"},
      {"--devices 0 --workloads nope", "unknown workload 'nope'"},
  };
  for (const auto& c : cases) {
    INFO("mgbench sweep --dry-run " << c.args);
    const auto r = run_mgbench("sweep --dry-run " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(c.needle) != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("without a GPU a real sweep exits 4 with one line") {
  if (have_gpu()) {
    // With a GPU the same command would run: check the usage path instead.
    CHECK(run_mgbench("sweep --gpus 64 --workloads gemm").exit_code == 2);
    return;
  }
  const auto r = run_mgbench("sweep --gpus 1 --workloads gemm --no-history");
  CHECK(r.exit_code == 4);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("CUDA") != std::string::npos);
}

TEST_CASE("a crashing worker fails its point, a fresh worker runs the rest") {
  const std::string out = mgbench::test::temp_dir("crash");
  const auto r = run_mgbench("sweep --workloads selftest --param behavior=ok,crash,ok --gpus 1"
                             " --out " + out + kQuiet,
                             kSelftestEnv);
  CHECK(r.exit_code == 4);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 3);
  CHECK(run.points[0].status == mgbench::Status::ok);
  CHECK(run.points[1].status == mgbench::Status::failed);
  CHECK(run.points[1].message.find("signal") != std::string::npos);
  CHECK(run.points[2].status == mgbench::Status::ok);
  std::filesystem::remove_all(out);
}

TEST_CASE("a hung worker is killed at --group-timeout and its points are timeout") {
  const std::string out = mgbench::test::temp_dir("hang");
  const auto r = run_mgbench("sweep --workloads selftest --param behavior=ok,hang,ok --gpus 1,2"
                             // a worker can take a second to start on a loaded machine
                             " --group-timeout 3 --out " + out + kQuiet,
                             kSelftestEnv);
  CHECK(r.exit_code == 4);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 6);
  CHECK(run.points[0].status == mgbench::Status::ok);
  CHECK(run.points[1].status == mgbench::Status::timeout);
  CHECK(run.points[2].status == mgbench::Status::timeout);
  CHECK(run.points[3].status == mgbench::Status::ok);  // the next group still runs
  CHECK(run.points[3].gpus == 2);
  std::filesystem::remove_all(out);
}

TEST_CASE("garbage on the result pipe is ignored, wrong results exit 3") {
  const std::string out = mgbench::test::temp_dir("garbage");
  auto r = run_mgbench("sweep --workloads selftest --param behavior=garbage,ok --gpus 1 --out " +
                           out + kQuiet,
                       kSelftestEnv);
  CHECK(r.exit_code == 0);
  CHECK(mgbench::load_results(out + "/results.json").points.size() == 2);
  const std::string wrong = mgbench::test::temp_dir("wrong");
  r = run_mgbench("sweep --workloads selftest --param behavior=ok,wrong --gpus 1 --out " + wrong +
                      kQuiet,
                  kSelftestEnv);
  CHECK(r.exit_code == 3);
  const auto run = mgbench::load_results(wrong + "/results.json");
  REQUIRE(run.points.size() == 2);
  CHECK(run.points[1].status == mgbench::Status::wrong);
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(wrong);
}

TEST_CASE("Ctrl-C saves the finished points (exit 130) and --resume completes the sweep") {
  const std::string out = mgbench::test::temp_dir("interrupt");
  const std::string cmd = kSelftestEnv + " sh -c '\"" MGBENCH_BINARY
                          "\" sweep --workloads selftest --param behavior=slow,slow,slow,slow,"
                          "slow,slow,slow,slow --param batch=1,2 --gpus 1 --out " + out + kQuiet +
                          " 2>/dev/null & pid=$!; "
                          "for i in $(seq 600); do grep -qs result " + out +
                          "/journal.jsonl && break; sleep 0.05; done; "
                          "kill -INT $pid; wait $pid'";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto interrupted = mgbench::load_results(out + "/results.json");
  CHECK(interrupted.interrupted);
  REQUIRE(interrupted.points.size() == 16);
  int ok = 0, skipped = 0;
  for (const auto& p : interrupted.points) {
    ok += p.status == mgbench::Status::ok;
    skipped += p.status == mgbench::Status::skipped;
  }
  CHECK(ok >= 1);
  CHECK(skipped >= 1);
  CHECK(ok + skipped == 16);

  const auto resumed = run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv);
  CHECK(resumed.exit_code == 0);
  const auto done = mgbench::load_results(out + "/results.json");
  REQUIRE(done.points.size() == 16);
  for (const auto& p : done.points) CHECK(p.status == mgbench::Status::ok);
  CHECK_FALSE(done.interrupted);
  // Finished points were kept, not run again.
  for (const auto& p : interrupted.points) {
    if (p.status == mgbench::Status::ok) CHECK(done.points[p.index].started_at == p.started_at);
  }
  CHECK(mgbench::test::read_journal_points(out + "/journal.jsonl").count.size() == 16);
  std::filesystem::remove_all(out);
}

TEST_CASE("report recomputes the summaries of known workloads: the example shows own vs cuBLAS") {
  // The example's results with the GEMM summary and its presentation taken out, as a build that
  // had no such summary would have written them.
  const std::string src = MGBENCH_SOURCE_DIR "/reports/examples/h200-1gpu/results.json";
  mgbench::Json doc = mgbench::Json::parse(mgbench::test::read_text(src));
  REQUIRE(doc["summaries"].contains("gemm"));
  doc["summaries"].erase("gemm");
  doc["presentation"]["gemm"].erase("summaries");
  const std::string dir = mgbench::test::temp_dir("refresh");
  const std::string stripped = dir + "/results.json", out = dir + "/r.md";
  {
    std::ofstream f(stripped);
    f << doc.dump();
  }
  REQUIRE(mgbench::test::read_text(stripped).find("own kernels vs cuBLAS") == std::string::npos);
  const auto r = run_mgbench("report " + stripped + " -o " + out);
  REQUIRE(r.exit_code == 0);
  const std::string md = mgbench::test::read_text(out);
  const auto at = md.find("### gemm own kernels vs cuBLAS");
  REQUIRE(at != std::string::npos);
  const std::string table = md.substr(at, md.find("\n\n###", at) - at);
  CHECK(table.find("| 1 | M=N=K=4096 | bf16 | host, cold | 685.2 | 588.0 | 0.858 | "
                   "sm90a\\_wgmma v1 |") != std::string::npos);
  std::filesystem::remove_all(dir);
}
