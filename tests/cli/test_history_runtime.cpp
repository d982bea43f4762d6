// The history store's run-time needs, through the real binary: SQLite is loaded at run time, so
// without its library (MGBENCH_SQLITE_LIBRARY naming a file that is missing, or not SQLite)
// every history command exits 4 with one line naming it, and a sweep keeps its results; a FIFO
// as the database is refused at once; a WAL database in a directory this user cannot write is
// read all the same, without ever writing beside it.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/store/history.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::kSelftestEnv;
using mgbench::test::line_count;
using mgbench::test::run_mgbench;

namespace {

const std::string kMissingLibrary = "MGBENCH_SQLITE_LIBRARY=/nonexistent/libsqlite3.so.0";

struct Dir {
  std::string path = mgbench::test::temp_dir("history-runtime");
  ~Dir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path, ec);
  }
};

mgbench::RunResult small_run() {
  mgbench::RunResult run;
  run.run_id = "0123456789abcdef0123456789abcdef";
  run.tool = mgbench::Json{{"name", "mgbench"}, {"version", "0.1.0"}};
  run.started_at = "2025-01-01T00:00:00.000Z";
  run.host = "node1";
  mgbench::PointResult p;
  p.workload = "gemm";
  p.params = mgbench::Json{{"size", 1024}};
  p.stats.n = 1;
  p.stats.median = 1e-3;
  p.metrics = mgbench::Json{{"tflops", 100.0}};
  run.points.push_back(p);
  return run;
}

}  // namespace

TEST_CASE("history runtime: without the SQLite library every command exits 4 naming it",
          "[cli][history]") {
  const Dir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::record_run(small_run(), db);  // an existing database: the library is what is missing
  for (const std::string& command :
       {"history list --db " + db, "history show last --db " + db, "history export last --db " + db,
        "history trend --workload gemm --metric tflops --db " + db,
        "history list --db " + dir.path + "/none.db"}) {
    const auto r = run_mgbench(command, kMissingLibrary);
    INFO("mgbench " << command << "\nexit " << r.exit_code << "\nstderr: " << r.err);
    CHECK(r.exit_code == 4);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find("history store unavailable: /nonexistent/libsqlite3.so.0") !=
          std::string::npos);
    CHECK(r.err.find("apt-get install libsqlite3-0") != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("history runtime: without the SQLite library a sweep keeps its results and warns",
          "[cli][history]") {
  const Dir dir;
  const auto r =
      run_mgbench("sweep --workloads selftest --param behavior=ok --gpus 1 --out " + dir.path +
                      "/out --db " + dir.path + "/h.db --skip-doctor --no-telemetry --no-report",
                  kSelftestEnv + " " + kMissingLibrary);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(std::filesystem::exists(dir.path + "/out/results.json"));
  CHECK(r.err.find("history: run not recorded in " + dir.path + "/h.db") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path + "/h.db"));
}

TEST_CASE("history runtime: a library that is not SQLite, or a relative path, is not loaded",
          "[cli][history]") {
  const Dir dir;
  Dl_info info{};
  REQUIRE(::dladdr(reinterpret_cast<void*>(&::getpid), &info) != 0);  // the C library
  const std::string libc = info.dli_fname;
  REQUIRE(libc.front() == '/');
  const auto other =
      run_mgbench("history list --db " + dir.path + "/h.db", "MGBENCH_SQLITE_LIBRARY=" + libc);
  CHECK(other.exit_code == 4);
  CHECK(line_count(other.err) == 1);
  CHECK(other.err.find(libc + " has no function sqlite3_") != std::string::npos);

  // A relative name could load a library from the current directory: ignored, with a warning.
  const auto relative =
      run_mgbench("history list --db " + dir.path + "/h.db", "MGBENCH_SQLITE_LIBRARY=libx.so");
  CHECK(relative.exit_code == 0);
  CHECK(relative.err.find("MGBENCH_SQLITE_LIBRARY='libx.so' ignored") != std::string::npos);
}

TEST_CASE("history: a FIFO as the database is refused at once", "[cli][history]") {
  // Before the check, SQLite's open blocked for ever waiting for a writer (timeout: 124).
  const Dir dir;
  const std::string fifo = dir.path + "/h.db";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& command :
       {"history list --db " + fifo, "history show last --db " + fifo}) {
    const auto r = run_mgbench(command, "timeout 20");
    INFO("mgbench " << command << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(fifo + " is a FIFO, not a regular file") != std::string::npos);
  }
  // A sweep that records into it keeps its results and ends (exit 4, as any failure after the
  // points ran), where it blocked for ever.
  const auto sweep =
      run_mgbench("sweep --workloads selftest --param behavior=ok --gpus 1 --out " + dir.path +
                      "/out --db " + fifo + " --skip-doctor --no-telemetry --no-report -q",
                  "timeout 60 env " + kSelftestEnv);
  CHECK(sweep.exit_code == 4);
  CHECK(sweep.err.find(fifo + " is a FIFO, not a regular file") != std::string::npos);
  CHECK(std::filesystem::exists(dir.path + "/out/results.json"));
}

// A database in WAL mode keeps no -wal or -shm file once closed, and reading it needs a -shm
// file: in a directory the user cannot write, a plain read-only open fails. chmod does not stop
// root, so as root the commands run as user nobody (setpriv).
TEST_CASE("history: a WAL database in a directory the user cannot write is read",
          "[cli][history]") {
  const Dir top;
  // Characters an SQLite URI gives a meaning to, in the directory's name.
  const std::string dir = top.path + "/ro ?#%41";
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/h.db";
  mgbench::record_run(small_run(), db);
  REQUIRE_FALSE(std::filesystem::exists(db + "-wal"));
  REQUIRE_FALSE(std::filesystem::exists(db + "-shm"));
  const std::string before = mgbench::test::read_text(db);
  std::string prefix;
  if (::geteuid() == 0) {
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) {
      mgbench::test::skip_test("running as root without setpriv: cannot drop write access");
    }
    ::chmod(top.path.c_str(), 0755);
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  ::chmod(dir.c_str(), 0555);
  ::chmod(db.c_str(), 0644);
  const std::string quoted = "'" + db + "'";

  const auto list = run_mgbench("history list --json --db " + quoted, prefix);
  INFO("stderr: " << list.err);
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("\"host\": \"node1\"") != std::string::npos);
  const auto exported = run_mgbench("history export last --db " + quoted, prefix);
  CHECK(exported.exit_code == 0);
  CHECK(exported.out.find("0123456789abcdef0123456789abcdef") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(db + "-wal"));
  CHECK_FALSE(std::filesystem::exists(db + "-shm"));
  CHECK(mgbench::test::read_text(db) == before);

  // An empty -wal, as reading connections leave, holds nothing the file lacks: read.
  ::chmod(dir.c_str(), 0755);
  REQUIRE(std::system(("printf '' > '" + db + "-wal'").c_str()) == 0);
  ::chmod(dir.c_str(), 0555);
  CHECK(run_mgbench("history list --db " + quoted, prefix).exit_code == 0);
  // A -wal with content may hold committed runs the file lacks: not read without it.
  ::chmod(dir.c_str(), 0755);
  REQUIRE(std::system(("printf x > '" + db + "-wal'").c_str()) == 0);
  ::chmod(dir.c_str(), 0555);
  const auto stale = run_mgbench("history list --db " + quoted, prefix);
  CHECK(stale.exit_code == 2);
  CHECK(line_count(stale.err) == 1);
  CHECK(stale.err.find("h.db-wal") != std::string::npos);
}
