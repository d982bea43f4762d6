// Results model: JSON round trip, malformed documents, atomic writes, journal replay and the
// worker protocol (garbage and truncated lines never crash the orchestrator).
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/journal.hpp"
#include "mgbench/run/worker_protocol.hpp"
#include "support.hpp"

namespace {

mgbench::PointResult sample_point(std::size_t index) {
  mgbench::PointResult p;
  p.index = index;
  p.workload = "gemm";
  p.params = {{"dtype", "bf16"}, {"m", 4096}, {"impl", "cublas"}};
  p.gpus = 2;
  p.devices = {0, 1};
  p.samples = {1.0e-3, 1.1e-3, 0.9e-3};
  p.stats = mgbench::compute_statistics(p.samples);
  p.ranks = {{0, 0, 1.0e-3, 1.0e-3}, {1, 1, 1.05e-3, 1.04e-3}};
  p.metrics = {{"tflops_per_gpu", 123.5}};
  p.noisy = true;
  p.measured.warmup_s = 1.02;
  return p;
}

mgbench::RunResult sample_run() {
  mgbench::RunResult run;
  run.tool = {{"name", "mgbench"}, {"version", "0.1.0"}, {"git_revision", "abc"}};
  run.argv = {"mgbench", "sweep"};
  run.started_at = "2026-12-02T10:00:00.000Z";
  run.finished_at = "2026-12-02T10:01:00.000Z";
  run.host = "host<script>";
  run.points = {sample_point(0), sample_point(1)};
  run.points[1].status = mgbench::Status::oom;
  run.points[1].message = "out of memory";
  return run;
}

}  // namespace

TEST_CASE("a run survives a JSON round trip unchanged") {
  const auto run = sample_run();
  const mgbench::Json j = run;
  const auto back = j.get<mgbench::RunResult>();
  CHECK(mgbench::Json(back) == j);
  CHECK(back.points[1].status == mgbench::Status::oom);
  CHECK(back.points[0].ranks[1].median_s == Approx(1.05e-3));
  CHECK(back.points[0].noisy);
  CHECK(back.points[0].measured.warmup_s == Approx(1.02));
  // A point written before warm-ups were recorded reads as 0 (not recorded).
  mgbench::Json old = j;
  old["points"][0].erase("warmup_s");
  CHECK(old.get<mgbench::RunResult>().points[0].measured.warmup_s == 0);
}

TEST_CASE("a point's placement survives a round trip, and files without one read as threads") {
  auto p = sample_point(0);
  p.gpus = 16;
  p.placement = {mgbench::ProcessModel::processes, mgbench::Launcher::srun, 2, {"n1", "n2"}, 8};
  const mgbench::Json j = p;
  CHECK(j.at("process_model") == "processes");
  CHECK(j.at("launcher") == "srun");
  CHECK(j.at("nodes") == 2);
  CHECK(j.at("gpus_per_node") == 8);
  const auto back = j.get<mgbench::PointResult>();
  CHECK(back.placement.process_model == mgbench::ProcessModel::processes);
  CHECK(back.placement.launcher == mgbench::Launcher::srun);
  CHECK(back.placement.nodes == 2);
  CHECK(back.placement.hosts == std::vector<std::string>{"n1", "n2"});
  CHECK(back.placement.gpus_per_node == 8);
  CHECK(mgbench::Json(back) == j);

  mgbench::Json old = j;
  for (const char* key : {"process_model", "launcher", "nodes", "hosts", "gpus_per_node"}) {
    old.erase(key);
  }
  const auto legacy = old.get<mgbench::PointResult>();
  CHECK(legacy.placement.process_model == mgbench::ProcessModel::threads);
  CHECK(legacy.placement.launcher == mgbench::Launcher::local);
  CHECK(legacy.placement.nodes == 1);
  CHECK(legacy.placement.hosts.empty());
  CHECK(legacy.placement.gpus_per_node == 16);

  for (const auto& [key, bad] : std::vector<std::pair<std::string, mgbench::Json>>{
           {"launcher", "pbs"}, {"process_model", "fibers"}, {"nodes", 0},
           {"hosts", "n1"}, {"hosts", mgbench::Json::array({"n1"})}, {"gpus_per_node", -1}}) {
    mgbench::Json broken = j;
    broken[key] = bad;
    INFO(key << " = " << bad.dump());
    CHECK_THROWS_AS(broken.get<mgbench::PointResult>(), mgbench::UsageError);
  }
}

TEST_CASE("point keys match on workload, params and GPU count") {
  auto a = sample_point(0);
  auto b = sample_point(7);
  CHECK(mgbench::point_key(a) == mgbench::point_key(b));
  b.gpus = 4;
  CHECK(mgbench::point_key(a) != mgbench::point_key(b));
  b = sample_point(7);
  b.devices = {2, 3};
  CHECK(mgbench::point_key(a) == mgbench::point_key(b));
  CHECK(mgbench::point_key(a, true) != mgbench::point_key(b, true));
}

TEST_CASE("malformed results files give one-line usage errors") {
  const std::string dir = mgbench::test::temp_dir("results");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  CHECK_THROWS_AS(mgbench::load_results(dir + "/missing.json"), mgbench::UsageError);
  CHECK_THROWS_AS(mgbench::load_results(write("trunc.json", "{\"schema_version\": 1, \"poi")),
                  mgbench::UsageError);
  CHECK_THROWS_AS(mgbench::load_results(write("v99.json", "{\"schema_version\": 99}")),
                  mgbench::UsageError);
  CHECK_THROWS_AS(mgbench::load_results(write("arr.json", "[1,2]")), mgbench::UsageError);
  CHECK_THROWS_AS(
      mgbench::load_results(write("badpoint.json", "{\"schema_version\":1,\"points\":[{}]}")),
      mgbench::UsageError);
  const std::string next = std::to_string(mgbench::kSchemaVersion + 1);
  try {
    mgbench::load_results(write("next.json", "{\"schema_version\": " + next + "}"));
    FAIL("a results file of the next schema version was accepted");
  } catch (const mgbench::UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    CHECK(what.find("schema_version " + next) != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("every supported schema version loads, with its points") {
  const std::string dir = mgbench::test::temp_dir("versions");
  for (int version = mgbench::kOldestSchemaVersion; version <= mgbench::kSchemaVersion;
       ++version) {
    mgbench::Json doc = sample_run();
    doc["schema_version"] = version;
    if (version == 1) doc.erase("presentation");  // version 1 had none
    const std::string path = dir + "/v" + std::to_string(version) + ".json";
    std::ofstream(path) << doc.dump();
    const auto run = mgbench::load_results(path);
    CHECK(run.schema_version == version);
    REQUIRE(run.points.size() == sample_run().points.size());
    CHECK(run.points[1].workload == sample_run().points[1].workload);
    CHECK(run.points[1].samples == sample_run().points[1].samples);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("results are written atomically and read back") {
  const std::string dir = mgbench::test::temp_dir("atomic");
  const std::string path = dir + "/sub/results.json";
  mgbench::save_results(sample_run(), path);
  CHECK(mgbench::load_results(path).points.size() == 2);
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/sub")) {
    CHECK(entry.path().filename() == "results.json");  // no temp file left behind
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the journal replays finished points and skips a line cut by a crash") {
  const std::string dir = mgbench::test::temp_dir("journal");
  const std::string path = dir + "/journal.jsonl";
  {
    mgbench::Journal journal(path, mgbench::Json{{"argv", {"mgbench", "sweep"}}}, false);
    journal.append(sample_point(0));
    journal.append(sample_point(1));
  }
  std::ofstream(path, std::ios::app) << "{\"type\":\"point\",\"result\":{\"index\":2,\"wor";
  const auto replay = mgbench::replay_journal(path);
  CHECK(replay.header["argv"][1] == "sweep");
  CHECK(replay.points.size() == 2);
  CHECK(replay.bad_lines == 1);
  {
    mgbench::Journal more(path, mgbench::Json(), true);  // resume appends
    auto p = sample_point(1);
    p.status = mgbench::Status::failed;
    more.append(p);
  }
  const auto again = mgbench::replay_journal(path);
  REQUIRE(again.points.size() == 2);
  CHECK(again.points[1].status == mgbench::Status::failed);  // the last record wins
  std::filesystem::remove_all(dir);
}

TEST_CASE("worker lines: valid messages parse, garbage and truncation are rejected") {
  std::string error;
  const auto started = mgbench::parse_worker_line("{\"type\":\"started\",\"index\":5}");
  REQUIRE(started);
  CHECK(started->kind == mgbench::WorkerMessageKind::started);
  CHECK(started->index == 5);
  const std::string point_line =
      mgbench::make_worker_line(mgbench::Json{{"type", "point"}, {"result", sample_point(3)}});
  const auto point = mgbench::parse_worker_line(point_line.substr(0, point_line.size() - 1));
  REQUIRE(point);
  CHECK(point->point.index == 3);
  CHECK_FALSE(mgbench::parse_worker_line("garbage", &error));
  CHECK(error == "not JSON");
  CHECK_FALSE(mgbench::parse_worker_line(point_line.substr(0, 40), &error));
  CHECK_FALSE(mgbench::parse_worker_line("{\"type\":\"point\",\"result\":{}}", &error));
  CHECK(error.find("malformed") != std::string::npos);
  CHECK_FALSE(mgbench::parse_worker_line("{\"type\":\"bogus\"}", &error));
  CHECK_FALSE(mgbench::parse_worker_line("[]", &error));
  CHECK_FALSE(mgbench::parse_worker_line("{\"type\":\"started\"}", &error));
}

TEST_CASE("the line buffer keeps an incomplete tail until its newline arrives") {
  mgbench::LineBuffer buffer;
  buffer.append("{\"a\":1}\n{\"b\"", 12);
  auto lines = buffer.take_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "{\"a\":1}");
  CHECK(buffer.pending() == "{\"b\"");
  buffer.append(":2}\n\n", 5);
  lines = buffer.take_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "{\"b\":2}");
}
