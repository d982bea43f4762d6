// "% of peak" shares <-> JSON (see peak_share.hpp).
#include "mgbench/model/peak_share.hpp"

#include "mgbench/core/json_number.hpp"

namespace mgbench {

const PeakShare* PeakReport::find(std::size_t point_index, const std::string& name) const {
  for (const PeakShare& s : shares) {
    if (s.point == point_index && s.metric == name) return &s;
  }
  return nullptr;
}

void to_json(Json& j, const PeakReport& r) {
  Json shares = Json::array();
  for (const PeakShare& s : r.shares) {
    Json e{{"point", s.point},     {"metric", s.metric},       {"value", s.value},
           {"peak", s.peak},       {"fraction", s.fraction()}, {"peak_what", s.peak_what}};
    if (s.has_range()) {
      e["expected"] = Json{{"low", s.low}, {"typical", s.typical}, {"what", s.range_what},
                           {"source", s.range_source}};
      e["below"] = s.below;
      if (s.below) e["causes"] = s.causes;
    }
    shares.push_back(std::move(e));
  }
  j = Json{{"gpu", r.gpu}, {"gpu_model", r.gpu_model}, {"shares", shares}};
}

void from_json(const Json& j, PeakReport& r) {
  r = PeakReport{};
  r.gpu = j.value("gpu", "");
  r.gpu_model = j.contains("gpu_model") ? j.at("gpu_model") : Json();
  for (const Json& e : j.value("shares", Json::array())) {
    PeakShare s;
    s.point = json_integer<std::size_t>(e.at("point"), "point");
    s.metric = e.at("metric").get<std::string>();
    s.value = e.at("value").get<double>();
    s.peak = e.at("peak").get<double>();
    s.peak_what = e.value("peak_what", "");
    if (e.contains("expected")) {
      const Json& x = e.at("expected");
      s.low = x.at("low").get<double>();
      s.typical = x.at("typical").get<double>();
      s.range_what = x.value("what", "");
      s.range_source = x.value("source", "");
      s.below = e.value("below", false);
      s.causes = e.value("causes", std::vector<std::string>{});
    }
    r.shares.push_back(std::move(s));
  }
}

}  // namespace mgbench
