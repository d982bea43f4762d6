#pragma once
// End-of-sweep console output: the tables each workload's presentation declares (one per value
// of its split parameters, then its summary tables), then the verdicts. Plain text unless colour
// is asked for.
#include <ostream>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench::reports {

struct ConsoleOptions {
  bool colour = false;  // ANSI colours (status tones, bold headers)
};

// Colour only when `out` is std::cout on a terminal and NO_COLOR is unset.
void render_console(const mgbench::RunResult& run, std::ostream& out);
void render_console(const mgbench::RunResult& run, std::ostream& out,
                    const ConsoleOptions& options);

// "text": the console tables (an accept run: its checklist, in English).
class ConsolePrinter final : public Printer {
 public:
  std::string name() const override { return "text"; }
  std::vector<std::string> extensions() const override { return {".txt"}; }
  void print(const Printable& what, std::ostream& out) const override;
};

}  // namespace mgbench::reports
