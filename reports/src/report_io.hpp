#pragma once
// Private helpers of the report writers.
#include <string>

namespace mgbench::reports::detail {

// Writes `content` to `path` (creating parent directories); UsageError naming the path
// and the reason when it fails.
void write_text_file(const std::string& path, const std::string& content);

}  // namespace mgbench::reports::detail
