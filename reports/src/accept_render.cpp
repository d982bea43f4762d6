// `mgbench accept`'s console answer and report (see accept_render.hpp).
#include "mgbench/reports/accept_render.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "mgbench/core/file_io.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/table.hpp"

namespace mgbench::reports {
namespace {

// The words of one language, and the checklist's pieces in them.
class Words {
 public:
  explicit Words(Lang lang) : lang_(lang) {}
  Lang lang() const { return lang_; }
  std::string operator()(const std::string& key, const std::vector<std::string>& args = {}) const {
    return accept_format(lang_, key, args);
  }
  std::string operator()(const AcceptText& t) const {
    return t.empty() ? "" : accept_format(lang_, t);
  }
  std::string status(AcceptStatus s) const {
    return (*this)(std::string("status.") + to_string(s));
  }
  std::string title(const AcceptItem& i) const { return (*this)("item." + i.id, {i.subject}); }
  std::string line(const AcceptItem& i) const {
    return (*this)("ui.line", {title(i), (*this)(i.measured), (*this)(i.criterion)});
  }
  std::string stage(const std::string& id) const { return (*this)("stage_name." + id); }

 private:
  Lang lang_;
};

std::string verdict_line(const Words& w, const AcceptResult& r) {
  const auto fails = std::count_if(r.items.begin(), r.items.end(), [](const AcceptItem& i) {
    return i.status == AcceptStatus::fail;
  });
  return w("ui.verdict." + r.verdict, {std::to_string(fails)});
}

// "" when no GPU was found (the run could not start).
std::string summary_line(const Words& w, const AcceptResult& r) {
  if (r.devices.empty()) return "";
  int counts[4] = {0, 0, 0, 0};
  for (const auto& i : r.items) ++counts[static_cast<int>(i.status)];
  std::string devices;
  for (int d : r.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  return w("ui.summary", {std::to_string(r.devices.size()), one_line(r.gpu_name), devices,
                          std::to_string(counts[0]), std::to_string(counts[1]),
                          std::to_string(counts[2]), std::to_string(counts[3])});
}

std::string stopped_line(const Words& w, const AcceptResult& r) {
  return r.stopped_after.empty() ? ""
                                 : w("ui.stopped", {w.stage(r.stopped_after), w(r.stop_reason)});
}

// A detail as one line: "subject: recorded" and its cause and next step.
std::string detail_text(const Words& w, const AcceptDetail& d) {
  std::string text = one_line(d.subject);
  if (!d.recorded.empty()) text += (text.empty() ? "" : ": ") + one_line(d.recorded);
  if (!d.cause.empty()) text += " — " + w("ui.cause_line", {w(d.cause)});
  if (!d.next.empty()) text += " — " + w("ui.next_line", {w(d.next)});
  return text;
}

// The cause and next step of a warn/fail item, then its details, each a line of its own.
std::vector<std::string> explanation(const Words& w, const AcceptItem& i) {
  std::vector<std::string> lines;
  if (!i.cause.empty()) lines.push_back(w("ui.cause_line", {w(i.cause)}));
  if (!i.next.empty()) lines.push_back(w("ui.next_line", {w(i.next)}));
  for (const auto& d : i.details) lines.push_back("- " + detail_text(w, d));
  return lines;
}

Table stages_table(const Words& w, const AcceptResult& r) {
  Table t;
  t.column(w("col.stage")).column(w("col.state")).column(w("col.time"), Align::right);
  t.column(w("col.note"));
  for (const auto& s : r.stages) {
    const RowTone tone = s.state == "could_not_run" || s.state == "interrupted" ? RowTone::bad
                         : s.state == "ran"                                     ? RowTone::normal
                                                                                : RowTone::warn;
    const std::string note = !s.note.empty()     ? w(s.note)
                             : s.results.empty() ? ""
                                                 : w("ui.results", {s.results + "/report.html"});
    t.add_row(
        {w.stage(s.id), w("state." + s.state), s.wall_s > 0 ? format_seconds(s.wall_s) : "", note},
        tone);
  }
  return t;
}

std::string known(double v, const std::string& text) { return v >= 0 ? text : ""; }

Table figures_table(const Words& w, const AcceptResult& r) {
  Table t;
  t.column(w("col.stage")).column(w("col.workload")).column(w("col.gpus"), Align::right);
  t.column(w("col.value"), Align::right).column(w("col.peak"), Align::right);
  t.column(w("col.efficiency"), Align::right).column(w("col.temp"), Align::right);
  t.column(w("col.power"), Align::right).column(w("col.memory"), Align::right);
  for (const auto& f : r.figures) {
    t.add_row({w.stage(f.stage), one_line(f.workload), std::to_string(f.gpus),
               format_sig(f.value) + " " + one_line(f.unit),
               known(f.peak_fraction, format_percent(f.peak_fraction)),
               known(f.efficiency, format_percent(f.efficiency)),
               known(f.temp_max_c, fmt::format("{:.0f} °C", f.temp_max_c)),
               known(f.power_mean_w, fmt::format("{:.0f} W", f.power_mean_w)),
               known(f.memory_peak_bytes, format_bytes_iec(f.memory_peak_bytes))});
  }
  t.drop_empty_columns();
  return t;
}

Table criteria_table(const Words& w, const AcceptResult& r) {
  Table t;
  t.column(w("col.name")).column(w("col.value"), Align::right).column(w("col.meaning"));
  for (const auto& [name, value] : accept_criteria_lines(r.criteria)) {
    t.add_row({name, value, w("criterion_help." + name)});
  }
  t.caption = r.criteria_source.empty() ? w("ui.criteria_builtin")
                                        : w("ui.criteria_file", {one_line(r.criteria_source)});
  return t;
}

const char* tone_class(AcceptStatus s) {
  return s == AcceptStatus::fail ? "bad" : s == AcceptStatus::warn ? "warn" : "";
}

// The status word padded to the widest one of the language, and a space.
std::string colour_status(const Words& w, AcceptStatus s, bool colour) {
  std::size_t widest = 0;
  for (auto each : {AcceptStatus::pass, AcceptStatus::warn, AcceptStatus::fail, AcceptStatus::skip}) {
    widest = std::max(widest, display_width(w.status(each)));
  }
  const std::string word = w.status(s) + std::string(widest + 2 - display_width(w.status(s)), ' ');
  if (!colour) return word;
  const char* code = s == AcceptStatus::pass   ? "32"
                     : s == AcceptStatus::warn ? "33"
                     : s == AcceptStatus::fail ? "31"
                                               : "2";
  return fmt::format("\x1b[{}m{}\x1b[0m", code, word);
}

}  // namespace

void render_accept_console(const RunResult& run, Lang lang, std::ostream& out, bool colour) {
  const AcceptResult r = accept_of(run);
  const Words w(lang);
  const TextStyle style{colour, 2};
  out << '\n' << w("ui.heading_value", {w("ui.criteria"), criteria_table(w, r).caption}) << '\n';
  std::string criteria;
  for (const auto& [name, value] : accept_criteria_lines(r.criteria)) {
    criteria += (criteria.empty() ? "  " : ", ") + name + " = " + value;
  }
  out << criteria << "\n\n" << w("ui.heading", {w("ui.stages")}) << '\n';
  render_text(stages_table(w, r), out, style);
  out << '\n' << verdict_line(w, r) << '\n';
  if (!r.devices.empty()) out << summary_line(w, r) << '\n';
  if (!r.stopped_after.empty()) out << stopped_line(w, r) << '\n';
  if (!r.items.empty()) out << '\n' << w("ui.heading", {w("ui.checklist")}) << '\n';
  for (std::size_t k = 0; k < r.items.size(); ++k) {
    const AcceptItem& item = r.items[k];
    if (k == 0 || r.items[k - 1].stage != item.stage) out << "  " << w.stage(item.stage) << '\n';
    out << "    " << colour_status(w, item.status, colour) << w.line(item) << '\n';
    for (const auto& line : explanation(w, item)) out << "            " << line << '\n';
  }
  out.flush();
}

std::string render_accept_markdown(const RunResult& run, Lang lang) {
  const AcceptResult r = accept_of(run);
  const Words w(lang);
  std::ostringstream out;
  out << "# " << escape_markdown(w("ui.title", {run.host})) << "\n\n";
  out << "**" << escape_markdown(verdict_line(w, r)) << "**\n\n"
      << escape_markdown(summary_line(w, r)) << "\n\n";
  if (!r.stopped_after.empty()) out << escape_markdown(stopped_line(w, r)) << "\n\n";
  out << "## " << w("ui.checklist") << "\n";
  for (std::size_t k = 0; k < r.items.size(); ++k) {
    const AcceptItem& item = r.items[k];
    if (k == 0 || r.items[k - 1].stage != item.stage) {
      out << "\n### " << escape_markdown(w.stage(item.stage)) << "\n\n";
    }
    out << "- **" << w.status(item.status) << "** " << escape_markdown(w.line(item)) << '\n';
    for (const auto& line : explanation(w, item)) {
      out << "  - " << escape_markdown(line.rfind("- ", 0) == 0 ? line.substr(2) : line) << '\n';
    }
  }
  out << "\n_" << escape_markdown(w("ui.quoted_note")) << "_\n\n";
  Table stages = stages_table(w, r), figures = figures_table(w, r), criteria = criteria_table(w, r);
  stages.title = w("ui.stages");
  figures.title = w("ui.figures");
  figures.caption = w("ui.figures_note");
  criteria.title = w("ui.criteria");
  out << render_markdown(stages, 2) << '\n';
  if (!figures.empty()) out << render_markdown(figures, 2) << '\n';
  out << render_markdown(criteria, 2);
  return out.str();
}

namespace {

std::string html_checklist(const Words& w, const AcceptResult& r) {
  std::string out = "<table class=\"data\"><thead><tr><th>" + escape_html(w("col.status")) +
                    "</th><th>" + escape_html(w("col.item")) + "</th><th>" +
                    escape_html(w("col.measured")) + "</th><th>" + escape_html(w("col.criterion")) +
                    "</th></tr></thead><tbody>\n";
  for (std::size_t k = 0; k < r.items.size(); ++k) {
    const AcceptItem& item = r.items[k];
    if (k == 0 || r.items[k - 1].stage != item.stage) {
      out += "<tr><th colspan=\"4\">" + escape_html(w.stage(item.stage)) + "</th></tr>\n";
    }
    out += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}", tone_class(item.status),
                       escape_html(w.status(item.status)), escape_html(w.title(item)));
    const auto lines = explanation(w, item);
    if (!lines.empty()) {
      out += "<ul>";
      for (const auto& line : lines) {
        out += "<li>" + escape_html(line.rfind("- ", 0) == 0 ? line.substr(2) : line) + "</li>";
      }
      out += "</ul>";
    }
    out += "</td><td>" + escape_html(w(item.measured)) + "</td><td>" +
           escape_html(w(item.criterion)) + "</td></tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string html_section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\">\n<h2>" + escape_html(title) + "</h2>\n" + body +
         "</section>\n";
}

}  // namespace

std::string render_accept_html(const RunResult& run, Lang lang) {
  const AcceptResult r = accept_of(run);
  const Words w(lang);
  std::string out = html_page_begin(w("ui.title", {run.host}), w("ui.subtitle", {run.started_at}),
                                    lang == Lang::zh ? "zh-CN" : "en");
  out += "<main>\n";
  std::string answer = "<p class=\"verdict " + std::string(r.verdict == "ready" ? "good" : "bad") +
                       "\"><strong>" + escape_html(verdict_line(w, r)) + "</strong></p>\n<p>" +
                       escape_html(summary_line(w, r)) + "</p>\n";
  if (!r.stopped_after.empty()) answer += "<p>" + escape_html(stopped_line(w, r)) + "</p>\n";
  answer +=
      html_checklist(w, r) + "<p class=\"caption\">" + escape_html(w("ui.quoted_note")) + "</p>\n";
  out += html_section("checklist", w("ui.checklist"), answer);
  out += html_section("stages", w("ui.stages"), render_html(stages_table(w, r), 0));
  Table figures = figures_table(w, r);
  figures.caption = w("ui.figures_note");
  if (!figures.empty()) out += html_section("figures", w("ui.figures"), render_html(figures, 0));
  out += html_section("criteria", w("ui.criteria"), render_html(criteria_table(w, r), 0));
  std::string links;
  for (const auto& s : r.stages) {
    if (s.state != "ran" || s.results.empty()) continue;
    const std::string href = escape_html(s.results + "/report.html");
    links +=
        "<li><a href=\"" + href + "\">" + escape_html(w.stage(s.id)) + "</a>: " + href + "</li>";
  }
  if (!links.empty()) {
    out += html_section("stage-reports", w("ui.stage_reports"), "<ul>" + links + "</ul>\n");
  }
  return out + "</main>\n" + html_page_end();
}

void write_accept_reports(const RunResult& run, Lang lang, const std::string& dir) {
  write_file_atomic(dir + "/report.html", render_accept_html(run, lang));
  write_file_atomic(dir + "/report.md", render_accept_markdown(run, lang));
}

}  // namespace mgbench::reports
