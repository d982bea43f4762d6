// `mgbench accept`'s two languages: every English phrase has its Chinese counterpart with the same
// placeholders, every key the checklist uses is in the tables, and the console answer and the
// report render in both languages with the figures unchanged.
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/analysis/accept_judge.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/platform/doctor.hpp"
#include "mgbench/reports/accept_render.hpp"

using namespace mgbench;
using mgbench::reports::Lang;

namespace {

std::map<std::string, std::string> table_of(Lang lang) {
  std::map<std::string, std::string> out;
  for (const auto& e : reports::accept_table(lang)) {
    INFO(e.key);
    CHECK(out.emplace(e.key, e.text).second);  // no key twice
  }
  return out;
}

std::multiset<std::string> placeholders(const std::string& text) {
  std::multiset<std::string> out;
  const std::regex re(R"(\{[^{}]*\})");
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    out.insert(it->str());
  }
  return out;
}

// A result with a failing item that has a detail, a passing one and a skipped one.
RunResult sample_run() {
  AcceptResult r;
  r.verdict = "not_ready";
  r.devices = {0, 1};
  r.gpu_name = "NVIDIA H200";
  r.stopped_after = "communication";
  r.stop_reason = AcceptText{"stop.communication", {}};
  r.stages = {AcceptStage{"configuration", "ran", {}, "", {}, 3.2},
              AcceptStage{"communication", "ran", {}, "communication", {"p2p"}, 12},
              AcceptStage{"scaling", "not_run", AcceptText{"stage.not_run", {}}, "", {}, 0},
              AcceptStage{"soak", "not_run", AcceptText{"stage.not_run", {}}, "", {}, 0}};
  AcceptItem doctor;
  doctor.id = "doctor";
  doctor.stage = "configuration";
  doctor.status = AcceptStatus::pass;
  doctor.measured = AcceptText{"measured.doctor", {"20", "0", "0", "0"}};
  doctor.criterion = AcceptText{"criterion.doctor", {}};
  AcceptItem pairs;
  pairs.id = "p2p_pairs";
  pairs.stage = "communication";
  pairs.status = AcceptStatus::fail;
  pairs.measured = AcceptText{"measured.slowest_pair", {"GPU 3 -> GPU 0", "41.5", "52.0 %"}};
  pairs.criterion = AcceptText{"criterion.pair_min", {"80.0 %"}};
  pairs.cause = AcceptText{"cause.slow_pair", {}};
  pairs.next = AcceptText{"next.slow_pair", {}};
  pairs.details.push_back(AcceptDetail{AcceptStatus::fail, "GPU 3 -> GPU 0", "41.5 GB/s", {}, {}});
  AcceptItem range;
  range.id = "range";
  range.stage = "communication";
  range.subject = "allreduce";
  range.status = AcceptStatus::skip;
  range.measured = AcceptText{"measured.value", {"361.2", "GB/s"}};
  range.criterion = AcceptText{"criterion.range_unknown", {}};
  r.items = {doctor, pairs, range};
  AcceptFigure f;
  f.stage = "communication";
  f.workload = "p2p";
  f.gpus = 2;
  f.value = 41.5;
  f.unit = "GB/s";
  r.figures = {f};
  RunResult run;
  run.host = "node7";
  run.accept = r;
  return run;
}

// Every key the judges produce for a spread of inputs (see test_accept.cpp for their logic).
std::set<std::string> keys_used() {
  std::set<std::string> keys;
  auto add = [&](const AcceptItem& i) {
    keys.insert("item." + i.id);
    for (const auto* t : {&i.measured, &i.criterion, &i.cause, &i.next}) {
      if (!t->empty()) keys.insert(t->key);
    }
    for (const auto& d : i.details) {
      if (!d.cause.empty()) keys.insert(d.cause.key);
      if (!d.next.empty()) keys.insert(d.next.key);
    }
  };
  AcceptCriteria strict;
  strict.doctor_warnings = Severity::fail;
  add(judge_configuration(Json(), strict));
  add(judge_configuration(Json{{"checks", {{{"name", "mig"}, {"status", "fail"}}}}}, {}));
  RunResult run;
  add(judge_runs(run, "scaling"));
  add(judge_throttle(run, "scaling", {}));
  for (const auto& i : judge_communication(run, {}, {{"p2p", WorkloadCategory::peer}}, Json()))
    add(i);
  for (const auto& i : judge_scaling(run, {}, {{"gemm", WorkloadCategory::compute}})) add(i);
  for (const auto& i : judge_soak(run, {})) add(i);
  return keys;
}

}  // namespace

TEST_CASE("accept text: every English phrase has a Chinese one with the same placeholders") {
  const auto en = table_of(Lang::en), zh = table_of(Lang::zh);
  REQUIRE(en.size() > 100);
  for (const auto& [key, text] : en) {
    INFO(key);
    const auto it = zh.find(key);
    REQUIRE(it != zh.end());
    CHECK(placeholders(text) == placeholders(it->second));
    // Translated, unless it holds no word at all ("{0} {1}", "≥ {0}").
    const bool words = std::regex_search(std::regex_replace(text, std::regex(R"(\{[^{}]*\})"), ""),
                                         std::regex("[A-Za-z]"));
    CHECK((it->second != text || !words));
  }
  for (const auto& [key, text] : zh) {
    INFO(key);
    CHECK(en.count(key) == 1);  // nothing only in Chinese
  }
}

TEST_CASE(
    "accept text: the checklist's keys, stages, states and the doctor's checks are in the table") {
  const auto en = table_of(Lang::en);
  for (const auto& key : keys_used()) {
    INFO(key);
    CHECK(en.count(key) == 1);
  }
  for (const char* stage : kAcceptStages) {
    CHECK(en.count(std::string("stage_name.") + stage) == 1);
  }
  for (const char* state : {"ran", "skipped", "not_run", "could_not_run", "interrupted"}) {
    CHECK(en.count(std::string("state.") + state) == 1);
  }
  for (const char* stop : {"configuration", "communication", "scaling"}) {
    CHECK(en.count(std::string("stop.") + stop) == 1);
  }
  for (const auto& name : accept_criterion_names()) CHECK(en.count("criterion_help." + name) == 1);
  // Every check the doctor has (it evaluates all of them on empty facts).
  const auto checks = evaluate_doctor(DoctorFacts{});
  REQUIRE(checks.size() >= 20);
  for (const auto& c : checks) {
    INFO(c.name);
    CHECK(en.count("doctor." + c.name) == 1);
    CHECK(en.count("doctor." + c.name + ".next") == 1);
  }
  // A check added later reads as the general one rather than as its key.
  CHECK(reports::accept_phrase(Lang::zh, "doctor.new_check") ==
        reports::accept_phrase(Lang::zh, "doctor.other"));
  CHECK(reports::accept_phrase(Lang::en, "doctor.new_check.next") ==
        reports::accept_phrase(Lang::en, "doctor.other.next"));
  CHECK(reports::accept_format(Lang::en, "measured.efficiency", {"91.0 %", "8", "7.28"}) ==
        "91.0 % at 8 GPUs (7.28x)");
  CHECK(reports::accept_format(Lang::zh, "measured.efficiency", {"91.0 %", "8", "7.28"}) ==
        "8 块 GPU 时为 91.0 %（加速 7.28 倍）");
}

TEST_CASE("accept text: --lang takes en or zh") {
  CHECK(reports::lang_from_string("zh") == Lang::zh);
  CHECK(reports::lang_from_string("en") == Lang::en);
  CHECK_THROWS_AS(reports::lang_from_string("fr"), UsageError);
}

TEST_CASE(
    "accept render: the console ends with the verdict and the checklist, in either language") {
  const RunResult run = sample_run();
  std::ostringstream en, zh;
  reports::render_accept_console(run, Lang::en, en);
  reports::render_accept_console(run, Lang::zh, zh);
  const std::string e = en.str(), z = zh.str();
  CHECK(e.find("NOT READY: 1 item(s) fail") != std::string::npos);
  CHECK(e.find("1 pass, 0 warn, 1 fail, 1 not judged") != std::string::npos);
  CHECK(e.find("Stopped early after the communication stage") != std::string::npos);
  CHECK(e.find("FAIL  No slow GPU pair in the p2p matrix: slowest GPU 3 -> GPU 0: 41.5 GB/s, 52.0 "
               "% of the median pair (criterion: ≥ 80.0 % of the median pair)") !=
        std::string::npos);
  CHECK(e.find("next step: compare nvidia-smi topo -m") != std::string::npos);
  CHECK(e.find("- GPU 3 -> GPU 0: 41.5 GB/s") != std::string::npos);
  // The checklist comes last: after the verdict, and its last item ends the output.
  CHECK(e.find("Checklist:") > e.find("NOT READY"));
  CHECK(e.rfind("no expected range for this GPU model") > e.find("Checklist:"));
  CHECK(z.find("验收未通过：1 项不合格") != std::string::npos);
  CHECK(z.find("检查清单：") != std::string::npos);  // a Chinese colon after a Chinese heading
  CHECK(z.find("    不适用  allreduce 达到") != std::string::npos);  // wide words padded too
  CHECK(z.find("    失败    P2P 矩阵") != std::string::npos);
  CHECK(z.find("失败") != std::string::npos);
  CHECK(z.find("原因：某对 GPU 明显慢于其他") != std::string::npos);
  CHECK(z.find("最慢的是 GPU 3 -> GPU 0：41.5 GB/s，为中位数的 52.0 %") != std::string::npos);
  CHECK(z.find("在“通信测试”阶段之后提前停止") != std::string::npos);
  CHECK(z.find("NOT READY") == std::string::npos);
  CHECK(z.find("gemm_scaling_min = 90 %") != std::string::npos);  // identifiers stay
}

TEST_CASE("accept render: the report opens with the checklist, Chinese headings with --lang zh") {
  const RunResult run = sample_run();
  const std::string md = reports::render_accept_markdown(run, Lang::en);
  CHECK(md.rfind("# Acceptance of node7", 0) == 0);
  CHECK(md.find("## Checklist") < md.find("## Stages"));
  CHECK(md.find("## Stages") < md.find("## Criteria used"));
  CHECK(md.find("**FAIL** No slow GPU pair") != std::string::npos);
  const std::string html = reports::render_accept_html(run, Lang::zh);
  CHECK(html.find("<html lang=\"zh-CN\">") != std::string::npos);
  CHECK(html.find("<h1>node7 验收报告</h1>") != std::string::npos);
  CHECK(html.find("<h2>检查清单</h2>") < html.find("<h2>各阶段</h2>"));
  CHECK(html.find("<h2>单卡与多卡对比</h2>") != std::string::npos);
  CHECK(html.find("<h2>所用验收标准</h2>") != std::string::npos);
  CHECK(html.find("communication/report.html") != std::string::npos);  // the stage's own report
  CHECK(html.find("<tr class=\"bad\"><td>失败</td>") != std::string::npos);
  const std::string html_en = reports::render_accept_html(run, Lang::en);
  CHECK(html_en.find("<html lang=\"en\">") != std::string::npos);
  CHECK(html_en.find("<h2>Checklist</h2>") != std::string::npos);
}
