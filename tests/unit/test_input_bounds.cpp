// Bounded readers: results files, worker-protocol lines and journals from other machines cannot
// exhaust the stack, memory or time. Each hostile shape fails with one UsageError (exit 2).
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/limits.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/journal.hpp"
#include "mgbench/run/worker_protocol.hpp"
#include "support.hpp"

namespace {

// CPU seconds of this process since `start` (wall time means little on a shared build machine).
double seconds_since(std::clock_t start) {
  return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string load_error(const std::string& path) {
  try {
    (void)mgbench::load_results(path);
  } catch (const mgbench::UsageError& e) {
    return e.what();
  }
  return "";
}

std::string point_json(std::size_t i, const std::string& params) {
  return "{\"index\":" + std::to_string(i) +
         ",\"workload\":\"w\",\"params\":" + params +
         ",\"gpus\":1,\"devices\":[0],\"status\":\"ok\",\"samples\":[],\"stats\":{\"n\":0,"
         "\"median\":0,\"mean\":0,\"min\":0,\"max\":0,\"stdev\":0,\"rel_stdev\":0,\"p05\":0,"
         "\"p95\":0,\"ci_low\":0,\"ci_high\":0}}";
}

std::string run_with_points(std::size_t n, bool distinct_params) {
  std::string text = "{\"schema_version\":2,\"points\":[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) text += ',';
    text += point_json(i, distinct_params ? "{\"p" + std::to_string(i) + "\":1}" : "{}");
  }
  return text + "]}";
}

}  // namespace

TEST_CASE("bounds: 100k nested brackets are refused before parsing, without recursion") {
  const std::string dir = mgbench::test::temp_dir("bounds");
  const std::string path = write_file(dir, "nested.json", "{\"schema_version\":2,\"points\":" +
                                                              std::string(100000, '[') +
                                                              std::string(100000, ']') + "}");
  const auto start = std::clock();
  const std::string error = load_error(path);
  CHECK(seconds_since(start) < 2.0 * mgbench::test::kCpuBudgetScale);
  CHECK(error.find("nesting deeper than 64") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bounds: a file over the size limit is refused before it is read") {
  const std::string dir = mgbench::test::temp_dir("bounds");
  const std::string path = dir + "/huge.json";
  std::ofstream(path) << "{";
  std::filesystem::resize_file(path, (std::uintmax_t{64} << 20) + 1);  // sparse
  CHECK(load_error(path).find("larger than") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bounds: a string over 1 MiB is refused") {
  const std::string dir = mgbench::test::temp_dir("bounds");
  const std::string path = write_file(dir, "long.json", "{\"schema_version\":2,\"host\":\"" +
                                                            std::string(2u << 20, 'x') +
                                                            "\",\"points\":[]}");
  CHECK(load_error(path).find("a string longer than") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bounds: too many points, or points x parameter names, are refused") {
  const std::string dir = mgbench::test::temp_dir("bounds");
  const std::string many = write_file(dir, "many.json",
                                      run_with_points(mgbench::limits::kMaxPoints + 1, false));
  // 20000 points, each with its own parameter name: a table of 20000 x 20000 cells.
  const std::string wide = write_file(dir, "wide.json", run_with_points(20000, true));
  auto start = std::clock();
  // CPU seconds; the sanitized build is scaled (2.8 s was seen under ASan on a busy 2-core
  // machine): the guard is against the quadratic table, far above either bound.
  CHECK(load_error(many).find("points (at most") != std::string::npos);
  CHECK(seconds_since(start) < 2.0 * mgbench::test::kCpuBudgetScale);
  start = std::clock();
  CHECK(load_error(wide).find("parameter names") != std::string::npos);
  CHECK(seconds_since(start) < 2.0 * mgbench::test::kCpuBudgetScale);
  CHECK_NOTHROW(mgbench::load_results(write_file(dir, "fine.json", run_with_points(100, false))));
  std::filesystem::remove_all(dir);
}

TEST_CASE("bounds: the depth pre-scan ignores brackets inside strings") {
  const std::string text = "{\"a\":\"" + std::string(1000, '[') + "\\\"\"}";
  CHECK(mgbench::json_limit_violation(text, mgbench::JsonLimits{}).empty());
  CHECK_NOTHROW(mgbench::parse_json_bounded(text, "test"));
  CHECK_THROWS_AS(mgbench::parse_json_bounded(std::string(65, '['), "test"), mgbench::UsageError);
}

TEST_CASE("worker lines: a deeply nested line is rejected without recursion") {
  std::string error;
  const std::string line = "{\"type\":\"started\",\"x\":" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  CHECK_FALSE(mgbench::parse_worker_line(line, &error));
  CHECK(error == "nested too deeply");
}

TEST_CASE("line buffer: an endless line is dropped, never buffered without bound") {
  mgbench::LineBuffer buffer(1 << 20);
  const std::string chunk(64 << 10, 'x');
  for (int i = 0; i < 64; ++i) {  // 4 MiB without a newline
    buffer.append(chunk.data(), chunk.size());
    CHECK(buffer.take_lines().empty());
    REQUIRE(buffer.pending().size() <= (1u << 20) + chunk.size());
  }
  const std::string tail = "xxx\n{\"type\":\"done\"}\n";
  buffer.append(tail.data(), tail.size());
  const auto lines = buffer.take_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "{\"type\":\"done\"}");
  CHECK(buffer.dropped_lines() == 1);
}

TEST_CASE("line buffer: small reads of a long line cost linear time (saved scan offset)") {
  mgbench::LineBuffer buffer;  // the default limit (16 MiB)
  const std::string chunk(1024, 'x');
  const auto start = std::clock();
  for (int i = 0; i < 12 * 1024; ++i) {  // 12 MiB in 1 KiB reads: quadratic would rescan ~75 GB
    buffer.append(chunk.data(), chunk.size());
    (void)buffer.take_lines();
  }
  buffer.append("\n", 1);
  const auto lines = buffer.take_lines();
  CHECK(seconds_since(start) < 2.0 * mgbench::test::kCpuBudgetScale);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].size() == 12u * 1024 * 1024);
}

TEST_CASE("journal replay: an over-long line is counted as bad, the others are read") {
  const std::string dir = mgbench::test::temp_dir("journal-long");
  const std::string path = dir + "/journal.jsonl";
  mgbench::PointResult p;
  p.index = 0;
  p.workload = "w";
  const std::string good = mgbench::make_worker_line(mgbench::Json{{"type", "point"}, {"result", p}});
  p.index = 1;
  const std::string also = mgbench::make_worker_line(mgbench::Json{{"type", "point"}, {"result", p}});
  std::ofstream(path, std::ios::binary) << good << std::string(3u << 20, 'x') << "\n" << also;
  const auto replay = mgbench::replay_journal(path, 1u << 20);
  CHECK(replay.bad_lines == 1);
  REQUIRE(replay.points.size() == 2);
  CHECK(replay.points[1].index == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bounds: a presentation with too many charts is refused") {
  const std::string dir = mgbench::test::temp_dir("bounds");
  std::string charts;
  for (int i = 0; i < 65; ++i) charts += std::string(i ? "," : "") + "{\"kind\":\"scaling\"}";
  const std::string path = write_file(dir, "charts.json",
                                      "{\"schema_version\":2,\"points\":[],\"presentation\":"
                                      "{\"w\":{\"charts\":[" + charts + "]}}}");
  CHECK(load_error(path).find("presentation of 'w' has a list longer than 64") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}
