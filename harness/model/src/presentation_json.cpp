// Presentation metadata <-> JSON (the "presentation" object of results.json).
#include <stdexcept>

#include "mgbench/model/presentation.hpp"
#include "mgbench/core/json_number.hpp"

namespace mgbench {
namespace {

template <typename Enum, std::size_t N>
Enum enum_from(const Json& j, const char* key, const Enum (&all)[N], Enum fallback) {
  if (!j.contains(key)) return fallback;
  const std::string text = j.at(key).get<std::string>();
  for (Enum e : all) {
    if (text == to_string(e)) return e;
  }
  throw std::invalid_argument(std::string("unknown ") + key + " '" + text + "'");
}

constexpr ValueFormat kFormats[] = {ValueFormat::number, ValueFormat::fixed, ValueFormat::time,
                                    ValueFormat::bytes,  ValueFormat::rate,  ValueFormat::percent,
                                    ValueFormat::count,  ValueFormat::text};
constexpr AxisScale kScales[] = {AxisScale::linear, AxisScale::log2, AxisScale::log10,
                                 AxisScale::automatic};
constexpr Better kBetter[] = {Better::higher, Better::lower};
constexpr ColumnKind kColumns[] = {
    ColumnKind::gpus,       ColumnKind::devices,     ColumnKind::params,
    ColumnKind::param,      ColumnKind::median_time, ColumnKind::metric,
    ColumnKind::speedup,    ColumnKind::efficiency,  ColumnKind::peak_memory,
    ColumnKind::verification, ColumnKind::noise,     ColumnKind::telemetry,
    ColumnKind::status};
constexpr ChartKind kCharts[] = {ChartKind::scaling, ChartKind::line, ChartKind::memory,
                                 ChartKind::breakdown, ChartKind::timeseries, ChartKind::overlay};

using Strings = std::vector<std::string>;

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
// Digits shown: 0 to 17 (a double holds no more); a larger count would make the formatter
// allocate without bound.
int digits_from(const Json& j, int fallback) {
  return j.contains("digits") ? json_integer<int>(j.at("digits"), "digits", 0, 17) : fallback;
}

std::optional<double> optional_number(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

Json metric_json(const MetricSpec& m) {
  Json j{{"name", m.name},     {"label", m.label},   {"unit", m.unit},
         {"format", to_string(m.format_)}, {"digits", m.digits},
         {"better", to_string(m.better_)}};
  if (m.peak_) {
    j["peak"] = Json{{"kind", to_string(m.peak_->kind)}, {"dtype_param", m.peak_->dtype_param},
                     {"direction_param", m.peak_->direction_param}, {"as", m.peak_->as}};
  }
  return j;
}
MetricSpec metric_from(const Json& j) {
  MetricSpec m(j.at("name").get<std::string>(), j.value("label", ""), j.value("unit", ""));
  m.format_ = enum_from(j, "format", kFormats, ValueFormat::number);
  m.digits = digits_from(j, 4);
  m.better_ = enum_from(j, "better", kBetter, Better::higher);
  if (j.contains("peak") && !j.at("peak").is_null()) {
    const Json& p = j.at("peak");
    PeakSpec peak;
    peak.kind = limit_kind_from_string(p.value("kind", std::string("tflops")));
    peak.dtype_param = p.value("dtype_param", "");
    peak.direction_param = p.value("direction_param", "");
    peak.as = p.value("as", "");
    m.peak_ = peak;
  }
  return m;
}

Json axis_json(const AxisSpec& a) {
  return Json{{"param", a.param},         {"label", a.label},
              {"equal_label", a.equal_label}, {"word", a.word},
              {"companions", a.companions},   {"format", to_string(a.format_)},
              {"scale", to_string(a.scale)}};
}
AxisSpec axis_from(const Json& j) {
  AxisSpec a(j.at("param").get<std::string>(), j.value("label", ""));
  a.equal_label = j.value("equal_label", "");
  a.word = j.value("word", "");
  a.companions = j.value("companions", Strings{});
  a.format_ = enum_from(j, "format", kFormats, ValueFormat::count);
  a.scale = enum_from(j, "scale", kScales, AxisScale::automatic);
  return a;
}

Json column_json(const ColumnSpec& c) {
  return Json{{"kind", to_string(c.kind)},   {"key", c.key},
              {"header", c.header},          {"format", to_string(c.format_)},
              {"digits", c.digits},          {"median_scale", optional_number(c.median_scale)},
              {"per_gpu_of", c.per_gpu_of},  {"share_of", c.share_of},
              {"merge", c.merge},            {"merge_header", c.merge_header},
              {"missing", c.missing}};
}
ColumnSpec column_from(const Json& j) {
  ColumnSpec c;
  c.kind = enum_from(j, "kind", kColumns, ColumnKind::metric);
  c.key = j.value("key", "");
  c.header = j.value("header", "");
  c.format_ = enum_from(j, "format", kFormats, ValueFormat::number);
  c.digits = digits_from(j, 4);
  c.median_scale = optional_number(j, "median_scale");
  c.per_gpu_of = j.value("per_gpu_of", "");
  c.share_of = j.value("share_of", "");
  c.merge = j.value("merge", Strings{});
  c.merge_header = j.value("merge_header", "");
  c.missing = j.value("missing", "");
  return c;
}

Json table_json(const TableSpec& t) {
  Json columns = Json::array();
  for (const ColumnSpec& c : t.columns) columns.push_back(column_json(c));
  return Json{{"split_by", t.split_by_}, {"sort_by", t.sort_by_},
              {"fixed_caption", t.fixed_caption}, {"columns", columns}};
}
TableSpec table_from(const Json& j) {
  TableSpec t;
  t.split_by_ = j.value("split_by", Strings{});
  t.sort_by_ = j.value("sort_by", Strings{});
  t.fixed_caption = j.value("fixed_caption", true);
  for (const Json& c : j.at("columns")) t.columns.push_back(column_from(c));
  return t;
}

Json chart_json(const ChartSpec& c) {
  Json parts = Json::array();
  for (const StackPart& p : c.parts) {
    parts.push_back(Json{{"metrics", p.metrics}, {"label", p.label}, {"colour", p.colour}});
  }
  return Json{{"kind", to_string(c.kind)},       {"id", c.id},
              {"title", c.title},                {"metric", c.metric},
              {"alt_metric", c.alt_metric},      {"alt_title", c.alt_title},
              {"alt_note", c.alt_note},          {"y_label", c.y_label},
              {"y_scale", to_string(c.y_scale_)}, {"median_scale", optional_number(c.median_scale)},
              {"x", c.x},                        {"split_by", c.split_by_},
              {"gpus_dashed", c.gpus_dashed_},   {"ok_only", c.ok_only},
              {"total", c.total},                {"parts", parts},
              {"remainder_label", c.remainder_label}, {"require", c.require},
              {"max_charts", c.max_charts}};
}
ChartSpec chart_from(const Json& j) {
  ChartSpec c;
  c.kind = enum_from(j, "kind", kCharts, ChartKind::line);
  c.id = j.value("id", std::string(to_string(c.kind)));
  c.title = j.value("title", "");
  c.metric = j.value("metric", "");
  c.alt_metric = j.value("alt_metric", "");
  c.alt_title = j.value("alt_title", "");
  c.alt_note = j.value("alt_note", "");
  c.y_label = j.value("y_label", "");
  c.y_scale_ = enum_from(j, "y_scale", kScales, AxisScale::linear);
  c.median_scale = optional_number(j, "median_scale");
  c.x = j.value("x", "");
  c.split_by_ = j.value("split_by", Strings{});
  c.gpus_dashed_ = j.value("gpus_dashed", false);
  c.ok_only = j.value("ok_only", true);
  c.total = j.value("total", Strings{});
  for (const Json& p : j.value("parts", Json::array())) {
    c.parts.push_back(StackPart{p.value("metrics", Strings{}), p.value("label", ""),
                                json_integer_or(p, "colour", -1)});
  }
  c.remainder_label = j.value("remainder_label", "");
  c.require = j.value("require", "");
  c.max_charts = json_integer_or(j, "max_charts", 8);
  return c;
}

Json summary_json(const SummarySpec& s) {
  Json columns = Json::array();
  for (const SummaryColumn& c : s.columns) {
    columns.push_back(Json{{"field", c.field}, {"header", c.header},
                           {"format", to_string(c.format)}, {"digits", c.digits}});
  }
  return Json{{"key", s.key}, {"title", s.title}, {"caption", s.caption}, {"columns", columns}};
}
SummarySpec summary_from(const Json& j) {
  SummarySpec s(j.value("key", ""), j.value("title", ""), j.value("caption", ""));
  for (const Json& c : j.at("columns")) {
    s.column(c.at("field").get<std::string>(), c.value("header", ""),
             enum_from(c, "format", kFormats, ValueFormat::text), digits_from(c, 2));
  }
  return s;
}

template <typename T, typename Fn>
Json array_json(const std::vector<T>& items, Fn fn) {
  Json out = Json::array();
  for (const T& item : items) out.push_back(fn(item));
  return out;
}

template <typename T, typename Fn>
std::vector<T> array_from(const Json& j, const char* key, Fn fn) {
  std::vector<T> out;
  for (const Json& item : j.value(key, Json::array())) out.push_back(fn(item));
  return out;
}

}  // namespace

void to_json(Json& j, const Presentation& p) {
  j = Json{{"headline", p.headline_ ? metric_json(*p.headline_) : Json(nullptr)},
           {"metrics", array_json(p.metrics, metric_json)},
           {"axes", array_json(p.axes, axis_json)},
           {"tables", array_json(p.tables, table_json)},
           {"charts", array_json(p.charts, chart_json)},
           {"summaries", array_json(p.summaries, summary_json)}};
}

void from_json(const Json& j, Presentation& p) {
  p = Presentation{};
  if (j.contains("headline") && !j.at("headline").is_null()) {
    p.headline_ = metric_from(j.at("headline"));
  }
  p.metrics = array_from<MetricSpec>(j, "metrics", metric_from);
  p.axes = array_from<AxisSpec>(j, "axes", axis_from);
  p.tables = array_from<TableSpec>(j, "tables", table_from);
  p.charts = array_from<ChartSpec>(j, "charts", chart_from);
  p.summaries = array_from<SummarySpec>(j, "summaries", summary_from);
}

}  // namespace mgbench
