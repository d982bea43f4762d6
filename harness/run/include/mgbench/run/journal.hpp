#pragma once
// The sweep's journal (DIR/journal.jsonl), written in the worker protocol's line format as the
// points finish, and its replay, which `sweep --resume` reads.
#include <cstddef>
#include <string>
#include <vector>

#include "mgbench/model/limits.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

// How a sweep opens its journal: a fresh one (an existing journal is refused), the journal of
// the sweep being resumed (appended to), or over an old one (--force: truncated).
enum class JournalMode { create, resume, replace };

// Crash-safe journal: a header line, then one line per finished point, each written whole and
// fdatasync'd. Creating it also fsyncs the directory, so the file survives a power cut.
class Journal {
 public:
  Journal() = default;
  // Throws UsageError when `create` finds a journal, EnvironmentError when it cannot be
  // opened or its header cannot be written (a half-written new journal is removed).
  Journal(const std::string& path, const Json& header, JournalMode mode);
  Journal(const std::string& path, const Json& header, bool append_existing)
      : Journal(path, header, append_existing ? JournalMode::resume : JournalMode::replace) {}
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  // Appends one point. On a write error (ENOSPC, EIO...) the partial line is cut off, the error
  // is kept and false returned; nothing more is written after it, so the file holds only whole
  // lines. Never throws.
  bool append(const PointResult& point);
  // Closes the file; false (and error()) when the close reports a failure.
  bool close();
  const std::string& error() const { return error_; }  // empty while every write succeeded
  const std::string& path() const { return path_; }

 private:
  void write_header(const Json& header);
  void start_on_fresh_line();
  std::string path_;
  int fd_ = -1;
  std::string error_;
  std::size_t appended_ = 0;
  long long fail_after_ = -1;  // test hook: simulated ENOSPC after this many appends
};

struct JournalReplay {
  Json header;                      // null when the file had none
  std::vector<PointResult> points;  // the last record of each point index wins
  std::size_t bad_lines = 0;        // truncated, garbage or over-long lines, skipped
};
// Throws UsageError when the file cannot be read. Lines longer than `max_line` bytes are
// skipped (counted as bad) without being held in memory.
JournalReplay replay_journal(const std::string& path,
                             std::size_t max_line = limits::kMaxLineBytes);

}  // namespace mgbench
