// The sweep under faults, with the real binary and the CPU-only selftest workload: workers that
// exit silently, lie about indices, chatter, or are killed with a point on the pipe; a journal
// that cannot be written; a second sweep on one --out; resume with a changed plan or a hostile
// journal; a read-only --out; a full disk. Every test reads results.json (statuses, indices, messages).
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/journal.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::Status;
using mgbench::test::kQuiet;
using mgbench::test::kSelftestEnv;
using mgbench::test::line_count;
using mgbench::test::run_mgbench;

namespace {

const std::string kLoud = " --no-history --no-report --skip-doctor --no-telemetry";

std::string selftest(const std::string& behaviors, const std::string& out,
                     const std::string& extra = kQuiet) {
  return "sweep --workloads selftest --param behavior=" + behaviors + " --gpus 1 --out " + out +
         extra;
}

// Rewrites the journal's header with `edit` applied to its "run" object.
template <typename Edit>
void edit_journal_header(const std::string& path, Edit edit) {
  std::istringstream in(mgbench::test::read_text(path));
  std::string line, text;
  while (std::getline(in, line)) {
    auto record = mgbench::Json::parse(line);
    if (record["type"] == "header") edit(record["run"]);
    text += record.dump() + "\n";
  }
  std::ofstream(path, std::ios::trunc) << text;
}

// Drops the journal's last point, so that a resume has work to do (and results to write).
void drop_last_point(const std::string& journal) {
  std::string text = mgbench::test::read_text(journal);
  text.erase(text.rfind('\n', text.size() - 2) + 1);
  std::ofstream(journal, std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("a worker that exits 0 without reporting its point fails that point (exit 4)") {
  const std::string out = mgbench::test::temp_dir("silent");
  const auto r = run_mgbench(selftest("ok,silent-exit", out), kSelftestEnv);
  CHECK(r.exit_code == 4);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 2);
  CHECK(run.points[0].status == Status::ok);
  CHECK(run.points[1].index == 1);
  CHECK(run.points[1].status == Status::failed);
  CHECK(run.points[1].message.find("without reporting") != std::string::npos);
  std::filesystem::remove_all(out);
}

TEST_CASE("an index outside the plan is rejected and never overwrites another point") {
  const std::string out = mgbench::test::temp_dir("badindex");
  // Before indices were checked, this looped for ever: a time limit makes that a failure.
  const auto r = run_mgbench(selftest("ok,bad-index,ok", out, kLoud), kSelftestEnv + " timeout 60");
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("point 1000001: not expected") != std::string::npos);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 3);
  CHECK(run.points[0].status == Status::ok);
  CHECK(run.points[0].message.empty());
  CHECK(run.points[1].status == Status::failed);
  CHECK(run.points[1].message.find("signal") != std::string::npos);
  CHECK(run.points[2].status == Status::ok);
  for (std::size_t i = 0; i < run.points.size(); ++i) CHECK(run.points[i].index == i);
  std::filesystem::remove_all(out);
}

TEST_CASE("megabytes of worker chatter on stdout and stderr never reach the protocol") {
  const std::string out = mgbench::test::temp_dir("chatty");
  const auto r = run_mgbench(selftest("chatty,ok", out), kSelftestEnv);
  CHECK(r.exit_code == 0);
  CHECK(r.err.size() >= (4u << 20));  // both streams passed through to stderr
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(run.points[i].index == i);
    CHECK(run.points[i].status == Status::ok);
    CHECK(run.points[i].params.text("behavior") == (i == 0 ? "chatty" : "ok"));
  }
  std::filesystem::remove_all(out);
}

TEST_CASE("a point on the pipe when the worker is killed (interrupt) is kept") {
  const std::string out = mgbench::test::temp_dir("drain");
  const auto r = run_mgbench(selftest("ok,interrupt,ok", out), kSelftestEnv);
  CHECK(r.exit_code == 130);
  const auto run = mgbench::load_results(out + "/results.json");
  CHECK(run.interrupted);
  REQUIRE(run.points.size() == 3);
  CHECK(run.points[0].status == Status::ok);
  CHECK(run.points[1].status == Status::ok);  // written before the kill: drained, not lost
  CHECK(run.points[2].status == Status::skipped);
  CHECK(run.points[2].message == "interrupted");
  CHECK(mgbench::test::read_journal_points(out + "/journal.jsonl").count[1] == 1);
  std::filesystem::remove_all(out);
}

TEST_CASE("a journal that cannot be written stops new groups, results.json has every point") {
  const std::string out = mgbench::test::temp_dir("journalfull");
  const auto r = run_mgbench("sweep --workloads selftest --param behavior=ok,ok,ok --gpus 1,2"
                             " --out " + out + kQuiet,
                             kSelftestEnv + " MGBENCH_TEST_JOURNAL_FAIL_AFTER=2");
  CHECK(r.exit_code == 4);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 6);
  for (std::size_t i = 0; i < 3; ++i) CHECK(run.points[i].status == Status::ok);
  for (std::size_t i = 3; i < 6; ++i) {
    CHECK(run.points[i].status == Status::skipped);
    CHECK(run.points[i].message.find("not run: cannot append to journal") == 0);
  }
  const auto journal = mgbench::test::read_journal_points(out + "/journal.jsonl");
  CHECK(journal.count.size() == 2);  // whole lines only: the failed append left nothing
  CHECK(line_count(mgbench::test::read_text(out + "/journal.jsonl")) == 3);
  // Resume runs what the journal lacks; nothing it holds runs again.
  const auto resumed = run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv);
  CHECK(resumed.exit_code == 0);
  const auto done = mgbench::load_results(out + "/results.json");
  REQUIRE(done.points.size() == 6);
  for (const auto& p : done.points) CHECK(p.status == Status::ok);
  const auto after = mgbench::test::read_journal_points(out + "/journal.jsonl");
  CHECK(after.started_at.at(0) == journal.started_at.at(0));
  CHECK(after.count.at(0) == 1);
  std::filesystem::remove_all(out);
}

TEST_CASE("a second sweep on a busy or used --out is refused, --force starts over") {
  const std::string out = mgbench::test::temp_dir("twice");
  // 300 ms each: the first sweep must still hold --out when the second starts, which under
  // ASan (the asan preset, -O0) takes seconds.
  const std::size_t slow_points = mgbench::test::kAsanBuild ? 20 : 4;
  std::string behaviors = "slow";
  for (std::size_t i = 1; i < slow_points; ++i) behaviors += ",slow";
  const std::string first = selftest(behaviors, out);
  const std::string second = selftest("ok", out);
  const int rc = mgbench::test::run_script(
      "\"$MGBENCH\" " + first + " 2>/dev/null & pid=$!\n"
      "for i in $(seq 3000); do [ -s " + out + "/journal.jsonl ] && break; sleep 0.01; done\n"
      "\"$MGBENCH\" " + second + " 2>" + out + "/busy.err; echo $? >" + out + "/busy.rc\n"
      "wait $pid");
  CHECK(rc == 0);
  CHECK(mgbench::test::read_text(out + "/busy.rc") == "2\n");
  const std::string busy = mgbench::test::read_text(out + "/busy.err");
  CHECK(line_count(busy) == 1);
  CHECK(busy.find("in use by another sweep") != std::string::npos);
  const auto kept = mgbench::load_results(out + "/results.json");
  REQUIRE(kept.points.size() == slow_points);
  for (const auto& p : kept.points) CHECK(p.status == Status::ok);

  const auto again = run_mgbench(second, kSelftestEnv);
  CHECK(again.exit_code == 2);
  CHECK(line_count(again.err) == 1);
  CHECK(again.err.find("--resume") != std::string::npos);
  CHECK(mgbench::load_results(out + "/results.json").points.size() == slow_points);  // untouched

  const auto forced = run_mgbench(selftest("ok", out, kLoud) + " --force", kSelftestEnv);
  CHECK(forced.exit_code == 0);
  CHECK(forced.err.find("--force: starting over") != std::string::npos);
  const auto fresh = mgbench::load_results(out + "/results.json");
  REQUIRE(fresh.points.size() == 1);
  CHECK(fresh.points[0].params.text("behavior") == "ok");
  std::filesystem::remove_all(out);
}

TEST_CASE("two sweeps started together get two default output directories") {
  const std::string cwd = mgbench::test::temp_dir("defaults");
  const std::string sweep = "sweep --workloads selftest --gpus 1" + kQuiet;
  const int rc = mgbench::test::run_script("cd " + cwd + " && { \"$MGBENCH\" " + sweep +
                                           " & \"$MGBENCH\" " + sweep + " & wait; }");
  CHECK(rc == 0);
  int dirs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cwd + "/results")) {
    ++dirs;
    const auto run = mgbench::load_results(entry.path().string() + "/results.json");
    REQUIRE(run.points.size() == 1);
    CHECK(run.points[0].status == Status::ok);
    const std::string name = entry.path().filename().string();
    const std::string slug_chars =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
    CHECK(name.find_first_not_of(slug_chars) == std::string::npos);
  }
  CHECK(dirs == 2);
  std::filesystem::remove_all(cwd);
}

TEST_CASE("resume refuses a changed plan, conflicting flags and another version (exit 2)") {
  const std::string out = mgbench::test::temp_dir("changed");
  REQUIRE(run_mgbench(selftest("ok,ok", out), kSelftestEnv).exit_code == 0);
  const std::string journal = out + "/journal.jsonl";

  auto conflict = run_mgbench("sweep --resume " + out + " --param behavior=ok,wrong" + kQuiet,
                              kSelftestEnv);
  CHECK(conflict.exit_code == 2);
  CHECK(line_count(conflict.err) == 1);
  CHECK(conflict.err.find("--param conflicts with the plan being resumed") != std::string::npos);
  // The same value as the journal's is no conflict.
  CHECK(run_mgbench("sweep --resume " + out + " --gpus 1" + kQuiet, kSelftestEnv).exit_code == 0);
  const std::string before = mgbench::test::read_text(out + "/results.json");

  edit_journal_header(journal, [](mgbench::Json& run) {
    run["plan_options"]["param"]["behavior"] = {"wrong", "ok"};
  });
  auto changed = run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv);
  CHECK(changed.exit_code == 2);
  CHECK(line_count(changed.err) == 1);
  CHECK(changed.err.find("the plan changed: finished point #0") != std::string::npos);

  edit_journal_header(journal, [](mgbench::Json& run) {
    run["plan_options"]["param"]["behavior"] = {"ok", "ok"};
    run["tool"]["version"] = "0.0.1-other";
  });
  auto version = run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv);
  CHECK(version.exit_code == 2);
  CHECK(version.err.find("0.0.1-other") != std::string::npos);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 2);
  for (const auto& p : run.points) CHECK(p.status == Status::ok);
  CHECK(mgbench::test::read_text(out + "/results.json") == before);  // nothing rewritten
  std::filesystem::remove_all(out);
}

TEST_CASE("resume takes only the plan from a journal: its command line's paths are never written") {
  const std::string out = mgbench::test::temp_dir("hostile");
  const std::string trap = mgbench::test::temp_dir("trap");
  REQUIRE(run_mgbench(selftest("ok,ok,ok", out), kSelftestEnv).exit_code == 0);
  const std::string journal = out + "/journal.jsonl";
  edit_journal_header(journal, [&](mgbench::Json& run) {
    run["argv"] = {"sweep",  "--workloads", "selftest", "--param", "behavior=ok,ok,ok",
                   "--gpus", "1",           "--json",   trap + "/profile.json",
                   "--csv",  trap + "/rc.csv", "--db",  trap + "/history.db",
                   "--out",  trap + "/out", "--isolation", "none", "--help"};
  });
  // Drop the last point so that resume has work to do (and results to write).
  std::string text = mgbench::test::read_text(journal);
  text.erase(text.rfind('\n', text.size() - 2) + 1);
  std::ofstream(journal, std::ios::trunc) << text << "not json\n";
  const auto r = run_mgbench("sweep --resume " + out + " --no-report --skip-doctor --no-telemetry",
                             kSelftestEnv + " HOME=" + out + " XDG_DATA_HOME=" + out);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("1 unreadable line(s) skipped") != std::string::npos);
  CHECK(r.err.find("with the plan of its journal: --gpus [1] --workloads [\"selftest\"] --param "
                   "{\"behavior\":[\"ok\",\"ok\",\"ok\"]}\n") != std::string::npos);
  CHECK(std::filesystem::is_empty(trap));
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 3);
  for (const auto& p : run.points) CHECK(p.status == Status::ok);
  CHECK(run.settings["isolation"] == "process");
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(trap);
}

TEST_CASE("resume reads the journal's plan: a command line there that cannot be read resumes") {
  const std::string out = mgbench::test::temp_dir("argv-unreadable");
  REQUIRE(run_mgbench(selftest("ok,ok,ok", out), kSelftestEnv).exit_code == 0);
  const std::string journal = out + "/journal.jsonl";
  edit_journal_header(journal, [](mgbench::Json& run) { run["argv"] = {"sweep", 7, nullptr}; });
  drop_last_point(journal);
  const auto r = run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv);
  CHECK(r.exit_code == 0);
  const auto resumed = mgbench::load_results(out + "/results.json");
  REQUIRE(resumed.points.size() == 3);
  for (const auto& p : resumed.points) CHECK(p.status == Status::ok);
  REQUIRE(resumed.argv.size() > 2);  // the command line that resumed it, for information
  CHECK(resumed.argv[1] == "--resume");
  // No command line at all: the same.
  edit_journal_header(journal, [](mgbench::Json& run) { run.erase("argv"); });
  drop_last_point(journal);
  CHECK(run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv).exit_code == 0);
  CHECK(mgbench::load_results(out + "/results.json").points.size() == 3);
  std::filesystem::remove_all(out);
}

TEST_CASE("resume refuses a journal whose plan is hostile or missing (exit 2, one line)") {
  const std::string out = mgbench::test::temp_dir("plan-hostile");
  REQUIRE(run_mgbench(selftest("ok,ok", out), kSelftestEnv).exit_code == 0);
  const std::string journal = out + "/journal.jsonl";
  drop_last_point(journal);
  const std::string original = mgbench::test::read_text(journal);
  const std::string results = mgbench::test::read_text(out + "/results.json");
  using mgbench::Json;
  const std::vector<std::pair<std::function<void(Json&)>, std::string>> cases = {
      {[](Json& run) { run.erase("plan_options"); }, "records no plan"},
      {[](Json& run) { run["plan_options"] = Json::array(); }, "--gpus is missing"},
      {[](Json& run) { run["plan_options"].erase("nvls"); }, "--nvls is missing"},
      {[](Json& run) { run["plan_options"]["gpus"] = {-1}; }, "--gpus value '-1'"},
      {[](Json& run) { run["plan_options"]["gpus"] = "1"; }, "--gpus"},
      {[](Json& run) { run["plan_options"]["gpus"] = {1.5}; }, "--gpus"},
      {[](Json& run) { run["plan_options"]["devices"] = {0, 0}; }, "duplicate --devices"},
      {[](Json& run) { run["plan_options"]["workloads"] = {"nope"}; }, "unknown workload 'nope'"},
      {[](Json& run) { run["plan_options"]["workloads"] = {"a,b"}; }, "--workloads"},
      {[](Json& run) { run["plan_options"]["param"] = {{"behavior", "ok"}}; }, "param behavior"},
      {[](Json& run) { run["plan_options"]["param"] = {{"", {"1"}}}; }, "--param"},
      {[](Json& run) { run["plan_options"]["batch-sizes"] = {"0"}; }, "--batch-sizes value '0'"},
      {[](Json& run) { run["plan_options"]["profile"] = "turbo"; }, "'turbo'"},
      {[](Json& run) { run["plan_options"]["min-samples"] = 0; }, "--min-samples"},
      {[](Json& run) { run["plan_options"]["min-time"] = "1"; }, "--min-time"},
      {[](Json& run) { run["plan_options"]["max-noise"] = 5; }, "--max-noise"},
      {[](Json& run) { run["plan_options"]["max-time-per-point"] = 1e300; }, "1e8"},
      {[](Json& run) { run["plan_options"]["warmup"] = -1; }, "--warmup"},
      {[](Json& run) { run["plan_options"]["launcher"] = "pdsh"; }, "'pdsh'"},
      {[](Json& run) { run["plan_options"]["hosts"] = {{{"host", "a;rm"}, {"slots", 1}}}; },
       "invalid host name"},
      {[](Json& run) { run["plan_options"]["hosts"] = {{{"host", "a"}, {"slots", 99999}}}; },
       "slot count"},
      {[](Json& run) { run["plan_options"]["gpus-per-node"] = 5000; }, "--gpus-per-node"},
      {[](Json& run) { run["plan_options"]["oversubscribe"] = true; }, "need --launcher mpirun"},
      {[](Json& run) { run["plan_options"]["scaling"] = "both"; }, "'both'"},
      {[](Json& run) { run["plan_options"]["baseline"] = "each"; }, "--baseline"},
      {[](Json& run) { run["plan_options"]["nvls"] = "maybe"; }, "'maybe'"},
  };
  for (const auto& [change, expected] : cases) {
    std::ofstream(journal, std::ios::trunc) << original;
    edit_journal_header(journal, change);
    const auto r = run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv);
    INFO(expected << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(expected) != std::string::npos);
  }
  CHECK(mgbench::test::read_text(out + "/results.json") == results);  // nothing rewritten
  std::filesystem::remove_all(out);
}

TEST_CASE("resume takes the journal's --warmup and refuses another") {
  const std::string out = mgbench::test::temp_dir("warmup-resume");
  REQUIRE(run_mgbench(selftest("ok,ok", out, " --warmup 0.2" + kQuiet), kSelftestEnv)
              .exit_code == 0);
  drop_last_point(out + "/journal.jsonl");
  const auto other = run_mgbench("sweep --resume " + out + " --warmup 0.3" + kQuiet,
                                 kSelftestEnv);
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("--warmup conflicts with the plan being resumed (0.2)") !=
        std::string::npos);
  CHECK(run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv).exit_code == 0);
  const auto run = mgbench::load_results(out + "/results.json");
  CHECK(run.settings["warmup_s"] == 0.2);
  CHECK(run.points.size() == 2);
  std::filesystem::remove_all(out);
}

TEST_CASE("a read-only --out exits 4 with one line and runs nothing") {
  const std::string out = mgbench::test::temp_dir("readonly");
  if (::geteuid() == 0) {
    if (::mount("tmpfs", out.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) {
      WARN("cannot mount a read-only tmpfs here: not checked");
      return;
    }
  } else {
    std::filesystem::permissions(out, std::filesystem::perms::owner_read |
                                          std::filesystem::perms::owner_exec);
  }
  const auto r = run_mgbench(selftest("ok,ok", out), kSelftestEnv);
  CHECK(r.exit_code == 4);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("Read-only file system") + r.err.find("Permission denied") !=
        2 * std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out + "/results.json"));
  if (::geteuid() == 0) ::umount(out.c_str());
  std::filesystem::permissions(out, std::filesystem::perms::owner_all);
  std::filesystem::remove_all(out);
}

TEST_CASE("a full disk (ENOSPC): whole journal lines kept, exit 4, and resume completes") {
  if (::geteuid() != 0) {
    WARN("a small tmpfs needs root: not checked");
    return;
  }
  const std::string out = mgbench::test::temp_dir("enospc");
  if (::mount("tmpfs", out.c_str(), "tmpfs", 0, "size=16k") != 0) {
    WARN("cannot mount a tmpfs here: not checked");
    return;
  }
  std::string batches = "1";
  for (int b = 2; b <= 40; ++b) batches += "," + std::to_string(b);
  const std::string sweep =
      "sweep --workloads selftest --param batch=" + batches + " --gpus 1 --out " + out + kQuiet;
  const auto r = run_mgbench(sweep, kSelftestEnv);
  CHECK(r.exit_code == 4);
  CHECK(line_count(r.err) <= 2);  // the journal's error, then results.json's
  CHECK(r.err.find("No space left on device") != std::string::npos);
  const auto replay = mgbench::replay_journal(out + "/journal.jsonl");
  CHECK(replay.bad_lines == 0);  // no half line
  CHECK_FALSE(replay.points.empty());
  const auto before = mgbench::test::read_journal_points(out + "/journal.jsonl");

  REQUIRE(::mount("tmpfs", out.c_str(), "tmpfs", MS_REMOUNT, "size=8m") == 0);  // space again
  const auto resumed = run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv);
  CHECK(resumed.exit_code == 0);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 40);
  for (const auto& p : run.points) CHECK(p.status == Status::ok);
  for (const auto& [index, started] : before.started_at) {
    CHECK(run.points[index].started_at == started);
  }
  for (const auto& [index, n] : mgbench::test::read_journal_points(out + "/journal.jsonl").count) {
    CHECK(n == 1);
  }
  ::umount(out.c_str());
  std::filesystem::remove_all(out);
}
