#include "mgbench/cli/commands.hpp"

#include <iostream>

#include "mgbench/core/logging.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench {

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"accept", "acceptance run of a new server: checklist, verdict, report (--lang en|zh)",
       cmd_accept},
      {"compare", "compare runs: regression verdicts, or offers side by side", cmd_compare},
      {"completion", "print a shell completion script: completion bash", cmd_completion, true},
      {"doctor", "pre-flight checks of GPUs, links, power, ECC (exit 4 on fail)", cmd_doctor},
      {"history", "runs recorded in the history database: list, show, trend, export",
       cmd_history},
      {"info", "devices, topology, versions and the environment fingerprint", cmd_info},
      {"list", "list workloads, parameters, defaults and requirements", cmd_list},
      {"predict", "scaling on other GPU counts, nodes and links, from a results file",
       cmd_predict},
      {"report", "Render a results file as HTML, Markdown, CSV or text", cmd_report},
      {"screen", "find the slow GPU, link or node of a fleet: figures against their peers",
       cmd_screen},
      {"soak", "sustained load over time: throughput, temperature, XIDs; \"runs stably\" verdict",
       cmd_soak},
      {"sweep", "run the benchmark sweep (see `mgbench sweep --help`)", cmd_sweep},
      {"worker", "internal: run one group for the orchestrator", cmd_worker, true},
  };
  return all;
}

const Command* find_command(const std::string& name) {
  for (const auto& command : commands()) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

RunSinks sweep_sinks(const SweepOptions& options) {
  RunSinks sinks;
  if (options.verbosity >= 0) {
    sinks.push_back({"console tables", [](const RunResult& run, const std::string&) {
                       std::cout << '\n';
                       reports::printer("text").print({run}, std::cout);
                       std::cout.flush();
                     }});
  }
  if (!options.csv_path.empty()) {
    sinks.push_back({"csv", [path = options.csv_path](const RunResult& run, const std::string&) {
                       reports::printer("csv").write({run}, path);
                       logging::info("csv: {}", path);
                     }});
  }
  if (!options.no_report) {
    sinks.push_back({"report", [](const RunResult& run, const std::string& out_dir) {
                       for (const char* format : {"html", "md"}) {
                         const reports::Printer& p = reports::printer(format);
                         p.write({run}, out_dir + "/" + p.default_file());
                       }
                       logging::info("report: {}/report.html ({}/report.md)", out_dir, out_dir);
                     }});
  }
  return sinks;
}

}  // namespace mgbench
