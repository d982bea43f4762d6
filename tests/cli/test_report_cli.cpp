// `mgbench report` through the real binary: formats, output paths, and one-line exit-2 errors
// for malformed results.
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;

namespace {

const std::string kSample = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json";

int line_count(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

std::string write_temp(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_CASE("report writes one self-contained HTML file") {
  const std::string dir = mgbench::test::temp_dir("report-html");
  const auto r = run_mgbench("report " + kSample + " -o " + dir + "/r.html");
  CHECK(r.exit_code == 0);
  const std::string html = mgbench::test::read_text(dir + "/r.html");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("src=\"http") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("report --format md writes Markdown with linked SVG charts") {
  const std::string dir = mgbench::test::temp_dir("report-md");
  const auto r = run_mgbench("report " + kSample + " --format md -o " + dir + "/r.md");
  CHECK(r.exit_code == 0);
  const std::string md = mgbench::test::read_text(dir + "/r.md");
  const auto link = md.find("](r_charts/");
  REQUIRE(link != std::string::npos);
  const std::string file = md.substr(link + 2, md.find(')', link) - link - 2);
  CHECK(std::filesystem::exists(dir + "/" + file));
  std::filesystem::remove_all(dir);
}

TEST_CASE("report --format csv writes CSV to stdout") {
  const auto r = run_mgbench("report " + kSample + " --format csv");
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("index,workload,gpus,devices,status", 0) == 0);
  CHECK(line_count(r.out) == 1 + 117);
}

TEST_CASE("report of a file that is not JSON exits 2 with one line") {
  const std::string dir = mgbench::test::temp_dir("report-bad");
  const auto r = run_mgbench("report " + write_temp(dir, "bad.json", "{\"points\": [1,") + " -o " +
                             dir + "/r.html");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("not valid JSON") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/r.html"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("report of results with a malformed point exits 2 with one line") {
  const std::string dir = mgbench::test::temp_dir("report-bad-point");
  const auto r =
      run_mgbench("report " +
                  write_temp(dir, "bad.json",
                             "{\"schema_version\": 1, \"points\": [{\"workload\": \"gemm\"}]}") +
                  " -o " + dir + "/r.html");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("report of a missing file exits 2 with one line") {
  const auto r = run_mgbench("report /nonexistent/results.json");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("/nonexistent/results.json") != std::string::npos);
}

TEST_CASE("report with an unknown format exits 2 with one line") {
  const auto r = run_mgbench("report " + kSample + " --format pdf");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("pdf") != std::string::npos);
}

TEST_CASE("report without a results file exits 2 with one line") {
  const auto r = run_mgbench("report");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
}
