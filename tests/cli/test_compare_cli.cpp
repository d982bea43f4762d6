// `mgbench compare` and `mgbench history` through the real binary: exit codes, one-line errors,
// JSON output, offers, and the history commands on a database written by record_run.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/store/history.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"

namespace {

using mgbench::Json;
using mgbench::PointResult;
using mgbench::RunResult;
using mgbench::test::run_mgbench;

std::vector<double> samples_around(double median_s, int n, std::uint32_t seed) {
  std::vector<double> out;
  std::uint32_t state = seed * 2654435761u + 7u;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const double u = (static_cast<double>(state >> 8) / static_cast<double>(1u << 24)) * 2.0 - 1.0;
    out.push_back(median_s * (1.0 + 0.002 * u));
  }
  return out;
}

// A run of a workload no registry knows ("synthetic": compared on time) at 1 and 2 GPUs.
RunResult synthetic_run(double factor, std::uint32_t seed, const std::string& host = "node1") {
  RunResult run;
  run.tool = Json{{"name", "mgbench"}, {"version", "0.1.0"}, {"git_revision", "test"}};
  run.started_at = "2025-01-0" + std::to_string(1 + seed % 9) + "T00:00:00.000Z";
  run.finished_at = run.started_at;
  run.host = host;
  run.environment = Json{{"versions", {{"driver", seed % 2 ? "580.65.06" : "570.86.15"}}},
                         {"gpus", Json::array({Json{{"name", "NVIDIA H200"}}})}};
  for (int gpus : {1, 2}) {
    PointResult p;
    p.index = run.points.size();
    p.workload = "synthetic";
    p.params = mgbench::Params{{"size", 4096}};
    p.gpus = gpus;
    for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
    p.samples = samples_around(1e-3 * factor, 25, seed * 10 + static_cast<std::uint32_t>(gpus));
    std::vector<double> sorted = p.samples;
    std::sort(sorted.begin(), sorted.end());
    p.stats.n = sorted.size();
    p.stats.median = sorted[sorted.size() / 2];
    p.stats.mean = p.stats.median;
    p.stats.min = sorted.front();
    p.stats.max = sorted.back();
    p.metrics = Json{{"items_per_s", gpus / p.stats.median}};
    run.points.push_back(p);
  }
  return run;
}

struct Files {
  std::string dir = mgbench::test::temp_dir("compare-cli");
  ~Files() { std::filesystem::remove_all(dir); }
  std::string save(const std::string& name, const RunResult& run) const {
    const std::string path = dir + "/" + name;
    mgbench::save_results(run, path);
    return path;
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
};

bool one_line(const std::string& text) {
  return !text.empty() && std::count(text.begin(), text.end(), '\n') == 1 && text.back() == '\n';
}

}  // namespace

TEST_CASE("compare cli: identical configurations exit 0", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.save("b.json", synthetic_run(1.0, 4)));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("2 same") != std::string::npos);
  CHECK(r.out.find("0 slower") != std::string::npos);
}

TEST_CASE("compare cli: a real slowdown exits 1", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare " + f.save("base.json", synthetic_run(1.0, 2)) + " " +
                             f.save("new.json", synthetic_run(1.08, 3)));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("slower") != std::string::npos);
  CHECK(r.out.find("REGRESSION") != std::string::npos);
  // The environment diff comes first.
  CHECK(r.out.find("versions.driver") < r.out.find("slower"));
}

TEST_CASE("compare cli: --json prints the comparison for CI", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare --json " + f.save("base.json", synthetic_run(1.0, 2)) + " " +
                             f.save("new.json", synthetic_run(1.08, 3)));
  CHECK(r.exit_code == 1);
  const Json j = Json::parse(r.out);
  CHECK(j.at("summary").at("slower") == 2);
  CHECK(j.at("summary").at("exit_code") == 1);
}

TEST_CASE("compare cli: --threshold above the effect exits 0", "[cli][compare]") {
  Files f;
  const auto r =
      run_mgbench("compare --threshold 20 " + f.save("base.json", synthetic_run(1.0, 2)) + " " +
                  f.save("new.json", synthetic_run(1.08, 3)));
  CHECK(r.exit_code == 0);
}

TEST_CASE("compare cli: --baseline noise raises the threshold", "[cli][compare]") {
  Files f;
  const std::string base = f.save("base.json", synthetic_run(1.0, 2));
  const std::string b1 = f.save("b1.json", synthetic_run(1.06, 4));
  const std::string b2 = f.save("b2.json", synthetic_run(0.94, 6));
  const std::string next = f.save("new.json", synthetic_run(1.08, 3));
  const auto r = run_mgbench("compare " + base + " " + next + " --baseline " + b1 + " " + b2);
  CHECK(r.exit_code == 0);
}

TEST_CASE("compare cli: a missing file exits 2 with one line", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " + f.dir +
                             "/missing.json");
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("missing.json") != std::string::npos);
}

TEST_CASE("compare cli: a malformed file exits 2 with one line", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.write("bad.json", "{not json"));
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
}

TEST_CASE("compare cli: a truncated file exits 2 with one line", "[cli][compare]") {
  Files f;
  const std::string text = Json(synthetic_run(1.0, 2)).dump();
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.write("cut.json", text.substr(0, text.size() - 40)));
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
}

TEST_CASE("compare cli: another schema version exits 2 with one line", "[cli][compare]") {
  Files f;
  Json doc = synthetic_run(1.0, 2);
  doc["schema_version"] = 999;
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.write("future.json", doc.dump()));
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("schema_version") != std::string::npos);
}

TEST_CASE("compare cli: nothing matched exits 5 (inconclusive) with one line", "[cli][compare]") {
  Files f;
  RunResult other = synthetic_run(1.0, 3);
  for (auto& p : other.points) p.workload = "other";
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.save("b.json", other));
  CHECK(r.exit_code == 5);
  CHECK(one_line(r.err));
  CHECK(r.err.find("nothing to compare") != std::string::npos);
}

TEST_CASE("compare cli: a single input exits 2", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)));
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
}

TEST_CASE("compare cli: a malformed threshold exits 2", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare --threshold abc " + f.save("a.json", synthetic_run(1.0, 2)) +
                             " " + f.save("b.json", synthetic_run(1.0, 3)));
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
}

TEST_CASE("compare cli: three inputs give the offer table", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.save("b.json", synthetic_run(1.2, 3)) + " " +
                             f.save("c.json", synthetic_run(0.9, 4)) +
                             " --price a=2.49 --price b=1.80 --price c=3.10 --json");
  CHECK(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j.at("kind") == "offers");
  CHECK(j.at("offers").size() == 3);
  CHECK(j.at("offers").at(1).at("price_per_gpu_hour").get<double>() == Approx(1.80));
}

TEST_CASE("compare cli: --price for an unknown label exits 2", "[cli][compare]") {
  Files f;
  const auto r = run_mgbench("compare --offers " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.save("b.json", synthetic_run(1.0, 3)) + " --price zz=1.0");
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
}

TEST_CASE("compare cli: --report FILE.json writes the comparison", "[cli][compare]") {
  Files f;
  const std::string report = f.dir + "/cmp.json";
  const auto r = run_mgbench("compare " + f.save("a.json", synthetic_run(1.0, 2)) + " " +
                             f.save("b.json", synthetic_run(1.0, 3)) + " --report " + report);
  CHECK(r.exit_code == 0);
  CHECK(Json::parse(mgbench::test::read_text(report)).at("kind") == "comparison");
}

namespace {
std::string data_file(const std::string& name) {
  return std::string(MGBENCH_SOURCE_DIR) + "/tests/data/compare/" + name;
}
}  // namespace

TEST_CASE("compare cli: committed example files, rerun is the same", "[cli][compare]") {
  const auto r = run_mgbench("compare " + data_file("base.json") + " " + data_file("rerun.json"));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("2 same") != std::string::npos);
}

TEST_CASE("compare cli: committed example files, the slower run exits 1", "[cli][compare]") {
  const auto r = run_mgbench("compare " + data_file("base.json") + " " + data_file("slower.json"));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("versions.driver:") != std::string::npos);
  CHECK(r.out.find("2 slower") != std::string::npos);
}

TEST_CASE("compare cli: committed example files as offers with prices", "[cli][compare]") {
  const auto r = run_mgbench("compare " + data_file("base.json") + " " + data_file("slower.json") +
                             " " + data_file("cloud.json") +
                             " --price base=2.49 --price slower=1.80 --price cloud=3.10");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("per dollar [TFLOP/s per $/h]") != std::string::npos);
  CHECK(r.out.find("VM (KVM)") != std::string::npos);
}

TEST_CASE("history cli: list, show, export and trend", "[cli][history]") {
  Files f;
  const std::string db = f.dir + "/h.db";
  const RunResult first = synthetic_run(1.0, 2), second = synthetic_run(1.1, 3);
  mgbench::record_run(first, db);
  mgbench::record_run(second, db);
  const auto list = run_mgbench("history list --db " + db);
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("node1") != std::string::npos);
  const auto show = run_mgbench("history show 1 --db " + db);
  CHECK(show.exit_code == 0);
  CHECK(show.out.find("synthetic") != std::string::npos);
  const auto exported = run_mgbench("history export last --db " + db);
  CHECK(exported.exit_code == 0);
  CHECK(Json::parse(exported.out) == Json(second));
  const auto trend = run_mgbench(
      "history trend --workload synthetic --metric items_per_s "
      "--by driver --json --db " +
      db);
  CHECK(trend.exit_code == 0);
  CHECK(Json::parse(trend.out).at("rows").size() == 4);
}

TEST_CASE("history cli: a corrupt database exits 2 with one line", "[cli][history]") {
  Files f;
  const auto r = run_mgbench("history list --db " + f.write("bad.db", std::string(2048, 'z')));
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("corrupt") != std::string::npos);
}

TEST_CASE("history cli: list before any run says so and exits 0", "[cli][history]") {
  Files f;
  const std::string db = f.dir + "/none.db";
  const auto r = run_mgbench("history list --db " + db);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("No run recorded yet") != std::string::npos);
  const auto json = run_mgbench("history list --json --db " + db);
  CHECK(json.exit_code == 0);
  CHECK(Json::parse(json.out) == Json::array());
  CHECK_FALSE(std::filesystem::exists(db));  // a reading command creates nothing
  const auto show = run_mgbench("history show last --db " + db);
  CHECK(show.exit_code == 2);
  CHECK(one_line(show.err));
  CHECK(show.err.find("no run recorded yet") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(db));
}

TEST_CASE("history cli: an unknown subcommand exits 2", "[cli][history]") {
  const auto r = run_mgbench("history frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
}
