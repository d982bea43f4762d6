// The history database as untrusted input: crafted schema versions, triggers and views, a file
// that is not SQLite, a locked file; reading never writes the file; every connection is
// defensive and does not trust the schema.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/store/history.hpp"
#include "support.hpp"

#include "mgbench/store/sqlite_db.hpp"

namespace {

using mgbench::HistoryMode;
using mgbench::HistoryStore;
using mgbench::Json;
using mgbench::RunResult;

struct TempDir {
  std::string path = mgbench::test::temp_dir("history_crafted");
  ~TempDir() { std::filesystem::remove_all(path); }
};

RunResult small_run(const std::string& run_id) {
  RunResult run;
  run.run_id = run_id;
  run.tool = Json{{"name", "mgbench"}, {"version", "0.1.0"}};
  run.started_at = "2025-01-01T00:00:00.000Z";
  run.host = "node1";
  mgbench::PointResult p;
  p.workload = "gemm";
  p.params = mgbench::Params{{"size", 1024}};
  p.stats.n = 1;
  p.stats.median = 1e-3;
  p.metrics = Json{{"tflops", 100.0}};
  run.points.push_back(p);
  return run;
}

// A file with the history's version table holding `version` (an SQL literal).
std::string crafted(const std::string& dir, const std::string& version) {
  const std::string db = dir + "/crafted.db";
  mgbench::sqlite::Database raw(db);
  raw.exec("CREATE TABLE schema_version (version)");
  raw.exec("INSERT INTO schema_version (version) VALUES (" + version + ")");
  return db;
}

std::string what_opening(const std::string& db, HistoryMode mode) {
  try {
    HistoryStore store(db, mode, 200);
  } catch (const mgbench::UsageError& e) {
    return e.what();
  }
  return "";
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("history crafted: a negative schema version is refused in both modes", "[history]") {
  TempDir dir;
  const std::string db = crafted(dir.path, "-1");
  for (HistoryMode mode : {HistoryMode::read_only, HistoryMode::record}) {
    const std::string what = what_opening(db, mode);
    CHECK(has(what, "schema version -1"));
    CHECK(has(what, "which no mgbench writes"));
  }
}

TEST_CASE("history crafted: version 0, huge and non-integer versions are refused", "[history]") {
  for (const char* version : {"0", "-9223372036854775808", "'2'", "2.5", "x'00'", "NULL"}) {
    TempDir dir;
    const std::string db = crafted(dir.path, version);
    INFO(version);
    CHECK(has(what_opening(db, HistoryMode::record), "which no mgbench writes"));
  }
  TempDir dir;
  const std::string db = crafted(dir.path, "9223372036854775807");
  CHECK(has(what_opening(db, HistoryMode::read_only), "written by a newer mgbench"));
}

TEST_CASE("history crafted: a newer version is refused by reading commands too", "[history]") {
  TempDir dir;
  const std::string db = crafted(dir.path, "4");
  const std::string before = contents(db);
  CHECK(has(what_opening(db, HistoryMode::read_only), "newer mgbench"));
  CHECK(has(what_opening(db, HistoryMode::record), "newer mgbench"));
  CHECK(contents(db) == before);
}

TEST_CASE("history crafted: a trigger or a view in the file is refused", "[history]") {
  for (const char* object :
       {"CREATE TRIGGER wipe AFTER INSERT ON points BEGIN DELETE FROM runs; END",
        "CREATE VIEW v AS SELECT * FROM runs"}) {
    TempDir dir;
    const std::string db = dir.path + "/h.db";
    mgbench::record_run(small_run("aa"), db);
    {
      mgbench::sqlite::Database raw(db);
      raw.exec(object);
    }
    for (HistoryMode mode : {HistoryMode::read_only, HistoryMode::record}) {
      CHECK(has(what_opening(db, mode), "holds triggers or views"));
    }
    CHECK_THROWS_AS(mgbench::record_run(small_run("bb"), db), mgbench::UsageError);
  }
}

TEST_CASE("history crafted: a file that is not SQLite is a clear error", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/text.db";
  std::ofstream(db) << "SQLite format 3 but not really\n" << std::string(1000, '\x01');
  for (HistoryMode mode : {HistoryMode::read_only, HistoryMode::record}) {
    CHECK(has(what_opening(db, mode), "not an SQLite database or is corrupt"));
  }
}

TEST_CASE("history crafted: a database locked by a writer fails after the timeout",
          "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(small_run("aa"), db);
  mgbench::sqlite::Database holder(db);
  holder.exec("PRAGMA locking_mode = EXCLUSIVE");
  holder.exec("BEGIN EXCLUSIVE");
  holder.exec("INSERT INTO schema_version (version) VALUES (3)");  // takes the lock
  CHECK(has(what_opening(db, HistoryMode::read_only), "is locked by another process"));
  CHECK(has(what_opening(db, HistoryMode::record), "is locked by another process"));
}

TEST_CASE("history: reading an old database migrates a copy, never the file", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(small_run("aa"), db);
  {
    // Back to what version 2 looked like from outside: the reader must not bring it forward.
    mgbench::sqlite::Database raw(db);
    raw.exec("UPDATE schema_version SET version = 2");
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const std::string before = contents(db);
  {
    HistoryStore store(db, HistoryMode::read_only);
    CHECK(store.list().size() == 1);
    CHECK(store.schema_version() == HistoryStore::kSchemaVersion);  // of the copy
  }
  CHECK(contents(db) == before);
  mgbench::sqlite::Database raw(db, mgbench::sqlite::Database::Mode::read_only);
  auto version = raw.prepare("SELECT version FROM schema_version");
  REQUIRE(version.step());
  CHECK(version.column_int64(0) == 2);
}

TEST_CASE("history: an empty SQLite file is an empty history when read", "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/empty.db";
  std::ofstream(db).close();
  HistoryStore store(db, HistoryMode::read_only);
  CHECK(store.list().empty());
  CHECK(contents(db).empty());
}

TEST_CASE("history crafted: 100k nested brackets in stored params read as empty, not a crash",
          "[history]") {
  TempDir dir;
  const std::string db = dir.path + "/deep.db";
  mgbench::record_run(small_run("deep"), db);
  {
    mgbench::sqlite::Database raw(db);
    auto update = raw.prepare("UPDATE points SET params = ?");
    update.bind(1, std::string(100000, '[') + std::string(100000, ']'));
    CHECK_FALSE(update.step());  // an UPDATE returns no row
  }
  HistoryStore store(db, HistoryMode::read_only);
  const auto runs = store.list();
  REQUIRE(runs.size() == 1);
  const auto points = store.points(store.resolve("last"));
  REQUIRE(points.size() == 1);
  CHECK(points.front().params.empty());  // over the depth bound: read as absent
  CHECK(points.front().workload == "gemm");
}

TEST_CASE("history: connections are defensive and do not trust the schema", "[history]") {
  TempDir dir;
  mgbench::sqlite::Database db(dir.path + "/d.db");
  db.exec("CREATE TABLE t (v INTEGER)");
  auto trusted = db.prepare("PRAGMA trusted_schema");
  REQUIRE(trusted.step());
  CHECK(trusted.column_int64(0) == 0);
  // Defensive mode: writable_schema is ignored, so sqlite_master cannot be rewritten.
  db.exec("PRAGMA writable_schema = ON");
  CHECK_THROWS_AS(db.exec("UPDATE sqlite_master SET sql = 'CREATE TABLE t (w)' WHERE name = 't'"),
                  mgbench::sqlite::DatabaseError);
}

