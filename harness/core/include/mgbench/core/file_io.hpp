#pragma once
// The one way mgbench writes an output file: atomically and durably where the target is a file,
// in place where it is a device or a pipe, never through a link to a file.
#include <functional>
#include <iosfwd>
#include <string>

namespace mgbench {

// Writes to `path`, by what is there (parent directories are created first):
// - "-": standard output.
// - nothing, or a regular file: the bytes go to a temporary file made by mkstemp in the same
//   directory (unpredictable name, never an existing file or link), which is fsync'd, renamed
//   over `path`, and the directory fsync'd. The file gets 0666 less the umask, and is never
//   world-writable. A reader never sees half a file.
// - a character device or a FIFO (/dev/null, a terminal, a named pipe), itself or named by a
//   symbolic link (/dev/stdout, /dev/fd/N): written in place, opened as a shell redirection
//   opens it (a FIFO waits for its reader); it is never replaced or truncated.
// - a symbolic link to a regular file, or to nothing: refused. A file is only ever replaced at
//   its own path, so a link planted where the output goes cannot redirect the write.
// - a directory, a socket or a block device: refused.
// Throws EnvironmentError naming the path and the reason. The temporary file is removed on every
// failure and when SIGINT, SIGTERM or SIGHUP ends the process during the write (a handler the
// process installed for them runs instead, and the write goes on).
void write_file_atomic(const std::string& path, const std::string& content);
// The same, streamed: `fill` writes the content to the stream it is given, so the whole file is
// never held in memory. An exception from `fill` removes the temporary file and propagates.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill);

// Writes all of `data` to the descriptor `fd`, again after EINTR and after a partial write.
// Returns 0, or the errno of the write that failed (EIO when one wrote nothing). The one write
// loop of the program: pipes, the journal, a hostfile, held stderr.
int write_fully(int fd, const std::string& data);

// True for the path that means standard output ("-").
bool is_stdout_path(const std::string& path);

}  // namespace mgbench
