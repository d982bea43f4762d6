// Markdown report with charts as linked .svg files.
#include "mgbench/reports/markdown.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "mgbench/reports/accept_render.hpp"
#include "mgbench/reports/charts.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/peaks.hpp"
#include "mgbench/reports/sections.hpp"
#include "mgbench/reports/summary.hpp"
#include "mgbench/reports/svg.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"

namespace mgbench::reports {
namespace {

void charts_of(const std::vector<ChartEntry>& charts, const std::string& section,
               const std::string& dir, std::string& out) {
  bool any = false;
  for (const auto& c : charts) {
    if (c.section != section) continue;
    out += "![" + escape_markdown(c.title) + "](" + dir + "/" + c.id + ".svg)\n";
    any = true;
  }
  if (any) out += "\n";
}

}  // namespace

std::string markdown_charts_dir_name(const std::string& md_path) {
  return std::filesystem::path(md_path).stem().string() + "_charts";
}

std::string render_markdown_report(const RunResult& run, const std::string& charts_dir,
                                   const Prediction* prediction) {
  const auto charts = build_charts(run, prediction);
  std::string out = "# mgbench report";
  if (!run.host.empty()) out += ": " + escape_markdown(run.host);
  out += "\n\n";
  out += "## Summary\n\n";
  const Summary summary = run_summary(run);
  if (!summary.note.empty()) out += escape_markdown(summary.note) + "\n\n";
  for (const auto& table : summary.tables) out += render_markdown(table, 3);
  const std::string model_note = gpu_model_note(run);
  if (!model_note.empty()) out += escape_markdown(model_note) + "\n\n";
  out += "## Flags\n\n";
  const auto flags = run_flags(run);
  if (flags.empty()) {
    out += "No throttling, noisy medians, impossible values, failed points or doctor "
           "warnings.\n\n";
  }
  for (const auto& group : flags) {
    out += "### " + escape_markdown(group.title) + "\n\n";
    for (const auto& line : group.lines) out += "- " + escape_markdown(line) + "\n";
    out += "\n";
  }

  const Table verdicts = verdicts_table(run);
  if (!verdicts.empty()) out += render_markdown(verdicts, 2);
  const Table doctor = run_doctor_table(run);
  if (!doctor.empty()) out += render_markdown(doctor, 2);

  for (const auto& workload : workloads_of(run)) {
    out += "## " + escape_markdown(workload) + "\n\n";
    charts_of(charts, workload, charts_dir, out);
    for (auto table : workload_tables(run, workload)) {
      if (table.title == workload) table.title = "Results";
      out += render_markdown(table, 3);
    }
  }
  const auto scaling = scaling_tables(run);
  if (!scaling.empty()) {
    out += "## Scaling\n\n";
    for (const auto& t : scaling) out += render_markdown(t, 3);
  }
  bool telemetry = false;
  for (const auto& c : charts) telemetry = telemetry || c.section == "telemetry";
  if (telemetry) {
    out += "## Telemetry\n\nShaded: intervals in which the GPU reported a throttle reason.\n\n";
    charts_of(charts, "telemetry", charts_dir, out);
  }
  const Table points = points_table(run);
  if (!points.empty()) out += render_markdown(points, 2);
  Table settings = run_summary_table(run);
  settings.title = "Settings";
  out += render_markdown(settings, 2);
  const auto env = environment_tables(run);
  if (!env.empty()) {
    out += "## Environment\n\n";
    for (auto t : env) {
      if (t.title == "Environment") t.title.clear();
      out += render_markdown(t, 3);
    }
  }
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  return out;
}

namespace {


// The charts directory: created when missing; a symbolic link or anything but a directory is
// refused (an unpacked bundle could point it anywhere).
void prepare_charts_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      throw EnvironmentError("refusing to write charts into '" + dir + "': it is a symbolic link");
    }
    if (!S_ISDIR(st.st_mode)) {
      throw EnvironmentError("cannot write charts into '" + dir + "': not a directory");
    }
    return;
  }
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    throw EnvironmentError("cannot create '" + dir + "': " + std::strerror(errno));
  }
}

// The chart files this writer put there last time, from its manifest: only names it could have
// written (slugged .svg), so a crafted manifest cannot reach outside the directory.
std::vector<std::string> previous_charts(const std::string& manifest) {
  std::vector<std::string> names;
  std::ifstream in(manifest);
  std::string name;
  while (std::getline(in, name) && names.size() < 10000) {
    const bool plain = name.size() > 4 && name.size() < 200 &&
                       name.compare(name.size() - 4, 4, ".svg") == 0 &&
                       slug(name.substr(0, name.size() - 4)) == name.substr(0, name.size() - 4);
    if (plain) names.push_back(name);
  }
  return names;
}

}  // namespace

void write_markdown(const RunResult& run, const std::string& md_path,
                    const Prediction* prediction) {
  namespace fs = std::filesystem;
  const std::string dir_name = markdown_charts_dir_name(md_path);
  const fs::path charts_dir = fs::path(md_path).parent_path() / dir_name;
  const auto charts = build_charts(run, prediction);
  if (!charts_dir.parent_path().empty()) {
    std::error_code ec;
    fs::create_directories(charts_dir.parent_path(), ec);
  }
  prepare_charts_dir(charts_dir.string());
  // Remove the charts of this writer's earlier rendering (and nothing else), so the directory
  // matches this report.
  // The list of chart files the last rendering wrote, beside the charts directory (which then
  // holds charts only).
  const std::string manifest =
      (fs::path(md_path).parent_path() / ("." + dir_name + ".list")).string();
  for (const std::string& name : previous_charts(manifest)) {
    const std::string path = (charts_dir / name).string();
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(path.c_str());
  }
  std::string written;
  for (const auto& c : charts) {
    write_file_atomic((charts_dir / (c.id + ".svg")).string(), svg::standalone(c.svg));
    written += c.id + ".svg\n";
  }
  write_file_atomic(manifest, written);
  write_file_atomic(md_path, render_markdown_report(run, dir_name, prediction));
}

void MarkdownPrinter::print(const Printable&, std::ostream&) const {
  throw UsageError("--format md writes its charts beside the report: give a file, not -o -");
}

void MarkdownPrinter::write(const Printable& what, const std::string& path) const {
  if (what.run.accept.is_null()) {
    write_markdown(what.run, path, what.prediction);
  } else {
    // An accept run: its own report (`mgbench accept --from` renders it in another language).
    write_file_atomic(path, render_accept_markdown(what.run, Lang::en));
  }
}

}  // namespace mgbench::reports
