// The history store at the end of a real sweep (selftest workload, fake devices): a corrupt, a
// locked and a newer-version database make the sweep exit 4 with one line while results.json
// is complete; a resumed sweep updates its own history row; reading commands never write.
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/store/history.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

#include "mgbench/store/sqlite_db.hpp"

using mgbench::Status;
using mgbench::test::kSelftestEnv;
using mgbench::test::line_count;
using mgbench::test::run_mgbench;

namespace {

const std::string kWithHistory = " --no-report --skip-doctor --no-telemetry -q";

struct Dir {
  std::string path;
  explicit Dir(const std::string& tag) : path(mgbench::test::temp_dir(tag)) {}
  ~Dir() { std::filesystem::remove_all(path); }
};

mgbench::test::CommandOutput sweep(const std::string& out, const std::string& db) {
  return run_mgbench("sweep --workloads selftest --param behavior=ok,brief --gpus 1,2 --out " +
                         out + " --db " + db + kWithHistory,
                     kSelftestEnv);
}

// results.json holds every planned point, each ok with its samples and metric.
void check_complete(const std::string& out) {
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 4);
  for (const auto& p : run.points) {
    CHECK(p.status == Status::ok);
    CHECK_FALSE(p.samples.empty());
    CHECK(p.metrics.contains("ops_per_s"));
  }
  CHECK_FALSE(run.run_id.empty());
}

void check_history_failure(const mgbench::test::CommandOutput& r, const std::string& out,
                           const std::string& expected) {
  INFO(r.err);
  CHECK(r.exit_code == 4);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("history") != std::string::npos);
  CHECK(r.err.find(expected) != std::string::npos);
  check_complete(out);
}

}  // namespace

TEST_CASE("a corrupt history database at the end of a sweep: exit 4, results.json complete") {
  Dir dir("hist-corrupt");
  const std::string db = dir.path + "/h.db";
  std::ofstream(db) << std::string(4096, 'x');
  check_history_failure(sweep(dir.path + "/out", db), dir.path + "/out", "corrupt");
  CHECK(mgbench::test::read_text(db) == std::string(4096, 'x'));  // left as it was
}

TEST_CASE("a newer-version history database at the end of a sweep: exit 4, results.json "
          "complete") {
  Dir dir("hist-newer");
  const std::string db = dir.path + "/h.db";
  {
    mgbench::sqlite::Database future(db);
    future.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
    future.exec("INSERT INTO schema_version (version) VALUES (99)");
  }
  check_history_failure(sweep(dir.path + "/out", db), dir.path + "/out", "newer mgbench");
}

TEST_CASE("a locked history database at the end of a sweep: exit 4, results.json complete") {
  Dir dir("hist-locked");
  const std::string db = dir.path + "/h.db";
  REQUIRE(sweep(dir.path + "/first", db).exit_code == 0);
  mgbench::sqlite::Database holder(db);
  mgbench::sqlite::Transaction lock(holder);  // the write lock, held through the sweep
  check_history_failure(sweep(dir.path + "/out", db), dir.path + "/out", "locked");
}

TEST_CASE("a resumed sweep updates its own history row instead of adding one") {
  Dir dir("hist-resume");
  const std::string db = dir.path + "/h.db", out = dir.path + "/out";
  REQUIRE(sweep(out, db).exit_code == 0);
  const std::string run_id = mgbench::load_results(out + "/results.json").run_id;
  REQUIRE(run_id.size() == 32);
  const auto resumed = run_mgbench("sweep --resume " + out + " --db " + db + kWithHistory,
                                   kSelftestEnv);
  CHECK(resumed.exit_code == 0);
  CHECK(mgbench::load_results(out + "/results.json").run_id == run_id);  // the journal's id
  // A second sweep into another directory is another run.
  REQUIRE(sweep(dir.path + "/other", db).exit_code == 0);
  mgbench::HistoryStore store(db, mgbench::HistoryMode::read_only);
  const auto runs = store.list();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].id == 1);
  CHECK(runs[0].points == 4);
  CHECK(mgbench::Json::parse(store.document(1)).at("run_id") == run_id);
}

TEST_CASE("history reading commands never create, migrate or write the database") {
  Dir dir("hist-readonly");
  const std::string db = dir.path + "/h.db";
  REQUIRE(sweep(dir.path + "/out", db).exit_code == 0);
  {
    mgbench::sqlite::Database raw(db);
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const std::string before = mgbench::test::read_text(db);
  for (const std::string sub : {"list", "show last", "export last",
                                "trend --workload selftest --metric ops_per_s"}) {
    const auto r = run_mgbench("history " + sub + " --db " + db);
    INFO(sub << ": " << r.err);
    CHECK(r.exit_code == 0);
  }
  CHECK(mgbench::test::read_text(db) == before);
  // A read-only file reads too.
  std::filesystem::permissions(db, std::filesystem::perms::owner_read,
                               std::filesystem::perm_options::replace);
  CHECK(run_mgbench("history list --db " + db).exit_code == 0);
}

