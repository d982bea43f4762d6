// Hostile inputs, round 3, below the command line: the parameter order in linear time, the
// soak's rounds made as they run, Google Benchmark times that stay numbers, and the atomic
// writer's temporary file removed when a signal ends the process (or kept for a handler that
// lets the write finish).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/json_order.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/limits.hpp"
#include "mgbench/reports/gbench_json.hpp"
#include "support.hpp"

using mgbench::Json;

namespace {

Json nested(int depth, Json leaf) {
  for (int i = 0; i < depth; ++i) leaf = Json::array({leaf});
  return leaf;
}

int sign(bool less, bool greater) { return less ? -1 : (greater ? 1 : 0); }

}  // namespace

TEST_CASE("compare_values orders as operator< does", "[params]") {
  const std::vector<Json> values = {
      Json(), false, true, -3, 2, 2.5, 10, "10", "9", "", Json::array(), Json::array({1}),
      Json::array({1, 2}), Json::array({2}), Json::object(), Json{{"a", 1}}, Json{{"a", 2}},
      Json{{"b", 0}}, Json{{"a", 1}, {"b", 0}}, Json{{"a", Json::array({1, "x"})}}};
  for (const Json& a : values) {
    for (const Json& b : values) {
      INFO(a.dump() << " vs " << b.dump());
      CHECK(mgbench::compare_values(a, b) == sign(a < b, b < a));
    }
  }
  CHECK(mgbench::params_less(Json{{"size", 128}}, Json{{"size", 1024}}));  // numbers as numbers
}

// operator< takes 2^depth steps here (it compares the equal nested values twice per level):
// with it this case never ends. compare_values walks each value once.
TEST_CASE("compare_values: values nested 300 deep that differ at the end", "[params]") {
  const Json a = Json{{"a", nested(300, 0)}, {"b", 1}};
  const Json b = Json{{"a", nested(300, 0)}, {"b", 2}};
  CHECK(mgbench::compare_values(a, b) == -1);
  CHECK(mgbench::compare_values(b, a) == 1);
  CHECK(mgbench::compare_values(a, a) == 0);
  CHECK(mgbench::compare_values(nested(300, 1), nested(300, 0)) == 1);
}

TEST_CASE("group rounds: copies made as they run, indexes continue, bounded when read",
          "[group]") {
  mgbench::GroupSpec g;
  g.workload = "selftest";
  g.devices = {0};
  g.points = {{0, Json{{"behavior", "ok"}}}, {1, Json{{"behavior", "brief"}}}};
  g.rounds = 3;
  REQUIRE(g.point_count() == 6);
  for (std::size_t k = 0; k < g.point_count(); ++k) {
    CHECK(g.point_at(k).index == k);
    CHECK(g.point_at(k).params == g.points[k % 2].params);
  }
  const Json j = g;
  CHECK(j["points"].size() == 2);  // the rounds are a number, not copies
  CHECK(j["rounds"] == 3);
  CHECK(j.get<mgbench::GroupSpec>().point_count() == 6);
  Json one = j;
  one.erase("rounds");
  CHECK(one.get<mgbench::GroupSpec>().rounds == 1);
  for (const Json bad : {Json(0), Json(mgbench::limits::kMaxPoints + 1), Json(-1), Json("3")}) {
    Json k = j;
    k["rounds"] = bad;
    INFO(bad.dump());
    CHECK_THROWS_AS(k.get<mgbench::GroupSpec>(), mgbench::UsageError);
  }
  Json last = j;
  last["rounds"] = mgbench::limits::kMaxPoints;
  CHECK(last.get<mgbench::GroupSpec>().rounds == mgbench::limits::kMaxPoints);
}

// Before the fix a 1e308 s time was multiplied into nanoseconds: inf, written as null, which
// Google Benchmark's tools (and scripts/check_gbench_json.py) refuse.
TEST_CASE("gbench: a 1e308 s median is written in seconds, every time a number", "[reports]") {
  mgbench::RunResult run;
  for (double t : {1e308, 1e-3}) {
    mgbench::PointResult p;
    p.index = run.points.size();
    p.workload = "w";
    p.params = mgbench::Params{{"t", t > 1 ? "huge" : "small"}};
    p.devices = {0};
    p.samples = {t, t};
    p.stats = mgbench::compute_statistics(p.samples, 10);
    run.points.push_back(p);
  }
  const Json doc = mgbench::reports::gbench_document(run);
  std::size_t huge = 0, small = 0;
  for (const Json& e : doc["benchmarks"]) {
    INFO(e.dump());
    REQUIRE(e["real_time"].is_number());
    CHECK(std::isfinite(e["real_time"].get<double>()));
    CHECK(e["cpu_time"].is_number());
    const bool is_huge = e["run_name"].get<std::string>().find("huge") != std::string::npos;
    CHECK(e["time_unit"] == (is_huge ? "s" : "ns"));
    (is_huge ? huge : small)++;
  }
  CHECK(huge >= 3);  // two iterations and the median at least
  CHECK(small >= 3);
  bool median_in_seconds = false;
  for (const Json& e : doc["benchmarks"]) {
    median_in_seconds = median_in_seconds || (e["name"] == "w/t:huge/gpus:1_median" &&
                                              e["real_time"].get<double>() == 1e308);
  }
  CHECK(median_in_seconds);
}

namespace {

// Runs `body` in a child process and returns its wait status.
int in_child(const std::function<void()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      body();
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  return names;
}

std::atomic<int> g_seen{0};
void note_signal(int sig) { g_seen = sig; }

}  // namespace

// Before the fix an interrupted report left its hidden .NAME.tmp.XXXXXX (80 to 170 MB) behind.
TEST_CASE("atomic write: SIGINT, SIGTERM or SIGHUP during the write leaves no temporary file",
          "[file_io]") {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    INFO("signal " << sig);
    const std::string dir = mgbench::test::temp_dir("signal-write");
    const int status = in_child([&] {
      ::signal(sig, SIG_DFL);
      mgbench::write_file_atomic(dir + "/out.prom", [&](std::ostream& out) {
        out << std::string(1 << 20, 'x');
        out.flush();
        ::raise(sig);
        out << "never";
      });
    });
    CHECK(WIFSIGNALED(status));
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == sig));
    CHECK(names_in(dir).empty());
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("atomic write: a process's own handler runs instead and the write completes",
          "[file_io]") {
  const std::string dir = mgbench::test::temp_dir("signal-handler-write");
  const int status = in_child([&] {
    ::signal(SIGTERM, note_signal);
    ::signal(SIGHUP, SIG_IGN);
    mgbench::write_file_atomic(dir + "/out.txt", [](std::ostream& out) {
      out << "first ";
      ::raise(SIGTERM);
      ::raise(SIGHUP);
      out << "second";
    });
    // The handlers the process had are back after the write.
    struct sigaction now {};
    ::sigaction(SIGTERM, nullptr, &now);
    ::_exit(g_seen == SIGTERM && now.sa_handler == note_signal ? 0 : 1);
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(names_in(dir) == std::vector<std::string>{"out.txt"});
  CHECK(mgbench::test::read_text(dir + "/out.txt") == "first second");
  std::filesystem::remove_all(dir);
}

TEST_CASE("atomic write: an exception while streaming removes the temporary file", "[file_io]") {
  const std::string dir = mgbench::test::temp_dir("throw-write");
  std::ofstream(dir + "/out.txt") << "old";
  CHECK_THROWS_AS(mgbench::write_file_atomic(dir + "/out.txt",
                                             [](std::ostream& out) {
                                               out << "half";
                                               throw mgbench::UsageError("render failed");
                                             }),
                  mgbench::UsageError);
  CHECK(names_in(dir) == std::vector<std::string>{"out.txt"});
  CHECK(mgbench::test::read_text(dir + "/out.txt") == "old");
  std::filesystem::remove_all(dir);
}
