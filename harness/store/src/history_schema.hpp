#pragma once
// The history database's schema, its migrations and the checks every opened file passes
// (internal to the store).
#include <cstdint>
#include <string>

#include "mgbench/core/params.hpp"
#include "mgbench/store/sqlite_db.hpp"

namespace mgbench::history_schema {

// The schema version of `db`: 0 for an empty file. UsageError naming the file for an SQLite
// file that is not a history, an empty or out-of-range version (negative, or newer than this
// mgbench), and for a database holding triggers or views (mgbench creates none: a file that
// has them was crafted).
int read_version(sqlite::Database& db);

// Brings `db` to the current version, one transaction per step.
void migrate(sqlite::Database& db);

// JSON text stored in the file, parsed within the bounds of a results file: text over them (a
// crafted file nesting 100k levels) or not JSON reads as `discarded`, never as a deep recursion.
Json parse_stored(const std::string& text);
// A point's stored parameters; empty when the text is not JSON or not an object of scalars
// (written by hand or by another tool), never an error.
Params parse_stored_params(const std::string& text);

// "0.1.0 (abc123)" from a results document's "tool" object.
std::string tool_version_of(const Json& tool);

// The numeric, finite metrics of one point.
void insert_metrics(sqlite::Database& db, std::int64_t run_id, int idx, const Json& metrics);

}  // namespace mgbench::history_schema
