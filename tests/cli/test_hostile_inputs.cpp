// Untrusted files through the real binary: terminal escapes and forged lines never reach the
// console, hostile shapes fail fast and small (under 2 s and 200 MB), many points compare in
// linear time (CPU seconds of the child), huge parameters are refused at planning time, NaN points are kept as failed,
// a non-UTF-8 --out still gets its results, report and history, and --redact leaves no
// identifying value in what is shared.
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::Json;
using mgbench::test::children_cpu_s;
using mgbench::test::children_max_rss_mb;
using mgbench::test::kQuiet;
using mgbench::test::kSelftestEnv;
using mgbench::test::run_mgbench;

namespace {

// ESC, CSI (U+009B encoded and raw), a bidi override, and a forged summary line.
const std::string kHostile = "x\x1b[2J\xC2\x9B" "1A\x9B\xE2\x80\xAE\nSummary: 0 slower\r";

bool clean_console(const std::string& text) {
  return text.find('\x1b') == std::string::npos && text.find("\xC2\x9B") == std::string::npos &&
         text.find('\x9b') == std::string::npos && text.find("\xE2\x80\xAE") == std::string::npos &&
         text.find('\r') == std::string::npos &&
         text.find("\nSummary: 0 slower\n") == std::string::npos;
}

mgbench::PointResult point(std::size_t index, mgbench::Params params, int gpus, double median) {
  mgbench::PointResult p;
  p.index = index;
  p.workload = "synthetic";
  p.params = std::move(params);
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  for (int i = 0; i < 12; ++i) p.samples.push_back(median * (1.0 + 0.001 * (i % 3)));
  p.stats = mgbench::compute_statistics(p.samples, 10);
  p.metrics = Json{{"items_per_s", gpus / median}};
  return p;
}

mgbench::RunResult hostile_run(double factor) {
  mgbench::RunResult run;
  run.host = "node" + kHostile;
  run.environment = Json{{"versions", {{"driver", (factor > 1 ? "580" : "570") + kHostile}}}};
  run.points.push_back(point(0, mgbench::Params{{"mode", kHostile}}, 1, 1e-3 * factor));
  run.points.push_back(point(1, mgbench::Params{{"mode", kHostile}}, 2, 0.6e-3 * factor));
  auto failed = point(2, mgbench::Params{{"mode", "other"}}, 1, 1e-3);
  failed.status = mgbench::Status::failed;
  failed.message = kHostile;
  run.points.push_back(failed);
  return run;
}

mgbench::RunResult many_points(std::size_t n, double factor) {
  mgbench::RunResult run;
  run.host = "node";
  for (std::size_t i = 0; i < n; ++i) {
    run.points.push_back(
        point(i, mgbench::Params{{"size", static_cast<int>(i)}}, 1, 1e-3 * factor));
  }
  return run;
}

}  // namespace

TEST_CASE("hostile strings: compare prints no escape, C1, bidi or forged line") {
  const std::string dir = mgbench::test::temp_dir("hostile-compare");
  mgbench::save_results(hostile_run(1.0), dir + "/base.json");
  mgbench::save_results(hostile_run(1.5), dir + "/new.json");
  const auto r = run_mgbench("compare " + dir + "/base.json " + dir + "/new.json --env-all");
  CHECK(r.exit_code == 1);  // the slower points are still found
  CHECK(r.out.find("slower") != std::string::npos);
  CHECK(clean_console(r.out));
  CHECK(clean_console(r.err));
  std::filesystem::remove_all(dir);
}

TEST_CASE("hostile strings: error messages and the text report are sanitised") {
  const auto missing = run_mgbench("report '/nonexistent/\x1b[31mred\xE2\x80\xAE.json'");
  CHECK(missing.exit_code == 2);
  CHECK(clean_console(missing.err));
  const std::string dir = mgbench::test::temp_dir("hostile-report");
  mgbench::save_results(hostile_run(1.0), dir + "/r.json");
  const auto text = run_mgbench("report " + dir + "/r.json --format text");
  CHECK(text.exit_code == 0);
  CHECK(clean_console(text.out));
  std::filesystem::remove_all(dir);
}

// What the idle binary holds resident (`mgbench --version`): the budget is on top of it.
double idle_rss_mb() {
  (void)run_mgbench("--version");
  return children_max_rss_mb();
}

TEST_CASE("hostile shapes: each fails with exit 2 in under 2 s and 200 MB") {
  const double idle = idle_rss_mb();
  const std::string dir = mgbench::test::temp_dir("hostile-shapes");
  std::ofstream(dir + "/nested.json") << std::string(100000, '[') << std::string(100000, ']');
  std::string wide = "{\"schema_version\":2,\"points\":[";
  for (int i = 0; i < 20000; ++i) {
    auto p =
        point(static_cast<std::size_t>(i), mgbench::Params{{"p" + std::to_string(i), 1}}, 1, 1e-3);
    p.samples.clear();
    wide += (i ? "," : "") + mgbench::dump_json(Json(p));
  }
  std::ofstream(dir + "/wide.json") << wide << "]}";
  std::ofstream(dir + "/long.json") << "{\"schema_version\":2,\"host\":\"" << std::string(3u << 20, 'x')
                                    << "\",\"points\":[]}";
  for (const char* name : {"nested", "wide", "long"}) {
    for (const std::string command : {"report", "compare"}) {
      INFO(name << " " << command);
      const std::string file = dir + "/" + name + ".json";
      const double start = children_cpu_s();
      const auto r = run_mgbench(command == "report" ? "report " + file + " -o " + dir + "/o.html"
                                                     : "compare " + file + " " + file);
      const double seconds = children_cpu_s() - start;
      CHECK(r.exit_code == 2);
      CHECK(mgbench::test::line_count(r.err) == 1);
      CHECK(seconds < 2.0 * mgbench::test::kCpuBudgetScale);
    }
  }
  CHECK(children_max_rss_mb() < idle + 200.0 * mgbench::test::kMemoryBudgetScale);
  std::filesystem::remove_all(dir);
}

TEST_CASE("many points: compare and offers of 5000-point runs take seconds of CPU, not minutes") {
  const double idle = idle_rss_mb();
  const std::string dir = mgbench::test::temp_dir("many-points");
  mgbench::save_results(many_points(5000, 1.0), dir + "/a.json");
  mgbench::save_results(many_points(5000, 1.01), dir + "/b.json");
  mgbench::save_results(many_points(5000, 0.99), dir + "/c.json");
  for (const std::string& args : {"compare " + dir + "/a.json " + dir + "/b.json --json",
                                 "compare " + dir + "/a.json " + dir + "/b.json " + dir +
                                     "/c.json --json"}) {
    INFO(args);
    const double start = children_cpu_s();
    const auto r = run_mgbench(args);
    const double seconds = children_cpu_s() - start;
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    // About 1 s of CPU when the machine is idle; 2.02 s was seen on a loaded 2-core CI machine.
    // The guard is against the quadratic scans (far above this), not a performance target.
    CHECK(seconds < 6.0 * mgbench::test::kCpuBudgetScale);
  }
  CHECK(children_max_rss_mb() < idle + 200.0 * mgbench::test::kMemoryBudgetScale);
  std::filesystem::remove_all(dir);
}

TEST_CASE("parameter bounds: a huge value is refused at planning time (exit 2)") {
  for (const std::string param : {"hidden=2147483648", "size=3037000500"}) {
    INFO(param);
    const auto r = run_mgbench("sweep --dry-run --workloads " +
                               std::string(param[0] == 'h' ? "train_step" : "gemm") +
                               " --param " + param + kQuiet);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("above its maximum") != std::string::npos);
  }
}

TEST_CASE("non-finite: a NaN point is kept as failed with the reason, results load") {
  const std::string out = mgbench::test::temp_dir("nan");
  const auto r = run_mgbench("sweep --workloads selftest --param behavior=ok,nan --gpus 1 --out " +
                                 out + kQuiet,
                             kSelftestEnv);
  CHECK(r.exit_code == 4);  // a failed point
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 2);
  CHECK(run.points[0].status == mgbench::Status::ok);
  CHECK(run.points[1].status == mgbench::Status::failed);
  CHECK(run.points[1].message.find("non-finite result: sample 1 is not finite") !=
        std::string::npos);
  std::filesystem::remove_all(out);
}

TEST_CASE("encoding: a non-UTF-8 --out gets results.json, a report and a history entry "
          "(where the build has SQLite)") {
  const std::string dir = mgbench::test::temp_dir("non-utf8");
  const std::string out = "\"$(printf '" + dir + "/out-\\377\\376')\"";
  const auto r = run_mgbench("sweep --workloads selftest --param behavior=ok --gpus 1 --out " +
                                 out + " --db " + dir + "/h.db --skip-doctor --no-telemetry -q",
                             kSelftestEnv);
  CHECK(r.exit_code == 0);
  const std::string made = dir + "/out-\xff\xfe";
  REQUIRE(std::filesystem::exists(made + "/results.json"));
  CHECK(mgbench::load_results(made + "/results.json").points.size() == 1);
  CHECK(std::filesystem::exists(made + "/report.html"));
  const auto history = run_mgbench("history list --db " + dir + "/h.db --json");
  CHECK(history.exit_code == 0);
  CHECK(Json::parse(history.out).size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("redact: report --redact --json and sweep --redact share no identifying value") {
  const std::string dir = mgbench::test::temp_dir("redact");
  auto run = many_points(2, 1.0);
  run.host = "secret-host-name";
  run.environment = Json{{"env", {{"SLURM_JOB_ID", "998877"}}},
                         {"gpus", Json::array({{{"serial", "1652823054311"}}})}};
  mgbench::save_results(run, dir + "/in.json");
  const auto r = run_mgbench("report " + dir + "/in.json --redact --json -o " + dir + "/out.json");
  REQUIRE(r.exit_code == 0);
  const std::string shared = mgbench::test::read_text(dir + "/out.json");
  for (const char* secret : {"secret-host-name", "998877", "1652823054311"}) {
    CHECK(shared.find(secret) == std::string::npos);
  }
  CHECK(mgbench::load_results(dir + "/out.json").points.size() == 2);
  const auto sweep = run_mgbench("sweep --workloads selftest --param behavior=ok --gpus 1 --out " +
                                     dir + "/s --redact" + kQuiet,
                                 kSelftestEnv);
  CHECK(sweep.exit_code == 0);
  const auto swept = mgbench::load_results(dir + "/s/results.json");
  CHECK(swept.host.rfind("redacted-", 0) == 0);
  std::filesystem::remove_all(dir);
}
