// The acceptance result: verdict, exit code and its JSON form ("accept" in results.json).
#include "mgbench/analysis/accept.hpp"

#include <algorithm>

#include "mgbench/core/error.hpp"
#include "mgbench/core/text.hpp"

namespace mgbench {

const char* to_string(AcceptStatus status) {
  switch (status) {
    case AcceptStatus::pass:
      return "pass";
    case AcceptStatus::warn:
      return "warn";
    case AcceptStatus::fail:
      return "fail";
    case AcceptStatus::skip:
      break;
  }
  return "skip";
}

AcceptStatus accept_status_from_string(const std::string& text) {
  if (text == "pass") return AcceptStatus::pass;
  if (text == "warn") return AcceptStatus::warn;
  if (text == "fail") return AcceptStatus::fail;
  if (text == "skip") return AcceptStatus::skip;
  throw UsageError("accept: unknown status '" + one_line(text) + "'");
}

std::string accept_verdict(const AcceptResult& result) {
  const auto stage_in = [&](const char* state) {
    return std::any_of(result.stages.begin(), result.stages.end(),
                       [&](const AcceptStage& s) { return s.state == state; });
  };
  if (stage_in("interrupted")) return "interrupted";
  if (std::any_of(result.items.begin(), result.items.end(),
                  [](const AcceptItem& i) { return i.status == AcceptStatus::fail; })) {
    return "not_ready";
  }
  if (stage_in("could_not_run") || result.stages.empty()) return "could_not_run";
  return "ready";
}

int accept_exit_code(const std::string& verdict) {
  if (verdict == "ready") return 0;
  if (verdict == "not_ready") return 1;
  if (verdict == "interrupted") return static_cast<int>(ExitCode::interrupted);
  return static_cast<int>(ExitCode::environment);
}

void to_json(Json& j, const AcceptText& t) { j = Json{{"key", t.key}, {"args", t.args}}; }

void from_json(const Json& j, AcceptText& t) {
  t.key = j.at("key").get<std::string>();
  t.args = j.at("args").get<std::vector<std::string>>();
}

namespace {

Json text_or_null(const AcceptText& t) { return t.empty() ? Json() : Json(t); }

AcceptText text_from(const Json& j, const char* key) {
  return j.contains(key) && !j.at(key).is_null() ? j.at(key).get<AcceptText>() : AcceptText{};
}

Json detail_json(const AcceptDetail& d) {
  return Json{{"status", to_string(d.status)},
              {"subject", d.subject},
              {"recorded", d.recorded},
              {"cause", text_or_null(d.cause)},
              {"next", text_or_null(d.next)}};
}

Json item_json(const AcceptItem& i) {
  Json details = Json::array();
  for (const auto& d : i.details) details.push_back(detail_json(d));
  return Json{{"id", i.id},
              {"stage", i.stage},
              {"subject", i.subject},
              {"status", to_string(i.status)},
              {"measured", text_or_null(i.measured)},
              {"criterion", text_or_null(i.criterion)},
              {"cause", text_or_null(i.cause)},
              {"next", text_or_null(i.next)},
              {"details", details}};
}

AcceptItem item_from(const Json& j) {
  AcceptItem i;
  i.id = j.at("id").get<std::string>();
  i.stage = j.at("stage").get<std::string>();
  i.subject = j.value("subject", "");
  i.status = accept_status_from_string(j.at("status").get<std::string>());
  i.measured = text_from(j, "measured");
  i.criterion = text_from(j, "criterion");
  i.cause = text_from(j, "cause");
  i.next = text_from(j, "next");
  for (const auto& d : j.value("details", Json::array())) {
    i.details.push_back(AcceptDetail{accept_status_from_string(d.at("status").get<std::string>()),
                                     d.at("subject").get<std::string>(),
                                     d.at("recorded").get<std::string>(), text_from(d, "cause"),
                                     text_from(d, "next")});
  }
  return i;
}

Json figure_json(const AcceptFigure& f) {
  const auto known = [](double v) { return v >= 0 ? Json(v) : Json(); };
  return Json{{"stage", f.stage},
              {"workload", f.workload},
              {"metric", f.metric},
              {"unit", f.unit},
              {"gpus", f.gpus},
              {"value", f.value},
              {"peak_fraction", known(f.peak_fraction)},
              {"efficiency", known(f.efficiency)},
              {"temp_max_c", known(f.temp_max_c)},
              {"power_mean_w", known(f.power_mean_w)},
              {"memory_peak_bytes", known(f.memory_peak_bytes)}};
}

AcceptFigure figure_from(const Json& j) {
  const auto number = [&](const char* key) {
    return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : -1.0;
  };
  AcceptFigure f;
  f.stage = j.at("stage").get<std::string>();
  f.workload = j.at("workload").get<std::string>();
  f.metric = j.at("metric").get<std::string>();
  f.unit = j.at("unit").get<std::string>();
  f.gpus = j.at("gpus").get<int>();
  f.value = j.at("value").get<double>();
  f.peak_fraction = number("peak_fraction");
  f.efficiency = number("efficiency");
  f.temp_max_c = number("temp_max_c");
  f.power_mean_w = number("power_mean_w");
  f.memory_peak_bytes = number("memory_peak_bytes");
  return f;
}

}  // namespace

void to_json(Json& j, const AcceptResult& r) {
  Json stages = Json::array(), items = Json::array(), figures = Json::array();
  for (const auto& s : r.stages) {
    stages.push_back(Json{{"id", s.id},
                          {"state", s.state},
                          {"note", text_or_null(s.note)},
                          {"results", s.results},
                          {"workloads", s.workloads},
                          {"wall_s", s.wall_s}});
  }
  for (const auto& i : r.items) items.push_back(item_json(i));
  for (const auto& f : r.figures) figures.push_back(figure_json(f));
  j = Json{{"verdict", r.verdict},
           {"stopped_after", r.stopped_after.empty() ? Json() : Json(r.stopped_after)},
           {"stop_reason", text_or_null(r.stop_reason)},
           {"devices", r.devices},
           {"gpu_name", r.gpu_name},
           {"soak_s", r.soak_s},
           {"criteria_source", r.criteria_source},
           {"criteria", r.criteria},
           {"stages", stages},
           {"items", items},
           {"figures", figures}};
}

void from_json(const Json& j, AcceptResult& r) {
  try {
    r = AcceptResult{};
    r.verdict = j.at("verdict").get<std::string>();
    if (!j.at("stopped_after").is_null())
      r.stopped_after = j.at("stopped_after").get<std::string>();
    r.stop_reason = text_from(j, "stop_reason");
    r.devices = j.at("devices").get<std::vector<int>>();
    r.gpu_name = j.value("gpu_name", "");
    r.soak_s = j.value("soak_s", 0.0);
    r.criteria_source = j.value("criteria_source", "");
    r.criteria = j.at("criteria").get<AcceptCriteria>();
    for (const auto& s : j.at("stages")) {
      r.stages.push_back(
          AcceptStage{s.at("id").get<std::string>(), s.at("state").get<std::string>(),
                      text_from(s, "note"), s.value("results", ""),
                      s.value("workloads", std::vector<std::string>{}), s.value("wall_s", 0.0)});
    }
    for (const auto& i : j.at("items")) r.items.push_back(item_from(i));
    for (const auto& f : j.value("figures", Json::array())) r.figures.push_back(figure_from(f));
  } catch (const Json::exception& e) {
    throw UsageError(std::string("accept section: ") + e.what());
  }
}

AcceptResult accept_of(const RunResult& run) {
  if (!run.accept.is_object()) {
    throw UsageError("not the results of `mgbench accept` (no accept section)");
  }
  return run.accept.get<AcceptResult>();
}

}  // namespace mgbench
