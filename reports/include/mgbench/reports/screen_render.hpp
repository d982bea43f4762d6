#pragma once
// `mgbench screen`'s outputs (docs/SCREEN.md): the findings table, most severe first, on the
// console and in the report; the heat maps (nodes x metrics, GPUs x metrics, each node's p2p
// matrix); the exclude list a scheduler can read.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "mgbench/analysis/fleet.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/svg.hpp"
#include "mgbench/reports/table.hpp"

namespace mgbench::reports {

// The run's screen section, nullopt when it has none or it is malformed.
std::optional<ScreenSection> screen_of(const RunResult& run);

// One row per metric (and like-for-like group): its figures, their reference, the lowest one,
// its gap and whose it is.
Table screen_figures_table(const ScreenSection& screen);
// One row per finding, most severe first: gap, subject, kind, what, evidence.
Table screen_findings_table(const ScreenSection& screen);
// The fleet in one line, the figures and findings tables (or "nothing found"), the notes, the
// values below what their GPU model usually reaches.
void render_screen_console(const RunResult& run, std::ostream& out);

// The exclude list: '#' comment lines (the header, and each link finding: no scheduler leaves
// out a link), then one line per node to leave out ("host") or GPU ("host:gpu"), each once, most
// severe first. A host left out whole has none of its GPUs listed.
std::string screen_exclude_list(const ScreenSection& screen);

// Each figure against its metric's reference (the median of the better half), as heat maps:
// nodes x metrics (a node's median figure), GPUs x metrics (stage 1), and the p2p matrix of the
// nodes with a p2p finding first (at most 8).
std::vector<svg::HeatMap> screen_heat_maps(const ScreenSection& screen);

// The report's "Screen" section ("" for a run without one).
std::string screen_html_section(const RunResult& run);

}  // namespace mgbench::reports
