// `mgbench history list|show RUN|trend|export RUN`: the runs recorded in the SQLite history
// store (mgbench/history.hpp). Without the SQLite runtime library: one line, exit 4. `export`
// writes the recorded results document (json), or one row per point with its run's fields (csv,
// jsonl).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "mgbench/core/json_text.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/store/history.hpp"
#include "text_table.hpp"

namespace mgbench {
namespace {

const char* const kUsage =
    "usage: mgbench history list [--db PATH] [--json]\n"
    "       mgbench history show RUN [--db PATH] [--json]\n"
    "       mgbench history trend --workload W --metric M [--by FIELD] [--gpus N] [--db PATH] "
    "[--json]\n"
    "       mgbench history export RUN [--format json|csv|jsonl] [--db PATH] > run.json\n"
    "RUN is a run id from `history list`, or 'last' ('all' too for csv and jsonl: every point\n"
    "of every run, one row or line each, with its run's fields). M is a point metric (e.g.\n"
    "tflops_aggregate) or median_s. FIELD groups the trend: driver, cuda, nccl, host,\n"
    "gpu_model, gpu_count, fingerprint, tool_version. The default database is\n"
    "$XDG_DATA_HOME/mgbench/history.db (~/.local/share/mgbench/history.db); `mgbench sweep`\n"
    "records every finished run there.\n";

void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows, std::size_t left_columns) {
  reports::Table table = text_table(header, left_columns);
  for (const auto& row : rows) table.add_row(row);
  print_text_table(std::cout, table, 0);
}

std::string number(double value) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  std::ostringstream out;
  if (magnitude < -3 || magnitude > 8) {
    out << std::setprecision(4) << value;
  } else {
    out << std::fixed << std::setprecision(std::max(0, 3 - magnitude)) << value;
  }
  return out.str();
}

std::string params_text(const Params& params) {
  return params.empty() ? "-" : describe_params(params);
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

Json run_json(const HistoryRun& r) {
  return Json{{"id", r.id},
              {"started_at", r.started_at},
              {"finished_at", r.finished_at},
              {"host", r.host},
              {"gpu_model", r.gpu_model},
              {"gpu_count", r.gpu_count},
              {"driver", r.driver},
              {"cuda", r.cuda},
              {"nccl", r.nccl},
              {"fingerprint", r.fingerprint},
              {"tool_version", r.tool_version},
              {"points", r.points},
              {"ok_points", r.ok_points}};
}

int history_list(const HistoryStore& store, bool json) {
  const std::vector<HistoryRun> runs = store.list();
  if (json) {
    Json out = Json::array();
    for (const HistoryRun& r : runs) out.push_back(run_json(r));
    std::cout << dump_json(out, 2) << "\n";
    return 0;
  }
  if (runs.empty()) {
    std::cout << "No runs recorded in " << store.path() << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const HistoryRun& r : runs) {
    rows.push_back({std::to_string(r.id), r.started_at, r.host,
                    std::to_string(r.gpu_count) + "x " + or_dash(r.gpu_model), or_dash(r.driver),
                    or_dash(r.cuda), or_dash(r.nccl),
                    std::to_string(r.ok_points) + "/" + std::to_string(r.points),
                    or_dash(r.fingerprint)});
  }
  print_table({"run", "started (UTC)", "host", "GPUs", "driver", "CUDA", "NCCL", "ok/points",
               "fingerprint"},
              rows, 9);
  return 0;
}

int history_show(const HistoryStore& store, const std::string& ref, bool json) {
  const std::int64_t id = store.resolve(ref);
  const HistoryRun run = store.run(id);
  const std::vector<HistoryPoint> points = store.points(id);
  if (json) {
    Json out = run_json(run);
    out["points"] = Json::array();
    for (const HistoryPoint& p : points) {
      out["points"].push_back(Json{{"idx", p.idx},
                                   {"workload", p.workload},
                                   {"params", p.params},
                                   {"gpus", p.gpus},
                                   {"status", p.status},
                                   {"median_s", p.median_s ? Json(*p.median_s) : Json(nullptr)},
                                   {"noisy", p.noisy},
                                   {"metrics", p.metrics}});
    }
    std::cout << dump_json(out, 2) << "\n";
    return 0;
  }
  std::ostringstream head;
  head << "Run " << run.id << ": started " << run.started_at << ", finished "
       << or_dash(run.finished_at) << " on " << run.host << "\n"
       << "  GPUs: " << run.gpu_count << "x " << or_dash(run.gpu_model) << "; driver "
       << or_dash(run.driver) << ", CUDA " << or_dash(run.cuda) << ", NCCL " << or_dash(run.nccl)
       << "\n"
       << "  fingerprint " << or_dash(run.fingerprint) << "; mgbench " << or_dash(run.tool_version)
       << "; " << run.ok_points << " of " << run.points << " points ok\n\n";
  std::cout << sanitize_text(head.str(), true);  // the database may come from another machine
  std::vector<std::vector<std::string>> rows;
  for (const HistoryPoint& p : points) {
    std::string metrics;
    for (auto it = p.metrics.begin(); it != p.metrics.end(); ++it) {
      metrics += (metrics.empty() ? "" : " ") + it.key() + "=" + number(it.value().get<double>());
    }
    rows.push_back({p.workload, params_text(p.params), std::to_string(p.gpus),
                    p.status + (p.noisy ? " (noisy)" : ""),
                    p.median_s ? number(*p.median_s * 1e3) : "-", or_dash(metrics)});
  }
  print_table({"workload", "params", "gpus", "status", "median ms", "metrics"}, rows, 4);
  return 0;
}

void print_trend_json(const TrendQuery& query, const std::vector<TrendRow>& rows) {
  Json out = Json::array();
  for (const TrendRow& r : rows) {
    out.push_back(Json{{"run", r.run_id},
                       {"started_at", r.started_at},
                       {"group", r.group},
                       {"params", r.params},
                       {"gpus", r.gpus},
                       {"value", r.value}});
  }
  std::cout << Json{{"workload", query.workload},
                    {"metric", query.metric},
                    {"by", query.by},
                    {"rows", out}}
                   .dump(2, ' ', false, Json::error_handler_t::replace)
            << "\n";
}

void print_trend_rows(const TrendQuery& query, const std::vector<TrendRow>& rows) {
  std::vector<std::vector<std::string>> table;
  for (const TrendRow& r : rows) {
    std::vector<std::string> row = {std::to_string(r.run_id), r.started_at};
    if (!query.by.empty()) row.push_back(or_dash(r.group));
    row.insert(row.end(), {params_text(r.params), std::to_string(r.gpus), number(r.value)});
    table.push_back(std::move(row));
  }
  std::vector<std::string> header = {"run", "started (UTC)"};
  if (!query.by.empty()) header.push_back(query.by);
  header.insert(header.end(), {"params", "gpus", query.metric});
  print_table(header, table, header.size() - 2);
}

// Per configuration and group (in order of first appearance): runs, median, min, max, and the
// median relative to the configuration's first group.
void print_trend_groups(const TrendQuery& query, const std::vector<TrendRow>& rows) {
  struct Group {
    std::string config, group;
    std::vector<double> values;
  };
  std::vector<Group> groups;
  for (const TrendRow& r : rows) {
    const std::string config = params_text(r.params) + "\t" + std::to_string(r.gpus);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.config == config && g.group == r.group;
    });
    if (it == groups.end()) {
      groups.push_back(Group{config, r.group, {}});
      it = groups.end() - 1;
    }
    it->values.push_back(r.value);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.config < b.config; });
  std::map<std::string, double> first_median;
  std::vector<std::vector<std::string>> summary;
  for (Group& g : groups) {
    std::sort(g.values.begin(), g.values.end());
    const double median = median_of(g.values);
    std::string change = "-";
    if (auto it = first_median.find(g.config); it == first_median.end()) {
      first_median[g.config] = median;
    } else if (it->second != 0) {
      std::ostringstream text;
      text << std::showpos << std::fixed << std::setprecision(1)
           << (median / it->second - 1.0) * 100.0 << " %";
      change = text.str();
    }
    const std::string params = g.config.substr(0, g.config.find('\t'));
    const std::string gpus = g.config.substr(g.config.find('\t') + 1);
    summary.push_back({params, gpus, or_dash(g.group), std::to_string(g.values.size()),
                       number(median), number(g.values.front()), number(g.values.back()), change});
  }
  std::cout << "\nBy " << one_line(query.by) << ":\n";
  print_table({"params", "gpus", query.by, "runs", "median", "min", "max", "vs first"}, summary, 3);
}

int history_trend(const HistoryStore& store, const TrendQuery& query, bool json) {
  const std::vector<TrendRow> rows = store.trend(query);
  if (json) {
    print_trend_json(query, rows);
    return 0;
  }
  std::cout << one_line(query.workload + " " + query.metric +
                        (query.by.empty() ? "" : " by " + query.by) + " (" + store.path() + ")")
            << "\n";
  print_trend_rows(query, rows);
  if (!query.by.empty()) print_trend_groups(query, rows);
  return 0;
}

// One exported point: its run's fields, then the point's.
Json export_row(const HistoryRun& r, const HistoryPoint& p) {
  Json row = run_json(r);
  row.erase("points");
  row.erase("ok_points");
  row.erase("id");
  row["run"] = r.id;
  row.update(Json{{"idx", p.idx},
                  {"workload", p.workload},
                  {"params", p.params},
                  {"gpus", p.gpus},
                  {"status", p.status},
                  {"noisy", p.noisy},
                  {"median_s", p.median_s ? Json(*p.median_s) : Json(nullptr)},
                  {"metrics", p.metrics}});
  return row;
}

std::string csv_cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return reports::csv_field(v.get<std::string>());
  if (v.is_number_float()) return reports::format_exact(v.get<double>());
  return reports::csv_field(v.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// CSV: the run and point fields, then a column per parameter and per metric (union of all rows).
void write_export_csv(const std::vector<Json>& rows) {
  const std::vector<std::string> fixed = {
      "run",     "started_at", "finished_at", "host",   "gpu_model", "gpu_count",
      "driver",  "cuda",       "nccl",        "fingerprint", "tool_version", "idx",
      "workload", "gpus",      "status",      "noisy",  "median_s"};
  std::set<std::string> params, metrics;
  for (const Json& row : rows) {
    for (auto it = row["params"].begin(); it != row["params"].end(); ++it) params.insert(it.key());
    for (auto it = row["metrics"].begin(); it != row["metrics"].end(); ++it) {
      metrics.insert(it.key());
    }
  }
  std::string line;
  for (const std::string& h : fixed) line += (line.empty() ? "" : ",") + reports::csv_field(h);
  for (const std::string& k : params) line += "," + reports::csv_field("param." + k);
  for (const std::string& k : metrics) line += "," + reports::csv_field("metric." + k);
  std::cout << line << "\r\n";
  for (const Json& row : rows) {
    line.clear();
    for (const std::string& h : fixed) line += (h == "run" ? "" : ",") + csv_cell(row[h]);
    for (const std::string& k : params) line += "," + csv_cell(row["params"].value(k, Json()));
    for (const std::string& k : metrics) line += "," + csv_cell(row["metrics"].value(k, Json()));
    std::cout << line << "\r\n";
  }
}

int history_export(const HistoryStore& store, const std::string& ref, const std::string& format) {
  if (format == "json") {
    if (ref == "all") throw UsageError("history export all: needs --format csv or jsonl");
    std::cout << store.document(store.resolve(ref)) << "\n";
    return 0;
  }
  std::vector<HistoryRun> runs;
  if (ref == "all") {
    runs = store.list();
  } else {
    runs.push_back(store.run(store.resolve(ref)));
  }
  std::vector<Json> rows;
  for (const HistoryRun& r : runs) {
    for (const HistoryPoint& p : store.points(r.id)) rows.push_back(export_row(r, p));
  }
  if (format == "csv") {
    write_export_csv(rows);
  } else {
    for (const Json& row : rows) {
      std::cout << row.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    }
  }
  return 0;
}

// The trend options (only `trend` takes them).
TrendQuery trend_query(const cxxopts::ParseResult& parsed, const std::string& sub) {
  TrendQuery query;
  if (sub == "trend") {
    if (!parsed.count("workload") || !parsed.count("metric")) {
      throw UsageError("history trend: --workload W and --metric M are required");
    }
    query.workload = parsed["workload"].as<std::string>();
    query.metric = parsed["metric"].as<std::string>();
    if (parsed.count("by")) {
      query.by = parsed["by"].as<std::string>();
      const auto& fields = trend_fields();
      if (std::find(fields.begin(), fields.end(), query.by) == fields.end()) {
        std::string known;
        for (const std::string& f : fields) known += (known.empty() ? "" : ", ") + f;
        throw UsageError("--by " + query.by + ": expected one of " + known);
      }
    }
    if (parsed.count("gpus")) {
      query.gpus = static_cast<int>(parse_positive_int(parsed["gpus"].as<std::string>(), "--gpus"));
    }
  } else if (parsed.count("workload") || parsed.count("metric") || parsed.count("by") ||
             parsed.count("gpus")) {
    throw UsageError("history " + sub + ": --workload, --metric, --by and --gpus belong to trend");
  }
  return query;
}

}  // namespace

int cmd_history(int argc, char** argv) {
  if (argc < 2) {
    throw UsageError(
        "expected a subcommand: list, show, trend or export (see mgbench history --help)");
  }
  if (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") throw HelpRequested(kUsage);
  const std::string sub = argv[1];
  if (sub != "list" && sub != "show" && sub != "trend" && sub != "export") {
    throw UsageError("history " + sub +
                     ": unknown subcommand (expected list, show, trend or export)");
  }
  cxxopts::Options options("mgbench history " + sub, "The runs recorded in the history store");
  // clang-format off
  options.add_options()
      ("db", "History database", cxxopts::value<std::string>(), "PATH")
      ("json", "JSON output")
      ("workload", "trend: the workload", cxxopts::value<std::string>(), "W")
      ("metric", "trend: a point metric, or median_s", cxxopts::value<std::string>(), "M")
      ("by", "trend: group by a run field", cxxopts::value<std::string>(), "FIELD")
      ("gpus", "trend: only points on this many GPUs", cxxopts::value<std::string>(), "N")
      ("format", "export: json (the results document), csv or jsonl (a row per point)",
       cxxopts::value<std::string>(), "FMT")
      ("h,help", "Show this help")
      ("run", "Run id or 'last'", cxxopts::value<std::vector<std::string>>());
  // clang-format on
  options.parse_positional({"run"});
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(argc - 1, argv + 1);
  } catch (const std::exception& e) {
    throw UsageError("history " + sub + ": " + e.what() + " (see mgbench history --help)");
  }
  if (parsed.count("help")) throw HelpRequested(kUsage);
  const std::vector<std::string> positional = parsed.count("run")
                                                  ? parsed["run"].as<std::vector<std::string>>()
                                                  : std::vector<std::string>{};
  const bool needs_run = sub == "show" || sub == "export";
  if (needs_run && positional.size() != 1) {
    throw UsageError("history " + sub +
                     ": expected one RUN (an id from `history list`, or 'last')");
  }
  if (!needs_run && !positional.empty()) {
    throw UsageError("history " + sub + ": unexpected argument '" + positional[0] + "'");
  }
  const TrendQuery query = trend_query(parsed, sub);
  const std::string format = parsed.count("format") ? parsed["format"].as<std::string>() : "json";
  if (parsed.count("format") && sub != "export") {
    throw UsageError("history " + sub + ": --format belongs to export");
  }
  if (format != "json" && format != "csv" && format != "jsonl") {
    throw UsageError("history export --format " + format + ": expected json, csv or jsonl");
  }
  const bool json = parsed.count("json") > 0;
  const std::string db =
      parsed.count("db") ? parsed["db"].as<std::string>() : default_history_path();
  if (parse_only()) return 0;

  // Reading never creates or migrates the file. No database yet: nothing was recorded.
  std::error_code missing;
  if (history_available() && !std::filesystem::exists(db, missing)) {
    if (sub != "list") {
      throw UsageError("no run recorded yet: history database " + db + " does not exist");
    }
    if (json) {
      std::cout << "[]\n";
    } else {
      std::cout << "No run recorded yet (no history database at " << db << ")\n";
    }
    return 0;
  }
  const HistoryStore store(db, HistoryMode::read_only);
  if (sub == "list") return history_list(store, json);
  if (sub == "show") return history_show(store, positional[0], json);
  if (sub == "trend") return history_trend(store, query, json);
  return history_export(store, positional[0], format);
}

}  // namespace mgbench
