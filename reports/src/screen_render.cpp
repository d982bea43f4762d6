// `mgbench screen`'s findings on the console and in the report, and its exclude list
// (screen_render.hpp).
#include "mgbench/reports/screen_render.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/text.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/peaks.hpp"

namespace mgbench::reports {

namespace {

constexpr int kMaxGpu = 4096;  // a GPU number beyond it is not one (results from elsewhere)

// Every index of the section points where it may: a node of the list (or none), a GPU number.
bool indices_valid(const ScreenSection& s) {
  const int nodes = static_cast<int>(s.nodes.size());
  const auto node_ok = [&](int n, bool none_ok) { return (none_ok && n == -1) || (n >= 0 && n < nodes); };
  const auto gpu_ok = [](int g) { return g >= -1 && g < kMaxGpu; };
  for (const auto& f : s.figures) {
    const bool node_pair = f.gpu < 0 && f.peer >= 0;
    if (!node_ok(f.node, true) || !gpu_ok(f.gpu) || !gpu_ok(f.peer) ||
        (node_pair && !node_ok(f.peer, false))) {
      return false;
    }
  }
  for (const auto& f : s.findings) {
    const bool node_pair = f.gpu < 0 && f.peer >= 0;
    if (!node_ok(f.node, false) || !gpu_ok(f.gpu) || !gpu_ok(f.peer) ||
        (node_pair && !node_ok(f.peer, false))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<ScreenSection> screen_of(const RunResult& run) {
  if (!run.screen.is_object()) return std::nullopt;
  try {
    ScreenSection s = run.screen.get<ScreenSection>();
    if (!indices_valid(s)) return std::nullopt;
    return s;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {

const char* kind_words(const std::string& kind) {
  if (kind == kFindingNodeFailed) return "node failed";
  if (kind == kFindingGpu) return "slow GPU";
  if (kind == kFindingNode) return "slow node";
  if (kind == kFindingGpuLink) return "slow GPU link";
  if (kind == kFindingNodeNetwork) return "slow node network";
  if (kind == kFindingNodeLink) return "slow link between nodes";
  return "finding";
}

std::string gap_text(const ScreenFinding& f) {
  if (f.kind == kFindingNodeFailed) return "failed";
  return fmt::format("-{:.1f} %", f.gap * 100.0);
}

std::string stages_text(const ScreenSection& s) {
  std::vector<std::string> stages;
  for (int stage : s.stages) stages.push_back(std::to_string(stage));
  return fmt::format("{}", fmt::join(stages, ","));
}

std::size_t nodes_up(const ScreenSection& s) {
  return static_cast<std::size_t>(std::count_if(
      s.nodes.begin(), s.nodes.end(), [](const ScreenNode& n) { return n.status == "ok"; }));
}

std::string fleet_line(const ScreenSection& s) {
  return fmt::format("screen: {} node(s) x {} GPU(s), stages {}, {} figure(s), {} finding(s) "
                     "(threshold {:.3g} % below the peers), {:.0f} s",
                     s.nodes.size(), s.gpus_per_node, stages_text(s), s.figures.size(),
                     s.findings.size(), s.thresholds.gap * 100.0, s.measured_s);
}

// Whether any figure had a peer to be compared with (two of its metric and group).
bool any_peers(const ScreenSection& s) {
  std::map<std::pair<std::string, std::string>, int> count;
  for (const auto& f : s.figures) {
    if (f.node >= 0 && ++count[{f.metric, f.group}] >= 2) return true;
  }
  return false;
}

std::string nothing_found(const ScreenSection& s) {
  if (!any_peers(s)) {
    return "Nothing to compare: no figure has a peer (one GPU on one node); each is shown against "
           "its GPU's peak in the report.";
  }
  return fmt::format("Nothing found: on the {} node(s) screened, no figure is more than {:.3g} % "
                     "below its peers.",
                     nodes_up(s), s.thresholds.gap * 100.0);
}

// A figure's subject as a finding's would be named.
std::string figure_subject(const ScreenSection& s, const ScreenFigure& f) {
  if (f.node < 0) return "every node";
  ScreenFinding x;
  x.kind = f.gpu >= 0 && f.peer >= 0 ? kFindingGpuLink
           : f.gpu < 0 && f.peer >= 0 ? kFindingNodeLink
                                      : kFindingGpu;
  x.node = f.node;
  x.gpu = f.gpu;
  x.peer = f.peer;
  return one_line(finding_subject(s, x));
}

}  // namespace

Table screen_figures_table(const ScreenSection& s) {
  Table t;
  t.title = "Figures";
  t.caption = "per metric: the reference (median of the better half) and the lowest figure";
  t.column("stage", Align::right).column("metric").column("group").column("figures", Align::right);
  t.column("reference", Align::right).column("lowest", Align::right).column("gap", Align::right);
  t.column("lowest is");
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const ScreenFigure*>> by;
  for (const auto& f : s.figures) {
    const auto key = std::make_pair(f.metric, f.group);
    if (by[key].empty()) order.push_back(key);
    by[key].push_back(&f);
  }
  for (const auto& key : order) {
    const auto& list = by[key];
    std::vector<double> values;
    for (const auto* f : list) values.push_back(f->value);
    const auto st = peer_standings(values, s.thresholds);
    const std::size_t low = static_cast<std::size_t>(
        std::min_element(values.begin(), values.end()) - values.begin());
    const std::string unit = list[low]->unit.empty() ? "" : " " + one_line(list[low]->unit);
    t.add_row({std::to_string(list[low]->stage), one_line(key.first), one_line(key.second),
               std::to_string(list.size()),
               list.size() >= 2 ? fmt::format("{:.4g}{}", st[low].reference, unit) : "-",
               fmt::format("{:.4g}{}", values[low], unit),
               list.size() >= 2 ? fmt::format("{:.1f} %", st[low].gap * 100.0) : "-",
               figure_subject(s, *list[low])},
              st[low].outlier ? RowTone::warn : RowTone::normal);
  }
  return t;
}

Table screen_findings_table(const ScreenSection& s) {
  Table t;
  t.title = "Findings";
  t.caption = "most severe first; gap: below the peers' reference (the median of the better half)";
  t.column("gap", Align::right).column("subject").column("kind").column("stage", Align::right);
  t.column("what").column("evidence");
  for (const auto& f : s.findings) {
    std::vector<std::string> evidence;
    for (const auto& e : f.evidence) evidence.push_back(one_line(e));
    t.add_row({gap_text(f), one_line(finding_subject(s, f)), kind_words(f.kind),
               f.stage > 0 ? std::to_string(f.stage) : "", one_line(f.text),
               evidence.empty() ? "-" : fmt::format("{}", fmt::join(evidence, "; "))},
              f.kind == kFindingNodeFailed || f.gap >= 2 * s.thresholds.gap ? RowTone::bad
                                                                             : RowTone::warn);
  }
  return t;
}

void render_screen_console(const RunResult& run, std::ostream& out) {
  const auto screen = screen_of(run);
  if (!screen) {
    out << "No screen in this run.\n";
    return;
  }
  out << '\n' << fleet_line(*screen) << "\n\n";
  render_text(screen_figures_table(*screen), out);
  out << '\n';
  if (screen->findings.empty()) {
    out << nothing_found(*screen) << '\n';
  } else {
    render_text(screen_findings_table(*screen), out);
  }
  for (const auto& note : screen->notes) out << "Note: " << one_line(note) << '\n';
  // A GPU model's expected ranges speak where peers cannot (one GPU): % of peak (docs/METHODOLOGY.md).
  const auto below = below_range_lines(run);
  if (!below.empty()) out << "\nBelow what this GPU model usually reaches\n";
  for (const auto& line : below) out << "  - " << one_line(line) << '\n';
}

std::string screen_exclude_list(const ScreenSection& s) {
  std::string out =
      "# mgbench screen: hosts and GPUs to leave out, one per line (host, or host:gpu);\n"
      "# lines starting with '#' are comments (links: the operator decides).\n";
  std::set<int> whole;  // nodes left out whole
  for (const auto& f : s.findings) {
    if (f.gpu < 0 && f.kind != kFindingNodeLink) whole.insert(f.node);
  }
  std::set<std::string> said;
  for (const auto& f : s.findings) {
    const std::string host =
        f.node >= 0 && static_cast<std::size_t>(f.node) < s.nodes.size()
            ? one_line(s.nodes[static_cast<std::size_t>(f.node)].host)
            : std::string();
    std::string line;
    if (f.kind == kFindingGpuLink || f.kind == kFindingNodeLink) {
      line = "# " + one_line(finding_subject(s, f)) + ": " + one_line(f.text);
    } else if (f.gpu < 0) {
      line = host;
    } else if (whole.count(f.node) == 0) {
      line = fmt::format("{}:{}", host, f.gpu);
    }
    if (!line.empty() && said.insert(line).second) out += line + "\n";
  }
  return out;
}

std::string screen_html_section(const RunResult& run) {
  const auto screen = screen_of(run);
  if (!screen) return "";
  std::string out = "<section id=\"screen\">\n<h2>Screen</h2>\n<p class=\"note\">" +
                    escape_xml(fleet_line(*screen)) + "</p>\n";
  if (screen->findings.empty()) {
    out += "<p class=\"note\">" + escape_xml(nothing_found(*screen)) + "</p>\n";
  } else {
    out += render_html(screen_findings_table(*screen), 3);
  }
  out += render_html(screen_figures_table(*screen), 3);
  std::vector<std::string> svgs;
  for (const auto& map : screen_heat_maps(*screen)) svgs.push_back(svg::render(map));
  out += html_chart_grid(svgs);
  out += "<p class=\"caption\">Each cell is a figure against its metric's reference, the median "
         "of the better half of the fleet's figures: light at the reference or above, darker "
         "the further below; a grey dash: not measured. docs/SCREEN.md explains the stages and "
         "the statistics.</p>\n";
  if (!screen->notes.empty()) {
    out += "<h3>Notes</h3>\n<ul class=\"flags\">\n";
    for (const auto& note : screen->notes) out += "<li>" + escape_xml(note) + "</li>\n";
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

}  // namespace mgbench::reports
