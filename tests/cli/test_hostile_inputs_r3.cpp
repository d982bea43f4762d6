// Hostile inputs, round 3, through the real binary: output paths that are not regular files
// (standard output, a FIFO, a character device, symbolic links, /dev in a private mount
// namespace), parameters that nest, a Prometheus export of many devices with long identifiers,
// and the soak's bounds. The table rows (docs/BAD-INPUT.md) run under a 60 s timeout, so that a
// build without the fixes fails them instead of soaking for a week.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "bad_input_support.hpp"
#include "catch_compat.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::Json;
using mgbench::test::BadInputCase;
using mgbench::test::run_mgbench;
using mgbench::test::run_script;

namespace {

const BadInputCase kCases[] = {
    {"report: a parameter value that nests", MGBENCH_POINT(",\"params\":{\"a\":[[1]],\"b\":1}"),
     "report $D/p.json --format prom -o $D/r.prom", 2,
     "point params 'a' is not a string, number or boolean"},
    {"compare: a parameter value that nests", MGBENCH_POINT(",\"params\":{\"a\":{\"x\":{}}}"),
     "compare $D/p.json $D/p.json", 2, "point params 'a' is not a string, number or boolean"},
    {"report: output is a symbolic link to a file",
     "cp $S/report_sample.json r.json; printf keep > t; ln -s t out.prom",
     "report $D/r.json --format prom -o $D/out.prom", 4, "a symbolic link to a file"},
    {"report: output is a symbolic link to nothing",
     "cp $S/report_sample.json r.json; ln -s nowhere out.html",
     "report $D/r.json -o $D/out.html", 4, "a symbolic link to nothing"},
    {"report: --format md to standard output", "cp $S/report_sample.json r.json",
     "report $D/r.json --format md -o -", 2, "--format md writes its charts beside the report"},
    {"soak: --duration 99999999999999999999h", "",
     "soak --workload selftest --duration 99999999999999999999h --out $D/s", 2,
     "longer than 720 h, the longest soak"},
    {"soak: --window 0.01 s", "", "soak --workload selftest --duration 10s --window 0.01 --out $D/s",
     2, "shorter than 0.1 s"},
    {"soak: 168 h of 1 s windows", "",
     "soak --workload selftest --duration 168h --window 1 --out $D/s", 2,
     "at most 10000 are measured (a window of 60.48 s or more)"},
    {"accept: a criteria file with a bad value",
     "{ echo 'gemm_scaling_min = 95 %'; echo 'throttling = maybe'; } > c.txt",
     "accept --criteria $D/c.txt --out $D/a", 2,
     "c.txt line 2: throttling = 'maybe': expected warn or fail"},
    {"accept: --lang fr", "", "accept --lang fr --out $D/a", 2,
     "invalid --lang 'fr': expected en or zh"},
    {"accept: --soak 0.5s", "", "accept --soak 0.5s --out $D/a", 2,
     "invalid --soak '0.5s': 0 (no soak) or from 1 s to 720 h"},
};

bool is_kind(const std::string& path, mode_t kind) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

// Names in `dir` (not recursive), sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string sample_in(const std::string& dir) {
  const std::string path = dir + "/r.json";
  std::filesystem::copy_file(MGBENCH_SOURCE_DIR "/tests/data/report_sample.json", path);
  return path;
}

// A nested value `depth` levels deep: [[[...[0]...]]].
Json nested(int depth) {
  Json v = 0;
  for (int i = 0; i < depth; ++i) v = Json::array({v});
  return v;
}

mgbench::PointResult plain_point(std::size_t index, std::vector<int> devices,
                                 mgbench::Params params) {
  mgbench::PointResult p;
  p.index = index;
  p.workload = "synthetic";
  p.params = std::move(params);
  p.gpus = static_cast<int>(devices.size());
  p.devices = std::move(devices);
  p.samples = {1e-3, 1.001e-3, 1.002e-3};
  p.stats = mgbench::compute_statistics(p.samples, 10);
  p.metrics = Json{{"items_per_s", 1000.0}};
  return p;
}

}  // namespace

TEST_CASE("hostile r3: bad outputs, nesting and soak bounds: one line, exit 2 or 4") {
  for (const BadInputCase& c : kCases) mgbench::test::check_bad_input_case(c, "timeout 60");
}

TEST_CASE("outputs: -o - writes to standard output and leaves no file named -") {
  const std::string dir = mgbench::test::temp_dir("stdout-out");
  sample_in(dir);
  const std::string cd = "cd '" + dir + "' &&";
  for (const auto& [format, marker] : std::vector<std::pair<std::string, std::string>>{
           {"prom", "# TYPE mgbench_run_info gauge"},
           {"gbench", "\"benchmarks\""},
           {"html", "<html"}}) {
    INFO(format);
    const auto r = run_mgbench("report r.json --format " + format + " -o -", cd);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(marker) != std::string::npos);
    CHECK(r.out.find("wrote") == std::string::npos);
  }
  const auto doc = run_mgbench("report r.json --json -o -", cd);
  CHECK(doc.exit_code == 0);
  CHECK(Json::parse(doc.out)["points"].size() == 117);
  CHECK(entries(dir) == std::vector<std::string>{"r.json"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("outputs: a FIFO is written in place, directly and through a link, never replaced") {
  const std::string dir = mgbench::test::temp_dir("fifo-out");
  sample_in(dir);
  // Each reader gives up after 20 s: a writer that replaced the FIFO never opens it.
  const int rc = run_script("cd '" + dir + "' && mkfifo p && ln -s p link || exit 9\n"
                            "timeout 20 cat p > got1 & r1=$!\n"
                            "\"$MGBENCH\" report r.json --format prom -o p > /dev/null || exit 1\n"
                            "wait $r1 || exit 2\n"
                            "timeout 20 cat p > got2 & r2=$!\n"
                            "\"$MGBENCH\" report r.json --format gbench -o link >/dev/null || exit 3\n"
                            "wait $r2 || exit 4\n");
  CHECK(rc == 0);
  CHECK(is_kind(dir + "/p", S_IFIFO));
  CHECK(is_kind(dir + "/link", S_IFLNK));
  CHECK(mgbench::test::read_text(dir + "/got1").find("# TYPE mgbench_run_info gauge") !=
        std::string::npos);
  CHECK(Json::parse(mgbench::test::read_text(dir + "/got2")).contains("benchmarks"));
  CHECK(entries(dir) == std::vector<std::string>{"got1", "got2", "link", "p", "r.json"});
  std::filesystem::remove_all(dir);
}

// A character device made with mknod (root, on a file system that allows devices): what
// /dev/null is, without touching the real one.
TEST_CASE("outputs: a character device is written in place by report, compare and sweep") {
  const std::string dir = mgbench::test::temp_dir("chardev-out");
  const std::string in = sample_in(dir);
  if (std::system(("cd '" + dir + "' && mknod null c 1 3 2>/dev/null && printf x > null").c_str()) !=
      0) {
    WARN("mknod of a character device is not possible here (not root, or no devices on the "
         "temporary directory's file system): case not checked");
    std::filesystem::remove_all(dir);
    return;
  }
  const std::string null = dir + "/null";
  const auto report = run_mgbench("report " + in + " --format prom -o " + null);
  CHECK(report.exit_code == 0);
  const auto exported = run_mgbench("report " + in + " --json -o " + null);
  CHECK(exported.exit_code == 0);
  const auto compare = run_mgbench("compare " + in + " " + in + " --junit " + null);
  CHECK(compare.err.find("cannot write") == std::string::npos);
  CHECK(compare.exit_code != 4);
  const auto sweep = run_mgbench("sweep --workloads selftest --param behavior=ok --gpus 1 --out " +
                                     dir + "/s --json " + null + mgbench::test::kQuiet,
                                 mgbench::test::kSelftestEnv);
  CHECK(sweep.exit_code == 0);
  CHECK(is_kind(null, S_IFCHR));
  CHECK(entries(dir) == std::vector<std::string>{"null", "r.json", "s"});
  std::filesystem::remove_all(dir);
}

// The reported case itself: /dev/null and /dev/stdout as root. In a private mount namespace
// with its own /dev (a tmpfs), so that a writer that replaces them cannot harm the machine.
TEST_CASE("outputs: /dev/null and /dev/stdout stay what they are, in a private mount namespace") {
  const std::string dir = mgbench::test::temp_dir("devns-out");
  const std::string in = sample_in(dir);
  std::ofstream(dir + "/ns.sh")
      << "mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && "
         "ln -s /proc/self/fd/1 /dev/stdout || exit 77\n"
         "\"$MGBENCH\" report '" << in << "' --format prom -o /dev/null > /dev/null || exit 1\n"
         "\"$MGBENCH\" compare '" << in << "' '" << in << "' --junit /dev/null > /dev/null\n"
         "[ $? -eq 4 ] && exit 2\n"
         "\"$MGBENCH\" report '" << in << "' --format prom -o /dev/stdout | cat > '" << dir
      << "/piped.prom' || exit 3\n"
         "\"$MGBENCH\" report '" << in << "' --format prom -o /dev/stdout > '" << dir
      << "/file.prom' 2> '" << dir << "/refused.txt'\n"
         "[ $? -eq 4 ] || exit 4\n"
         "test -c /dev/null && test -L /dev/stdout || exit 5\n"
         "ls -A /dev > '" << dir << "/dev.txt'\n";
  // Root: a mount namespace; otherwise one inside a user namespace, where mknod is refused and
  // the case says so.
  const std::string unshare = ::geteuid() == 0 ? "unshare -m" : "unshare -rm";
  const int rc = std::system((unshare + " true 2>/dev/null").c_str()) != 0
                     ? 77
                     : run_script("export MGBENCH; " + unshare + " sh '" + dir + "/ns.sh'");
  if (rc == 77) {
    WARN("no private mount namespace with a device node here (" + unshare +
         "): case not checked");
    std::filesystem::remove_all(dir);
    return;
  }
  CHECK(rc == 0);
  CHECK(mgbench::test::read_text(dir + "/piped.prom").find("# TYPE mgbench_run_info gauge") !=
        std::string::npos);
  CHECK(mgbench::test::read_text(dir + "/file.prom").empty());
  CHECK(mgbench::test::read_text(dir + "/refused.txt").find("a symbolic link to a file") !=
        std::string::npos);
  CHECK(mgbench::test::read_text(dir + "/dev.txt") == "null\nstdout\n");  // no temporary file
  std::filesystem::remove_all(dir);
}

// Before the fix, one series line held every device's UUID and model (here 64 x 1 KB each, in
// every family) and the whole text was built in memory: 22 MB from a 1.1 MB file. Now each
// label value is at most 256 bytes, a point on several devices names their indices, and
// mgbench_gpu_info gives each device's identity once.
TEST_CASE("prom: many devices with long identifiers give bounded lines and one info series each") {
  const std::string dir = mgbench::test::temp_dir("prom-wide");
  mgbench::RunResult run;
  run.host = "node";
  Json gpus = Json::array();
  std::vector<int> all;
  for (int d = 0; d < 64; ++d) {
    gpus.push_back({{"index", d},
                    {"uuid", "GPU-" + std::to_string(d) + "-" + std::string(1024, 'u')},
                    {"name", "Model " + std::to_string(d) + std::string(1024, 'n')}});
    all.push_back(d);
  }
  run.environment = Json{{"gpus", gpus}};
  for (std::size_t i = 0; i < 40; ++i) {
    run.points.push_back(
        plain_point(i, all, mgbench::Params{{"size", i}, {"tag", std::string(2048, 't')}}));
  }
  run.points.push_back(plain_point(40, {7}, mgbench::Params{{"size", 40}, {"tag", "short"}}));
  mgbench::save_results(run, dir + "/wide.json");
  const auto r = run_mgbench("report " + dir + "/wide.json --format prom -o " + dir + "/o.prom");
  REQUIRE(r.exit_code == 0);
  const std::string text = mgbench::test::read_text(dir + "/o.prom");
  CHECK(text.size() < 400000);
  std::istringstream lines(text);
  std::size_t longest = 0, info = 0, uuid_series = 0;
  const std::regex value(R"re("((?:[^"\\]|\\.)*)")re");
  for (std::string line; std::getline(lines, line);) {
    longest = std::max(longest, line.size());
    for (auto it = std::sregex_iterator(line.begin(), line.end(), value);
         it != std::sregex_iterator(); ++it) {
      CHECK((*it)[1].length() <= 256);  // a longer value is cut, "..." included
    }
    if (line.rfind("mgbench_gpu_info{", 0) == 0) ++info;
    if (line[0] != '#' && line.rfind("mgbench_gpu_info", 0) != 0 &&
        line.find("UUID=") != std::string::npos) {
      ++uuid_series;
      CHECK(line.find("gpu=\"7\"") != std::string::npos);  // only the one-device point
    }
  }
  CHECK(longest < 2000);
  CHECK(info == 64);
  CHECK(uuid_series >= 2);  // its point_ok, median, ... series
  CHECK(text.find("mgbench_gpu_info{gpu=\"63\",UUID=\"GPU-63-uuu") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// Points are refused with a nested parameter (the table above), and since parameters are typed so
// are the scaling series stored in a file. compare --report orders their efficiency rows by
// parameters: with operator< two series whose parameters shared a value nested 27 deep took
// 4.8 s, and every level doubled it: 40 levels were hours. Such a file is now a usage error when
// read. A time bound with a huge margin: well under a second now, hours before.
TEST_CASE("compare --report: scaling series with deeply nested equal parameters are refused fast") {
  const std::string dir = mgbench::test::temp_dir("nested-scaling");
  mgbench::RunResult run;
  run.host = "node";
  run.points.push_back(plain_point(0, {0}, mgbench::Params{{"size", 1}}));
  run.points.push_back(plain_point(1, {0, 1}, mgbench::Params{{"size", 1}}));
  for (int b : {2, 1}) {
    mgbench::ScalingSeries s;
    s.workload = "synthetic";
    s.params = mgbench::Params{{"b", b}};  // "a" (nested) is written into the file below
    s.metric = "items_per_s";
    s.mode = "weak";
    s.rows.push_back(mgbench::ScalingRow{});
    mgbench::ScalingRow two;
    two.gpus = 2;
    two.point_index = 1;
    s.rows.push_back(two);
    run.scaling.push_back(s);
  }
  mgbench::save_results(run, dir + "/s.json");
  Json doc = Json::parse(mgbench::test::read_text(dir + "/s.json"));
  REQUIRE(doc.at("scaling").size() == 2);
  for (Json& series : doc.at("scaling")) series.at("params")["a"] = nested(40);
  std::ofstream(dir + "/s.json") << doc.dump();
  const double start = mgbench::test::children_cpu_s();
  const auto r = run_mgbench("compare " + dir + "/s.json " + dir + "/s.json --report " + dir +
                             "/c.html");
  CHECK(mgbench::test::children_cpu_s() - start < 20.0 * mgbench::test::kCpuBudgetScale);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("params 'a'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/c.html"));
  std::filesystem::remove_all(dir);
}
