// The worker-protocol reader: the bytes arrive on the pipe in two chunks (split at the first
// byte's value), are cut into lines, and every line is parsed. Garbage is a nullopt with a
// reason, never an exception.
#include "fuzz_support.hpp"
#include "mgbench/run/worker_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mgbench::fuzz::expect_only_mgbench_errors("protocol", [&] {
    const char* bytes = reinterpret_cast<const char*>(data);
    const std::size_t cut = size == 0 ? 0 : data[0] % size;
    mgbench::LineBuffer buffer;
    std::vector<std::string> lines;
    buffer.append(bytes, cut);
    for (auto& line : buffer.take_lines()) lines.push_back(std::move(line));
    buffer.append(bytes + cut, size - cut);
    for (auto& line : buffer.take_lines()) lines.push_back(std::move(line));
    lines.push_back(buffer.pending());
    for (const std::string& line : lines) {
      std::string error;
      const auto message = mgbench::parse_worker_line(line, &error);
      if (!message && error.empty()) {
        mgbench::fuzz::unexpected_exception("protocol", "rejected line without a reason");
      }
      if (message) (void)mgbench::make_worker_line(message->body);
    }
  });
  return 0;
}
