#pragma once
// The JSON-lines protocol between the orchestrator and its worker processes.
// A worker writes one JSON object per line on its result pipe:
//   {"type":"hello","pid":..}            once, at start; a launched rank 0 adds "rank":0 and
//                                        "host" (its node)
//   {"type":"started","index":N}         before point N runs
//   {"type":"point","result":{...}}      point N finished (any status)
//   {"type":"probe","inventory":{...},"environment":{...},"doctor":...}   probe mode
//   {"type":"fatal","message":"..."}     the worker cannot go on (it exits non-zero); a launched
//                                        rank adds "launch":true when no group can run on
//                                        this launch (its ranks cannot be placed)
//   {"type":"notes","notes":[{"kind":"..","text":".."}]}   a launched rank 0, at start: what
//                                        looks wrong in where its ranks run
//   {"type":"done"}                      all points reported
//   {"type":"stalled","step":"..","waited_s":S,"missing":[{"rank":R,"host":".."}]}
//        a launched rank 0 has waited S s at a collective for the ranks listed; an empty list
//        says they have all arrived since (one process per GPU only)
// Anything else (garbage, truncated lines) is ignored with a warning: never a crash.
#include <optional>
#include <string>
#include <vector>

#include "mgbench/model/limits.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/rank_placement.hpp"

namespace mgbench {

enum class WorkerMessageKind { hello, started, point, probe, fatal, done, stalled, notes };

// A rank that has not reached a collective: its number and its node.
struct StalledRank {
  int rank = 0;
  std::string host;
};
// Rank 0 of a launch waiting at a collective: where, for how long, and for whom (empty: every
// rank has arrived since the last report).
struct WorkerStall {
  std::string step;
  double waited_s = 0;
  std::vector<StalledRank> missing;
};
// Bounds of a `stalled` message and of a hello's host (the parser refuses more).
inline constexpr std::size_t kMaxStallRanks = 4096;
inline constexpr std::size_t kMaxStepChars = 512;
inline constexpr std::size_t kMaxHostChars = 255;
inline constexpr int kMaxRank = 1 << 20;
inline constexpr std::size_t kMaxNotes = 16;
inline constexpr std::size_t kMaxNoteChars = 2048;

struct WorkerMessage {
  WorkerMessageKind kind = WorkerMessageKind::hello;
  std::size_t index = 0;  // started
  PointResult point;      // point
  Json body;              // the whole object
  std::string text;       // fatal message; hello: the host of a launched rank 0 ("" if none)
  WorkerStall stall;      // stalled
  bool launch = false;    // fatal: the launch cannot run any group
  std::vector<LaunchNote> notes;  // notes
};

// The `stalled` message (every field within the bounds above; the step and hosts are cut to
// them).
Json stall_message(const WorkerStall& stall);

// Returns nullopt (and sets `error`) for anything that is not a valid message.
std::optional<WorkerMessage> parse_worker_line(const std::string& line,
                                               std::string* error = nullptr);
std::string make_worker_line(const Json& message);  // one line, '\n'-terminated

// Splits a byte stream into complete lines; the incomplete tail stays buffered. Each byte is
// searched for a newline once (the scan offset is kept between reads), and a line longer than
// `max_line` bytes is dropped whole and counted, never buffered without bound.
class LineBuffer {
 public:
  explicit LineBuffer(std::size_t max_line = limits::kMaxLineBytes) : max_line_(max_line) {}
  void append(const char* data, std::size_t size);
  std::vector<std::string> take_lines();
  const std::string& pending() const { return buffer_; }
  std::size_t dropped_lines() const { return dropped_; }

 private:
  std::string buffer_;
  std::size_t scanned_ = 0;  // bytes of buffer_ known to hold no newline
  std::size_t max_line_;
  bool discarding_ = false;  // inside an over-long line: bytes are dropped up to its newline
  std::size_t dropped_ = 0;
};

}  // namespace mgbench
