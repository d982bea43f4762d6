// The worker protocol's messages (reading and writing their lines) and the line buffer that
// cuts a worker's result pipe into lines.
#include "mgbench/run/worker_protocol.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_number.hpp"
#include "mgbench/core/json_text.hpp"

namespace mgbench {

namespace {

// A string field of at most `max` bytes; `optional`: absent gives "".
std::string bounded_string(const Json& j, const char* key, std::size_t max, bool optional) {
  if (optional && !j.contains(key)) return "";
  const Json& v = j.at(key);
  if (!v.is_string()) throw UsageError(fmt::format("'{}' is not a string", key));
  std::string s = v.get<std::string>();
  if (s.size() > max) throw UsageError(fmt::format("'{}' is longer than {} bytes", key, max));
  return s;
}

WorkerStall parse_stall(const Json& j) {
  WorkerStall stall;
  stall.step = bounded_string(j, "step", kMaxStepChars, false);
  const Json& waited = j.at("waited_s");
  if (!waited.is_number() || !(waited.get<double>() >= 0) || waited.get<double>() > 1e9) {
    throw UsageError("'waited_s' is not a number of seconds");
  }
  stall.waited_s = waited.get<double>();
  const Json& missing = j.at("missing");
  if (!missing.is_array() || missing.size() > kMaxStallRanks) {
    throw UsageError(fmt::format("'missing' is not an array of at most {} ranks", kMaxStallRanks));
  }
  for (const Json& r : missing) {
    if (!r.is_object()) throw UsageError("a missing rank is not an object");
    StalledRank rank;
    rank.rank = json_integer<int>(r.at("rank"), "rank");
    if (rank.rank < 0 || rank.rank >= kMaxRank) throw UsageError("'rank' is out of range");
    rank.host = bounded_string(r, "host", kMaxHostChars, false);
    stall.missing.push_back(std::move(rank));
  }
  return stall;
}

std::vector<LaunchNote> parse_notes(const Json& j) {
  const Json& notes = j.at("notes");
  if (!notes.is_array() || notes.size() > kMaxNotes) {
    throw UsageError(fmt::format("'notes' is not an array of at most {} notes", kMaxNotes));
  }
  std::vector<LaunchNote> out;
  for (const Json& n : notes) {
    if (!n.is_object()) throw UsageError("a note is not an object");
    out.push_back({bounded_string(n, "kind", 64, false),
                   bounded_string(n, "text", kMaxNoteChars, false)});
  }
  return out;
}

}  // namespace

Json stall_message(const WorkerStall& stall) {
  Json missing = Json::array();
  for (std::size_t i = 0; i < stall.missing.size() && i < kMaxStallRanks; ++i) {
    missing.push_back(Json{{"rank", stall.missing[i].rank},
                           {"host", stall.missing[i].host.substr(0, kMaxHostChars)}});
  }
  return Json{{"type", "stalled"},
              {"step", stall.step.substr(0, kMaxStepChars)},
              {"waited_s", std::max(0.0, stall.waited_s)},
              {"missing", std::move(missing)}};
}

std::optional<WorkerMessage> parse_worker_line(const std::string& line, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<WorkerMessage> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (line.size() > limits::kMaxLineBytes) return fail("line too long");
  if (!json_limit_violation(line, limits::kLine).empty()) return fail("nested too deeply");
  Json j;
  try {
    j = Json::parse(line);
  } catch (const std::exception&) {
    return fail("not JSON");
  }
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return fail("no message type");
  }
  WorkerMessage m;
  m.body = j;
  const std::string type = j["type"].get<std::string>();
  try {
    if (type == "hello") {
      m.kind = WorkerMessageKind::hello;
      m.text = bounded_string(j, "host", kMaxHostChars, true);
    } else if (type == "started") {
      m.kind = WorkerMessageKind::started;
      m.index = json_integer<std::size_t>(j.at("index"), "index");
    } else if (type == "point") {
      m.kind = WorkerMessageKind::point;
      m.point = j.at("result").get<PointResult>();
      m.index = m.point.index;
    } else if (type == "probe") {
      m.kind = WorkerMessageKind::probe;
    } else if (type == "fatal") {
      m.kind = WorkerMessageKind::fatal;
      m.text = j.value("message", "unknown error");
      m.launch = j.value("launch", false);
    } else if (type == "done") {
      m.kind = WorkerMessageKind::done;
    } else if (type == "stalled") {
      m.kind = WorkerMessageKind::stalled;
      m.stall = parse_stall(j);
    } else if (type == "notes") {
      m.kind = WorkerMessageKind::notes;
      m.notes = parse_notes(j);
    } else {
      return fail("unknown message type '" + type + "'");
    }
  } catch (const std::exception& e) {
    return fail(std::string("malformed '") + type + "' message: " + e.what());
  }
  return m;
}

std::string make_worker_line(const Json& message) {
  return dump_json(message) + "\n";
}

void LineBuffer::append(const char* data, std::size_t size) {
  if (discarding_) {
    const void* nl = std::memchr(data, '\n', size);
    if (!nl) return;
    const std::size_t skip = static_cast<std::size_t>(static_cast<const char*>(nl) - data) + 1;
    discarding_ = false;
    data += skip;
    size -= skip;
  }
  buffer_.append(data, size);
}

std::vector<std::string> LineBuffer::take_lines() {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl = buffer_.find('\n', scanned_); nl != std::string::npos;
       nl = buffer_.find('\n', start)) {
    if (nl - start > max_line_) {
      ++dropped_;
    } else if (nl > start) {
      lines.push_back(buffer_.substr(start, nl - start));
    }
    start = nl + 1;
  }
  buffer_.erase(0, start);
  scanned_ = buffer_.size();
  if (buffer_.size() > max_line_) {  // no newline in sight: drop it up to the next one
    buffer_.clear();
    scanned_ = 0;
    discarding_ = true;
    ++dropped_;
  }
  return lines;
}

}  // namespace mgbench
