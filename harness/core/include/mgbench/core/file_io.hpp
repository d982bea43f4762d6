#pragma once
// The one way mgbench writes a file: atomically and durably.
#include <string>

namespace mgbench {

// Writes `content` to `path`: parent directories are created, the bytes go to a temporary file
// in the same directory, which is fsync'd, renamed over `path`, and the directory fsync'd. A
// reader never sees half a file. Throws EnvironmentError naming the path and the reason (a
// directory where the file should be, no space, no permission).
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace mgbench
