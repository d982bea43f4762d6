// Loading libsqlite3.so.0 at run time and resolving the functions of sqlite_api.hpp.
#include "sqlite_api.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/store/sqlite_db.hpp"

namespace mgbench::sqlite {
namespace api {
namespace {

constexpr const char* kSoname = "libsqlite3.so.0";
constexpr const char* kInstallHint =
    "install the SQLite runtime library: apt-get install libsqlite3-0 | dnf install sqlite-libs";

// The file to load: MGBENCH_SQLITE_LIBRARY when it is an absolute path (a relative one could pick
// up a library from the current directory, so it is ignored with a warning), else the soname.
std::string library_name() {
  if (const char* path = std::getenv("MGBENCH_SQLITE_LIBRARY"); path && *path) {
    if (path[0] == '/') return path;
    std::string shown(path);
    for (char& c : shown) c = std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    logging::warn("MGBENCH_SQLITE_LIBRARY='{}' ignored: it must be an absolute path", shown);
  }
  return kSoname;
}

struct Symbol {
  const char* name;
  std::function<void(void*)> set;  // stores the address in its Api member (nullptr: clears it)
};

template <typename Fn>
Symbol symbol(const char* name, Fn& fn) {
  return Symbol{name, [&fn](void* address) { fn = reinterpret_cast<Fn>(address); }};
}

std::vector<Symbol> symbols(Api& a) {
  return {symbol("sqlite3_libversion_number", a.libversion_number),
          symbol("sqlite3_libversion", a.libversion),
          symbol("sqlite3_open_v2", a.open_v2),
          symbol("sqlite3_close", a.close),
          symbol("sqlite3_close_v2", a.close_v2),
          symbol("sqlite3_extended_result_codes", a.extended_result_codes),
          symbol("sqlite3_busy_timeout", a.busy_timeout),
          symbol("sqlite3_db_config", a.db_config),
          symbol("sqlite3_errcode", a.errcode),
          symbol("sqlite3_errmsg", a.errmsg),
          symbol("sqlite3_errstr", a.errstr),
          symbol("sqlite3_exec", a.exec),
          symbol("sqlite3_free", a.free),
          symbol("sqlite3_prepare_v2", a.prepare_v2),
          symbol("sqlite3_finalize", a.finalize),
          symbol("sqlite3_last_insert_rowid", a.last_insert_rowid),
          symbol("sqlite3_changes", a.changes),
          symbol("sqlite3_backup_init", a.backup_init),
          symbol("sqlite3_backup_step", a.backup_step),
          symbol("sqlite3_backup_finish", a.backup_finish),
          symbol("sqlite3_bind_int64", a.bind_int64),
          symbol("sqlite3_bind_double", a.bind_double),
          symbol("sqlite3_bind_text64", a.bind_text64),
          symbol("sqlite3_bind_null", a.bind_null),
          symbol("sqlite3_step", a.step),
          symbol("sqlite3_reset", a.reset),
          symbol("sqlite3_sql", a.sql),
          symbol("sqlite3_column_type", a.column_type),
          symbol("sqlite3_column_int64", a.column_int64),
          symbol("sqlite3_column_double", a.column_double),
          symbol("sqlite3_column_text", a.column_text),
          symbol("sqlite3_column_bytes", a.column_bytes)};
}

// Loads `name` into `a`; "" on success, else the reason (one line).
std::string load(const std::string& name, Api& a) {
  void* library = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = ::dlerror();  // names the file: "NAME: cannot open shared object file..."
    return fmt::format("{}: {}", why ? std::string(why) : "cannot load " + name, kInstallHint);
  }
  for (const Symbol& s : symbols(a)) {
    void* address = ::dlsym(library, s.name);
    s.set(address);
    if (!address) {
      ::dlclose(library);
      a = Api{};
      return fmt::format("{} has no function {} (not the SQLite library?)", name, s.name);
    }
  }
  const int version = a.libversion_number();
  if (version < kMinVersionNumber) {
    const std::string text = a.libversion();
    ::dlclose(library);
    a = Api{};
    return fmt::format("{} is SQLite {}; mgbench needs 3.31.0 or newer: {}", name, text,
                       kInstallHint);
  }
  logging::debug("sqlite: loaded {} (SQLite {})", name, a.libversion());
  return "";  // never unloaded: statements and connections may live until exit
}

struct Loaded {
  std::once_flag once;
  Api api;
  std::string error;
};

Loaded& loaded() {
  static Loaded* global = new Loaded();  // never destroyed: no unload at exit
  std::call_once(global->once, [] { global->error = load(library_name(), global->api); });
  return *global;
}

}  // namespace

const Api& get() {
  Loaded& l = loaded();
  if (!l.error.empty()) throw EnvironmentError("history store unavailable: " + l.error);
  return l.api;
}

}  // namespace api

std::string library_error() { return api::loaded().error; }

}  // namespace mgbench::sqlite
