#pragma once
// Log lines to stderr. spdlog sits behind this header, compiled in core/src/logging.cpp alone:
// header-only spdlog cost every file that logged several seconds of compile time. Verbosity:
// -1 quiet, 0 normal, 1 verbose.
#include <string>
#include <utility>

#include <fmt/format.h>

namespace mgbench {
void init_logging();
void set_log_verbosity(int verbosity);

namespace logging {

enum class Level { debug, info, warn, error };
bool enabled(Level level);
void line(Level level, const std::string& text);

// logging::warn("{} of {}", a, b): the format is checked at compile time, as spdlog's.
template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) line(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::debug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::info, format, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::warn, format, std::forward<Args>(args)...);
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::error, format, std::forward<Args>(args)...);
}

}  // namespace logging
}  // namespace mgbench
