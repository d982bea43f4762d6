#pragma once
// `mgbench accept`: the acceptance checklist of a new server as data. Every line the checklist
// shows is an AcceptText, a message key and its arguments (figures, units and identifiers,
// already formatted): the reports render it in English or Chinese from one table per language,
// so results.json holds no language. Stored in results.json as "accept" (docs/ACCEPT.md).
#include <string>
#include <utility>
#include <vector>

#include "mgbench/analysis/accept_criteria.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

enum class AcceptStatus { pass, warn, fail, skip };
const char* to_string(AcceptStatus status);
AcceptStatus accept_status_from_string(const std::string& text);  // throws UsageError

// A message of the checklist: a key of the language tables and its arguments ({0}, {1}...).
struct AcceptText {
  std::string key;
  std::vector<std::string> args;
  bool empty() const { return key.empty(); }
};
inline AcceptText accept_text(std::string key, std::vector<std::string> args = {}) {
  return AcceptText{std::move(key), std::move(args)};
}

// One finding under an item: a doctor check, a slow GPU pair, a point that failed. `subject` and
// `recorded` are shown as recorded (identifiers, figures, the doctor's own finding).
struct AcceptDetail {
  AcceptStatus status = AcceptStatus::fail;
  std::string subject;
  std::string recorded;
  AcceptText cause, next;
};

// One line of the checklist: the item's title is the key "item.<id>" with `subject` as {0}.
struct AcceptItem {
  std::string id;       // doctor, runs, peer_access, p2p_pairs, range, scaling, throttle, ...
  std::string stage;    // configuration, communication, scaling, soak
  std::string subject;  // a workload's name for per-workload items, else ""
  AcceptStatus status = AcceptStatus::skip;
  AcceptText measured, criterion;
  AcceptText cause, next;  // for a warn or fail
  std::vector<AcceptDetail> details;
};

// What one stage did. state: ran, skipped (nothing to do here: one GPU, --soak 0), not_run
// (after an early stop), could_not_run (mgbench could not carry it out), interrupted.
struct AcceptStage {
  std::string id;
  std::string state = "not_run";
  AcceptText note;
  std::string results;  // the stage's own results directory, relative to the accept run's
  std::vector<std::string> workloads;
  double wall_s = 0;
};

// One measured figure for the "single card vs all cards" table: the best headline value of a
// workload at a GPU count, its share of the peak, and the hottest GPU, mean power and peak
// memory of that point (0 / negative: unknown).
struct AcceptFigure {
  std::string stage, workload, metric, unit;
  int gpus = 1;
  double value = 0;
  double peak_fraction = -1;
  double efficiency = -1;
  double temp_max_c = -1, power_mean_w = -1;
  double memory_peak_bytes = -1;
};

inline constexpr const char* kAcceptStages[] = {"configuration", "communication", "scaling",
                                                "soak"};

// verdict: ready, not_ready, could_not_run, interrupted.
struct AcceptResult {
  std::string verdict = "could_not_run";
  std::string stopped_after;  // the stage after which the run stopped early, "" when none
  AcceptText stop_reason;
  std::vector<int> devices;
  std::string gpu_name;
  double soak_s = 0;
  std::string criteria_source;  // the --criteria file, "" for the defaults
  AcceptCriteria criteria;
  std::vector<AcceptStage> stages;
  std::vector<AcceptItem> items;
  std::vector<AcceptFigure> figures;
};

// The verdict from the stages and items: interrupted when a stage was, not_ready when an item
// fails, could_not_run when a stage could not run, else ready.
std::string accept_verdict(const AcceptResult& result);
// 0 ready, 1 not ready, 4 could not run, 130 interrupted.
int accept_exit_code(const std::string& verdict);

// The accept section of a loaded results file; UsageError when the file is no accept run.
AcceptResult accept_of(const RunResult& run);

void to_json(Json& j, const AcceptText& t);
void from_json(const Json& j, AcceptText& t);
void to_json(Json& j, const AcceptResult& r);
void from_json(const Json& j, AcceptResult& r);  // throws UsageError on a malformed section

}  // namespace mgbench
