// The sweep journal under write errors and reuse: whole lines only, errors kept (never thrown
// through a caller), an existing journal never truncated by accident, one sweep per directory.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/run/directory_lock.hpp"
#include "mgbench/run/journal.hpp"
#include "support.hpp"

namespace {

mgbench::PointResult point(std::size_t index) {
  mgbench::PointResult p;
  p.index = index;
  p.workload = "selftest";
  p.params = mgbench::Json{{"behavior", "ok"}};
  return p;
}

int lines_in(const std::string& path) {
  int n = 0;
  for (char c : mgbench::test::read_text(path)) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("a journal write error is kept, not thrown, and leaves only whole lines") {
  const std::string dir = mgbench::test::temp_dir("journal-enospc");
  const std::string path = dir + "/journal.jsonl";
  ::setenv("MGBENCH_ENABLE_TEST_WORKLOADS", "1", 1);
  ::setenv("MGBENCH_TEST_JOURNAL_FAIL_AFTER", "1", 1);
  {
    mgbench::Journal journal(path, mgbench::Json{{"argv", {"sweep"}}},
                             mgbench::JournalMode::create);
    CHECK(journal.append(point(0)));
    CHECK(journal.error().empty());
    CHECK_FALSE(journal.append(point(1)));
    CHECK(journal.error().find("No space left on device") != std::string::npos);
    CHECK_FALSE(journal.append(point(2)));  // nothing more is attempted after an error
    CHECK_FALSE(journal.close());
  }
  ::unsetenv("MGBENCH_TEST_JOURNAL_FAIL_AFTER");
  ::unsetenv("MGBENCH_ENABLE_TEST_WORKLOADS");
  CHECK(lines_in(path) == 2);
  const auto replay = mgbench::replay_journal(path);
  REQUIRE(replay.points.size() == 1);
  CHECK(replay.bad_lines == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the journal hook needs the test switch") {
  const std::string dir = mgbench::test::temp_dir("journal-nohook");
  ::setenv("MGBENCH_TEST_JOURNAL_FAIL_AFTER", "1", 1);
  {
    mgbench::Journal journal(dir + "/journal.jsonl", mgbench::Json::object(),
                             mgbench::JournalMode::create);
    CHECK(journal.append(point(0)));
    CHECK(journal.append(point(1)));
  }
  ::unsetenv("MGBENCH_TEST_JOURNAL_FAIL_AFTER");
  CHECK(mgbench::replay_journal(dir + "/journal.jsonl").points.size() == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a new journal never replaces an existing one, replace and resume are explicit") {
  const std::string dir = mgbench::test::temp_dir("journal-modes");
  const std::string path = dir + "/journal.jsonl";
  {
    mgbench::Journal journal(path, mgbench::Json{{"argv", {"first"}}},
                             mgbench::JournalMode::create);
    CHECK(journal.append(point(0)));
  }
  CHECK_THROWS_AS(mgbench::Journal(path, mgbench::Json::object(), mgbench::JournalMode::create),
                  mgbench::UsageError);
  CHECK(mgbench::replay_journal(path).points.size() == 1);  // untouched by the refusal
  {
    mgbench::Journal journal(path, mgbench::Json(), mgbench::JournalMode::resume);
    CHECK(journal.append(point(1)));
  }
  const auto resumed = mgbench::replay_journal(path);
  CHECK(resumed.header["argv"][0] == "first");
  CHECK(resumed.points.size() == 2);
  {
    mgbench::Journal journal(path, mgbench::Json{{"argv", {"second"}}},
                             mgbench::JournalMode::replace);
  }
  const auto replaced = mgbench::replay_journal(path);
  CHECK(replaced.header["argv"][0] == "second");
  CHECK(replaced.points.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("one sweep per output directory: a second lock is refused until the first is gone") {
  const std::string dir = mgbench::test::temp_dir("lock") + "/new/out";
  {
    const mgbench::DirectoryLock first(dir);  // creates the directory
    CHECK(std::filesystem::is_directory(dir));
    CHECK_THROWS_AS(mgbench::DirectoryLock(dir), mgbench::UsageError);
  }
  CHECK_NOTHROW(mgbench::DirectoryLock(dir));
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path().parent_path());
}
