// RAII wrapper over SQLite's C API (see mgbench/sqlite_db.hpp). Built only with SQLite.
#if defined(MGBENCH_HAVE_SQLITE)

#include "mgbench/store/sqlite_db.hpp"

#include <sqlite3.h>

#include <utility>

#include "mgbench/core/logging.hpp"

namespace mgbench::sqlite {

bool DatabaseError::busy() const {
  return sqlite_code_ == SQLITE_BUSY || sqlite_code_ == SQLITE_LOCKED;
}

bool DatabaseError::corrupt() const {
  return sqlite_code_ == SQLITE_NOTADB || sqlite_code_ == SQLITE_CORRUPT;
}

Database::Database(const std::string& path, Mode mode, int busy_timeout_ms)
    : path_(path), busy_timeout_ms_(busy_timeout_ms) {
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (mode) {
    case Mode::read_write_create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
    case Mode::read_write: flags |= SQLITE_OPEN_READWRITE; break;
    case Mode::read_only: flags |= SQLITE_OPEN_READONLY; break;
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 may hand back a handle even on failure; fail() reads its message.
    try {
      fail(rc, "cannot open");
    } catch (...) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw;
    }
  }
  sqlite3_extended_result_codes(db_, 1);
  try {
    harden();
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    // The first statements read the file header: a file that is not a database fails here.
    exec("PRAGMA foreign_keys = ON");
    if (mode != Mode::read_only)
      exec("PRAGMA journal_mode = WAL");
    else
      exec("SELECT count(*) FROM sqlite_master");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

// The file may come from another machine: no schema object (trigger, view, index expression)
// may call a function with side effects, and no SQL may corrupt the file on purpose.
void Database::harden() {
  int rc = sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, static_cast<int*>(nullptr));
  if (rc == SQLITE_OK) {
    rc = sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, static_cast<int*>(nullptr));
  }
  if (rc != SQLITE_OK) fail(rc, "hardening the connection");
  exec("PRAGMA trusted_schema = OFF");
}

Database Database::copy_to_memory() const {
  Database copy(":memory:", Mode::read_write_create, busy_timeout_ms_);
  sqlite3_backup* backup = sqlite3_backup_init(copy.db_, "main", db_, "main");
  if (!backup) copy.fail(sqlite3_errcode(copy.db_), "copying " + path_ + " into memory");
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) fail(rc, "copying into memory");
  copy.path_ = path_;  // messages keep naming the file
  return copy;
}

Database::~Database() {
  if (db_ && sqlite3_close(db_) != SQLITE_OK) {
    logging::debug("sqlite: closing {} with unfinalised statements", path_);
    sqlite3_close_v2(db_);
  }
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      busy_timeout_ms_(other.busy_timeout_ms_) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    busy_timeout_ms_ = other.busy_timeout_ms_;
  }
  return *this;
}

void Database::fail(int rc, const std::string& what) const {
  const int primary = rc & 0xff;
  const std::string detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string message = "history database " + path_;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    message += " is locked by another process (gave up after " + std::to_string(busy_timeout_ms_) +
               " ms): " + detail;
  } else if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
    message += " is not an SQLite database or is corrupt (" + detail +
               "): move it away or pass --db with another file";
  } else if (primary == SQLITE_CANTOPEN) {
    message += ": cannot open the file (" + detail + ")";
  } else if (primary == SQLITE_READONLY || primary == SQLITE_PERM) {
    message += " is read-only (" + detail + ")";
  } else if (primary == SQLITE_FULL) {
    message += ": the disk is full (" + detail + ")";
  } else {
    message += ": " + what + " failed: " + detail;
  }
  throw DatabaseError(primary, message);
}

void Database::exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (error) sqlite3_free(error);
  if (rc != SQLITE_OK) fail(rc, "executing \"" + sql.substr(0, 60) + "\"");
}

Statement Database::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    fail(rc, "preparing \"" + sql.substr(0, 60) + "\"");
  }
  return Statement(*this, stmt);
}

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

int Database::changes() const { return sqlite3_changes(db_); }

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  db_->fail(rc, "running \"" + std::string(sqlite3_sql(stmt_)).substr(0, 60) + "\"");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() { sqlite3_reset(stmt_); }

int Statement::column_count() const { return sqlite3_column_count(stmt_); }

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (!text) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_text(column);
}

Transaction::Transaction(Database& db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  open_ = true;
}

Transaction::~Transaction() {
  if (!open_) return;
  char* error = nullptr;
  if (sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, &error) != SQLITE_OK) {
    logging::debug("sqlite: rollback on {} failed: {}", db_.path(), error ? error : "?");
  }
  if (error) sqlite3_free(error);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace mgbench::sqlite

#endif  // MGBENCH_HAVE_SQLITE
