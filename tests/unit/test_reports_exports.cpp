// The export formats: Prometheus text exposition (names, labels, escaping, one series per label
// set), JUnit XML of a comparison (failures, skips, counts, escaping) and Google Benchmark JSON
// (the entries compare.py reads, the statistics they carry).
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/gbench_json.hpp"
#include "mgbench/reports/junit.hpp"
#include "mgbench/reports/prom.hpp"

namespace {

using mgbench::Json;
using mgbench::PointResult;
using mgbench::RunResult;

const std::string kSample = MGBENCH_SOURCE_DIR "/tests/data/report_sample.json";

PointResult point(std::size_t index, mgbench::Params params, int gpus, mgbench::Status status) {
  PointResult p;
  p.index = index;
  p.workload = "w\"odd\\name\n";
  p.params = std::move(params);
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  p.status = status;
  if (status == mgbench::Status::ok) {
    p.samples = {1e-3, 1.1e-3, 1.05e-3};
    p.stats = mgbench::compute_statistics(p.samples, 10);
    p.metrics = {{"rate/s", 5.0}, {"real_time", 1.0}};
  }
  return p;
}

RunResult odd_run() {
  RunResult run;
  run.host = "host\"\n\xff";
  run.environment = Json{{"gpus", {{{"index", 0}, {"name", "G\"PU"}, {"uuid", "GPU-0"}}}}};
  const mgbench::Params params{{"9lives", 1}, {"__x", "a\\b"}, {"gpu", "p"}, {"a-b", "c\"d\ne"}};
  run.points = {point(0, params, 1, mgbench::Status::ok), point(1, params, 2, mgbench::Status::ok),
                point(2, params, 4, mgbench::Status::oom),
                point(3, params, 1, mgbench::Status::ok)};  // same labels as point 0
  run.presentation[run.points[0].workload] = mgbench::Presentation().headline("rate/s", "op/s");
  return run;
}

std::string prom_text(const RunResult& run) {
  std::ostringstream out;
  mgbench::reports::write_prom(run, out);
  return out.str();
}

}  // namespace

TEST_CASE("prom: metric and label names are sanitised, label values escaped", "[reports][prom]") {
  using namespace mgbench::reports;
  CHECK(prom_metric_name("busbw GB/s") == "mgbench_busbw_GB_s");
  CHECK(prom_metric_name("a:b") == "mgbench_a:b");
  CHECK(prom_label_name("9lives") == "_9lives");
  CHECK(prom_label_name("__x") == "p__x");
  CHECK(prom_label_name("a-b:c") == "a_b_c");
  CHECK(prom_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(prom_label_value("x\xff") == "x\xEF\xBF\xBD");
}

TEST_CASE("prom: every line is a HELP, TYPE, comment or a well-formed sample", "[reports][prom]") {
  const std::string text = prom_text(odd_run());
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\} \S+$)");
  std::istringstream in(text);
  std::set<std::string> help;
  int samples = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      CHECK(help.insert(line.substr(7, line.find(' ', 7) - 7)).second);  // once per family
    } else if (line.rfind("#", 0) != 0) {
      INFO(line);
      CHECK(std::regex_match(line, sample));
      ++samples;
    }
  }
  CHECK(samples > 0);
  CHECK(text.find("param_gpu=\"p\"") != std::string::npos);  // a parameter named like a label
  CHECK(text.find("_9lives=\"1\"") != std::string::npos);
  CHECK(text.find("p__x=\"a\\\\b\"") != std::string::npos);
  CHECK(text.find("mgbench_rate_s{") != std::string::npos);  // the headline metric
  CHECK(text.find("status=\"oom\"} 0") != std::string::npos);
  CHECK(text.find("# point 3 left out") != std::string::npos);
}

TEST_CASE("prom: the sample run carries dcgm-exporter's labels", "[reports][prom]") {
  const std::string text = prom_text(mgbench::load_results(kSample));
  CHECK(text.find("gpu=\"0\",UUID=\"GPU-5f1c2a00-7d3e-4b1a-9c2f-000000000000\","
                  "modelName=\"NVIDIA H200\",Hostname=\"h200-node-07\"") != std::string::npos);
  CHECK(text.find("# TYPE mgbench_tflops_aggregate gauge") != std::string::npos);
  CHECK(text.find("# TYPE mgbench_busbw_GBps gauge") != std::string::npos);
  CHECK(text.find("mgbench_scaling_efficiency{") != std::string::npos);
}

TEST_CASE("junit: slower is a failure with the numbers, noisy and not compared are skipped",
          "[reports][junit]") {
  mgbench::Comparison cmp;
  cmp.base_label = "base";
  cmp.new_label = "new<&>";
  mgbench::PointComparison slower;
  slower.key = "k1";
  slower.workload = "<w>";
  slower.params = {{"size", 1}};
  slower.base_value = 100;
  slower.new_value = 90;
  slower.change = -0.1;
  slower.threshold = 0.03;
  slower.quantity = {"rate", "op/s", true};
  slower.test = mgbench::MannWhitneyResult{0, 0, 0.0012, 0, true, false};
  slower.verdict = mgbench::Verdict::slower;
  mgbench::PointComparison noisy = slower, same = slower;
  noisy.verdict = mgbench::Verdict::noisy;
  noisy.reason = "throttled";
  same.verdict = mgbench::Verdict::same;
  cmp.points = {slower, noisy, same};
  mgbench::NotCompared failed;
  failed.workload = "<w>";
  failed.new_status = mgbench::Status::failed;
  cmp.not_compared = {failed};
  std::ostringstream out;
  mgbench::reports::write_junit(cmp, nullptr, out);
  const std::string xml = out.str();
  INFO(xml);
  CHECK(xml.find("<testsuites name=\"mgbench compare base -&gt; new&lt;&amp;&gt;\" tests=\"4\" "
                 "failures=\"1\" errors=\"0\" skipped=\"2\"") != std::string::npos);
  CHECK(xml.find("<testsuite name=\"&lt;w&gt;\" tests=\"4\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"slower: 100.0 op/s -&gt; 90.00 op/s (-10.0 %), "
                 "p-value 0.0012\" type=\"slower\">") != std::string::npos);
  CHECK(xml.find("<skipped message=\"noisy: throttled\"/>") != std::string::npos);
  CHECK(xml.find("<skipped message=\"not compared: base ok, new&lt;&amp;&gt; failed\"/>") !=
        std::string::npos);
  CHECK(xml.find("<w>") == std::string::npos);
}

TEST_CASE("gbench: iterations per sample, aggregates from the statistics", "[reports][gbench]") {
  const RunResult run = mgbench::load_results(kSample);
  const Json doc = mgbench::reports::gbench_document(run);
  CHECK(doc["context"]["json_schema_version"] == 1);
  CHECK(doc["context"]["host_name"] == "h200-node-07");
  CHECK(doc["context"]["library_build_type"] == "release");
  const PointResult& first = run.points.front();
  const std::string name = mgbench::reports::gbench_name(first);
  CHECK(name == "gemm/dtype:bf16/impl:cublas/k:4096/m:4096/n:4096/shape:square/gpus:1");
  std::size_t iterations = 0;
  for (const Json& b : doc["benchmarks"]) {
    CHECK(b["time_unit"] == "ns");
    if (b["run_name"] != name) continue;
    if (b["run_type"] == "iteration") {
      CHECK(b["real_time"].get<double>() == Approx(first.samples[b["repetition_index"]] * 1e9));
      ++iterations;
    } else if (b["aggregate_name"] == "median") {
      CHECK(b["name"] == name + "_median");
      CHECK(b["real_time"].get<double>() == Approx(first.stats.median * 1e9));
      CHECK(b["tflops_aggregate"].get<double>() == Approx(690.0));
    }
  }
  CHECK(iterations == first.samples.size());
}

TEST_CASE("gbench: points not ok are left out, same names get their devices", "[reports][gbench]") {
  RunResult run = odd_run();
  run.points[3].devices = {1};
  const Json doc = mgbench::reports::gbench_document(run);
  CHECK(doc["context"]["points_left_out"] == "1 (not ok)");
  std::set<std::string> names;
  for (const Json& b : doc["benchmarks"]) {
    names.insert(b["run_name"].get<std::string>());
    CHECK_FALSE(b.contains("rate/s") != (b.value("aggregate_name", "") == "median"));
    // The "real_time" metric is no counter: the median keeps its time (ns).
    if (b.value("aggregate_name", "") == "median") CHECK(b["real_time"].get<double>() > 1e5);
  }
  CHECK(names.size() == 3);
  CHECK(names.count("w\"odd\\name\n/9lives:1/__x:a\\b/a-b:c\"d\ne/gpu:p/gpus:1/devices:1") == 1);
}
