// The SQLite C interface that the history store declares itself (harness/store/src/
// sqlite_api.hpp, loaded at run time): every constant and prototype is checked against
// sqlite3.h where that header is installed (the build does not need it), and the library loaded
// here is recent enough and works.
#include "../../harness/store/src/sqlite_api.hpp"

#include <string>
#include <type_traits>

#include "catch_compat.hpp"
#include "mgbench/store/sqlite_db.hpp"

namespace api = mgbench::sqlite::api;

#if __has_include(<sqlite3.h>)
#include <sqlite3.h>

#define MGBENCH_SAME_FUNCTION(member, function)                                  \
  static_assert(std::is_same_v<decltype(api::Api::member), decltype(&function)>, \
                #function " is declared as sqlite3.h declares it")
MGBENCH_SAME_FUNCTION(libversion_number, sqlite3_libversion_number);
MGBENCH_SAME_FUNCTION(libversion, sqlite3_libversion);
MGBENCH_SAME_FUNCTION(open_v2, sqlite3_open_v2);
MGBENCH_SAME_FUNCTION(close, sqlite3_close);
MGBENCH_SAME_FUNCTION(close_v2, sqlite3_close_v2);
MGBENCH_SAME_FUNCTION(extended_result_codes, sqlite3_extended_result_codes);
MGBENCH_SAME_FUNCTION(busy_timeout, sqlite3_busy_timeout);
MGBENCH_SAME_FUNCTION(db_config, sqlite3_db_config);
MGBENCH_SAME_FUNCTION(errcode, sqlite3_errcode);
MGBENCH_SAME_FUNCTION(errmsg, sqlite3_errmsg);
MGBENCH_SAME_FUNCTION(errstr, sqlite3_errstr);
MGBENCH_SAME_FUNCTION(exec, sqlite3_exec);
MGBENCH_SAME_FUNCTION(free, sqlite3_free);
MGBENCH_SAME_FUNCTION(prepare_v2, sqlite3_prepare_v2);
MGBENCH_SAME_FUNCTION(finalize, sqlite3_finalize);
MGBENCH_SAME_FUNCTION(last_insert_rowid, sqlite3_last_insert_rowid);
MGBENCH_SAME_FUNCTION(changes, sqlite3_changes);
MGBENCH_SAME_FUNCTION(backup_init, sqlite3_backup_init);
MGBENCH_SAME_FUNCTION(backup_step, sqlite3_backup_step);
MGBENCH_SAME_FUNCTION(backup_finish, sqlite3_backup_finish);
MGBENCH_SAME_FUNCTION(bind_int64, sqlite3_bind_int64);
MGBENCH_SAME_FUNCTION(bind_double, sqlite3_bind_double);
MGBENCH_SAME_FUNCTION(bind_text64, sqlite3_bind_text64);
MGBENCH_SAME_FUNCTION(bind_null, sqlite3_bind_null);
MGBENCH_SAME_FUNCTION(step, sqlite3_step);
MGBENCH_SAME_FUNCTION(reset, sqlite3_reset);
MGBENCH_SAME_FUNCTION(sql, sqlite3_sql);
MGBENCH_SAME_FUNCTION(column_type, sqlite3_column_type);
MGBENCH_SAME_FUNCTION(column_int64, sqlite3_column_int64);
MGBENCH_SAME_FUNCTION(column_double, sqlite3_column_double);
MGBENCH_SAME_FUNCTION(column_text, sqlite3_column_text);
MGBENCH_SAME_FUNCTION(column_bytes, sqlite3_column_bytes);

static_assert(api::kOk == SQLITE_OK && api::kPerm == SQLITE_PERM && api::kBusy == SQLITE_BUSY &&
              api::kLocked == SQLITE_LOCKED && api::kReadonly == SQLITE_READONLY &&
              api::kCorrupt == SQLITE_CORRUPT && api::kFull == SQLITE_FULL &&
              api::kCantopen == SQLITE_CANTOPEN && api::kNotadb == SQLITE_NOTADB &&
              api::kRow == SQLITE_ROW && api::kDone == SQLITE_DONE);
static_assert(api::kOpenReadonly == SQLITE_OPEN_READONLY &&
              api::kOpenReadwrite == SQLITE_OPEN_READWRITE &&
              api::kOpenCreate == SQLITE_OPEN_CREATE && api::kOpenUri == SQLITE_OPEN_URI &&
              api::kOpenNomutex == SQLITE_OPEN_NOMUTEX);
static_assert(api::kNull == SQLITE_NULL && api::kUtf8 == SQLITE_UTF8 &&
              api::kDbconfigDefensive == SQLITE_DBCONFIG_DEFENSIVE &&
              api::kDbconfigTrustedSchema == SQLITE_DBCONFIG_TRUSTED_SCHEMA);
static_assert(std::is_same_v<api::Int64, sqlite3_int64> &&
              std::is_same_v<api::Uint64, sqlite3_uint64> &&
              std::is_same_v<api::Destructor, sqlite3_destructor_type>);

TEST_CASE("sqlite api: SQLITE_TRANSIENT is the value sqlite3.h defines", "[history]") {
  CHECK(api::transient() == SQLITE_TRANSIENT);
  CHECK(api::transient() != SQLITE_STATIC);
}
#endif

TEST_CASE("sqlite api: the runtime library loads and is 3.31.0 or newer", "[history]") {
  INFO(mgbench::sqlite::library_error());
  REQUIRE(mgbench::sqlite::library_error().empty());
  const api::Api& lib = api::get();
  CHECK(lib.libversion_number() >= api::kMinVersionNumber);
  CHECK(std::string(lib.libversion()).rfind("3.", 0) == 0);
  CHECK(std::string(lib.errstr(api::kReadonly)) == "attempt to write a readonly database");
}
