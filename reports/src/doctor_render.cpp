// Rendering of `mgbench doctor` checks (the JSON shape doctor_to_json writes).
#include "mgbench/reports/doctor_render.hpp"

#include <fmt/format.h>

#include "mgbench/reports/format.hpp"

namespace mgbench::reports {

namespace {

RowTone tone_of_status(const std::string& status) {
  if (status == "pass") return RowTone::good;
  if (status == "warn") return RowTone::warn;
  if (status == "fail") return RowTone::bad;
  return RowTone::normal;
}

const Json& checks_of(const Json& doctor) {
  static const Json empty = Json::array();
  if (doctor.is_object() && doctor.contains("checks") && doctor["checks"].is_array()) {
    return doctor["checks"];
  }
  return empty;
}

}  // namespace

std::string doctor_summary_line(const Json& doctor) {
  int pass = 0, warn = 0, fail = 0, skip = 0;
  for (const auto& c : checks_of(doctor)) {
    const std::string status = json_string(c, "status");
    if (status == "pass") ++pass;
    if (status == "warn") ++warn;
    if (status == "fail") ++fail;
    if (status == "skip") ++skip;
  }
  return fmt::format("doctor: {} pass, {} warn, {} fail, {} skip", pass, warn, fail, skip);
}

Table doctor_table(const Json& doctor) {
  Table table;
  table.title = "mgbench doctor";
  table.column("status").column("check").column("finding");
  for (const auto& c : checks_of(doctor)) {
    const std::string status = json_string(c, "status");
    const RowTone tone = tone_of_status(status);
    table.add_row({status, json_string(c, "name"), json_string(c, "finding")}, tone);
    const std::string next = json_string(c, "next_step");
    if (!next.empty() && (status == "warn" || status == "fail")) {
      table.add_row({"", "", "-> " + next}, tone);
    }
  }
  if (!table.empty()) table.notes.push_back(doctor_summary_line(doctor));
  return table;
}

void render_doctor_text(const Json& doctor, std::ostream& out, bool colour) {
  const Table table = doctor_table(doctor);
  if (table.empty()) {
    out << "doctor: no checks\n";
    return;
  }
  TextStyle style;
  style.colour = colour;
  render_text(table, out, style);
}

}  // namespace mgbench::reports
