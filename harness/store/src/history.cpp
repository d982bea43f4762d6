// The SQLite history store (see mgbench/history.hpp for the schema and the rules).
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/store/history.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include <fmt/format.h>

#include "mgbench/analysis/compare.hpp"
#include "mgbench/core/error.hpp"

#include "history_schema.hpp"
#include "mgbench/store/sqlite_db.hpp"
#include "sqlite_api.hpp"

namespace mgbench {

std::string default_history_path() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  std::string base;
  // The XDG spec says relative values are invalid and must be ignored.
  if (xdg && xdg[0] == '/') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    std::string home_dir = home && home[0] ? home : "";
    if (home_dir.empty()) {
      if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) home_dir = pw->pw_dir;
    }
    if (home_dir.empty()) {
      throw EnvironmentError(
          "cannot find the history database: neither XDG_DATA_HOME nor HOME is set "
          "(pass --db PATH)");
    }
    base = home_dir + "/.local/share";
  }
  return base + "/mgbench/history.db";
}

std::string make_run_id() {
  std::random_device source;
  std::string id;
  for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", source());
  return id;
}

const std::vector<std::string>& trend_fields() {
  static const std::vector<std::string> fields = {
      "driver", "cuda", "nccl", "host", "gpu_model", "gpu_count", "fingerprint", "tool_version"};
  return fields;
}

namespace {

using sqlite::Database;
using sqlite::Statement;
using sqlite::Transaction;
using history_schema::insert_metrics;
using history_schema::tool_version_of;

HistoryRun read_run(const Statement& s) {
  HistoryRun r;
  r.id = s.column_int64(0);
  r.started_at = s.column_text(1);
  r.finished_at = s.column_text(2);
  r.host = s.column_text(3);
  r.gpu_model = s.column_text(4);
  r.gpu_count = static_cast<int>(s.column_int64(5));
  r.driver = s.column_text(6);
  r.cuda = s.column_text(7);
  r.nccl = s.column_text(8);
  r.fingerprint = s.column_text(9);
  r.tool_version = s.column_text(10);
  r.points = static_cast<int>(s.column_int64(11));
  r.ok_points = static_cast<int>(s.column_int64(12));
  return r;
}

const char* const kRunColumns =
    "SELECT r.id, r.started_at, r.finished_at, r.host, r.gpu_model, r.gpu_count, r.driver, "
    "r.cuda, r.nccl, r.fingerprint, r.tool_version, "
    "(SELECT count(*) FROM points p WHERE p.run_id = r.id), "
    "(SELECT count(*) FROM points p WHERE p.run_id = r.id AND p.status = 'ok') FROM runs r";

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

namespace fs = std::filesystem;

std::string file_kind(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO, not a regular file";
    case fs::file_type::socket: return "a socket, not a regular file";
    case fs::file_type::character:
    case fs::file_type::block: return "a device, not a regular file";
    default: return "not a regular file";
  }
}

// The database and the files SQLite keeps beside it must be regular files when they exist:
// opening a FIFO blocks until a writer comes, for ever.
void check_regular_files(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string file = path + suffix;
    std::error_code ec;
    const fs::file_status status = fs::status(file, ec);
    if (!fs::exists(status) || fs::is_regular_file(status)) continue;
    throw UsageError("history database " + path + (suffix[0] ? ": " + file : "") + " is " +
                     file_kind(status.type()));
  }
}

// What tells that the database changed: device, inode, size and time of the file and of its
// -wal and -journal ("-" for one that is missing).
std::string files_state(const std::string& path) {
  std::string state;
  for (const char* suffix : {"", "-wal", "-journal"}) {
    struct stat st {};
    if (::stat((path + suffix).c_str(), &st) != 0) {
      state += "-;";
      continue;
    }
    state += fmt::format("{}:{}:{}:{}.{};", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                         st.st_mtim.tv_nsec);
  }
  return state;
}

bool directory_writable(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return ::access(parent.empty() ? "." : parent.c_str(), W_OK) == 0;
}

// The -wal or -journal beside the database when it holds anything, "" otherwise: transactions
// the file itself may lack. (Reading connections leave an empty -wal behind.)
std::string companion(const std::string& path) {
  for (const char* suffix : {"-wal", "-journal"}) {
    struct stat st {};
    if (::stat((path + suffix).c_str(), &st) == 0 && st.st_size > 0) return path + suffix;
  }
  return "";
}

// Reading a WAL database needs its -shm file: in a directory this user cannot write, SQLite
// cannot create it and a read-only open fails ("attempt to write a readonly database"). The
// file is then copied into memory without locks (SQLite's immutable=1, which reads neither
// -wal nor -shm). That is safe only when the file holds every committed transaction and nobody
// writes it meanwhile: so only with no content in a -wal or -journal beside it (a commit goes
// there first), and checked again after the copy: the file and its -wal and -journal the same
// (device, inode, size, time), still empty. A writer that came meanwhile makes the copy be
// thrown away and taken again. (SQLite's nolock=1 instead still needs the -shm.)
Database read_without_locks(const std::string& path, int timeout) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string before = files_state(path);
    Database copy = Database(path, Database::Mode::read_only_immutable, timeout).copy_to_memory();
    if (before == files_state(path) && companion(path).empty()) {
      logging::debug("history: read {} without locks (its directory is not writable)", path);
      return copy;
    }
  }
  throw UsageError("history database " + path +
                   " kept changing while it was read (its directory is not writable, so it is "
                   "read without locks): try again");
}

Database open_for_reading(const std::string& path, int timeout) {
  try {
    return Database(path, Database::Mode::read_only, timeout);
  } catch (const sqlite::DatabaseError& e) {
    const bool cannot_write_beside =
        e.sqlite_code() == sqlite::api::kReadonly || e.sqlite_code() == sqlite::api::kCantopen;
    if (!cannot_write_beside || directory_writable(path)) throw;
    if (const std::string beside = companion(path); !beside.empty()) {
      throw UsageError(
          "history database " + path + " cannot be read here: its directory is not writable and " +
          beside + " is beside it (a writer has it open, or stopped before closing it): read it " +
          "where it can be written, or later");
    }
  }
  return read_without_locks(path, timeout);
}

// Reading commands open the file read-only; an older version is migrated in a copy in memory,
// never in the file.
Database open_history(const std::string& path, HistoryMode mode, int timeout) {
  if (mode == HistoryMode::record) {
    Database db(path, Database::Mode::read_write_create, timeout);
    history_schema::migrate(db);
    return db;
  }
  Database file = open_for_reading(path, timeout);
  if (history_schema::read_version(file) == HistoryStore::kSchemaVersion) return file;
  Database copy = file.copy_to_memory();
  history_schema::migrate(copy);
  return copy;
}

}  // namespace

struct HistoryStore::Impl {
  Database db;
};

bool history_available() { return sqlite::library_error().empty(); }

HistoryStore::HistoryStore(const std::string& path, HistoryMode mode, int busy_timeout_ms) {
  (void)sqlite::api::get();  // without the library, say so (exit 4) before anything else
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (mode == HistoryMode::read_only) {
      throw UsageError("history database " + path + " does not exist (no run recorded yet?)");
    }
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) {
      throw UsageError("history database " + path + ": cannot create " + parent.string() + ": " +
                       ec.message());
    }
  }
  check_regular_files(path);
  impl_ = std::make_unique<Impl>(Impl{open_history(path, mode, busy_timeout_ms)});
}

HistoryStore::~HistoryStore() = default;

const std::string& HistoryStore::path() const { return impl_->db.path(); }

int HistoryStore::schema_version() const { return history_schema::read_version(impl_->db); }

std::int64_t HistoryStore::record(const RunResult& run) {
  Database& db = impl_->db;
  Offer offer;
  offer.run = &run;
  const OfferSummary summary = summarize_offer(offer);
  const Json document = run;
  auto optional_text = [](const std::string& s) {
    return s.empty() ? std::optional<std::string>() : std::optional<std::string>(s);
  };

  Transaction tx(db);
  // The same run recorded again (a resumed sweep) replaces its own row and keeps its id.
  std::optional<std::int64_t> id_kept;
  if (!run.run_id.empty()) {
    Statement find = db.prepare("SELECT id FROM runs WHERE run_uid = ?");
    find.bind(1, run.run_id);
    if (find.step()) id_kept = find.column_int64(0);
  }
  if (id_kept) {
    Statement remove = db.prepare("DELETE FROM runs WHERE id = ?");
    remove.bind(1, *id_kept);
    remove.run();
  }
  Statement insert = db.prepare(
      "INSERT INTO runs (id, run_uid, started_at, finished_at, host, gpu_model, gpu_count, "
      "driver, cuda, nccl, fingerprint, tool_version, document) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const std::string fingerprint = run.environment.is_object() &&
                                          run.environment.contains("fingerprint_hash") &&
                                          run.environment["fingerprint_hash"].is_string()
                                      ? run.environment["fingerprint_hash"].get<std::string>()
                                      : "";
  insert.bind(1, id_kept)
      .bind(2, optional_text(run.run_id))
      .bind(3, run.started_at)
      .bind(4, optional_text(run.finished_at))
      .bind(5, run.host)
      .bind(6, optional_text(summary.gpu_model == "unknown" ? "" : summary.gpu_model))
      .bind(7, summary.gpu_count)
      .bind(8, optional_text(summary.driver))
      .bind(9, optional_text(summary.cuda))
      .bind(10, optional_text(summary.nccl))
      .bind(11, optional_text(fingerprint))
      .bind(12, optional_text(tool_version_of(run.tool)))
      .bind(13, dump_json(document));
  insert.run();
  const std::int64_t id = db.last_insert_rowid();

  Statement point_insert = db.prepare(
      "INSERT INTO points (run_id, idx, workload, params, gpus, status, median_s, noisy) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    const PointResult& p = run.points[i];
    const int idx = static_cast<int>(i);
    std::optional<double> median;
    if (p.stats.n > 0) {
      median = p.stats.median;
    } else if (auto v = quantity_value(p, Quantity{"", "s", false})) {
      median = *v;
    }
    point_insert.reset();
    point_insert.bind(1, id)
        .bind(2, idx)
        .bind(3, p.workload)
        .bind(4, dump_json(Json(p.params)))
        .bind(5, p.gpus)
        .bind(6, to_string(p.status))
        .bind(7, median)
        .bind(8, p.noisy ? 1 : 0);
    point_insert.run();
    insert_metrics(db, id, idx, p.metrics);
  }
  tx.commit();
  return id;
}

std::vector<HistoryRun> HistoryStore::list() const {
  Statement s = impl_->db.prepare(std::string(kRunColumns) + " ORDER BY r.started_at, r.id");
  std::vector<HistoryRun> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::int64_t HistoryStore::resolve(const std::string& ref) const {
  if (ref == "last" || ref == "latest") {
    Statement s =
        impl_->db.prepare("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1");
    if (!s.step()) throw UsageError("history database " + path() + " holds no run yet");
    return s.column_int64(0);
  }
  const bool digits = !ref.empty() && std::all_of(ref.begin(), ref.end(),
                                                  [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || ref.size() > 18) {
    throw UsageError("run '" + ref + "': expected a run id (see `mgbench history list`) or 'last'");
  }
  const std::int64_t id = std::stoll(ref);
  Statement s = impl_->db.prepare("SELECT 1 FROM runs WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) throw UsageError("no run " + ref + " in history database " + path());
  return id;
}

HistoryRun HistoryStore::run(std::int64_t id) const {
  Statement s = impl_->db.prepare(std::string(kRunColumns) + " WHERE r.id = ?");
  s.bind(1, id);
  if (!s.step()) {
    throw UsageError("no run " + std::to_string(id) + " in history database " + path());
  }
  return read_run(s);
}

std::vector<HistoryPoint> HistoryStore::points(std::int64_t id) const {
  Statement s = impl_->db.prepare(
      "SELECT idx, workload, params, gpus, status, median_s, noisy FROM points WHERE run_id = ? "
      "ORDER BY idx");
  s.bind(1, id);
  Statement m = impl_->db.prepare(
      "SELECT name, value FROM point_metrics WHERE run_id = ? AND idx = ? ORDER BY name");
  std::vector<HistoryPoint> out;
  while (s.step()) {
    HistoryPoint p;
    p.idx = static_cast<int>(s.column_int64(0));
    p.workload = s.column_text(1);
    p.params = history_schema::parse_stored_params(s.column_text(2));
    p.gpus = static_cast<int>(s.column_int64(3));
    p.status = s.column_text(4);
    if (!s.is_null(5)) p.median_s = s.column_double(5);
    p.noisy = s.column_int64(6) != 0;
    m.reset();
    m.bind(1, id).bind(2, p.idx);
    while (m.step()) p.metrics[m.column_text(0)] = m.column_double(1);
    out.push_back(std::move(p));
  }
  return out;
}

std::string HistoryStore::document(std::int64_t id) const {
  Statement s = impl_->db.prepare("SELECT document FROM runs WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) {
    throw UsageError("no run " + std::to_string(id) + " in history database " + path());
  }
  return s.column_text(0);
}

std::vector<TrendRow> HistoryStore::trend(const TrendQuery& q) const {
  static const std::map<std::string, std::string> kColumns = {
      {"driver", "r.driver"},
      {"cuda", "r.cuda"},
      {"nccl", "r.nccl"},
      {"host", "r.host"},
      {"gpu_model", "r.gpu_model"},
      {"gpu_count", "CAST(r.gpu_count AS TEXT)"},
      {"fingerprint", "r.fingerprint"},
      {"tool_version", "r.tool_version"}};
  std::string group_column = "''";
  if (!q.by.empty()) {
    auto it = kColumns.find(q.by);
    if (it == kColumns.end()) {
      throw UsageError("--by " + q.by + ": expected one of " + join(trend_fields()));
    }
    group_column = it->second;  // from the fixed table above, never from the user
  }
  const bool time = q.metric == "median_s" || q.metric == "time";
  std::string sql = "SELECT r.id, r.started_at, COALESCE(" + group_column +
                    ", ''), p.params, p.gpus, " + (time ? "p.median_s" : "m.value") +
                    " FROM points p JOIN runs r ON r.id = p.run_id";
  if (!time) sql += " JOIN point_metrics m ON m.run_id = p.run_id AND m.idx = p.idx AND m.name = ?";
  sql += " WHERE p.workload = ? AND p.status = 'ok'";
  if (time) sql += " AND p.median_s IS NOT NULL";
  if (q.gpus) sql += " AND p.gpus = ?";
  sql += " ORDER BY r.started_at, r.id, p.idx";
  Statement s = impl_->db.prepare(sql);
  int index = 1;
  if (!time) s.bind(index++, q.metric);
  s.bind(index++, q.workload);
  if (q.gpus) s.bind(index++, *q.gpus);
  std::vector<TrendRow> out;
  while (s.step()) {
    TrendRow row;
    row.run_id = s.column_int64(0);
    row.started_at = s.column_text(1);
    row.group = s.column_text(2);
    row.params = history_schema::parse_stored_params(s.column_text(3));
    row.gpus = static_cast<int>(s.column_int64(4));
    row.value = s.column_double(5);
    out.push_back(std::move(row));
  }
  if (!out.empty()) return out;

  // Nothing: say what there is instead.
  Statement workloads = impl_->db.prepare("SELECT DISTINCT workload FROM points ORDER BY workload");
  std::vector<std::string> known_workloads;
  while (workloads.step()) known_workloads.push_back(workloads.column_text(0));
  if (std::find(known_workloads.begin(), known_workloads.end(), q.workload) ==
      known_workloads.end()) {
    throw UsageError("no point of workload '" + q.workload + "' in history database " + path() +
                     (known_workloads.empty()
                          ? " (it is empty)"
                          : " (recorded workloads: " + join(known_workloads) + ")"));
  }
  Statement metrics = impl_->db.prepare(
      "SELECT DISTINCT m.name FROM point_metrics m JOIN points p ON p.run_id = m.run_id AND "
      "p.idx = m.idx WHERE p.workload = ? ORDER BY m.name");
  metrics.bind(1, q.workload);
  std::vector<std::string> names = {"median_s"};
  while (metrics.step()) names.push_back(metrics.column_text(0));
  throw UsageError("no ok point of workload '" + q.workload + "' with metric '" + q.metric + "'" +
                   (q.gpus ? " on " + std::to_string(*q.gpus) + " GPU(s)" : "") +
                   " in history database " + path() + " (metrics recorded: " + join(names) + ")");
}

void record_run(const RunResult& run, const std::string& db_path) {
  if (const std::string missing = sqlite::library_error(); !missing.empty()) {
    logging::warn("history: run not recorded in {}: {}", db_path, missing);
    return;
  }
  HistoryStore store(db_path, HistoryMode::record);
  const std::int64_t id = store.record(run);
  logging::debug("history: recorded run {} in {}", id, db_path);
}

}  // namespace mgbench
