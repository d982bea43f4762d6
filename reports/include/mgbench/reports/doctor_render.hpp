#pragma once
// `mgbench doctor` checks (doctor_to_json's shape, also stored as RunResult::doctor) as a console
// table or a Markdown table: status, check, finding, and the next step under warn/fail rows.
#include <ostream>
#include <string>

#include "mgbench/core/params.hpp"
#include "mgbench/reports/table.hpp"

namespace mgbench::reports {

// Rows: status, check name, finding; a warn/fail check's next step follows on its own row
// ("-> ..."). Notes: the pass/warn/fail/skip counts. Empty table when `doctor` has no checks.
Table doctor_table(const Json& doctor);
void render_doctor_text(const Json& doctor, std::ostream& out, bool colour = false);
// "doctor: 14 pass, 3 warn, 0 fail, 3 skip".
std::string doctor_summary_line(const Json& doctor);

}  // namespace mgbench::reports
