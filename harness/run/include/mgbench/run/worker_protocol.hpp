#pragma once
// The JSON-lines protocol between the orchestrator and its worker processes.
// A worker writes one JSON object per line on its result pipe:
//   {"type":"hello","pid":..}            once, at start
//   {"type":"started","index":N}         before point N runs
//   {"type":"point","result":{...}}      point N finished (any status)
//   {"type":"probe","inventory":{...},"environment":{...},"doctor":...}   probe mode
//   {"type":"fatal","message":"..."}     the worker cannot go on (it exits non-zero)
//   {"type":"done"}                      all points reported
// Anything else (garbage, truncated lines) is ignored with a warning: never a crash.
#include <optional>
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"

namespace mgbench {

enum class WorkerMessageKind { hello, started, point, probe, fatal, done };

struct WorkerMessage {
  WorkerMessageKind kind = WorkerMessageKind::hello;
  std::size_t index = 0;  // started
  PointResult point;      // point
  Json body;              // the whole object
  std::string text;       // fatal message
};

// Returns nullopt (and sets `error`) for anything that is not a valid message.
std::optional<WorkerMessage> parse_worker_line(const std::string& line, std::string* error = nullptr);
std::string make_worker_line(const Json& message);  // one line, '\n'-terminated

// Splits a byte stream into complete lines; the incomplete tail stays buffered.
class LineBuffer {
 public:
  void append(const char* data, std::size_t size);
  std::vector<std::string> take_lines();
  const std::string& pending() const { return buffer_; }

 private:
  std::string buffer_;
};

// Crash-safe journal: a header line, then one line per finished point, fsync'd.
class Journal {
 public:
  Journal() = default;
  Journal(const std::string& path, const Json& header, bool append_existing);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const PointResult& point);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

struct JournalReplay {
  Json header;                      // null when the file had none
  std::vector<PointResult> points;  // the last record of each point index wins
  std::size_t bad_lines = 0;        // truncated or garbage lines, skipped
};
// Throws UsageError when the file cannot be read.
JournalReplay replay_journal(const std::string& path);

}  // namespace mgbench
