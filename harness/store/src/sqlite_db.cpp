// RAII wrapper over SQLite's C API (see mgbench/sqlite_db.hpp), through the library loaded at
// run time (sqlite_api.hpp).
#include "mgbench/store/sqlite_db.hpp"

#include <utility>

#include "mgbench/core/logging.hpp"
#include "sqlite_api.hpp"

namespace mgbench::sqlite {

using namespace api;

namespace {

const Api& lib() { return api::get(); }

// "file:PATH?immutable=1" with PATH percent-encoded as an SQLite URI requires ('?', '#', '%'
// and anything outside printable ASCII); an absolute PATH after an empty authority ("file://"),
// so that one starting with "//" is not read as a host name.
std::string immutable_uri(const std::string& path) {
  std::string uri = path.rfind('/', 0) == 0 ? "file://" : "file:";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f || c == '?' || c == '#' || c == '%') {
      static const char kHex[] = "0123456789abcdef";
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xf];
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

bool DatabaseError::busy() const {
  return sqlite_code_ == kBusy || sqlite_code_ == kLocked;
}

bool DatabaseError::corrupt() const {
  return sqlite_code_ == kNotadb || sqlite_code_ == kCorrupt;
}

Database::Database(const std::string& path, Mode mode, int busy_timeout_ms)
    : path_(path), busy_timeout_ms_(busy_timeout_ms) {
  int flags = kOpenNomutex;
  std::string name = path;
  switch (mode) {
    case Mode::read_write_create: flags |= kOpenReadwrite | kOpenCreate; break;
    case Mode::read_write: flags |= kOpenReadwrite; break;
    case Mode::read_only: flags |= kOpenReadonly; break;
    case Mode::read_only_immutable:
      flags |= kOpenReadonly | kOpenUri;
      name = immutable_uri(path);
      break;
  }
  const int rc = lib().open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != kOk) {
    // sqlite3_open_v2 may hand back a handle even on failure; fail() reads its message.
    try {
      fail(rc, "cannot open");
    } catch (...) {
      lib().close(db_);
      db_ = nullptr;
      throw;
    }
  }
  lib().extended_result_codes(db_, 1);
  try {
    harden();
    lib().busy_timeout(db_, busy_timeout_ms);
    // The first statements read the file header: a file that is not a database fails here.
    exec("PRAGMA foreign_keys = ON");
    if (mode == Mode::read_write_create || mode == Mode::read_write)
      exec("PRAGMA journal_mode = WAL");
    else
      exec("SELECT count(*) FROM sqlite_master");
  } catch (...) {
    lib().close(db_);
    db_ = nullptr;
    throw;
  }
}

// The file may come from another machine: no schema object (trigger, view, index expression)
// may call a function with side effects, and no SQL may corrupt the file on purpose.
void Database::harden() {
  int rc = lib().db_config(db_, kDbconfigDefensive, 1, static_cast<int*>(nullptr));
  if (rc == kOk) {
    rc = lib().db_config(db_, kDbconfigTrustedSchema, 0, static_cast<int*>(nullptr));
  }
  if (rc != kOk) fail(rc, "hardening the connection");
  exec("PRAGMA trusted_schema = OFF");
}

Database Database::copy_to_memory() const {
  Database copy(":memory:", Mode::read_write_create, busy_timeout_ms_);
  sqlite3_backup* backup = lib().backup_init(copy.db_, "main", db_, "main");
  if (!backup) copy.fail(lib().errcode(copy.db_), "copying " + path_ + " into memory");
  const int rc = lib().backup_step(backup, -1);
  lib().backup_finish(backup);
  if (rc != kDone) fail(rc, "copying into memory");
  copy.path_ = path_;  // messages keep naming the file
  return copy;
}

Database::~Database() {
  if (db_ && lib().close(db_) != kOk) {
    logging::debug("sqlite: closing {} with unfinalised statements", path_);
    lib().close_v2(db_);
  }
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      busy_timeout_ms_(other.busy_timeout_ms_) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_) lib().close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    busy_timeout_ms_ = other.busy_timeout_ms_;
  }
  return *this;
}

void Database::fail(int rc, const std::string& what) const {
  const int primary = rc & 0xff;
  const std::string detail = db_ ? lib().errmsg(db_) : lib().errstr(rc);
  std::string message = "history database " + path_;
  if (primary == kBusy || primary == kLocked) {
    message += " is locked by another process (gave up after " + std::to_string(busy_timeout_ms_) +
               " ms): " + detail;
  } else if (primary == kNotadb || primary == kCorrupt) {
    message += " is not an SQLite database or is corrupt (" + detail +
               "): move it away or pass --db with another file";
  } else if (primary == kCantopen) {
    message += ": cannot open the file (" + detail + ")";
  } else if (primary == kReadonly || primary == kPerm) {
    message += " is read-only (" + detail + ")";
  } else if (primary == kFull) {
    message += ": the disk is full (" + detail + ")";
  } else {
    message += ": " + what + " failed: " + detail;
  }
  throw DatabaseError(primary, message);
}

void Database::exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = lib().exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (error) lib().free(error);
  if (rc != kOk) fail(rc, "executing \"" + sql.substr(0, 60) + "\"");
}

Statement Database::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = lib().prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != kOk) {
    lib().finalize(stmt);
    fail(rc, "preparing \"" + sql.substr(0, 60) + "\"");
  }
  return Statement(*this, stmt);
}

std::int64_t Database::last_insert_rowid() const { return lib().last_insert_rowid(db_); }

int Database::changes() const { return lib().changes(db_); }

Statement::~Statement() {
  if (stmt_) lib().finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) lib().finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = lib().bind_int64(stmt_, index, value);
  if (rc != kOk) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = lib().bind_double(stmt_, index, value);
  if (rc != kOk) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  const int rc =
      lib().bind_text64(stmt_, index, value.data(), value.size(), transient(), kUtf8);
  if (rc != kOk) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind_null(int index) {
  const int rc = lib().bind_null(stmt_, index);
  if (rc != kOk) db_->fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

bool Statement::step() {
  const int rc = lib().step(stmt_);
  if (rc == kRow) return true;
  if (rc == kDone) return false;
  lib().reset(stmt_);
  db_->fail(rc, "running \"" + std::string(lib().sql(stmt_)).substr(0, 60) + "\"");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() { lib().reset(stmt_); }

bool Statement::is_null(int column) const {
  return lib().column_type(stmt_, column) == kNull;
}

std::int64_t Statement::column_int64(int column) const {
  return lib().column_int64(stmt_, column);
}

double Statement::column_double(int column) const { return lib().column_double(stmt_, column); }

std::string Statement::column_text(int column) const {
  const unsigned char* text = lib().column_text(stmt_, column);
  if (!text) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(lib().column_bytes(stmt_, column)));
}

Transaction::Transaction(Database& db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  open_ = true;
}

Transaction::~Transaction() {
  if (!open_) return;
  char* error = nullptr;
  if (lib().exec(db_.handle(), "ROLLBACK", nullptr, nullptr, &error) != kOk) {
    logging::debug("sqlite: rollback on {} failed: {}", db_.path(), error ? error : "?");
  }
  if (error) lib().free(error);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace mgbench::sqlite

