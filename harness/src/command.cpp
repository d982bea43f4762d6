#include "mgbench/command.hpp"

#include <algorithm>

namespace mgbench {
namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

bool register_command(Command command) {
  auto& all = registry();
  all.push_back(std::move(command));
  std::sort(all.begin(), all.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  return true;
}

const std::vector<Command>& commands() { return registry(); }

const Command* find_command(const std::string& name) {
  for (const auto& command : registry()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

}  // namespace mgbench
