// The history database's schema and migrations (see history_schema.hpp).

#include "history_schema.hpp"

#include <cmath>
#include <functional>
#include <vector>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/store/history.hpp"

namespace mgbench::history_schema {

using sqlite::Database;
using sqlite::Statement;
using sqlite::Transaction;

Json parse_stored(const std::string& text) {
  if (!json_limit_violation(text, JsonLimits{}).empty()) return Json(Json::value_t::discarded);
  return Json::parse(text, nullptr, false);
}

Params parse_stored_params(const std::string& text) {
  const Json stored = parse_stored(text);
  if (stored.is_discarded()) return {};
  try {
    return Params::from_json(stored);
  } catch (const UsageError&) {
    return {};
  }
}

std::string tool_version_of(const Json& tool) {
  if (!tool.is_object()) return "";
  std::string version = tool.contains("version") && tool["version"].is_string()
                            ? tool["version"].get<std::string>()
                            : "";
  if (tool.contains("git_revision") && tool["git_revision"].is_string() &&
      !tool["git_revision"].get<std::string>().empty() && !version.empty()) {
    version += " (" + tool["git_revision"].get<std::string>() + ")";
  }
  return version;
}

void insert_metrics(Database& db, std::int64_t run_id, int idx, const Json& metrics) {
  if (!metrics.is_object()) return;
  Statement insert = db.prepare(
      "INSERT OR REPLACE INTO point_metrics (run_id, idx, name, value) VALUES (?, ?, ?, ?)");
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    if (!it.value().is_number()) continue;
    const double value = it.value().get<double>();
    if (!std::isfinite(value)) continue;
    insert.reset();
    insert.bind(1, run_id).bind(2, idx).bind(3, it.key()).bind(4, value);
    insert.run();
  }
}

namespace {

const char* const kSchemaV1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  host TEXT NOT NULL,
  gpu_model TEXT,
  gpu_count INTEGER,
  driver TEXT,
  cuda TEXT,
  nccl TEXT,
  fingerprint TEXT,
  document TEXT NOT NULL,
  UNIQUE (started_at, host)
);
CREATE TABLE points (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  workload TEXT NOT NULL,
  params TEXT NOT NULL,
  gpus INTEGER NOT NULL,
  status TEXT NOT NULL,
  median_s REAL,
  PRIMARY KEY (run_id, idx)
);
)sql";

const char* const kSchemaV2 = R"sql(
ALTER TABLE runs ADD COLUMN tool_version TEXT;
ALTER TABLE points ADD COLUMN noisy INTEGER NOT NULL DEFAULT 0;
CREATE TABLE point_metrics (
  run_id INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (run_id, idx, name),
  FOREIGN KEY (run_id, idx) REFERENCES points(run_id, idx) ON DELETE CASCADE
);
CREATE INDEX points_by_workload ON points(workload, gpus);
)sql";

// Version 3: a run is identified by its run id (unique), no longer by (started_at, host).
// SQLite cannot drop a constraint: the table is rebuilt (foreign keys are off meanwhile).
const char* const kSchemaV3 = R"sql(
CREATE TABLE runs_v3 (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_uid TEXT UNIQUE,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  host TEXT NOT NULL,
  gpu_model TEXT,
  gpu_count INTEGER,
  driver TEXT,
  cuda TEXT,
  nccl TEXT,
  fingerprint TEXT,
  tool_version TEXT,
  document TEXT NOT NULL
);
INSERT INTO runs_v3 (id, started_at, finished_at, host, gpu_model, gpu_count, driver, cuda,
                     nccl, fingerprint, tool_version, document)
  SELECT id, started_at, finished_at, host, gpu_model, gpu_count, driver, cuda, nccl,
         fingerprint, tool_version, document FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v3 RENAME TO runs;
)sql";

// 1 -> 2: the new columns and table, filled from the documents already stored.
void migrate_v1_to_v2(Database& db) {
  db.exec(kSchemaV2);
  std::vector<std::pair<std::int64_t, std::string>> documents;
  {
    Statement runs = db.prepare("SELECT id, document FROM runs ORDER BY id");
    while (runs.step()) documents.emplace_back(runs.column_int64(0), runs.column_text(1));
  }
  Statement set_tool = db.prepare("UPDATE runs SET tool_version = ? WHERE id = ?");
  Statement set_noisy = db.prepare("UPDATE points SET noisy = ? WHERE run_id = ? AND idx = ?");
  Statement exists = db.prepare("SELECT 1 FROM points WHERE run_id = ? AND idx = ?");
  for (const auto& [id, text] : documents) {
    const Json doc = parse_stored(text);
    if (doc.is_discarded() || !doc.is_object()) {
      logging::warn("history: run {} has an unreadable document; its metrics stay empty", id);
      continue;
    }
    if (doc.contains("tool")) {
      set_tool.reset();
      set_tool.bind(1, tool_version_of(doc["tool"])).bind(2, id);
      set_tool.run();
    }
    if (!doc.contains("points") || !doc["points"].is_array()) continue;
    int idx = 0;
    for (const Json& point : doc["points"]) {
      // Only points the v1 store recorded get metrics (the foreign key needs them).
      exists.reset();
      exists.bind(1, id).bind(2, idx);
      if (point.is_object() && exists.step()) {
        exists.reset();
        const bool noisy =
            point.contains("noisy") && point["noisy"].is_boolean() && point["noisy"].get<bool>();
        set_noisy.reset();
        set_noisy.bind(1, noisy ? 1 : 0).bind(2, id).bind(3, idx);
        set_noisy.run();
        if (point.contains("metrics")) insert_metrics(db, id, idx, point["metrics"]);
      }
      ++idx;
    }
  }
}

// migrations[v] takes a database at version v to v + 1.
const std::vector<std::function<void(Database&)>>& migrations() {
  static const std::vector<std::function<void(Database&)>> list = {
      [](Database& db) {
        db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
        db.exec(kSchemaV1);
      },
      migrate_v1_to_v2,
      [](Database& db) { db.exec(kSchemaV3); },
  };
  return list;
}

std::int64_t count(Database& db, const std::string& sql) {
  Statement s = db.prepare(sql);
  s.step();
  return s.column_int64(0);
}

// Foreign keys off while the tables are rebuilt (the pragma is a no-op inside a transaction),
// on again afterwards whatever happens.
struct ForeignKeysOff {
  Database& db;
  explicit ForeignKeysOff(Database& d) : db(d) { db.exec("PRAGMA foreign_keys = OFF"); }
  ~ForeignKeysOff() {
    try {
      db.exec("PRAGMA foreign_keys = ON");
    } catch (const std::exception& e) {
      logging::debug("history: {}", e.what());
    }
  }
};

}  // namespace

int read_version(Database& db) {
  const std::string path = db.path();
  const std::int64_t tables = count(db,
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  if (tables == 0) return 0;
  if (count(db, "SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view')") > 0) {
    throw UsageError("history database " + path +
                     " holds triggers or views, which mgbench never creates: refusing it "
                     "(pass --db with another file)");
  }
  if (count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                "name = 'schema_version'") == 0) {
    throw UsageError("history database " + path +
                     " is an SQLite database but not an mgbench history (no schema_version "
                     "table): pass --db with another file");
  }
  Statement version = db.prepare("SELECT version, typeof(version) FROM schema_version");
  if (!version.step()) {
    throw UsageError("history database " + path + " is corrupt: its schema_version is empty");
  }
  const std::int64_t v = version.column_int64(0);
  const std::string type = version.column_text(1);
  if (type != "integer" || v < 1) {
    // Never the raw value: it may be text or a blob from anywhere.
    throw UsageError("history database " + path + " has schema version " +
                     (type == "integer" ? std::to_string(v) : "of type " + type) +
                     ", which no mgbench writes: it is corrupt or crafted (pass --db with "
                     "another file)");
  }
  if (v > HistoryStore::kSchemaVersion) {
    throw UsageError("history database " + path + " has schema version " + std::to_string(v) +
                     ", written by a newer mgbench (this one reads up to " +
                     std::to_string(HistoryStore::kSchemaVersion) + ")");
  }
  return static_cast<int>(v);
}

void migrate(Database& db) {
  if (read_version(db) == HistoryStore::kSchemaVersion) return;
  const ForeignKeysOff off(db);
  for (;;) {
    Transaction tx(db);
    const int version = read_version(db);  // now under the write lock
    if (version == HistoryStore::kSchemaVersion) return;
    logging::debug("history: migrating {} from schema version {} to {}", db.path(), version,
                   version + 1);
    migrations()[static_cast<std::size_t>(version)](db);
    db.exec("DELETE FROM schema_version");
    Statement set = db.prepare("INSERT INTO schema_version (version) VALUES (?)");
    set.bind(1, version + 1);
    set.run();
    if (count(db, "SELECT count(*) FROM pragma_foreign_key_check") != 0) {
      throw UsageError("history database " + db.path() + ": migration to version " +
                       std::to_string(version + 1) + " broke its references");
    }
    tx.commit();
  }
}

}  // namespace mgbench::history_schema

