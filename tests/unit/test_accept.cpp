// `mgbench accept`'s criteria file, the checklist's items judged from crafted results, the
// verdict and its exit codes, the early-stop rule and the JSON form of the result.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/accept_judge.hpp"
#include "mgbench/core/error.hpp"

using namespace mgbench;

namespace {

std::string usage_error(const std::string& text) {
  try {
    (void)parse_accept_criteria(text, "crit.txt");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

Json check(const std::string& name, const std::string& status, const std::string& finding = "") {
  return Json{{"name", name}, {"status", status}, {"finding", finding}, {"next_step", ""}};
}

Json doctor_of(std::vector<Json> checks) { return Json{{"checks", checks}}; }

PointResult point(std::size_t index, const std::string& workload, int gpus, Status status,
                  double value = 100) {
  PointResult p;
  p.index = index;
  p.workload = workload;
  p.gpus = gpus;
  p.status = status;
  p.params = mgbench::Params{{"size", 4096}};
  p.metrics = Json{{"tflops", value}};
  return p;
}

RunResult run_with(std::vector<PointResult> points) {
  RunResult run;
  run.points = std::move(points);
  run.presentation["gemm"] = Presentation().headline("tflops", "TFLOP/s");
  return run;
}

PeakShare share(std::size_t point, double value, double low, bool below) {
  PeakShare s;
  s.point = point;
  s.metric = "tflops";
  s.value = value;
  s.peak = 1000;
  s.low = low;
  s.typical = low * 1.1;
  s.range_what = "cuBLAS bf16 GEMM";
  s.below = below;
  if (below) s.causes = {"power limit 500 W, below the default 700 W"};
  return s;
}

ScalingSeries series(const std::string& workload, double efficiency, int gpus) {
  ScalingSeries s;
  s.workload = workload;
  s.rows.push_back(ScalingRow{});
  ScalingRow last;
  last.gpus = gpus;
  last.efficiency = efficiency;
  last.speedup = efficiency * gpus;
  s.rows.push_back(last);
  return s;
}

const AcceptItem& item_of(const std::vector<AcceptItem>& items, const std::string& id,
                          const std::string& subject = "") {
  for (const auto& i : items) {
    if (i.id == id && i.subject == subject) return i;
  }
  FAIL("no item " + id + " " + subject);
  return items.front();
}

Json pair_row(int src, int dst, double gbps) {
  return Json{{"engine", "ce"}, {"direction", "uni"}, {"bytes", 67108864}, {"measured", "device"},
              {"src", src},     {"dst", dst},         {"GBps", gbps}};
}

Json soak_section(bool stable, double degradation, int xids, const std::string& monitor = "NVML") {
  Json events = Json::array();
  for (int i = 0; i < xids; ++i) {
    events.push_back(Json{{"kind", "xid"}, {"device", 0}, {"value", 79}, {"message", "XID 79"}});
  }
  return Json{{"windows", Json::array({Json::object(), Json::object(), Json::object()})},
              {"measured_s", 120.0},
              {"health",
               {{"monitor", monitor},
                {"events", events},
                {"new_uncorrected_ecc", false},
                {"row_remap_trouble", false}}},
              {"analysis",
               {{"stable", stable},
                {"time_to_steady_s", 20.0},
                {"degradation", degradation},
                {"reasons", stable ? Json::array() : Json::array({"degradation"})}}}};
}

}  // namespace

TEST_CASE("accept criteria: the defaults, in the documented order and file form") {
  const auto lines = accept_criteria_lines(AcceptCriteria{});
  REQUIRE(lines.size() == 9);
  CHECK(lines.front() == std::pair<std::string, std::string>{"doctor_warnings", "warn"});
  CHECK(lines[2] == std::pair<std::string, std::string>{"gemm_scaling_min", "90 %"});
  CHECK(lines[6] == std::pair<std::string, std::string>{"soak_degradation_max", "3 %"});
  CHECK(lines.back() == std::pair<std::string, std::string>{"health_events", "fail"});
  CHECK(accept_criterion_names().size() == lines.size());
}

TEST_CASE("accept criteria: a file sets what it names, comments and blank lines aside") {
  const auto c = parse_accept_criteria(
      "# stricter\n\ngemm_scaling_min = 95 %   # 8 GPUs on "
      "NVLink\ndoctor_warnings=fail\np2p_pair_min = 0%\nsoak_degradation_max = 100 %\n",
      "crit.txt");
  CHECK(c.gemm_scaling_min == Approx(0.95));
  CHECK(c.doctor_warnings == Severity::fail);
  CHECK(c.p2p_pair_min == 0.0);                  // the lower bound is allowed
  CHECK(c.soak_degradation_max == Approx(1.0));  // and the upper one
  CHECK(c.train_scaling_min == Approx(0.80));    // not named: the default
  CHECK(c.below_expected_range == Severity::fail);
}

TEST_CASE("accept criteria: a bad line is refused with its number") {
  CHECK(usage_error("gemm_scaling_min = 90 %\n\nfoo = 1 %\n")
            .find("crit.txt line 3: unknown criterion 'foo'") == 0);
  CHECK(usage_error("# c\ngemm_scaling_min 90 %\n").find("crit.txt line 2: expected") == 0);
  CHECK(usage_error("gemm_scaling_min = 0.9\n")
            .find("line 1: gemm_scaling_min = '0.9': expected a percentage") != std::string::npos);
  CHECK(usage_error("gemm_scaling_min = 100.5 %\n").find("line 1") != std::string::npos);
  CHECK(usage_error("gemm_scaling_min = -1 %\n").find("line 1") != std::string::npos);
  CHECK(usage_error("throttling = maybe\n")
            .find("line 1: throttling = 'maybe': expected warn or fail") != std::string::npos);
  CHECK(usage_error("throttling = warn\nthrottling = fail\n")
            .find("line 2: throttling is given twice") != std::string::npos);
  CHECK(usage_error("gemm_scaling_min = 9x0 %\n").find("line 1") != std::string::npos);
  CHECK(usage_error("= 5 %\n").find("line 1: unknown criterion ''") != std::string::npos);
  CHECK_THROWS_AS(read_accept_criteria("/nonexistent/crit.txt"), UsageError);
}

TEST_CASE("accept criteria: JSON keeps every value") {
  AcceptCriteria c;
  c.train_scaling_min = 0.7;
  c.throttling = Severity::warn;
  const AcceptCriteria back = Json(c).get<AcceptCriteria>();
  CHECK(back.train_scaling_min == Approx(0.7));
  CHECK(back.throttling == Severity::warn);
  CHECK(back.gemm_scaling_min == Approx(0.9));
  CHECK_THROWS_AS(Json({{"gemm_scaling_min", 1.5}}).get<AcceptCriteria>(), UsageError);
}

TEST_CASE(
    "accept configuration: the doctor's fails fail, its warnings warn unless the criteria say "
    "fail") {
  const Json clean = doctor_of({check("nvml", "pass"), check("mig", "skip")});
  const AcceptItem ok = judge_configuration(clean, AcceptCriteria{});
  CHECK(ok.status == AcceptStatus::pass);
  CHECK(ok.measured.args == std::vector<std::string>{"1", "0", "0", "1"});
  CHECK(ok.details.empty());

  const Json warned =
      doctor_of({check("nvml", "pass"), check("power_limit", "warn", "GPU 3 at 500 W")});
  const AcceptItem w = judge_configuration(warned, AcceptCriteria{});
  CHECK(w.status == AcceptStatus::warn);
  REQUIRE(w.details.size() == 1);
  CHECK(w.details[0].subject == "power_limit");
  CHECK(w.details[0].recorded == "GPU 3 at 500 W");
  CHECK(w.details[0].cause.key == "doctor.power_limit");
  CHECK(w.details[0].next.key == "doctor.power_limit.next");
  AcceptCriteria strict;
  strict.doctor_warnings = Severity::fail;
  CHECK(judge_configuration(warned, strict).status == AcceptStatus::fail);

  const Json failed = doctor_of({check("gpu_models", "fail", "mixed"), check("nvml", "warn")});
  const AcceptItem f = judge_configuration(failed, AcceptCriteria{});
  CHECK(f.status == AcceptStatus::fail);
  CHECK(f.details.size() == 2);
  CHECK(accept_stops_after({f}));
  CHECK_FALSE(accept_stops_after({w}));

  const AcceptItem missing = judge_configuration(Json(), AcceptCriteria{});
  CHECK(missing.status == AcceptStatus::fail);
  CHECK(missing.measured.key == "measured.doctor_missing");
}

TEST_CASE("accept runs: every point must run and verify, the first and last failures named") {
  RunResult run =
      run_with({point(0, "gemm", 1, Status::wrong), point(1, "gemm", 1, Status::ok),
                point(2, "gemm", 2, Status::waived), point(3, "gemm", 2, Status::timeout)});
  const AcceptItem item = judge_runs(run, "scaling");
  CHECK(item.status == AcceptStatus::fail);
  CHECK(item.measured.args == std::vector<std::string>{"1", "3"});  // the waived one not counted
  REQUIRE(item.details.size() == 2);
  CHECK(item.details.front().cause.key == "cause.wrong");
  CHECK(item.details.back().cause.key == "cause.failed");
  CHECK(item.details.back().recorded.rfind("timeout", 0) == 0);
  CHECK(accept_stops_after({item}));
  run.points = {point(0, "gemm", 1, Status::ok)};
  CHECK(judge_runs(run, "scaling").status == AcceptStatus::pass);
  run.points.clear();
  CHECK(judge_runs(run, "scaling").status == AcceptStatus::fail);  // nothing measured
}

TEST_CASE("accept range: the worst share against its range decides, none known is not judged") {
  RunResult run =
      run_with({point(0, "gemm", 1, Status::ok, 600), point(1, "gemm", 2, Status::ok, 500)});
  run.peaks.shares = {share(0, 600, 580, false), share(1, 500, 580, true)};
  const AcceptItem below = judge_range(run, "gemm", "scaling", AcceptCriteria{});
  CHECK(below.status == AcceptStatus::fail);
  CHECK(below.measured.args.front() == "500");
  CHECK(below.criterion.args == std::vector<std::string>{"580", "TFLOP/s", "cuBLAS bf16 GEMM"});
  CHECK(below.cause.key == "cause.below_range");
  REQUIRE(below.details.size() == 1);
  CHECK(below.details[0].recorded.find("power limit") == 0);
  AcceptCriteria lenient;
  lenient.below_expected_range = Severity::warn;
  CHECK(judge_range(run, "gemm", "scaling", lenient).status == AcceptStatus::warn);

  run.peaks.shares = {share(0, 600, 580, false), share(1, 590, 580, false)};
  const AcceptItem within = judge_range(run, "gemm", "scaling", AcceptCriteria{});
  CHECK(within.status == AcceptStatus::pass);
  CHECK(within.measured.args.front() == "590");  // the lower of the two, against its low

  run.peaks.shares.clear();
  const AcceptItem unknown = judge_range(run, "gemm", "scaling", AcceptCriteria{});
  CHECK(unknown.status == AcceptStatus::skip);
  CHECK(unknown.criterion.key == "criterion.range_unknown");
  CHECK(unknown.measured.args == std::vector<std::string>{"600", "TFLOP/s"});  // the best
}

TEST_CASE(
    "accept scaling: efficiency at the largest GPU count against the criterion, boundary "
    "included") {
  RunResult run = run_with({point(0, "gemm", 1, Status::ok), point(1, "gemm", 8, Status::ok)});
  const AcceptRoles roles = {{"gemm", WorkloadCategory::compute},
                             {"train_step", WorkloadCategory::training}};
  run.scaling = {series("gemm", 0.90, 8), series("train_step", 0.7999, 8)};
  run.verdicts.push_back(RunVerdict{});
  run.verdicts.back().workload = "train_step";
  run.verdicts.back().efficiency = 0.7999;
  run.verdicts.back().text = "train_step: 8 GPUs give 6.4x (80 %)";
  auto items = judge_scaling(run, AcceptCriteria{}, roles);
  CHECK(item_of(items, "scaling", "gemm").status == AcceptStatus::pass);  // 90 % >= 90 %
  const AcceptItem& train = item_of(items, "scaling", "train_step");
  CHECK(train.status == AcceptStatus::fail);  // 79.99 % < 80 %
  CHECK(train.measured.args[1] == "8");
  REQUIRE(train.details.size() == 1);
  CHECK(train.details[0].recorded == "train_step: 8 GPUs give 6.4x (80 %)");
  CHECK_FALSE(accept_stops_after(items));  // slow scaling is a finding, not a reason to stop

  run.scaling = {series("gemm", 0.95, 8), series("gemm", 0.85, 8)};  // the worst series decides
  CHECK(item_of(judge_scaling(run, AcceptCriteria{}, roles), "scaling", "gemm").status ==
        AcceptStatus::fail);
  run.scaling.clear();  // one GPU: nothing to judge
  CHECK(item_of(judge_scaling(run, AcceptCriteria{}, roles), "scaling", "gemm").status ==
        AcceptStatus::skip);
}

TEST_CASE("accept throttle: severe reasons count, the power cap does not") {
  PointResult capped = point(0, "gemm", 1, Status::ok), hot = point(1, "gemm", 1, Status::ok);
  capped.telemetry = {{"gpus", {{{"device", 0}, {"throttle_reasons", {"sw_power_cap"}}}}}};
  hot.telemetry = {
      {"gpus", {{{"device", 1}, {"throttle_reasons", {"sw_power_cap", "hw_thermal"}}}}}};
  RunResult run = run_with({capped});
  CHECK(judge_throttle(run, "scaling", AcceptCriteria{}).status == AcceptStatus::pass);
  run.points.push_back(hot);
  const AcceptItem item = judge_throttle(run, "scaling", AcceptCriteria{});
  CHECK(item.status == AcceptStatus::fail);
  CHECK(item.measured.args == std::vector<std::string>{"1", "2"});
  REQUIRE(item.details.size() == 1);
  CHECK(item.details[0].recorded == "hw_thermal");
  CHECK(item.details[0].subject.find("GPU 1") != std::string::npos);
  run.points = {point(0, "gemm", 1, Status::ok)};
  CHECK(judge_throttle(run, "scaling", AcceptCriteria{}).status == AcceptStatus::skip);
}

TEST_CASE("accept communication: unreachable and slow pairs are named, the boundary passes") {
  RunResult run;
  run.points = {point(0, "p2p", 4, Status::ok)};
  const AcceptRoles roles = {{"p2p", WorkloadCategory::peer}};
  run.summaries["p2p"] = Json::array(
      {pair_row(0, 1, 100), pair_row(1, 0, 100), pair_row(0, 2, 100), pair_row(2, 3, 80)});
  auto items = judge_communication(run, AcceptCriteria{}, roles, Json());
  CHECK(item_of(items, "peer_access").status == AcceptStatus::pass);
  CHECK(item_of(items, "p2p_pairs").status == AcceptStatus::pass);  // 80 / 100 = the criterion

  run.summaries["p2p"].push_back(pair_row(3, 0, 79));
  run.summaries["p2p"].push_back(pair_row(1, 3, 0));
  items = judge_communication(run, AcceptCriteria{}, roles, Json());
  const AcceptItem& reach = item_of(items, "peer_access");
  CHECK(reach.status == AcceptStatus::fail);
  CHECK(reach.measured.args == std::vector<std::string>{"4", "5"});
  CHECK(reach.details.front().subject == "GPU 1 -> GPU 3");
  CHECK_FALSE(accept_stops_after(items));  // measured: the stages after it still mean something
  const AcceptItem& slow = item_of(items, "p2p_pairs");
  CHECK(slow.status == AcceptStatus::fail);
  REQUIRE(slow.details.size() == 1);
  CHECK(slow.details[0].subject == "GPU 3 -> GPU 0");
  CHECK(slow.measured.args[0] == "GPU 3 -> GPU 0");

  RunResult waived;
  waived.points = {point(0, "allreduce", 2, Status::waived)};
  waived.points[0].message = "peer access 0 -> 1: not supported";
  const AcceptRoles collective = {{"allreduce", WorkloadCategory::collective}};
  // The doctor found peer access between every pair: a platform setting blocks it, a failure.
  const Json promised = {{"checks", {{{"name", "peer_access"}, {"status", "pass"}}}}};
  items = judge_communication(waived, AcceptCriteria{}, collective, promised);
  CHECK(item_of(items, "peer_access").status == AcceptStatus::fail);
  CHECK(item_of(items, "peer_access").measured.args == std::vector<std::string>{"1", "1"});
  // The doctor already warned that the GPUs have none: a warning here too.
  const Json none = {{"checks", {{{"name", "peer_access"}, {"status", "warn"}}}}};
  items = judge_communication(waived, AcceptCriteria{}, collective, none);
  CHECK(item_of(items, "peer_access").status == AcceptStatus::warn);
  CHECK(item_of(items, "p2p_pairs").status == AcceptStatus::skip);
  CHECK(item_of(items, "range", "allreduce").status == AcceptStatus::skip);
}

TEST_CASE("accept soak: the verdict, degradation at its boundary and health events") {
  RunResult run;
  run.soak = soak_section(true, 0.03, 0);
  auto items = judge_soak(run, AcceptCriteria{});
  REQUIRE(items.size() == 3);
  CHECK(item_of(items, "soak_stable").status == AcceptStatus::pass);
  CHECK(item_of(items, "soak_stable").measured.args == std::vector<std::string>{"3", "120", "20"});
  CHECK(item_of(items, "soak_degradation").status == AcceptStatus::pass);  // 3 % <= 3 %
  CHECK(item_of(items, "soak_health").status == AcceptStatus::pass);

  run.soak = soak_section(false, 0.0301, 2);
  items = judge_soak(run, AcceptCriteria{});
  CHECK(item_of(items, "soak_stable").status == AcceptStatus::fail);
  CHECK(item_of(items, "soak_stable").details.size() == 1);
  CHECK(item_of(items, "soak_degradation").status == AcceptStatus::fail);
  const AcceptItem& health = item_of(items, "soak_health");
  CHECK(health.status == AcceptStatus::fail);
  CHECK(health.measured.args == std::vector<std::string>{"2", "0", "0"});
  CHECK(health.details.size() == 2);
  AcceptCriteria lenient;
  lenient.health_events = Severity::warn;
  CHECK(item_of(judge_soak(run, lenient), "soak_health").status == AcceptStatus::warn);

  run.soak = soak_section(true, 0.0, 0, "none (NVML unavailable)");
  CHECK(item_of(judge_soak(run, AcceptCriteria{}), "soak_health").status == AcceptStatus::skip);
  run.soak = Json();
  CHECK(judge_soak(run, AcceptCriteria{}).front().status == AcceptStatus::fail);
}

TEST_CASE("accept verdict: interrupted, then any failure, then a stage that could not run") {
  AcceptResult r;
  r.stages = {AcceptStage{"configuration", "ran", {}, "", {}, 1},
              AcceptStage{"communication", "skipped", {}, "", {}, 0}};
  r.items = {AcceptItem{}};
  r.items[0].status = AcceptStatus::warn;
  CHECK(accept_verdict(r) == "ready");
  r.items[0].status = AcceptStatus::fail;
  CHECK(accept_verdict(r) == "not_ready");
  r.stages[1].state = "could_not_run";
  CHECK(accept_verdict(r) == "not_ready");  // the answer is known: not ready
  r.items[0].status = AcceptStatus::pass;
  CHECK(accept_verdict(r) == "could_not_run");
  r.stages[1].state = "interrupted";
  CHECK(accept_verdict(r) == "interrupted");
  CHECK(accept_verdict(AcceptResult{}) == "could_not_run");
  CHECK(accept_exit_code("ready") == 0);
  CHECK(accept_exit_code("not_ready") == 1);
  CHECK(accept_exit_code("could_not_run") == 4);
  CHECK(accept_exit_code("interrupted") == 130);
}

TEST_CASE("accept result: the JSON section round-trips") {
  AcceptResult r;
  r.verdict = "not_ready";
  r.stopped_after = "communication";
  r.stop_reason = AcceptText{"stop.communication", {}};
  r.devices = {0, 1};
  r.gpu_name = "NVIDIA H200";
  r.criteria.p2p_pair_min = 0.5;
  r.stages = {AcceptStage{"configuration", "ran", {}, "", {}, 1.5}};
  AcceptItem item;
  item.id = "range";
  item.stage = "scaling";
  item.subject = "gemm";
  item.status = AcceptStatus::fail;
  item.measured = AcceptText{"measured.value", {"500", "TFLOP/s"}};
  item.details.push_back(
      AcceptDetail{AcceptStatus::fail, "s", "r", AcceptText{"cause.xid", {}}, {}});
  r.items = {item};
  AcceptFigure f;
  f.workload = "gemm";
  f.value = 512;
  f.temp_max_c = 71;
  r.figures = {f};
  RunResult run;
  run.accept = r;
  const AcceptResult back = accept_of(run);
  CHECK(back.verdict == "not_ready");
  CHECK(back.stopped_after == "communication");
  CHECK(back.criteria.p2p_pair_min == Approx(0.5));
  REQUIRE(back.items.size() == 1);
  CHECK(back.items[0].measured.args[1] == "TFLOP/s");
  CHECK(back.items[0].details[0].cause.key == "cause.xid");
  CHECK(back.items[0].details[0].next.empty());
  CHECK(back.stages[0].wall_s == Approx(1.5));
  CHECK(back.figures[0].temp_max_c == Approx(71));
  CHECK(back.figures[0].power_mean_w < 0);  // unknown stays unknown
  CHECK_THROWS_AS(accept_of(RunResult{}), UsageError);
}
