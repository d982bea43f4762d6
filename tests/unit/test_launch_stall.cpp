// A hung rank named, and every node's telemetry, with a process per GPU: the `stalled` and
// `hello` messages of the worker protocol (parse, bounds), the orchestrator's choice of the
// timed-out point's message (LaunchWatch), and the merge of the nodes' telemetry (also into the
// run-level series).
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/platform/telemetry.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/run/worker_protocol.hpp"

using namespace mgbench;

namespace {

WorkerMessage parsed(const Json& message) {
  std::string error;
  const auto m = parse_worker_line(dump_json(message), &error);
  INFO(error);
  REQUIRE(m);
  return *m;
}

std::string rejection(const std::string& line) {
  std::string error;
  CHECK_FALSE(parse_worker_line(line, &error));
  CHECK_FALSE(error.empty());
  return error;
}

WorkerStall stall_of(const std::string& step, std::vector<StalledRank> missing) {
  return WorkerStall{step, 2.5, std::move(missing)};
}

// A node's point summary: `devices` with a power gauge each, a series of `ticks` starting at
// unix time `t0`.
Json node_summary(double t0, const std::vector<int>& devices, const std::vector<double>& ticks,
                  double power) {
  Json gpus = Json::array();
  Json per_gpu = Json::array();
  for (int d : devices) {
    gpus.push_back(Json{{"device", d}, {"avg_power_w", power + d}});
    Json values = Json::array();
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      values.push_back(power + d + static_cast<double>(i));
    }
    per_gpu.push_back(Json{{"device", d}, {"power_w", values}});
  }
  return Json{{"interval_s", 0.1},   {"duration_s", ticks.back()}, {"t0_unix_s", t0},
              {"gpus", gpus},        {"series", Json{{"t_s", ticks}, {"per_gpu", per_gpu}}}};
}

}  // namespace

TEST_CASE("a stalled message round-trips with every field") {
  const WorkerStall sent = stall_of("point 3, sample 2: enqueued", {{2, "node-b"}, {5, "node-c"}});
  const WorkerMessage m = parsed(stall_message(sent));
  CHECK(m.kind == WorkerMessageKind::stalled);
  CHECK(m.stall.step == sent.step);
  CHECK(m.stall.waited_s == 2.5);
  REQUIRE(m.stall.missing.size() == 2);
  CHECK(m.stall.missing[1].rank == 5);
  CHECK(m.stall.missing[1].host == "node-c");
  CHECK(parsed(stall_message(stall_of("x", {}))).stall.missing.empty());  // all arrived
}

TEST_CASE("a stalled message with a bad field is refused with a reason") {
  const std::string ok_rank = "[{\"rank\":1,\"host\":\"h\"}]";
  auto line = [](const std::string& step, const std::string& waited, const std::string& missing) {
    return "{\"type\":\"stalled\",\"step\":" + step + ",\"waited_s\":" + waited +
           ",\"missing\":" + missing + "}";
  };
  CHECK(rejection(line("\"s\"", "-1", ok_rank)).find("waited_s") != std::string::npos);
  CHECK(rejection(line("\"s\"", "\"2\"", ok_rank)).find("waited_s") != std::string::npos);
  CHECK(rejection(line("\"s\"", "1e300", ok_rank)).find("waited_s") != std::string::npos);
  CHECK(rejection(line("7", "1", ok_rank)).find("step") != std::string::npos);
  const std::string long_step = "\"" + std::string(kMaxStepChars + 1, 'a') + "\"";
  CHECK(rejection(line(long_step, "1", ok_rank)).find("longer") != std::string::npos);
  CHECK(rejection(line("\"s\"", "1", "{}")).find("missing") != std::string::npos);
  rejection(line("\"s\"", "1", "[1]"));
  rejection(line("\"s\"", "1", "[{\"rank\":-1,\"host\":\"h\"}]"));
  rejection(line("\"s\"", "1", "[{\"rank\":1.5,\"host\":\"h\"}]"));
  rejection(line("\"s\"", "1", "[{\"rank\":1048576,\"host\":\"h\"}]"));
  rejection(line("\"s\"", "1", "[{\"rank\":1}]"));
  rejection(line("\"s\"", "1", "[{\"rank\":1,\"host\":[]}]"));
  const std::string long_host = std::string(kMaxHostChars + 1, 'h');
  rejection(line("\"s\"", "1", "[{\"rank\":1,\"host\":\"" + long_host + "\"}]"));
  rejection("{\"type\":\"stalled\",\"step\":\"s\",\"waited_s\":1}");
  Json many = Json::array();
  for (std::size_t i = 0; i <= kMaxStallRanks; ++i) {
    many.push_back(Json{{"rank", 1}, {"host", "h"}});
  }
  rejection(line("\"s\"", "1", dump_json(many)));
}

TEST_CASE("a hello names rank 0's host when it has one, and a bad host is refused") {
  CHECK(parsed(Json{{"type", "hello"}, {"pid", 1}}).text.empty());
  CHECK(parsed(Json{{"type", "hello"}, {"pid", 1}, {"rank", 0}, {"host", "node-a"}}).text ==
        "node-a");
  rejection("{\"type\":\"hello\",\"host\":42}");
  rejection("{\"type\":\"hello\",\"host\":\"" + std::string(kMaxHostChars + 1, 'h') + "\"}");
}

TEST_CASE("a timed-out launch names the ranks rank 0 last waited for, with their hosts") {
  LaunchWatch watch;
  watch.observe(parsed(Json{{"type", "hello"}, {"pid", 1}, {"host", "node-a"}}));
  watch.observe(parsed(stall_message(stall_of("point 1: the plan", {{1, "node-b"}}))));
  watch.observe(parsed(stall_message(stall_of("point 1, sample 3: enqueued", {{2, "node-c"}}))));
  const std::string why = watch.timeout_reason(30, true);
  CHECK(why.find("rank 2 on node-c did not reach 'point 1, sample 3: enqueued'") == 0);
  CHECK(why.find("node-b") == std::string::npos);  // the latest report wins
  CHECK(why.find("--group-timeout") != std::string::npos);
}

TEST_CASE("progress or a report that every rank arrived clears a stall: rank 0 is named") {
  for (const Json& clearing : {Json{{"type", "started"}, {"index", 4}},
                               stall_message(stall_of("point 1: the plan", {}))}) {
    LaunchWatch watch;
    watch.observe(parsed(Json{{"type", "hello"}, {"pid", 1}, {"host", "node-a"}}));
    watch.observe(parsed(stall_message(stall_of("point 1: the plan", {{1, "node-b"}}))));
    watch.observe(parsed(clearing));
    const std::string why = watch.timeout_reason(30, true);
    CHECK(why.find("rank 0 on node-a made no progress") == 0);
    CHECK(why.find("node-b") == std::string::npos);
  }
}

TEST_CASE("the timeout message: many ranks are counted, hosts sanitized, threads unchanged") {
  LaunchWatch watch;
  CHECK(watch.timeout_reason(30, true).find("rank 0 on an unknown host") == 0);
  std::vector<StalledRank> missing;
  for (int r = 1; r <= 10; ++r) missing.push_back({r, r == 1 ? "evil\x1b[31m\nhost" : "h"});
  watch.observe(parsed(stall_message(stall_of("s", missing))));
  const std::string why = watch.timeout_reason(30, true);
  CHECK(why.find("rank 8 on h") != std::string::npos);
  CHECK(why.find("rank 9 on") == std::string::npos);
  CHECK(why.find("and 2 more") != std::string::npos);
  CHECK(why.find('\x1b') == std::string::npos);
  CHECK(why.find('\n') == std::string::npos);
  CHECK(watch.timeout_reason(30, false) == "group made no progress for 30 s (--group-timeout)");
}

TEST_CASE("the nodes' telemetry merges into one point summary, every GPU with its host") {
  const std::vector<NodeTelemetry> nodes{
      {0, "node-a", node_summary(100.0, {0, 1}, {0.0, 1.0, 2.0}, 500)},
      {1, "node-b", Json()},  // NVML missing there
      {2, "node-c", node_summary(100.5, {0, 1}, {0.0, 1.0, 2.5}, 600)}};
  const Json merged = merge_node_telemetry(nodes);
  REQUIRE(merged["gpus"].size() == 4);
  CHECK(merged["gpus"][2]["node"] == 2);
  CHECK(merged["gpus"][2]["host"] == "node-c");
  CHECK(merged["gpus"][0]["host"] == "node-a");
  CHECK(merged["duration_s"] == 2.5);
  CHECK(merged["t0_unix_s"] == 100.0);
  const Json& per_gpu = merged["series"]["per_gpu"];
  REQUIRE(per_gpu.size() == 4);
  CHECK(merged["series"]["t_s"] == Json::array({0.0, 1.0, 2.0}));
  CHECK(per_gpu[0]["power_w"] == Json::array({500, 501, 502}));  // the axis node: unchanged
  // node-c started 0.5 s later: nothing at 0 s, its first value at 1 s, its second at 2 s.
  CHECK(per_gpu[3]["power_w"] == Json::array({nullptr, 601, 602}));
  CHECK(per_gpu[3]["node"] == 2);
  CHECK(merge_node_telemetry({{0, "a", Json()}}).is_null());
}

TEST_CASE("energy metrics and the run series see every node's GPUs") {
  PointResult p;
  p.index = 0;
  p.metrics = Json{{"op_per_s", 100.0}};
  p.telemetry = merge_node_telemetry({{0, "node-a", node_summary(100.0, {0}, {0.0, 1.0}, 500)},
                                      {1, "node-b", node_summary(100.0, {0}, {0.0, 1.0}, 600)}});
  add_energy_metrics(p, "op_per_s");
  CHECK(p.metrics["op_per_s_per_watt"].get<double>() == Approx(100.0 / 1100.0));
  const Json series = build_run_series({p});
  REQUIRE(series["per_gpu"].size() == 2);  // GPU 0 of each node: two lines, not one
  CHECK(series["per_gpu"][1]["node"] == 1);
  CHECK(series["per_gpu"][1]["host"] == "node-b");
  CHECK(series["per_gpu"][1]["power_w"][0] == 600);
}
