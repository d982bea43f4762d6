#include "mgbench/core/logging.hpp"

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "mgbench/core/text.hpp"

namespace mgbench {
namespace {

// Every log message passes the core sanitiser before it reaches the terminal: messages carry
// text from workers, journals and results files, and one log record stays one line.
class SanitizingSink final : public spdlog::sinks::sink {
 public:
  explicit SanitizingSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    const std::string clean = one_line(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(clean.data(), clean.size());
    inner_->log(copy);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  spdlog::sink_ptr inner_;
};

}  // namespace

void init_logging() {
  auto sink = std::make_shared<SanitizingSink>(
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  auto logger = std::make_shared<spdlog::logger>("mgbench", std::move(sink));
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_level(spdlog::level::info);
}

namespace logging {

namespace {
spdlog::level::level_enum spdlog_level(Level level) {
  switch (level) {
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: break;
  }
  return spdlog::level::err;
}
}  // namespace

bool enabled(Level level) { return spdlog::should_log(spdlog_level(level)); }

void line(Level level, const std::string& text) { spdlog::log(spdlog_level(level), "{}", text); }

}  // namespace logging

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
