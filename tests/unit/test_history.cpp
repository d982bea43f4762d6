// The SQLite history store: round trip, trends, migration from schema version 1, corrupt,
// foreign, newer and locked databases, the default path; and the build without SQLite.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/store/history.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"

#include "mgbench/store/sqlite_db.hpp"

namespace {

using mgbench::Json;
using mgbench::PointResult;
using mgbench::RunResult;

RunResult history_run(const std::string& started_at, const std::string& driver, double tflops,
                      const std::string& run_id = "") {
  RunResult run;
  run.run_id = run_id;
  run.tool = Json{{"name", "mgbench"}, {"version", "0.1.0"}, {"git_revision", "abc"}};
  run.started_at = started_at;
  run.finished_at = started_at;
  run.host = "node1";
  run.environment = {
      {"versions", {{"driver", driver}, {"cuda_driver", "13.0"}, {"nccl_loaded", "2.28.9"}}},
      {"gpus", Json::array({Json{{"name", "NVIDIA H200"}}})},
      {"fingerprint_hash", "f00d"}};
  for (int size : {4096, 8192}) {
    PointResult p;
    p.index = run.points.size();
    p.workload = "gemm";
    p.params = mgbench::Params{{"size", size}};
    p.gpus = 1;
    p.devices = {0};
    p.samples = {1e-3, 1.1e-3};
    p.stats.n = 2;
    p.stats.median = 1.05e-3;
    p.metrics = Json{{"tflops", tflops * size / 8192}};
    run.points.push_back(p);
  }
  return run;
}

struct TempDir {
  std::string path = mgbench::test::temp_dir("history");
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("history: a recorded run comes back in list, show and export", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  const RunResult run = history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700);
  mgbench::record_run(run, db);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  const auto runs = store.list();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].host == "node1");
  CHECK(runs[0].gpu_model == "NVIDIA H200");
  CHECK(runs[0].gpu_count == 1);
  CHECK(runs[0].driver == "570.86.15");
  CHECK(runs[0].cuda == "13.0");
  CHECK(runs[0].nccl == "2.28.9");
  CHECK(runs[0].fingerprint == "f00d");
  CHECK(runs[0].tool_version == "0.1.0 (abc)");
  CHECK(runs[0].points == 2);
  CHECK(runs[0].ok_points == 2);
  const auto points = store.points(runs[0].id);
  REQUIRE(points.size() == 2);
  CHECK(points[1].params == mgbench::Params{{"size", 8192}});
  CHECK(points[1].metrics.at("tflops").get<double>() == Approx(700));
  CHECK(Json::parse(store.document(runs[0].id)) == Json(run));
}

TEST_CASE("history: recording the same run id again updates its own row", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 600, "aa"), db);
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700, "bb"), db);
  // A resumed sweep: same run id, later start, other numbers.
  mgbench::record_run(history_run("2025-01-01T00:05:00.000Z", "570.86.15", 650, "aa"), db);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  const auto runs = store.list();
  REQUIRE(runs.size() == 2);
  CHECK(store.run(1).started_at == "2025-01-01T00:05:00.000Z");  // the row kept its id
  CHECK(store.run(2).started_at == "2025-01-01T00:00:00.000Z");
  CHECK(store.points(1).size() == 2);
  CHECK(store.points(1)[1].metrics.at("tflops").get<double>() == Approx(650));
  CHECK(store.points(2)[1].metrics.at("tflops").get<double>() == Approx(700));
}

TEST_CASE("history: two runs started in the same second on one host are both kept",
          "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700, "aa"), db);
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 650, "bb"), db);
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 640), db);  // no id
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  REQUIRE(store.list().size() == 3);
  const auto rows = store.trend({"gemm", "tflops", "", 1});
  REQUIRE(rows.size() == 6);
  CHECK(rows[1].value == Approx(700));
  CHECK(rows[3].value == Approx(650));
}

TEST_CASE("history: trend of a metric grouped by driver", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
  mgbench::record_run(history_run("2025-02-01T00:00:00.000Z", "580.65.06", 680), db);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  const auto rows = store.trend({"gemm", "tflops", "driver", std::nullopt});
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].group == "570.86.15");
  CHECK(rows[3].group == "580.65.06");
  CHECK(rows[3].value == Approx(680));
  CHECK(rows[3].params == mgbench::Params{{"size", 8192}});
}

TEST_CASE("history: trend of the median time", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  const auto rows = store.trend({"gemm", "median_s", "", std::nullopt});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].value == Approx(1.05e-3));
}

TEST_CASE("history: an unknown metric names the recorded ones", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  try {
    store.trend({"gemm", "tflop", "", std::nullopt});
    FAIL("no error");
  } catch (const mgbench::UsageError& e) {
    CHECK(std::string(e.what()).find("tflops") != std::string::npos);
  }
}

TEST_CASE("history: an unknown --by field is a usage error", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  CHECK_THROWS_AS(store.trend({"gemm", "tflops", "id; DROP TABLE runs", std::nullopt}),
                  mgbench::UsageError);
  CHECK(store.list().size() == 1);
}

TEST_CASE("history: 'last' resolves to the latest run", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
  mgbench::record_run(history_run("2025-02-01T00:00:00.000Z", "580.65.06", 680), db);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  CHECK(store.run(store.resolve("last")).driver == "580.65.06");
  CHECK_THROWS_AS(store.resolve("99"), mgbench::UsageError);
  CHECK_THROWS_AS(store.resolve("abc"), mgbench::UsageError);
}

TEST_CASE("history: record_run creates the database directory", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/a/b/history.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
  CHECK(std::filesystem::exists(db));
  CHECK(mgbench::HistoryStore(db, mgbench::HistoryMode::read_only).schema_version() == mgbench::HistoryStore::kSchemaVersion);
}

TEST_CASE("history: a missing database is a usage error when not creating", "[history]") {
  TempDir dir;
  CHECK_THROWS_AS(mgbench::HistoryStore(dir.path + "/none.db", mgbench::HistoryMode::read_only), mgbench::UsageError);
  CHECK_FALSE(std::filesystem::exists(dir.path + "/none.db"));
}

TEST_CASE("history: a version 1 database is migrated to version 2", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/v1.db";
  const RunResult run = history_run("2024-06-01T00:00:00.000Z", "550.54.15", 690);
  {
    // A database as the first history store wrote it (frozen copy of the v1 schema).
    mgbench::sqlite::Database v1(db);
    v1.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
    v1.exec("INSERT INTO schema_version (version) VALUES (1)");
    v1.exec(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT NOT NULL, "
        "finished_at TEXT, host TEXT NOT NULL, gpu_model TEXT, gpu_count INTEGER, driver TEXT, "
        "cuda TEXT, nccl TEXT, fingerprint TEXT, document TEXT NOT NULL, "
        "UNIQUE (started_at, host))");
    v1.exec(
        "CREATE TABLE points (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, "
        "idx INTEGER NOT NULL, workload TEXT NOT NULL, params TEXT NOT NULL, gpus INTEGER NOT "
        "NULL, status TEXT NOT NULL, median_s REAL, PRIMARY KEY (run_id, idx))");
    Json doc = run;
    doc["points"][1]["noisy"] = true;
    auto insert = v1.prepare(
        "INSERT INTO runs (started_at, finished_at, host, gpu_model, gpu_count, driver, cuda, "
        "nccl, fingerprint, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, run.started_at).bind(2, run.finished_at).bind(3, run.host);
    insert.bind(4, "NVIDIA H200").bind(5, 1).bind(6, "550.54.15").bind(7, "12.4");
    insert.bind(8, "2.21.5").bind(9, "f00d").bind(10, doc.dump());
    insert.run();
    auto point = v1.prepare(
        "INSERT INTO points (run_id, idx, workload, params, gpus, status, median_s) "
        "VALUES (1, ?, 'gemm', ?, 1, 'ok', 0.00105)");
    for (int idx = 0; idx < 2; ++idx) {
      point.reset();
      point.bind(1, idx).bind(2, run.points[static_cast<std::size_t>(idx)].params.dump());
      point.run();
    }
  }
  mgbench::HistoryStore store(db, mgbench::HistoryMode::record);
  CHECK(store.schema_version() == mgbench::HistoryStore::kSchemaVersion);
  const auto rows = store.trend({"gemm", "tflops", "driver", std::nullopt});
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].value == Approx(690));
  CHECK(rows[1].group == "550.54.15");
  const auto points = store.points(1);
  CHECK_FALSE(points[0].noisy);
  CHECK(points[1].noisy);
  CHECK(store.run(1).tool_version == "0.1.0 (abc)");
  // New runs go in next to the migrated one.
  store.record(history_run("2025-01-01T00:00:00.000Z", "580.65.06", 700));
  CHECK(store.list().size() == 2);
}

TEST_CASE("history: a database from a newer mgbench is refused", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/new.db";
  {
    mgbench::sqlite::Database future(db);
    future.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
    future.exec("INSERT INTO schema_version (version) VALUES (99)");
  }
  try {
    mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
    FAIL("no error");
  } catch (const mgbench::UsageError& e) {
    CHECK(std::string(e.what()).find("newer mgbench") != std::string::npos);
  }
}

TEST_CASE("history: a corrupt database file is a clear usage error", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/corrupt.db";
  std::ofstream(db, std::ios::binary) << std::string(4096, 'x');
  try {
    mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
    FAIL("no error");
  } catch (const mgbench::UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find(db) != std::string::npos);
    CHECK(what.find("not an SQLite database or is corrupt") != std::string::npos);
  }
}

TEST_CASE("history: an SQLite file that is not a history is refused", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/other.db";
  {
    mgbench::sqlite::Database other(db);
    other.exec("CREATE TABLE notes (text TEXT)");
  }
  CHECK_THROWS_AS(mgbench::HistoryStore(db, mgbench::HistoryMode::read_only), mgbench::UsageError);
}

TEST_CASE("history: a locked database fails after the busy timeout", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/locked.db";
  mgbench::record_run(history_run("2025-01-01T00:00:00.000Z", "570.86.15", 700), db);
  mgbench::sqlite::Database holder(db);
  mgbench::sqlite::Transaction lock(holder);  // BEGIN IMMEDIATE: holds the write lock
  mgbench::HistoryStore store(db, mgbench::HistoryMode::record, 100);
  try {
    store.record(history_run("2025-02-01T00:00:00.000Z", "570.86.15", 700));
    FAIL("no error");
  } catch (const mgbench::sqlite::DatabaseError& e) {
    CHECK(e.busy());
    CHECK(std::string(e.what()).find("is locked by another process") != std::string::npos);
  }
}

TEST_CASE("history: statements bind values, never splice them", "[history]") {
  TempDir dir;
  mgbench::sqlite::Database db(dir.path + "/bind.db");
  db.exec("CREATE TABLE t (v TEXT)");
  const std::string hostile = "x'); DROP TABLE t; --";
  db.prepare("INSERT INTO t (v) VALUES (?)").bind(1, hostile).run();
  auto s = db.prepare("SELECT v FROM t");
  REQUIRE(s.step());
  CHECK(s.column_text(0) == hostile);
}

TEST_CASE("history: a transaction rolls back unless committed", "[history]") {
  TempDir dir;
  mgbench::sqlite::Database db(dir.path + "/tx.db");
  db.exec("CREATE TABLE t (v INTEGER)");
  {
    mgbench::sqlite::Transaction tx(db);
    db.exec("INSERT INTO t (v) VALUES (1)");
  }
  auto s = db.prepare("SELECT count(*) FROM t");
  REQUIRE(s.step());
  CHECK(s.column_int64(0) == 0);
}

TEST_CASE("history: the database uses WAL journaling", "[history]") {
  TempDir dir;
  mgbench::sqlite::Database db(dir.path + "/wal.db");
  auto s = db.prepare("PRAGMA journal_mode");
  REQUIRE(s.step());
  CHECK(s.column_text(0) == "wal");
}

TEST_CASE("history: the default path follows XDG_DATA_HOME", "[history]") {
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_DATA_HOME", "/data/xdg", 1);
  CHECK(mgbench::default_history_path() == "/data/xdg/mgbench/history.db");
  ::setenv("XDG_DATA_HOME", "relative/ignored", 1);
  const char* home = std::getenv("HOME");
  if (home && home[0]) {
    CHECK(mgbench::default_history_path() ==
          std::string(home) + "/.local/share/mgbench/history.db");
  }
  if (old) {
    ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_DATA_HOME");
  }
}
