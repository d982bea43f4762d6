#pragma once
// Shared by the fuzz targets: the input as a file, and the rule for exceptions.
#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace mgbench::fuzz {

// Writes the input to this process's scratch file (one per target, removed at exit) and
// returns its path: the loaders under test read files.
std::string write_input(const std::string& target, const std::uint8_t* data, std::size_t size);

// Runs `body`; an mgbench::Error (the one-line usage/environment errors) is an accepted outcome,
// any other exception is a bug (the binary would print "internal error"): abort so the fuzzer
// records the input.
template <typename Body>
void expect_only_mgbench_errors(const char* target, Body body);

[[noreturn]] void unexpected_exception(const char* target, const char* what);

}  // namespace mgbench::fuzz

#include "mgbench/core/error.hpp"

template <typename Body>
void mgbench::fuzz::expect_only_mgbench_errors(const char* target, Body body) {
  try {
    body();
  } catch (const mgbench::Error&) {
    // the expected one-line error
  } catch (const std::exception& e) {
    unexpected_exception(target, e.what());
  } catch (...) {
    unexpected_exception(target, "unknown exception");
  }
}
