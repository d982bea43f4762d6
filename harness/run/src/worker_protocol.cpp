// The worker protocol's line parser, the sweep journal (durable appends, replay) and the lock
// that keeps two sweeps out of one output directory.
#include "mgbench/run/worker_protocol.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_number.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/core/test_hooks.hpp"

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

namespace {

// Writes all of `data`; returns 0 or the errno of the failing write.
int write_fully(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Makes a new directory entry durable. Returns 0 or the errno (EINVAL: not supported, ignored).
int fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

long long journal_fail_after() {
  const auto hook = test_hooks::read(test_hooks::kJournalFailAfter);
  return hook ? parse_positive_int(*hook, test_hooks::kJournalFailAfter) : -1;
}

}  // namespace

Journal::Journal(const std::string& path, const Json& header, JournalMode mode)
    : path_(path), fail_after_(journal_fail_after()) {
  int flags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW;
  if (mode == JournalMode::create) flags |= O_EXCL;
  if (mode == JournalMode::replace) flags |= O_TRUNC;
  fd_ = ::open(path.c_str(), flags, 0664);  // less the umask; never world-writable
  if (fd_ < 0 && errno == EEXIST) {
    throw UsageError(fmt::format("journal '{}' already exists", path));
  }
  if (fd_ < 0) {
    throw EnvironmentError(fmt::format("cannot open journal '{}': {}", path, std::strerror(errno)));
  }
  if (mode == JournalMode::resume) {
    start_on_fresh_line();
  } else {
    write_header(header);
  }
}

void Journal::write_header(const Json& header) {
  const std::string line = make_worker_line(Json{{"type", "header"}, {"run", header}});
  int err = write_fully(fd_, line);
  if (err == 0 && ::fsync(fd_) != 0) err = errno;
  if (err == 0) err = fsync_directory(parent_of(path_));
  if (err != 0) {
    struct stat st {};
    const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd_);
    fd_ = -1;
    if (regular) ::unlink(path_.c_str());  // a journal without its header cannot be resumed
    throw EnvironmentError(
        fmt::format("cannot write journal '{}': {}", path_, std::strerror(err)));
  }
}

void Journal::start_on_fresh_line() {
  // A crash may have cut the last line: start on a fresh line so the next record parses.
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  char last = '\n';
  if (size > 0 && ::pread(fd_, &last, 1, size - 1) == 1 && last != '\n') {
    const int err = write_fully(fd_, "\n");
    if (err != 0) {
      throw EnvironmentError(
          fmt::format("cannot write journal '{}': {}", path_, std::strerror(err)));
    }
  }
}

Journal::~Journal() { close(); }

bool Journal::append(const PointResult& point) {
  if (fd_ < 0 || !error_.empty()) return false;
  const std::string line = make_worker_line(Json{{"type", "point"}, {"result", point}});
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  const bool injected = fail_after_ >= 0 && appended_ >= static_cast<std::size_t>(fail_after_);
  int err = injected ? ENOSPC : write_fully(fd_, line);
  if (err == 0 && ::fdatasync(fd_) != 0) err = errno;
  if (err != 0) {
    if (before >= 0) (void)!::ftruncate(fd_, before);  // whole lines only
    error_ = fmt::format("cannot append to journal '{}': {}", path_, std::strerror(err));
    return false;
  }
  ++appended_;
  return true;
}

bool Journal::close() {
  if (fd_ < 0) return error_.empty();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && error_.empty()) {
    error_ = fmt::format("cannot close journal '{}': {}", path_, std::strerror(errno));
  }
  return error_.empty();
}

DirectoryLock::DirectoryLock(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw EnvironmentError(
        fmt::format("cannot create the output directory '{}': {}", dir, ec.message()));
  }
  const std::string path = dir + "/sweep.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0664);
  if (fd_ < 0) {
    throw EnvironmentError(fmt::format("cannot lock the output directory '{}': {}", dir,
                                       std::strerror(errno)));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw UsageError(fmt::format("output directory '{}' is in use by another sweep", dir));
    }
    throw EnvironmentError(
        fmt::format("cannot lock the output directory '{}': {}", dir, std::strerror(err)));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

namespace {

// Reads the next line of `in` into `line`, at most `max_line` bytes of it; false at the end of
// the file. A longer line is consumed and reported through `too_long`, its bytes not kept.
bool read_bounded_line(std::istream& in, std::string& line, std::size_t max_line, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    any = true;
    if (c == '\n') return true;
    if (too_long) continue;
    if (line.size() >= max_line) {
      too_long = true;
      line.clear();
      line.shrink_to_fit();
      continue;
    }
    line += static_cast<char>(c);
  }
  return any;
}

// read_bounded_line reads the file buffer itself, whose read errors are exceptions.
bool read_journal_line(std::istream& in, const std::string& path, std::string& line,
                       std::size_t max_line, bool& too_long) {
  try {
    return read_bounded_line(in, line, max_line, too_long);
  } catch (const std::ios_base::failure& e) {
    throw EnvironmentError(fmt::format("cannot read journal '{}': {}", path, e.what()));
  }
}

}  // namespace

JournalReplay replay_journal(const std::string& path, std::size_t max_line) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UsageError(fmt::format("cannot read journal '{}': it is a directory", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read journal '{}'", path));
  JournalReplay replay;
  std::map<std::size_t, PointResult> points;
  std::string line;
  bool too_long = false;
  while (read_journal_line(in, path, line, max_line, too_long)) {
    if (too_long) {
      ++replay.bad_lines;
      continue;
    }
    if (line.empty()) continue;
    try {
      const Json j = parse_json_bounded(line, "journal line", limits::kLine);
      const std::string type = j.at("type").get<std::string>();
      if (type == "header") {
        replay.header = j.at("run");
      } else if (type == "point") {
        PointResult p = j.at("result").get<PointResult>();
        points[p.index] = std::move(p);
      } else {
        ++replay.bad_lines;
      }
    } catch (const std::exception&) {
      ++replay.bad_lines;  // a line cut by a crash, or garbage
    }
  }
  for (auto& [index, p] : points) replay.points.push_back(std::move(p));
  return replay;
}

}  // namespace mgbench
