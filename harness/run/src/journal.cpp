// The sweep journal: durable appends while the sweep runs, and its replay for --resume.
#include "mgbench/run/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

namespace {

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
