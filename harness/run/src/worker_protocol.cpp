#include "mgbench/run/worker_protocol.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

std::optional<WorkerMessage> parse_worker_line(const std::string& line, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<WorkerMessage> {
    if (error) *error = why;
    return std::nullopt;
  };
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
    } else if (type == "started") {
      m.kind = WorkerMessageKind::started;
      m.index = j.at("index").get<std::size_t>();
    } else if (type == "point") {
      m.kind = WorkerMessageKind::point;
      m.point = j.at("result").get<PointResult>();
      m.index = m.point.index;
    } else if (type == "probe") {
      m.kind = WorkerMessageKind::probe;
    } else if (type == "fatal") {
      m.kind = WorkerMessageKind::fatal;
      m.text = j.value("message", "unknown error");
    } else if (type == "done") {
      m.kind = WorkerMessageKind::done;
    } else {
      return fail("unknown message type '" + type + "'");
    }
  } catch (const std::exception& e) {
    return fail(std::string("malformed '") + type + "' message: " + e.what());
  }
  return m;
}

std::string make_worker_line(const Json& message) {
  return message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void LineBuffer::append(const char* data, std::size_t size) { buffer_.append(data, size); }

std::vector<std::string> LineBuffer::take_lines() {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = buffer_.find('\n', start);
    if (nl == std::string::npos) break;
    if (nl > start) lines.push_back(buffer_.substr(start, nl - start));
    start = nl + 1;
  }
  buffer_.erase(0, start);
  return lines;
}

Journal::Journal(const std::string& path, const Json& header, bool append_existing)
    : path_(path) {
  const int flags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | (append_existing ? 0 : O_TRUNC);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) {
    throw EnvironmentError(fmt::format("cannot open journal '{}': {}", path, std::strerror(errno)));
  }
  if (append_existing) {
    // A crash may have cut the last line: start on a fresh line so the next record parses.
    const off_t size = ::lseek(fd_, 0, SEEK_END);
    char last = '\n';
    if (size > 0 && ::pread(fd_, &last, 1, size - 1) == 1 && last != '\n') {
      if (::write(fd_, "\n", 1) < 0) {
        throw EnvironmentError(fmt::format("cannot write journal '{}'", path));
      }
    }
  } else {
    const std::string line = make_worker_line(Json{{"type", "header"}, {"run", header}});
    if (::write(fd_, line.data(), line.size()) < 0) {
      throw EnvironmentError(fmt::format("cannot write journal '{}'", path));
    }
    ::fsync(fd_);
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const PointResult& point) {
  if (fd_ < 0) return;
  const std::string line = make_worker_line(Json{{"type", "point"}, {"result", point}});
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw EnvironmentError(fmt::format("cannot append to journal '{}': {}", path_,
                                         std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fdatasync(fd_);
}

JournalReplay replay_journal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read journal '{}'", path));
  JournalReplay replay;
  std::map<std::size_t, PointResult> points;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      const Json j = Json::parse(line);
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
