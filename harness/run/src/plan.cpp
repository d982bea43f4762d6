// The sweep plan: devices, GPU counts and workloads selected and validated, expanded into
// groups of points. Nothing runs here.
#include "mgbench/run/plan.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

namespace {

const char* expected_integer(bool allow_zero) {
  return allow_zero ? "a non-negative integer" : "a positive integer";
}

std::vector<int> parse_int_list(const std::string& text, const std::string& what,
                                bool allow_zero) {
  std::vector<std::int64_t> values;
  for (const auto& item : split_list(text, what)) {
    if (item.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError(
          fmt::format("invalid {} '{}': expected {}", what, item, expected_integer(allow_zero)));
    }
    try {
      values.push_back(std::stoll(item));
    } catch (const std::exception&) {
      throw UsageError(fmt::format("invalid {} '{}': number too large", what, item));
    }
  }
  return checked_int_list(values, what, allow_zero);
}

}  // namespace

std::vector<int> checked_int_list(const std::vector<std::int64_t>& values, const std::string& what,
                                  bool allow_zero) {
  std::vector<int> checked;
  for (const std::int64_t v : values) {
    if (v > 1 << 20) throw UsageError(fmt::format("invalid {} '{}': number too large", what, v));
    if (v < (allow_zero ? 0 : 1)) {
      throw UsageError(
          fmt::format("invalid {} '{}': expected {}", what, v, expected_integer(allow_zero)));
    }
    if (std::find(checked.begin(), checked.end(), static_cast<int>(v)) != checked.end()) {
      throw UsageError(fmt::format("duplicate {} '{}'", what, v));
    }
    checked.push_back(static_cast<int>(v));
  }
  return checked;
}

std::vector<int> parse_gpu_counts(const std::string& text, int available) {
  std::vector<int> counts = parse_int_list(text, "--gpus value", false);
  for (int n : counts) {
    if (available >= 0 && n > available) {
      throw UsageError(fmt::format("--gpus {} asks for more GPUs than the {} available", n,
                                   available));
    }
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

std::vector<int> default_gpu_counts(int available) {
  std::vector<int> counts;
  for (int n = 1; n <= available; n *= 2) counts.push_back(n);
  if (available > 0 && counts.back() != available) counts.push_back(available);
  return counts;
}

std::vector<int> parse_device_list(const std::string& text, int visible) {
  std::vector<int> devices = parse_int_list(text, "--devices value", true);
  for (int d : devices) {
    if (visible >= 0 && d >= visible) {
      throw UsageError(fmt::format("--devices {} does not exist: {} CUDA device(s) visible", d,
                                   visible));
    }
  }
  return devices;
}

namespace {

// Values for one axis after profile defaults and command-line overrides.
std::vector<ParamValue> axis_values(const Axis& axis, const SweepOptions& options) {
  std::vector<std::string> raw = axis.values_for(options.profile);
  if (auto it = options.param_overrides.find(axis.name); it != options.param_overrides.end()) {
    raw = it->second;
  } else if (axis.name == "batch" && !options.batch_sizes.empty()) {
    raw = options.batch_sizes;
  } else if (axis.name == "dtype" && !options.dtypes.empty()) {
    raw.clear();
    for (const auto& d : options.dtypes) {
      // A dtype another workload knows but this one does not is left out for this one.
      if (axis.allowed_values.empty() ||
          std::find(axis.allowed_values.begin(), axis.allowed_values.end(), d) !=
              axis.allowed_values.end()) {
        raw.push_back(d);
      }
    }
  }
  std::vector<ParamValue> values;
  for (const auto& text : raw) values.push_back(axis.parse_value(text));
  return values;
}

// Batch sizes for --batch-sizes auto: doubling from the first default value up to the axis's
// maximum.
std::vector<std::string> auto_batches(const Axis& axis, Profile profile) {
  const auto& defaults = axis.values_for(profile);
  std::int64_t start = defaults.empty() ? 8 : parse_positive_int(defaults.front(), "batch");
  start = std::max<std::int64_t>(1, std::min<std::int64_t>(start, 8));
  std::int64_t last = std::int64_t{1} << 24;
  if (axis.max_value > 0) last = std::min(last, axis.max_value);  // the axis's upper bound
  std::vector<std::string> values;
  for (std::int64_t b = start; b <= last; b *= 2) {
    values.push_back(std::to_string(b));
  }
  return values;
}

// The physical devices: --devices, else all visible ones (none known on a dry run without a
// GPU: filled in by select_gpu_counts).
std::vector<int> select_devices(const SweepOptions& options, int visible) {
  std::vector<int> devices;
  if (!options.devices.empty()) {
    devices = options.devices;
    for (int d : devices) {
      if (visible >= 0 && d >= visible) {
        throw UsageError(fmt::format("--devices {} does not exist: {} CUDA device(s) visible", d,
                                     visible));
      }
    }
  } else if (visible > 0) {
    for (int i = 0; i < visible; ++i) devices.push_back(i);
  } else if (visible == 0) {
    throw EnvironmentError("no CUDA device visible");
  }
  return devices;
}

void select_gpu_counts(const SweepOptions& options, Plan& plan) {
  // With a launcher, counts past one node are placed (or left out) by plan_placements.
  const bool one_node = !group_launcher(options.launch.launcher).processes_per_gpu();
  const int available =
      plan.devices.empty() || !one_node ? -1 : static_cast<int>(plan.devices.size());
  if (!options.gpu_counts.empty()) {
    plan.gpu_counts = options.gpu_counts;
    std::sort(plan.gpu_counts.begin(), plan.gpu_counts.end());
    for (int n : plan.gpu_counts) {
      if (n <= 0) throw UsageError(fmt::format("invalid --gpus value '{}'", n));
      if (available >= 0 && n > available) {
        throw UsageError(fmt::format("--gpus {} asks for more GPUs than the {} available", n,
                                     available));
      }
    }
  } else if (!plan.devices.empty()) {
    plan.gpu_counts = default_gpu_counts(static_cast<int>(plan.devices.size()));
  } else {
    throw UsageError("--dry-run without a visible GPU needs --gpus");
  }
  if (plan.devices.empty()) {
    // Dry run without a GPU: assume devices 0..max-1.
    for (int i = 0; i < plan.gpu_counts.back(); ++i) plan.devices.push_back(i);
  }
}

// With a launcher, the devices are those of each node: --gpus-per-node (or the hosts' slots)
// beyond what this host has assumes nodes like it with more GPUs: devices 0..N-1.
void select_node_devices(const SweepOptions& options, Plan& plan) {
  if (!group_launcher(options.launch.launcher).processes_per_gpu()) return;
  const int local = static_cast<int>(plan.devices.size());
  plan.gpus_per_node = planned_gpus_per_node(options.launch, local);
  if (plan.gpus_per_node <= local) return;
  if (!options.devices.empty()) {
    throw UsageError(fmt::format("{} GPUs per node, but --devices names {}",
                                 plan.gpus_per_node, local));
  }
  if (local > 0 && options.launch.gpus_per_node == 0 && options.launch.hosts.empty()) return;
  plan.devices.clear();
  for (int i = 0; i < plan.gpus_per_node; ++i) plan.devices.push_back(i);
}

// Where a group of `n` GPUs runs: its nodes, hosts and ranks per node.
Placement placement_of(const SweepOptions& options, const Plan& plan, int n) {
  Placement p;
  p.launcher = options.launch.launcher;
  if (!group_launcher(p.launcher).processes_per_gpu()) {
    p.hosts = {host_name()};
    p.gpus_per_node = n;
    return p;
  }
  p.process_model = ProcessModel::processes;
  const int per_node = plan.gpus_per_node > 0 ? plan.gpus_per_node : n;
  p.nodes = n <= per_node ? 1 : n / per_node;
  p.gpus_per_node = n <= per_node ? n : per_node;
  for (int i = 0; i < p.nodes && i < static_cast<int>(options.launch.hosts.size()); ++i) {
    p.hosts.push_back(options.launch.hosts[static_cast<std::size_t>(i)].host);
  }
  return p;
}

// The placement of every planned GPU count; a count that cannot be placed is left out with a
// note (and the plan's counts lose it).
std::map<int, Placement> plan_placements(const SweepOptions& options, Plan& plan) {
  std::map<int, Placement> placements;
  std::vector<int> kept;
  const int per_node = plan.gpus_per_node;
  const int most_nodes = max_nodes(options.launch);
  for (int n : plan.gpu_counts) {
    std::string why;
    if (group_launcher(options.launch.launcher).processes_per_gpu() && n > per_node) {
      if (n % per_node != 0) {
        why = fmt::format("{} GPUs do not fill whole nodes of {}", n, per_node);
      } else if (most_nodes > 0 && n / per_node > most_nodes) {
        why = fmt::format("{} GPUs need {} nodes of {}, {} known{}", n, n / per_node, per_node,
                          most_nodes,
                          options.launch.hosts.empty() ? " (give --hosts or --hostfile)" : "");
      }
    }
    if (!why.empty()) {
      plan.notes.push_back(fmt::format("--gpus {} left out: {}", n, why));
      continue;
    }
    placements.emplace(n, placement_of(options, plan, n));
    kept.push_back(n);
  }
  if (kept.empty()) throw UsageError("no GPU count of --gpus can be placed on the nodes given");
  plan.gpu_counts = kept;
  return placements;
}

std::vector<const Workload*> select_workloads(const SweepOptions& options) {
  std::vector<const Workload*> selected;
  if (options.workloads.empty()) {
    for (const auto& w : workloads()) {
      if (w.selected_by_default(options.profile)) selected.push_back(&w);
    }
  } else {
    for (const auto& name : options.workloads) {
      const Workload* w = find_workload(name);
      if (!w) {
        std::vector<std::string> names;
        for (const auto& k : workloads()) names.push_back(k.name());
        throw UsageError(fmt::format("unknown workload '{}': expected one of {}", name,
                                     fmt::join(names, ", ")));
      }
      selected.push_back(w);
    }
  }
  if (selected.empty()) throw UsageError("no workloads selected");
  return selected;
}

// --dtypes against the union of the selected workloads' dtype axes, --param names and values
// against their axes (kind and upper bound), --batch-sizes as positive integers within bounds.
void validate_overrides(const SweepOptions& options, const std::vector<const Workload*>& selected) {
  for (const auto& d : options.dtypes) {
    bool known = false;
    std::set<std::string> all;
    for (const Workload* w : selected) {
      const Axis* axis = w->find_axis("dtype");
      if (!axis) continue;
      all.insert(axis->allowed_values.begin(), axis->allowed_values.end());
      if (axis->allowed_values.empty() ||
          std::find(axis->allowed_values.begin(), axis->allowed_values.end(), d) !=
              axis->allowed_values.end()) {
        known = true;
      }
    }
    if (!known) {
      throw UsageError(fmt::format("unknown dtype '{}': expected one of {}", d,
                                   fmt::join(all, ", ")));
    }
  }
  for (const auto& [name, values] : options.param_overrides) {
    bool known = false;
    for (const Workload* w : selected) known = known || w->find_axis(name) != nullptr;
    if (!known) {
      throw UsageError(fmt::format("unknown parameter '{}' for the selected workloads", name));
    }
    if (values.empty()) throw UsageError(fmt::format("empty value list for parameter '{}'", name));
    // Each value against the axis's kind and upper bound, before any device is probed.
    for (const Workload* w : selected) {
      if (const Axis* axis = w->find_axis(name)) {
        for (const auto& v : values) (void)axis->parse_value(v);
      }
    }
  }
  for (const auto& b : options.batch_sizes) parse_positive_int(b, "--batch-sizes value");
  for (const Workload* w : selected) {
    if (const Axis* axis = w->find_axis("batch")) {
      for (const auto& b : options.batch_sizes) (void)axis->parse_value(b);
    }
  }
}

// Strong scaling keeps the global batch fixed: the "batch" values are global batches and a
// group of n GPUs runs batch / n per GPU. A global batch that n does not divide (or that is
// smaller than n) is left out of that group, with a note in the plan: rounding would change
// the global batch and break the series. Without a "batch" axis the values stay as they are.
AxisValues values_for_gpus(const AxisValues& values, const SweepOptions& options, int n,
                           const std::string& workload, std::vector<std::string>& notes) {
  const auto batch = values.find("batch");
  if (options.scaling != ScalingMode::strong || n == 1 || batch == values.end()) return values;
  AxisValues scaled = values;
  std::vector<ParamValue>& per_gpu = scaled["batch"];
  per_gpu.clear();
  for (const ParamValue& global : batch->second) {
    if (!global.is_integer()) {
      per_gpu.push_back(global);
      continue;
    }
    const std::int64_t g = global.integer();
    if (g >= n && g % n == 0) {
      per_gpu.push_back(g / n);
    } else {
      notes.push_back(fmt::format(
          "{}: strong scaling leaves out global batch {} on {} GPUs ({} does not divide it)",
          workload, g, n, n));
    }
  }
  return scaled;
}

// The points that can run on n GPUs (Workload::fits); the others are left out with one note per
// reason ("transformer_step on 1 GPU: 2 points left out: tp needs at least 2 GPUs").
std::vector<Params> points_that_fit(const Workload& w, std::vector<Params> points, int n,
                                    int gpus_per_node, std::vector<std::string>& notes) {
  std::vector<Params> kept;
  std::vector<std::pair<std::string, int>> reasons;  // in order of first appearance
  for (Params& p : points) {
    const std::string why = w.unfit(p, n, gpus_per_node);
    if (why.empty()) {
      kept.push_back(std::move(p));
      continue;
    }
    auto it = std::find_if(reasons.begin(), reasons.end(),
                           [&](const auto& r) { return r.first == why; });
    if (it == reasons.end()) {
      reasons.emplace_back(why, 1);
    } else {
      ++it->second;
    }
  }
  for (const auto& [why, count] : reasons) {
    notes.push_back(fmt::format("{} on {} GPU{}: {} point{} left out: {}", w.name(), n,
                                n == 1 ? "" : "s", count, count == 1 ? "" : "s", why));
  }
  return kept;
}

// The workload's axis values after profile defaults, overrides and --batch-sizes auto.
AxisValues workload_values(const Workload& w, const SweepOptions& options) {
  AxisValues values;
  for (const auto& axis : w.axes()) {
    if (axis.name == "batch" && options.batch_auto) {
      for (const auto& text : auto_batches(axis, options.profile)) {
        values[axis.name].push_back(axis.parse_value(text));
      }
      continue;
    }
    values[axis.name] = axis_values(axis, options);
  }
  return values;
}

// The workload's groups: one per planned GPU count it can run on, plus a 1-GPU group on every
// selected device without one (--baseline each). `index` numbers the points across the plan.
void add_workload_groups(const Workload& w, const SweepOptions& options,
                         const std::map<int, Placement>& placements, std::size_t& index,
                         Plan& plan) {
  const AxisValues values = workload_values(w, options);
  if (const Axis* d = w.find_axis("dtype"); d && !options.dtypes.empty() &&
                                            values.at("dtype").empty()) {
    return;  // none of the requested dtypes applies to this workload
  }
  auto add_group = [&](std::vector<int> devices, const std::string& purpose, int n) {
    const std::vector<Params> points = points_that_fit(
        w, w.expand_points(values_for_gpus(values, options, n, w.name(), plan.notes), n), n,
        placements.at(n).gpus_per_node, plan.notes);
    if (points.empty()) return;
    PlannedGroup g;
    g.index = plan.groups.size();
    g.workload = w.name();
    g.devices = std::move(devices);
    g.purpose = purpose;
    g.placement = placements.at(n);
    for (const auto& p : points) g.points.push_back({index++, p});
    plan.total_points += g.points.size();
    plan.estimated_s += 3.0 + static_cast<double>(g.points.size()) *
                                  std::min(w.estimate_seconds_per_point(),
                                           options.settings.stopping.max_time_s + 1.0);
    plan.groups.push_back(std::move(g));
  };
  bool single_on_first = false;
  for (int n : plan.gpu_counts) {
    if (n < w.min_gpus() || placements.count(n) == 0) continue;
    single_on_first = single_on_first || n == 1;
    const auto on_node = static_cast<std::ptrdiff_t>(placements.at(n).gpus_per_node);
    add_group(std::vector<int>(plan.devices.begin(), plan.devices.begin() + on_node), "scaling",
              n);
  }
  if (options.baseline_each && w.min_gpus() <= 1) {
    // Every selected GPU alone, the first one too when no 1-GPU group already covers it.
    for (std::size_t i = single_on_first ? 1 : 0; i < plan.devices.size(); ++i) {
      add_group({plan.devices[i]}, "baseline", 1);
    }
  }
}

}  // namespace

Plan make_plan(const SweepOptions& options, int visible) {
  Plan plan;
  plan.devices = select_devices(options, visible);
  select_node_devices(options, plan);
  select_gpu_counts(options, plan);
  if (plan.gpus_per_node <= 0) plan.gpus_per_node = static_cast<int>(plan.devices.size());
  const std::vector<const Workload*> selected = select_workloads(options);
  validate_overrides(options, selected);
  std::map<int, Placement> placements = plan_placements(options, plan);
  if (options.baseline_each) placements.emplace(1, placement_of(options, plan, 1));
  std::size_t index = 0;
  for (const Workload* w : selected) add_workload_groups(*w, options, placements, index, plan);
  if (plan.groups.empty()) {
    throw UsageError("the options select no points (check --gpus, --workloads and --dtypes)");
  }
  return plan;
}

Json plan_to_json(const Plan& plan) {
  Json groups = Json::array();
  for (const auto& g : plan.groups) {
    Json points = Json::array();
    for (const auto& p : g.points) points.push_back({{"index", p.index}, {"params", p.params}});
    groups.push_back({{"index", g.index},
                      {"workload", g.workload},
                      {"devices", g.devices},
                      {"purpose", g.purpose},
                      {"points", points}});
    write_placement(groups.back(), g.placement);
  }
  return Json{{"devices", plan.devices},
              {"gpu_counts", plan.gpu_counts},
              {"total_points", plan.total_points},
              {"estimated_s", plan.estimated_s},
              {"groups", groups}};
}

std::string default_out_dir() {
  // Microseconds and the process id: two sweeps started together never share a directory.
  // The host name is slugged: it becomes part of a path.
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%S", &tm);
  std::string host = host_name();
  for (char& c : host) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!safe) c = '_';
  }
  if (host.empty() || host.find_first_not_of('.') == std::string::npos) host = "host";
  return fmt::format("results/{}.{:06d}Z-{}-{}", buf, micros, host, ::getpid());
}

}  // namespace mgbench
