// File writes: mkstemp temporaries (a planted symlink at the old predictable name is never
// followed), a symbolic link at the target refused, the umask respected and nothing world-writable, and a Markdown charts directory
// that is a symbolic link refused; files the writer did not make are never deleted.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/markdown.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace {

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

// A run small enough to chart: two GPU counts of one workload.
mgbench::RunResult small_run() {
  mgbench::RunResult run;
  for (int gpus : {1, 2}) {
    mgbench::PointResult p;
    p.index = static_cast<std::size_t>(gpus - 1);
    p.workload = "w";
    p.gpus = gpus;
    p.devices = gpus == 1 ? std::vector<int>{0} : std::vector<int>{0, 1};
    p.samples = {1e-3, 1e-3};
    p.stats = mgbench::compute_statistics(p.samples, 10);
    p.metrics = {{"ops_per_s", 1000.0 * gpus}};
    run.points.push_back(p);
  }
  return run;
}

}  // namespace

TEST_CASE("atomic write: a symlink planted at the old temp name is not followed") {
  const std::string dir = mgbench::test::temp_dir("safe-write");
  const std::string victim = dir + "/victim";
  std::ofstream(victim) << "precious";
  const std::string path = dir + "/out.json";
  fs::create_symlink(victim, path + ".tmp." + std::to_string(::getpid()));
  mgbench::write_file_atomic(path, "new content");
  CHECK(mgbench::test::read_text(victim) == "precious");
  CHECK(mgbench::test::read_text(path) == "new content");
  std::filesystem::remove_all(dir);
}

TEST_CASE("atomic write: a symlink to a file is refused, the link and its target untouched") {
  const std::string dir = mgbench::test::temp_dir("safe-write");
  const std::string victim = dir + "/victim";
  std::ofstream(victim) << "precious";
  const std::string path = dir + "/report.html";
  fs::create_symlink(victim, path);
  std::string message;
  try {
    mgbench::write_file_atomic(path, "page");
  } catch (const mgbench::EnvironmentError& e) {
    message = e.what();
  }
  CHECK(message.find("a symbolic link to a file") != std::string::npos);
  CHECK(mgbench::test::read_text(victim) == "precious");
  CHECK(fs::is_symlink(path));
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.exists() ? 1 : 0;
  CHECK(entries == 2);  // the victim and the link: no temporary file left
  std::filesystem::remove_all(dir);
}

TEST_CASE("atomic write: files get the umask, never world-writable, no temp left over") {
  const std::string dir = mgbench::test::temp_dir("safe-write");
  const mode_t old = ::umask(077);
  mgbench::write_file_atomic(dir + "/private", "x");
  ::umask(0);
  mgbench::write_file_atomic(dir + "/open", "x");
  ::umask(old);
  CHECK(mode_of(dir + "/private") == 0600);
  CHECK(mode_of(dir + "/open") == 0664);  // 0666 less o+w, whatever the umask
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.is_regular_file() ? 1 : 0;
  CHECK(entries == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("markdown: a symlinked charts directory is refused, its target untouched") {
  const std::string dir = mgbench::test::temp_dir("md-link");
  const std::string elsewhere = dir + "/elsewhere";
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere + "/keep.svg") << "mine";
  fs::create_directory_symlink(elsewhere, dir + "/report_charts");
  CHECK_THROWS_AS(mgbench::reports::write_markdown(small_run(), dir + "/report.md"),
                  mgbench::EnvironmentError);
  CHECK(mgbench::test::read_text(elsewhere + "/keep.svg") == "mine");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(elsewhere)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("markdown: only the charts this writer made are removed on a new rendering") {
  const std::string dir = mgbench::test::temp_dir("md-own");
  fs::create_directories(dir + "/report_charts");
  std::ofstream(dir + "/report_charts/someone-elses.svg") << "keep";
  mgbench::reports::write_markdown(small_run(), dir + "/report.md");
  std::size_t ours = 0;
  for (const auto& e : fs::directory_iterator(dir + "/report_charts")) {
    ours += e.path().extension() == ".svg" ? 1 : 0;
  }
  CHECK(ours >= 1);  // the stranger's file at least
  CHECK(mgbench::test::read_text(dir + "/report_charts/someone-elses.svg") == "keep");
  // A crafted manifest cannot name a file outside the directory.
  std::ofstream(dir + "/outside.svg") << "keep";
  std::ofstream(dir + "/.report_charts.list") << "../outside.svg\nsomeone-elses.svg\n";
  mgbench::reports::write_markdown(small_run(), dir + "/report.md");
  CHECK(fs::exists(dir + "/outside.svg"));
  std::filesystem::remove_all(dir);
}
