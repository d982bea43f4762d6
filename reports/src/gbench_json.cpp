// Google Benchmark's JSON output format (see gbench_json.hpp).
#include "mgbench/reports/gbench_json.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {
namespace {

// Keys of a benchmark entry: a metric with one of these names is not written as a counter.
const std::set<std::string> kReservedKeys = {"name",
                                             "family_index",
                                             "per_family_instance_index",
                                             "run_name",
                                             "run_type",
                                             "repetitions",
                                             "repetition_index",
                                             "threads",
                                             "aggregate_name",
                                             "aggregate_unit",
                                             "iterations",
                                             "real_time",
                                             "cpu_time",
                                             "time_unit",
                                             "error_occurred",
                                             "error_message",
                                             "skipped",
                                             "skip_message",
                                             "label"};

Json member(const Json& object, const std::string& key) {
  return object.is_object() && object.contains(key) ? object[key] : Json();
}

Json context_of(const RunResult& run, std::size_t left_out) {
  const Json& env = run.environment;
  const Json host = member(env, "host");
  std::string argv;
  for (const std::string& a : run.argv) argv += (argv.empty() ? "" : " ") + a;
  std::string build = json_string(member(run.tool, "build"), "type");
  std::transform(build.begin(), build.end(), build.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const Json cores = member(host, "cores");
  std::string gpu_model;
  const Json gpus = member(env, "gpus");
  if (gpus.is_array() && !gpus.empty()) gpu_model = json_string(gpus[0], "name");
  const std::string hostname = json_string(host, "hostname");
  return Json{{"date", run.started_at},
              {"host_name", hostname.empty() ? run.host : hostname},
              {"executable", argv.empty() ? std::string("mgbench") : argv},
              {"num_cpus", cores.is_number_integer() ? cores.get<long long>() : 0},
              {"mhz_per_cpu", 0},
              {"caches", Json::array()},
              {"load_avg", Json::array()},
              {"library_version", json_string(run.tool, "version")},
              {"library_build_type", build == "debug" ? "debug" : "release"},
              {"json_schema_version", 1},
              {"mgbench_git_revision", json_string(run.tool, "git_revision")},
              {"driver_version", json_string(env, "driver_version")},
              {"cuda_runtime_version", json_string(env, "cuda_runtime_version")},
              {"nccl_version", json_string(member(env, "nccl"), "loaded")},
              {"gpu_model", gpu_model},
              {"points_left_out", std::to_string(left_out) + " (not ok)"}};
}

struct Instance {
  std::string name;
  long long family = 0, instance = 0;
};

Json entry(const Instance& in, const std::string& suffix, const char* run_type,
           std::size_t repetitions) {
  return Json{{"name", in.name + suffix},
              {"family_index", in.family},
              {"per_family_instance_index", in.instance},
              {"run_name", in.name},
              {"run_type", run_type},
              {"repetitions", repetitions},
              {"threads", 1}};
}

void set_times(Json& e, double value, long long iterations, const char* unit) {
  e["iterations"] = iterations;
  e["real_time"] = value;
  e["cpu_time"] = value;
  e["time_unit"] = unit;
}

// The time unit of one benchmark (one unit for all its entries): nanoseconds, as Google
// Benchmark writes, unless a time would then overflow a double (a 1e308 s median), where the
// first coarser unit in which every time is finite (the values given are).
struct TimeUnit {
  const char* name;
  double per_second;
};
TimeUnit time_unit_for(const std::vector<double>& seconds) {
  const TimeUnit units[] = {{"ns", 1e9}, {"us", 1e6}, {"ms", 1e3}, {"s", 1.0}};
  for (const TimeUnit& unit : units) {
    if (std::all_of(seconds.begin(), seconds.end(),
                    [&](double s) { return std::isfinite(s * unit.per_second); })) {
      return unit;
    }
  }
  return units[3];
}

// An aggregate entry; a percentage is written as it is, in the benchmark's time unit field.
Json aggregate(const Instance& in, const char* stat, std::size_t n, double value,
               const TimeUnit& unit, bool percentage = false) {
  Json e = entry(in, std::string("_") + stat, "aggregate", n);
  e["aggregate_name"] = stat;
  e["aggregate_unit"] = percentage ? "percentage" : "time";
  set_times(e, percentage ? value : value * unit.per_second, static_cast<long long>(n),
            unit.name);
  return e;
}

void add_point(Json& benchmarks, const Instance& in, const PointResult& point) {
  std::vector<double> samples;
  for (double s : point.samples) {
    if (std::isfinite(s)) samples.push_back(s);
  }
  if (samples.empty() && point.stats.n > 0 && std::isfinite(point.stats.median)) {
    samples.push_back(point.stats.median);
  }
  const std::size_t n = samples.size();
  if (n == 0) return;
  const Statistics& s = point.stats;
  const bool have = s.n > 0;
  const double mean = have ? s.mean : samples[0], median = have ? s.median : samples[0];
  const bool spread = have && std::isfinite(s.stdev) && std::isfinite(s.rel_stdev);
  // Every time written is a finite number: an aggregate that is not one is left out.
  std::vector<double> times = samples;
  for (double t : {mean, median, spread ? s.stdev : 0.0}) {
    if (std::isfinite(t)) times.push_back(t);
  }
  const TimeUnit unit = time_unit_for(times);
  const auto iterations = static_cast<long long>(std::max<std::size_t>(1, point.ops_per_sample));
  for (std::size_t i = 0; i < n; ++i) {
    Json e = entry(in, "", "iteration", n);
    e["repetition_index"] = i;
    set_times(e, samples[i] * unit.per_second, iterations, unit.name);
    benchmarks.push_back(e);
  }
  if (std::isfinite(mean)) benchmarks.push_back(aggregate(in, "mean", n, mean, unit));
  if (std::isfinite(median)) {
    Json e = aggregate(in, "median", n, median, unit);
    if (point.metrics.is_object()) {
      for (auto it = point.metrics.begin(); it != point.metrics.end(); ++it) {
        if (!it->is_number() || kReservedKeys.count(it.key())) continue;
        const double v = it->get<double>();
        if (std::isfinite(v)) e[it.key()] = v;
      }
    }
    benchmarks.push_back(e);
  }
  if (spread) {
    benchmarks.push_back(aggregate(in, "stddev", n, s.stdev, unit));
    benchmarks.push_back(aggregate(in, "cv", n, s.rel_stdev, unit, true));
  }
}

}  // namespace

std::string gbench_name(const PointResult& point) {
  std::string name = point.workload;
  for (const auto& [key, value] : point.params) name += "/" + key + ":" + value.str();
  return name + "/gpus:" + std::to_string(point.gpus);
}

Json gbench_document(const RunResult& run) {
  std::vector<const PointResult*> ok;
  for (const std::string& workload : workloads_of(run)) {
    for (const PointResult* point : points_of(run, workload)) {
      if (point->status == Status::ok) ok.push_back(point);
    }
  }
  // Points with the same name (one GPU count measured on several device sets) get their devices.
  std::map<std::string, int> uses;
  for (const PointResult* point : ok) uses[gbench_name(*point)]++;
  Json benchmarks = Json::array();
  long long family = -1, instance = 0;
  std::string workload;
  for (const PointResult* point : ok) {
    if (family < 0 || point->workload != workload) {
      workload = point->workload;
      ++family;
      instance = 0;
    }
    std::string name = gbench_name(*point);
    if (uses[name] > 1) name += "/devices:" + devices_text(point->devices);
    add_point(benchmarks, Instance{valid_utf8(name), family, instance++}, *point);
  }
  return Json{{"context", context_of(run, run.points.size() - ok.size())},
              {"benchmarks", benchmarks}};
}

void write_gbench_json(const RunResult& run, std::ostream& out) {
  out << gbench_document(run).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

void GbenchPrinter::print(const Printable& what, std::ostream& out) const {
  write_gbench_json(what.run, out);
}

}  // namespace mgbench::reports
