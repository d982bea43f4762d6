#pragma once
// The results model: one point (workload x parameters x device set) and one run.
// Serialised as the versioned JSON document described by harness/schema/results.schema.json.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/measured.hpp"
#include "mgbench/model/peak_share.hpp"
#include "mgbench/model/placement.hpp"
#include "mgbench/model/point_marks.hpp"
#include "mgbench/model/presentation.hpp"
#include "mgbench/model/scaling_series.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench {

// 2: "presentation" added. Version 1 files are still read (without presentation).
inline constexpr int kSchemaVersion = 2;
inline constexpr int kOldestSchemaVersion = 1;

enum class Status { ok, skipped, waived, oom, wrong, failed, timeout };
const char* to_string(Status status);
Status status_from_string(const std::string& text);  // throws UsageError

struct RankTiming {
  int rank = 0;
  int device = 0;
  double median_s = 0;  // median of this rank's own sample times
  double mean_s = 0;
};

struct PointResult {
  std::size_t index = 0;  // position in the plan
  std::string workload;
  Params params;
  int gpus = 1;
  std::vector<int> devices;  // physical CUDA ordinals (per node with several nodes)
  Placement placement;       // process model, launcher, nodes and hosts
  Status status = Status::ok;
  std::string message;
  // The median is uncertain: its bootstrap CI half-width exceeds max_noise (point_quality.hpp).
  bool noisy = false;
  Measurement measured;        // timing method, cache mode, warm-up
  std::vector<PointFlag> flags;  // values the hardware cannot produce
  std::optional<Spread> spread;  // the samples' spread; unset when not assessed
  std::size_t ops_per_sample = 1;
  std::vector<double> samples;  // seconds per op, headline (slowest rank) per sample
  Statistics stats;
  std::vector<RankTiming> ranks;
  Json metrics = Json::object();    // derived metrics, name -> number (tflops_per_gpu, busbw_GBps...)
  Json memory = Json::object();     // e.g. {"peak_bytes": [..per rank..]}
  Json verification = Json::object();  // {"ok":..., "max_rel_error":..., "wrong": ...}
  Json telemetry;                   // null when telemetry is off or NVML is missing
  Json extra = Json::object();      // workload-specific details
  double wall_s = 0;                // wall time the point took (setup + samples + verify)
  std::string started_at;           // UTC ISO-8601
};

// workload + canonical params + gpus (+ devices when `with_devices`): how points are matched.
std::string point_key(const PointResult& point, bool with_devices = false);

void to_json(Json& j, const PointResult& p);
void from_json(const Json& j, PointResult& p);  // throws UsageError on malformed input
void to_json(Json& j, const Statistics& s);
void from_json(const Json& j, Statistics& s);

// A whole run.
struct RunResult {
  int schema_version = kSchemaVersion;
  Json tool = Json::object();         // {"name","version","git_revision","build":{...}}
  std::vector<std::string> argv;
  std::string run_id;  // unique per sweep, kept by --resume ("" in files written before it)
  std::string started_at, finished_at;  // UTC ISO-8601
  std::string host;
  Json environment = Json::object();  // versions, devices, fingerprint (telemetry issue)
  Json settings = Json::object();     // profile, stopping criteria, isolation...
  Json plan = Json::object();         // groups and points as planned
  std::vector<PointResult> points;
  std::vector<ScalingSeries> scaling;  // scaling tables (mgbench/analysis/scaling.hpp)
  std::vector<RunVerdict> verdicts;    // plain-words verdicts (mgbench/analysis/verdict.hpp)
  // workload -> run-level summary rows (Workload::summarize), shown as the presentation's
  // SummarySpec tables; "baseline_each": the baseline outliers.
  Json summaries = Json::object();
  std::map<std::string, Presentation> presentation;  // workload -> how to show it
  Json doctor;                        // doctor checks, null when skipped
  Json telemetry_series;              // down-sampled time series, null when off
  // `mgbench soak`: the windows over time, the health counters and the verdict (docs/SOAK.md);
  // null for a sweep. The ChartSpec::timeseries charts draw its windows.
  Json soak;
  // `mgbench screen`: the fleet's nodes, every figure and the findings (analysis/fleet.hpp's
  // ScreenSection, docs/SCREEN.md); null otherwise.
  Json screen;
  // `mgbench accept`: the stages, the criteria and the checklist (analysis/accept.hpp,
  // docs/ACCEPT.md); null for every other run. The stages' own runs are results of their own.
  Json accept;
  // Each point's figures as a share of its GPU's peak, the GPU model's row and expected ranges
  // (peak_share.hpp): derived data, recomputed by `report`; empty when not computed.
  PeakReport peaks;
  bool interrupted = false;
};

void to_json(Json& j, const RunResult& r);
void from_json(const Json& j, RunResult& r);  // throws UsageError (bad schema version too)

// The presentation of `workload` in this run: the stored one, else one derived from the data
// (version 1 files, runs built in code): the scaling series' metric as headline, every metric
// found in the points as a column, the varying parameters as columns, the scaling charts.
Presentation presentation_for(const RunResult& run, const std::string& workload);

// Reads and validates the shape of a results file; one-line UsageError on any problem.
RunResult load_results(const std::string& path);
// Written with write_file_atomic (core/file_io.hpp).
void save_results(const RunResult& run, const std::string& path);

std::string utc_now_iso8601();

}  // namespace mgbench
