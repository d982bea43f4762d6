#pragma once
// The history store: every finished run recorded in an SQLite database, for trends across
// driver / CUDA / NCCL versions and machines (`mgbench history`).
//
// SQLite is loaded at run time (mgbench/store/sqlite_db.hpp). Where it cannot be loaded,
// record_run() records nothing and logs one warning saying why, and HistoryStore throws
// EnvironmentError (exit 4) naming what is missing.
//
// Schema (version 3; a `schema_version` table holds the version, migrations run in order in
// one transaction each, and a version this mgbench never wrote -- newer, zero or negative --
// is refused, as is a file holding triggers or views):
//   runs(id, run_uid [v3], started_at, finished_at, host, gpu_model, gpu_count, driver, cuda,
//        nccl, fingerprint, tool_version [v2], document) -- document = the full results JSON
//   points(run_id, idx, workload, params, gpus, status, median_s, noisy [v2])
//   point_metrics(run_id, idx, name, value)  [v2]      -- numeric metrics, for trends
// Migration 1 -> 2 adds the v2 columns and table and fills them from the stored documents;
// 2 -> 3 rebuilds `runs` with the unique run_uid (RunResult::run_id) in place of the old
// UNIQUE (started_at, host). Recording a run with a run id already stored (a resumed sweep)
// replaces that row and keeps its id; a run without run id is always a new row.
//
// Reading (HistoryMode::read_only) never writes the file: it is opened read-only, and an
// older version is migrated in an in-memory copy. A file in a directory this user cannot write
// is read into memory without locks when nobody has it open (see history.cpp). The database,
// and its -wal, -shm and -journal files where they exist, must be regular files (UsageError).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

// True when the SQLite runtime library loads (sqlite::library_error() says why not).
bool history_available();

// $XDG_DATA_HOME/mgbench/history.db, else ~/.local/share/mgbench/history.db.
std::string default_history_path();

// A fresh run id (RunResult::run_id): 32 hex digits from the system's random source.
std::string make_run_id();

// Records a finished run (creating the database and its directory when needed). Throws
// UsageError for a corrupt or locked database; without the SQLite library, one warning.
void record_run(const RunResult& run, const std::string& db_path);

struct HistoryRun {
  std::int64_t id = 0;
  std::string started_at, finished_at, host;
  std::string gpu_model;
  int gpu_count = 0;
  std::string driver, cuda, nccl, fingerprint, tool_version;
  int points = 0, ok_points = 0;
};

struct HistoryPoint {
  int idx = 0;
  std::string workload;
  Params params;
  int gpus = 1;
  std::string status;
  std::optional<double> median_s;
  bool noisy = false;
  Json metrics = Json::object();  // name -> value
};

struct TrendQuery {
  std::string workload;
  std::string metric;  // a point metric name, or "median_s" for the median time
  std::string by;      // "" or one of trend_fields()
  std::optional<int> gpus;
};

struct TrendRow {
  std::int64_t run_id = 0;
  std::string started_at;
  std::string group;  // value of the --by field ("" without --by)
  Params params;
  int gpus = 1;
  double value = 0;
};

// Fields `history trend --by` accepts: driver, cuda, nccl, host, gpu_model, gpu_count,
// fingerprint, tool_version.
const std::vector<std::string>& trend_fields();

enum class HistoryMode {
  record,     // read-write: created when missing, migrated in the file
  read_only,  // UsageError when missing; the file is never written
};

class HistoryStore {
 public:
  static constexpr int kSchemaVersion = 3;

  // Opens the database (see HistoryMode). Throws sqlite::DatabaseError (a UsageError) when
  // corrupt or locked longer than `busy_timeout_ms`, UsageError for a refused version.
  explicit HistoryStore(const std::string& path, HistoryMode mode = HistoryMode::record,
                        int busy_timeout_ms = 5000);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  std::int64_t record(const RunResult& run);  // needs HistoryMode::record
  std::vector<HistoryRun> list() const;
  // "12" (an id) or "last"; UsageError naming the database when there is no such run.
  std::int64_t resolve(const std::string& run_ref) const;
  HistoryRun run(std::int64_t id) const;
  std::vector<HistoryPoint> points(std::int64_t id) const;
  std::string document(std::int64_t id) const;  // the results JSON as recorded
  // UsageError when nothing matches (naming the metrics recorded for the workload).
  std::vector<TrendRow> trend(const TrendQuery& query) const;
  int schema_version() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mgbench
