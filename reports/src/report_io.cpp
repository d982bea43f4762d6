// File output for the report writers: parent directories created, written to a temporary
// file and renamed, so a reader never sees half a report.
#include "report_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "mgbench/error.hpp"

namespace mgbench::reports::detail {

void write_text_file(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      throw UsageError("cannot create directory " + target.parent_path().string() + ": " +
                       ec.message());
    }
  }
  if (fs::is_directory(target, ec)) throw UsageError("cannot write " + path + ": is a directory");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      fs::remove(tmp, ec);
      throw UsageError("cannot write " + path + ": " + why);
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignore;
    fs::remove(tmp, ignore);
    throw UsageError("cannot write " + path + ": " + ec.message());
  }
}

}  // namespace mgbench::reports::detail
