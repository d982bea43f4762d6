#pragma once
// The one way mgbench writes a file: atomically and durably.
#include <string>

namespace mgbench {

// Writes `content` to `path`: parent directories are created, the bytes go to a temporary file
// made by mkstemp in the same directory (unpredictable name, never an existing file or link),
// which is fsync'd, renamed over `path` (a symbolic link there is replaced, not followed), and
// the directory fsync'd. The file gets 0666 less the umask, and is never world-writable. A
// reader never sees half a file. Throws EnvironmentError naming the path and the reason (a
// directory where the file should be, no space, no permission).
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace mgbench
