#include "mgbench/core/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace mgbench {

void init_logging() {
  auto logger = spdlog::stderr_color_mt("mgbench");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_level(spdlog::level::info);
}

void set_log_verbosity(int verbosity) {
  if (verbosity < 0) {
    spdlog::set_level(spdlog::level::err);
  } else if (verbosity > 0) {
    spdlog::set_level(spdlog::level::debug);
  } else {
    spdlog::set_level(spdlog::level::info);
  }
}

}  // namespace mgbench
