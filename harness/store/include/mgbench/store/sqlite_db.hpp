#pragma once
// A thin RAII wrapper over SQLite's C API: a connection, prepared statements with bound
// parameters (values are never spliced into SQL text), and transactions that roll back
// unless committed. SQLite is loaded at run time (libsqlite3.so.0, or the absolute path in
// MGBENCH_SQLITE_LIBRARY): the build needs no SQLite header or library. Without it, opening a
// database throws EnvironmentError (exit 4) naming what is missing.
//
// Every failure throws DatabaseError, a UsageError (exit 2) whose one-line message names the
// database file and says what went wrong ("is locked by another process", "is not an SQLite
// database or is corrupt", ...).
#include <cstdint>
#include <optional>
#include <string>

#include "mgbench/core/error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace mgbench::sqlite {

class DatabaseError : public UsageError {
 public:
  DatabaseError(int sqlite_code, const std::string& what)
      : UsageError(what), sqlite_code_(sqlite_code) {}
  int sqlite_code() const { return sqlite_code_; }  // primary result code (SQLITE_BUSY...)
  bool busy() const;     // locked by another connection (after the busy timeout)
  bool corrupt() const;  // not a database, or a corrupt one

 private:
  int sqlite_code_;
};

// "" when the SQLite runtime library loads and is recent enough (3.31.0), else the one-line
// reason (what is missing, and the package that provides it). Loads it on first use.
std::string library_error();

class Statement;

class Database {
 public:
  // read_only_immutable: read-only without any lock, -wal or -shm file (SQLite's immutable=1),
  // for a file in a directory this user cannot write; only safe while nobody writes the file,
  // which the caller must check (HistoryStore reads such a file into memory and checks that it
  // did not change meanwhile).
  enum class Mode { read_write_create, read_write, read_only, read_only_immutable };

  // Opens (or creates) the file, sets the busy timeout and turns on foreign keys; in the
  // writable modes also switches the journal to WAL. Every connection is defensive
  // (SQLITE_DBCONFIG_DEFENSIVE) and does not trust the schema (trusted_schema = OFF), as the
  // file may come from another machine. Throws DatabaseError.
  explicit Database(const std::string& path, Mode mode = Mode::read_write_create,
                    int busy_timeout_ms = 5000);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;

  // Runs SQL without parameters (schema changes, pragmas). Throws DatabaseError.
  void exec(const std::string& sql);
  Statement prepare(const std::string& sql);
  // A writable in-memory copy of this database (its path() still names the file): reading
  // commands migrate the copy, never the file.
  Database copy_to_memory() const;
  std::int64_t last_insert_rowid() const;
  int changes() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Throws the DatabaseError for result code `rc` while doing `what`.
  [[noreturn]] void fail(int rc, const std::string& what) const;

 private:
  void harden();

  sqlite3* db_ = nullptr;
  std::string path_;
  int busy_timeout_ms_ = 0;
};

// A prepared statement; must not outlive its Database. Parameter indices start at 1,
// column indices at 0.
class Statement {
 public:
  Statement(const Database& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, const char* value) { return bind(index, std::string(value)); }
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Advances; true while a row is available, false when done. Throws DatabaseError.
  bool step();
  // Steps a statement that returns no rows (INSERT, UPDATE...).
  void run();
  void reset();  // ready to run again; keeps the bindings

  bool is_null(int column) const;
  std::int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;  // "" for NULL

 private:
  const Database* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE (takes the write lock at once, so a busy database fails here, before any
// work) or DEFERRED; rolls back in the destructor unless commit() was called.
class Transaction {
 public:
  enum class Kind { deferred, immediate };
  explicit Transaction(Database& db, Kind kind = Kind::immediate);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool open_ = false;
};

}  // namespace mgbench::sqlite
