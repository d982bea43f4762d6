#pragma once
// Reading JSON that came from another machine within fixed bounds, and writing JSON that always
// succeeds. nlohmann's parser recurses once per nesting level, so the depth is checked by a
// linear pre-scan before the parser sees the text.
#include <cstddef>
#include <string>
#include <string_view>

#include "mgbench/core/params.hpp"

namespace mgbench {

struct JsonLimits {
  std::size_t max_bytes = std::size_t{64} << 20;   // whole document
  std::size_t max_depth = 64;                      // nested arrays and objects
  std::size_t max_string = std::size_t{1} << 20;   // one string (or key), in bytes
};

// The first limit `text` exceeds, as one line ("nesting deeper than 64 levels"); empty when
// none. Linear, no recursion.
std::string json_limit_violation(std::string_view text, const JsonLimits& limits);

// Parses `text`; throws UsageError "<what>: ..." when a limit is exceeded or it is not JSON.
Json parse_json_bounded(std::string_view text, const std::string& what,
                        const JsonLimits& limits = {});

// Reads and parses a whole file within `limits` (its size is checked before it is read);
// throws UsageError naming the file.
Json read_json_file(const std::string& path, const std::string& what,
                    const JsonLimits& limits = {});

// Serialises without ever throwing: invalid UTF-8 (a non-UTF-8 path or host name) becomes
// U+FFFD instead of aborting the write.
std::string dump_json(const Json& value, int indent = -1);

}  // namespace mgbench
