// The one console/log sanitiser (core/text.hpp): terminal escapes, C1 controls (also as raw
// bytes), bidi overrides and forged lines from input files never reach a terminal.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include <spdlog/spdlog.h>

#include "catch_compat.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/reports/format.hpp"
#include "support.hpp"

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

bool has_byte(const std::string& s, unsigned char b) {
  return s.find(static_cast<char>(b)) != std::string::npos;
}

}  // namespace

TEST_CASE("sanitiser: C0 controls, ESC and DEL become U+FFFD") {
  const std::string out = mgbench::one_line("a\x1b[2Jb\x07" "c\x7f" "d");
  CHECK_FALSE(has_byte(out, 0x1b));
  CHECK_FALSE(has_byte(out, 0x07));
  CHECK_FALSE(has_byte(out, 0x7f));
  CHECK(out == "a" + kFffd + "[2Jb" + kFffd + "c" + kFffd + "d");
}

TEST_CASE("sanitiser: C1 controls are replaced, encoded (U+009B CSI) or as raw bytes") {
  // U+009B is the one-character CSI: "\xC2\x9B" "2J" clears the screen on many terminals.
  const std::string encoded = mgbench::one_line("x\xC2\x9B" "2Jy\xC2\x85z");
  CHECK(encoded.find("\xC2\x9B") == std::string::npos);
  CHECK(encoded.find("\xC2\x85") == std::string::npos);
  CHECK(encoded == "x" + kFffd + "2Jy" + kFffd + "z");
  const std::string raw = mgbench::one_line("x\x9B" "2Jy");  // not valid UTF-8
  CHECK_FALSE(has_byte(raw, 0x9b));
  CHECK(raw == "x" + kFffd + "2Jy");
}

TEST_CASE("sanitiser: bidi overrides, isolates and marks are replaced") {
  for (const std::string bidi : {"\xE2\x80\xAE", "\xE2\x80\xAA", "\xE2\x81\xA6", "\xE2\x81\xA9",
                                 "\xE2\x80\x8E", "\xE2\x80\x8F", "\xD8\x9C"}) {
    const std::string out = mgbench::one_line("slower" + bidi + "rewsaf");
    CHECK(out.find(bidi) == std::string::npos);
    CHECK(out == "slower" + kFffd + "rewsaf");
  }
}

TEST_CASE("sanitiser: newlines fold to one line, CR cannot rewrite the line") {
  CHECK(mgbench::one_line("REGRESSION\n0 slower\r\nok \t x  ") == "REGRESSION 0 slower ok x");
  CHECK(mgbench::one_line("real\rfake") == "real fake");
  // Multi-line text keeps its newlines but not a lone CR.
  CHECK(mgbench::sanitize_text("a\nb\r\nc\rd", true) == "a\nb\r\nc" + kFffd + "d");
}

TEST_CASE("sanitiser: valid UTF-8 text is kept as it is") {
  const std::string text = "H100 80GB HBM3 \xC3\xA9t\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x9A\x80 ~";
  CHECK(mgbench::one_line(text) == text);
}

TEST_CASE("the reports' console cells and escapers use the core sanitiser") {
  CHECK(mgbench::reports::one_line("a\xC2\x9B" "b") == "a" + kFffd + "b");
  CHECK(mgbench::reports::escape_xml("a\xE2\x80\xAE" "b") == "a" + kFffd + "b");
  CHECK(mgbench::reports::escape_markdown("x\x1b[31my").find('\x1b') == std::string::npos);
}

TEST_CASE("logs: a worker message with escapes and newlines is logged as one clean line") {
  const std::string dir = mgbench::test::temp_dir("log");
  const std::string path = dir + "/stderr";
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  ::dup2(fd, 2);
  ::close(fd);
  mgbench::init_logging();
  spdlog::warn("worker 42: {}", "a\x1b[2Jb\xC2\x9B" "c\xE2\x80\xAE\n[12:00:00.000] [info] all ok");
  spdlog::default_logger()->flush();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  const std::string text = mgbench::test::read_text(path);
  CHECK_FALSE(has_byte(text, 0x1b));
  CHECK(text.find("\xC2\x9B") == std::string::npos);
  CHECK(text.find("\xE2\x80\xAE") == std::string::npos);
  CHECK(text.find("worker 42: a") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  std::filesystem::remove_all(dir);
}
