#include "mgbench/model/workload.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

const char* to_string(Profile profile) {
  switch (profile) {
    case Profile::quick: return "quick";
    case Profile::standard: return "standard";
    case Profile::full: return "full";
  }
  return "standard";
}

Profile profile_from_string(const std::string& text) {
  if (text == "quick") return Profile::quick;
  if (text == "standard") return Profile::standard;
  if (text == "full") return Profile::full;
  throw UsageError(fmt::format("invalid --profile '{}': expected quick, standard or full", text));
}

const char* to_string(WorkloadCategory category) {
  switch (category) {
    case WorkloadCategory::compute: return "compute";
    case WorkloadCategory::memory: return "memory";
    case WorkloadCategory::host_link: return "host_link";
    case WorkloadCategory::peer: return "peer";
    case WorkloadCategory::collective: return "collective";
    case WorkloadCategory::training: return "training";
    case WorkloadCategory::other: break;
  }
  return "other";
}

StoppingCriteria profile_stopping(Profile profile) {
  switch (profile) {
    case Profile::quick: return {5, 0.1, 1.0, 0.005, 100000};
    case Profile::standard: break;
    case Profile::full: return {20, 1.0, 10.0, 0.005, 100000};
  }
  return {10, 0.5, 3.0, 0.005, 100000};
}

namespace {
Axis make_axis(std::string name, AxisKind kind, std::vector<std::string> values) {
  Axis axis;
  axis.name = std::move(name);
  axis.kind = kind;
  axis.standard_values = std::move(values);
  if (kind == AxisKind::integer) axis.max_value = Axis::kDefaultMaxInteger;
  if (kind == AxisKind::size) axis.max_value = Axis::kDefaultMaxSize;
  return axis;
}
}  // namespace

Axis Axis::integer(std::string name, std::vector<std::string> values) {
  return make_axis(std::move(name), AxisKind::integer, std::move(values));
}
Axis Axis::size(std::string name, std::vector<std::string> values) {
  return make_axis(std::move(name), AxisKind::size, std::move(values));
}
Axis Axis::text(std::string name, std::vector<std::string> values) {
  return make_axis(std::move(name), AxisKind::text, std::move(values));
}
Axis Axis::boolean(std::string name, std::vector<std::string> values) {
  return make_axis(std::move(name), AxisKind::boolean, std::move(values));
}
Axis& Axis::describe(std::string text) {
  help = std::move(text);
  return *this;
}
Axis& Axis::quick(std::vector<std::string> values) {
  quick_values = std::move(values);
  return *this;
}
Axis& Axis::full(std::vector<std::string> values) {
  full_values = std::move(values);
  return *this;
}
Axis& Axis::allowed(std::vector<std::string> values) {
  allowed_values = std::move(values);
  return *this;
}
Axis& Axis::at_most(std::int64_t max) {
  max_value = max;
  return *this;
}

const std::vector<std::string>& Axis::values_for(Profile profile) const {
  if (profile == Profile::quick && !quick_values.empty()) return quick_values;
  if (profile == Profile::full && !full_values.empty()) return full_values;
  return standard_values;
}

ParamValue Axis::parse_value(const std::string& text) const {
  const std::string what = "value for parameter '" + name + "'";
  auto bounded = [&](std::int64_t value) {
    if (max_value > 0 && value > max_value) {
      throw UsageError(fmt::format("{} '{}' is above its maximum {}", what, text, max_value));
    }
    return value;
  };
  switch (kind) {
    case AxisKind::integer: return bounded(parse_positive_int(text, what));
    case AxisKind::size: {
      const std::uint64_t bytes = parse_size(text, what);
      if (bytes > static_cast<std::uint64_t>(INT64_MAX)) bounded(INT64_MAX);
      return bounded(static_cast<std::int64_t>(bytes));
    }
    case AxisKind::boolean:
      if (text == "true" || text == "on" || text == "1" || text == "yes") return true;
      if (text == "false" || text == "off" || text == "0" || text == "no") return false;
      throw UsageError(fmt::format("invalid {} '{}': expected true or false", what, text));
    case AxisKind::text:
      if (!allowed_values.empty() &&
          std::find(allowed_values.begin(), allowed_values.end(), text) == allowed_values.end()) {
        throw UsageError(fmt::format("unknown {} '{}': expected one of {}", what, text,
                                     fmt::join(allowed_values, ", ")));
      }
      return text;
  }
  return text;
}

std::vector<Params> cartesian_product(const AxisValues& values) {
  std::vector<Params> points{Params()};
  for (const auto& [name, list] : values) {
    if (list.empty()) continue;  // an unused axis
    std::vector<Params> next;
    next.reserve(points.size() * list.size());
    for (const auto& point : points) {
      for (const auto& value : list) {
        Params p = point;
        p.set(name, value);
        next.push_back(std::move(p));
      }
    }
    points = std::move(next);
  }
  return points;
}

Workload::Workload(std::string name) : name_(std::move(name)) {}
Workload& Workload::summary(std::string text) {
  summary_ = std::move(text);
  return *this;
}
Workload& Workload::formulas(std::string text) {
  formulas_ = std::move(text);
  return *this;
}
Workload& Workload::requirements(std::string text) {
  requirements_ = std::move(text);
  return *this;
}

Workload& Workload::notes(std::vector<std::string> lines) {
  notes_ = std::move(lines);
  return *this;
}
Workload& Workload::axis(Axis a) {
  axes_.push_back(std::move(a));
  return *this;
}
Workload& Workload::min_gpus(int n) {
  min_gpus_ = n;
  return *this;
}
Workload& Workload::category(WorkloadCategory category) {
  category_ = category;
  return *this;
}
Workload& Workload::throughput(std::string metric, std::string unit) {
  throughput_metric_ = std::move(metric);
  throughput_unit_ = std::move(unit);
  return *this;
}
Workload& Workload::present(Presentation presentation) {
  presentation_ = std::move(presentation);
  return *this;
}
Presentation Workload::presentation() const {
  Presentation p = presentation_;
  if (!p.headline_ && !throughput_metric_.empty()) {
    p.headline(throughput_metric_, throughput_unit_);
  }
  return p;
}
Workload& Workload::expand(ExpandFn fn) {
  expand_ = std::move(fn);
  return *this;
}
Workload& Workload::expand_per_gpus(ExpandPerGpusFn fn) {
  expand_per_gpus_ = std::move(fn);
  return *this;
}
Workload& Workload::fits(FitsFn fn) {
  fits_ = std::move(fn);
  return *this;
}
Workload& Workload::summarize(SummarizeFn fn) {
  summarize_ = std::move(fn);
  return *this;
}
Workload& Workload::runner(GroupRunner fn) {
  runner_ = std::move(fn);
  return *this;
}
Workload& Workload::estimate_seconds_per_point(double seconds) {
  estimate_s_ = seconds;
  return *this;
}
Workload& Workload::selected_by_default_in(std::vector<Profile> profiles) {
  default_profiles_ = std::move(profiles);
  return *this;
}
bool Workload::selected_by_default(Profile profile) const {
  return std::find(default_profiles_.begin(), default_profiles_.end(), profile) !=
         default_profiles_.end();
}
Workload& Workload::sustained(double warmup_s, double sample_s) {
  sustained_warmup_s_ = warmup_s;
  sustained_sample_s_ = sample_s;
  return *this;
}

Workload& Workload::cost(CostFn fn) {
  cost_ = std::move(fn);
  return *this;
}

const Axis* Workload::find_axis(const std::string& axis_name) const {
  for (const auto& a : axes_) {
    if (a.name == axis_name) return &a;
  }
  return nullptr;
}

std::vector<Params> Workload::expand_points(const AxisValues& values, int gpus) const {
  if (expand_per_gpus_) return expand_per_gpus_(values, gpus);
  return expand_ ? expand_(values) : cartesian_product(values);
}

std::string Workload::unfit(const Params& params, int gpus, int gpus_per_node) const {
  return fits_ ? fits_(params, gpus, gpus_per_node) : std::string();
}

namespace {
std::vector<Workload>& registry() {
  static std::vector<Workload> all;
  return all;
}
}  // namespace

const std::vector<Workload>& workloads() { return registry(); }

const Workload* find_workload(const std::string& name) {
  for (const auto& w : registry()) {
    if (w.name() == name) return &w;
  }
  return nullptr;
}

RunSettings settings_for_workload(RunSettings settings, const std::string& workload) {
  const Workload* w = find_workload(workload);
  if (w == nullptr) return settings;
  if (!settings.warmup_given) settings.warmup_s = std::max(settings.warmup_s, w->sustained_warmup());
  settings.target_sample_s = std::max(settings.target_sample_s, w->sustained_sample());
  return settings;
}

bool register_workload(Workload workload) {
  auto& all = registry();
  all.push_back(std::move(workload));
  std::sort(all.begin(), all.end(),
            [](const Workload& a, const Workload& b) { return a.name() < b.name(); });
  return true;
}

}  // namespace mgbench
