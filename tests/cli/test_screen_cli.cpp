// `mgbench screen` end to end on the CPU, one host (the local launcher): 16 fake GPUs, the
// selftest's `screen` behaviour standing in for every stage, MGBENCH_TEST_SCREEN_FAULT slowing
// one GPU or one p2p link (docs/TESTING-HOOKS.md). The slow GPU is named, and nothing else, at
// 10 % and 30 %; with no fault nothing is named, run after run; the exit codes, the exclude
// list, results.json (schema, history), the report's heat maps, --dry-run and bad input. The
// fleets of several nodes are in tests/mpi/test_mpi_screen.cpp.
#include <filesystem>
#include <set>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/analysis/fleet.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "cli/sweep_support.hpp"

using mgbench::test::run_mgbench;

namespace {

const std::string kEnv = "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=16";

struct Screened {
  int exit_code = -1;
  std::string out, err, dir;
  mgbench::RunResult run;
  mgbench::ScreenSection screen;
};

// `mgbench screen ARGS` in a fresh directory (kept until the caller removes it).
Screened screen(const std::string& fault, const std::string& args = "") {
  Screened s;
  s.dir = mgbench::test::temp_dir("screen");
  const auto r = run_mgbench("screen --out " + s.dir + " --no-history " + args,
                             kEnv + (fault.empty() ? "" : " MGBENCH_TEST_SCREEN_FAULT=" + fault));
  s.exit_code = r.exit_code;
  s.out = r.out;
  s.err = r.err;
  if (std::filesystem::exists(s.dir + "/results.json")) {
    s.run = mgbench::load_results(s.dir + "/results.json");
    if (s.run.screen.is_object()) s.screen = s.run.screen.get<mgbench::ScreenSection>();
  }
  return s;
}

std::set<std::string> subjects(const mgbench::ScreenSection& s) {
  std::set<std::string> out;
  for (const auto& f : s.findings) out.insert(mgbench::finding_subject(s, f));
  return out;
}

}  // namespace

TEST_CASE("screen: one GPU of 16 slower by 10 % or 30 % is named, and nothing else (exit 1)") {
  for (const char* factor : {"0.1", "0.3"}) {
    INFO("slowdown " << factor);
    const auto s = screen(std::string("gpu:5@") + factor, "-q");
    INFO(s.err);
    CHECK(s.exit_code == 1);
    REQUIRE(s.screen.nodes.size() == 1);
    const std::string host = s.screen.nodes[0].host;
    CHECK(subjects(s.screen) == std::set<std::string>{host + " GPU 5"});
    // gemm, membw and h2d of stage 1, and the p2p matrix (GPU 5 slow to every peer).
    std::set<std::string> metrics;
    for (const auto& f : s.screen.findings) metrics.insert(f.metric);
    CHECK(metrics == std::set<std::string>{"gemm", "membw", "h2d", "p2p"});
    for (const auto& f : s.screen.findings) {
      CHECK(f.kind == mgbench::kFindingGpu);
      CHECK(f.gap == Approx(1 - 1 / (1 + std::stod(factor))).margin(0.02));
    }
    CHECK(s.out.find(host + " GPU 5") != std::string::npos);  // the console table
    std::filesystem::remove_all(s.dir);
  }
}

TEST_CASE("screen: no fault, no finding, run after run (exit 0)") {
  for (int run = 0; run < 3; ++run) {
    const auto s = screen("", "-q");
    INFO("run " << run << ": " << s.err << s.out);
    CHECK(s.exit_code == 0);
    CHECK(s.screen.findings.empty());
    // Stage 1's three items on 16 GPUs, the p2p matrix's 240 pairs, the node's all-reduce.
    CHECK(s.screen.figures.size() == 3 * 16 + 16 * 15 + 1);
    CHECK(s.out.find("Nothing found") != std::string::npos);
    std::filesystem::remove_all(s.dir);
  }
}

TEST_CASE("screen: a slow p2p link is a link finding, with results, history and report") {
  const std::string db = mgbench::test::temp_dir("screen-db") + "/history.db";
  const auto s = screen("link:2-9@0.5", "-q --db " + db);
  INFO(s.err);
  CHECK(s.exit_code == 1);
  const std::string host = s.screen.nodes.at(0).host;
  CHECK(subjects(s.screen) ==
        std::set<std::string>{"GPU 2 -> GPU 9 on " + host, "GPU 9 -> GPU 2 on " + host});
  CHECK(s.run.settings.value("mode", "") == "screen");
  CHECK(s.run.environment.at("test_hooks").contains("MGBENCH_TEST_SCREEN_FAULT"));
  CHECK(s.run.points.size() == 5);  // gemm, membw, h2d, p2p, allreduce: one point each
  mgbench::test::check_results_schema(s.dir + "/results.json");
  const std::string html = mgbench::test::read_text(s.dir + "/report.html");
  CHECK(html.find("<section id=\"screen\">") != std::string::npos);
  CHECK(html.find("class=\"chart heatmap\"") != std::string::npos);
  CHECK(html.find("p2p on " + host) != std::string::npos);
  // --no-history was given: nothing recorded; without it the screen is in the history.
  std::filesystem::remove_all(s.dir);
  const std::string dir = mgbench::test::temp_dir("screen-hist");
  const auto r = run_mgbench("screen --stages 1 -q --out " + dir + " --db " + db, kEnv);
  CHECK(r.exit_code == 0);
  const auto list = run_mgbench("history list --db " + db);
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("Fake GPU") != std::string::npos);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
}

TEST_CASE("screen: the exclude list names the slow GPU as host:gpu") {
  const std::string dir = mgbench::test::temp_dir("screen-excl");
  const auto r = run_mgbench("screen --stages 1 -q --no-history --out " + dir +
                                 " --exclude-list " + dir + "/exclude.txt",
                             kEnv + " MGBENCH_TEST_SCREEN_FAULT=gpu:11@0.3");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const std::string list = mgbench::test::read_text(dir + "/exclude.txt");
  const auto run = mgbench::load_results(dir + "/results.json");
  const std::string host = run.screen.at("nodes").at(0).at("host").get<std::string>();
  CHECK(list.find("\n" + host + ":11\n") != std::string::npos);
  CHECK(list.find(host + "\n") == std::string::npos);  // the host itself is kept
  std::filesystem::remove_all(dir);
}

TEST_CASE("screen: the only node hangs: reported with its host, the screen finishes (exit 4)") {
  // The local launcher's one node is this host: its first launch sleeps for ever, is ended after
  // --group-timeout, and the node is a finding; with no node left nothing could be screened.
  const auto s = screen("hang:" + mgbench::host_name(), "--stages 1 --group-timeout 2");
  INFO(s.err);
  CHECK(s.exit_code == 4);
  REQUIRE(s.screen.nodes.size() == 1);
  CHECK(s.screen.nodes[0].status == "failed");
  CHECK(s.screen.nodes[0].message.find("stage 1 (gemm): ") == 0);
  CHECK(s.screen.figures.empty());
  CHECK(subjects(s.screen) == std::set<std::string>{mgbench::host_name()});
  REQUIRE(s.screen.findings.size() == 1);
  CHECK(s.screen.findings[0].kind == mgbench::kFindingNodeFailed);
  std::filesystem::remove_all(s.dir);
}

TEST_CASE("screen --dry-run prints the schedule and the estimate and runs nothing") {
  const std::string dir = mgbench::test::temp_dir("screen-dry");
  const auto r = run_mgbench("screen --dry-run --out " + dir + "/out", kEnv);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Screen: 1 node(s) x 16 GPU(s), 5 launch(es), estimated") !=
        std::string::npos);
  CHECK(r.out.find("stage 1  gemm") != std::string::npos);
  CHECK(r.out.find("stage 2  p2p") != std::string::npos);
  CHECK(r.out.find("stage 3 (between nodes): needs --launcher mpirun or srun") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/out"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("screen: bad input is one line and exit 2, before anything runs") {
  for (const char* args : {"--stages 4", "--stages 1,x", "--threshold 0", "--threshold 100",
                           "--group-timeout -1", "--parallel 0", "--parallel 1.5",
                           "--hosts a:8", "--launcher ssh"}) {
    INFO(args);
    const auto r = run_mgbench(std::string("screen --dry-run ") + args, kEnv);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  const auto r = run_mgbench("screen --dry-run", kEnv + " MGBENCH_TEST_SCREEN_FAULT=gpu:x@1");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("MGBENCH_TEST_SCREEN_FAULT: invalid entry 'gpu:x@1'") != std::string::npos);
}
