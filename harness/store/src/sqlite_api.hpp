#pragma once
// SQLite's C interface as the history store uses it, loaded at run time from libsqlite3.so.0
// (as NVML is loaded), so that building mgbench needs no SQLite header or static library and
// the runtime library, which practically every Linux system has, is enough. Only what
// sqlite_db.cpp calls is declared, with the types, values and prototypes of the SQLite C
// interface as its documentation gives them (result codes, open flags, fundamental datatypes,
// sqlite3_db_config options, SQLITE_TRANSIENT). tests/unit/test_sqlite_api.cpp checks every
// declaration against sqlite3.h where that header is installed. Private to the store.
#include <cstdint>
#include <string>

struct sqlite3;
struct sqlite3_stmt;
struct sqlite3_backup;

namespace mgbench::sqlite::api {

using Int64 = long long;             // sqlite3_int64
using Uint64 = unsigned long long;   // sqlite3_uint64
using Destructor = void (*)(void*);  // sqlite3_destructor_type
using ExecCallback = int (*)(void*, int, char**, char**);

// Primary result codes.
constexpr int kOk = 0;         // SQLITE_OK
constexpr int kPerm = 3;       // SQLITE_PERM
constexpr int kBusy = 5;       // SQLITE_BUSY
constexpr int kLocked = 6;     // SQLITE_LOCKED
constexpr int kReadonly = 8;   // SQLITE_READONLY
constexpr int kCorrupt = 11;   // SQLITE_CORRUPT
constexpr int kFull = 13;      // SQLITE_FULL
constexpr int kCantopen = 14;  // SQLITE_CANTOPEN
constexpr int kNotadb = 26;    // SQLITE_NOTADB
constexpr int kRow = 100;      // SQLITE_ROW
constexpr int kDone = 101;     // SQLITE_DONE
// sqlite3_open_v2 flags.
constexpr int kOpenReadonly = 0x1;            // SQLITE_OPEN_READONLY
constexpr int kOpenReadwrite = 0x2;           // SQLITE_OPEN_READWRITE
constexpr int kOpenCreate = 0x4;              // SQLITE_OPEN_CREATE
constexpr int kOpenUri = 0x40;                // SQLITE_OPEN_URI
constexpr int kOpenNomutex = 0x8000;          // SQLITE_OPEN_NOMUTEX
constexpr int kNull = 5;                      // SQLITE_NULL (a column's datatype)
constexpr unsigned char kUtf8 = 1;            // SQLITE_UTF8
constexpr int kDbconfigDefensive = 1010;      // SQLITE_DBCONFIG_DEFENSIVE (int, int*)
constexpr int kDbconfigTrustedSchema = 1017;  // SQLITE_DBCONFIG_TRUSTED_SCHEMA (int, int*)
// The oldest library accepted: SQLITE_DBCONFIG_TRUSTED_SCHEMA appeared in 3.31.0.
constexpr int kMinVersionNumber = 3031000;

// SQLITE_TRANSIENT: SQLite copies a bound value before the call returns.
inline Destructor transient() {
  return reinterpret_cast<Destructor>(static_cast<std::intptr_t>(-1));
}

// The functions, resolved by their exported names (sqlite3_<member>).
struct Api {
  int (*libversion_number)() = nullptr;
  const char* (*libversion)() = nullptr;
  int (*open_v2)(const char*, sqlite3**, int, const char*) = nullptr;
  int (*close)(sqlite3*) = nullptr;
  int (*close_v2)(sqlite3*) = nullptr;
  int (*extended_result_codes)(sqlite3*, int) = nullptr;
  int (*busy_timeout)(sqlite3*, int) = nullptr;
  int (*db_config)(sqlite3*, int, ...) = nullptr;
  int (*errcode)(sqlite3*) = nullptr;
  const char* (*errmsg)(sqlite3*) = nullptr;
  const char* (*errstr)(int) = nullptr;
  int (*exec)(sqlite3*, const char*, ExecCallback, void*, char**) = nullptr;
  void (*free)(void*) = nullptr;
  int (*prepare_v2)(sqlite3*, const char*, int, sqlite3_stmt**, const char**) = nullptr;
  int (*finalize)(sqlite3_stmt*) = nullptr;
  Int64 (*last_insert_rowid)(sqlite3*) = nullptr;
  int (*changes)(sqlite3*) = nullptr;
  sqlite3_backup* (*backup_init)(sqlite3*, const char*, sqlite3*, const char*) = nullptr;
  int (*backup_step)(sqlite3_backup*, int) = nullptr;
  int (*backup_finish)(sqlite3_backup*) = nullptr;
  int (*bind_int64)(sqlite3_stmt*, int, Int64) = nullptr;
  int (*bind_double)(sqlite3_stmt*, int, double) = nullptr;
  int (*bind_text64)(sqlite3_stmt*, int, const char*, Uint64, Destructor, unsigned char) = nullptr;
  int (*bind_null)(sqlite3_stmt*, int) = nullptr;
  int (*step)(sqlite3_stmt*) = nullptr;
  int (*reset)(sqlite3_stmt*) = nullptr;
  const char* (*sql)(sqlite3_stmt*) = nullptr;
  int (*column_type)(sqlite3_stmt*, int) = nullptr;
  Int64 (*column_int64)(sqlite3_stmt*, int) = nullptr;
  double (*column_double)(sqlite3_stmt*, int) = nullptr;
  const unsigned char* (*column_text)(sqlite3_stmt*, int) = nullptr;
  int (*column_bytes)(sqlite3_stmt*, int) = nullptr;
};

// The process-wide library, loaded on first use and never unloaded. Throws EnvironmentError
// (exit 4) when it cannot be used: one line naming the library and what is wrong with it.
const Api& get();

}  // namespace mgbench::sqlite::api
