// Console rendering of comparisons and offer tables (plain text, fixed-width columns).
#include "mgbench/reports/compare_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mgbench/core/text.hpp"

namespace mgbench::reports {
namespace {

// A minimal fixed-width table. `align` holds one letter per column, 'l' or 'r' (missing
// letters: right). Two spaces between columns, `indent` spaces before each line; no header
// line when `header` is empty.
class TextTable {
 public:
  TextTable(std::vector<std::string> header, std::string align)
      : header_(std::move(header)), align_(std::move(align)) {}
  // Cells pass the core sanitiser: they hold text from the compared files.
  void add(std::vector<std::string> row) {
    if (!header_.empty()) row.resize(header_.size());
    for (std::string& cell : row) cell = one_line(cell);
    rows_.push_back(std::move(row));
  }
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out, int indent = 2) const {
    std::size_t columns = header_.size();
    for (const auto& row : rows_) columns = std::max(columns, row.size());
    std::vector<std::size_t> width(columns, 0);
    auto measure = [&](const std::vector<std::string>& row) {
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    };
    measure(header_);
    for (const auto& row : rows_) measure(row);
    auto line = [&](const std::vector<std::string>& row) {
      std::string text(static_cast<std::size_t>(indent), ' ');
      for (std::size_t i = 0; i < row.size(); ++i) {
        const std::string pad(width[i] - row[i].size(), ' ');
        const bool left = i < align_.size() && align_[i] == 'l';
        text += left ? row[i] + pad : pad + row[i];
        if (i + 1 < row.size()) text += "  ";
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out << text << "\n";
    };
    if (!header_.empty()) line(header_);
    for (const auto& row : rows_) line(row);
  }

 private:
  std::vector<std::string> header_;
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

std::string significant(double value, int digits = 4) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return "0";
  std::ostringstream out;
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

std::string percent(double fraction) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << fraction * 100.0 << " %";
  return out.str();
}

std::string quantity_name(const Quantity& q) {
  if (q.metric.empty()) return "median time per op (lower is better)";
  return q.metric + (q.unit.empty() ? "" : " [" + q.unit + "]") +
         (q.higher_is_better ? " (higher is better)" : " (lower is better)");
}

std::string point_label(const std::string& workload, const Params& params, int gpus) {
  return workload + " " + format_params(params) + " gpus=" + std::to_string(gpus);
}

std::string optional_text(const std::optional<double>& value, bool as_percent = false) {
  if (!value) return "-";
  return as_percent ? percent(*value) : significant(*value);
}

}  // namespace

std::string format_params(const Params& params) {
  if (params.empty()) return "-";
  std::string text;
  for (const auto& [key, value] : params) {
    if (!text.empty()) text += " ";
    text += key + "=" + value.str();
  }
  return text;
}

std::string format_quantity(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "-";
  if (unit == "s") {
    const double a = std::fabs(value);
    if (a < 1e-6) return significant(value * 1e9) + " ns";
    if (a < 1e-3) return significant(value * 1e6) + " us";
    if (a < 1.0) return significant(value * 1e3) + " ms";
    return significant(value) + " s";
  }
  return significant(value) + (unit.empty() ? "" : " " + unit);
}

std::string format_p_value(double p) {
  std::ostringstream out;
  if (p < 0.0001) {
    out << std::scientific << std::setprecision(1) << p;
  } else {
    out << std::fixed << std::setprecision(4) << p;
  }
  return out.str();
}

std::string format_change(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  std::ostringstream out;
  out << std::showpos << std::fixed << std::setprecision(1) << fraction * 100.0 << " %";
  return out.str();
}

namespace {

void render_environment(std::ostream& out, const Comparison& cmp) {
  if (cmp.environment.empty()) {
    out << "Environment: no changes\n";
  } else {
    out << "Environment changes:\n";
    TextTable table({}, "llll");
    for (const EnvChange& c : cmp.environment) {
      table.add({c.path + (c.count > 1 ? " (x" + std::to_string(c.count) + ")" : "") + ":",
                 c.before, "->", c.after});
    }
    table.print(out);
  }
  if (cmp.fingerprint_differs) {
    out << "  note: the environment fingerprints differ (GPU model, count, driver, CUDA or NCCL)\n";
  }
  if (!cmp.implementation_changes.empty()) {
    out << "  warning: " << cmp.implementation_changes.size()
        << " point(s) ran different code versions (e.g. "
        << one_line(cmp.implementation_changes.front())
        << "): a changed number there is not evidence of a driver change\n";
  }
  out << "\n";
}

// " (69 % of peak)" after a compared value whose side has a share of its hardware's peak.
std::string of_peak_suffix(const std::optional<double>& fraction) {
  if (!fraction) return "";
  char text[48];
  std::snprintf(text, sizeof text, " (%.0f %% of peak)", *fraction * 100.0);
  return text;
}

// One table per workload, rows in the order of the base run.
void render_points(std::ostream& out, const Comparison& cmp) {
  std::vector<std::string> workloads;
  for (const PointComparison& p : cmp.points) {
    if (std::find(workloads.begin(), workloads.end(), p.workload) == workloads.end()) {
      workloads.push_back(p.workload);
    }
  }
  for (const std::string& workload : workloads) {
    // One table per compared quantity, each under its own unit heading.
    std::vector<std::string> quantities;
    std::map<std::pair<std::string, int>, int> seen;  // the same parameters on as many GPUs
    for (const PointComparison& p : cmp.points) {
      if (p.workload != workload) continue;
      ++seen[{p.params.dump(), p.gpus}];
      if (std::find(quantities.begin(), quantities.end(), p.quantity.metric) == quantities.end())
        quantities.push_back(p.quantity.metric);
    }
    for (const std::string& q : quantities) {
      const auto first = std::find_if(cmp.points.begin(), cmp.points.end(), [&](const auto& p) {
        return p.workload == workload && p.quantity.metric == q;
      });
      out << one_line(workload) << ": " << one_line(quantity_name(first->quantity)) << "\n";
      TextTable table({"params", "gpus", "base", "new", "change", "p", "threshold", "verdict", "why"},
                      "lrrrrrrll");
      for (const PointComparison& p : cmp.points) {
        if (p.workload != workload || p.quantity.metric != q) continue;
        const bool show_reason = p.verdict != Verdict::same;
        const std::string parts = show_reason ? parts_change_text(p) : "";
        table.add({format_params(p.params),
                   compared_gpus(p.gpus, p.new_devices, seen[{p.params.dump(), p.gpus}] > 1),
                   format_quantity(p.base_value, p.quantity.unit) + of_peak_suffix(p.base_of_peak),
                   format_quantity(p.new_value, p.quantity.unit) + of_peak_suffix(p.new_of_peak),
                   format_change(p.change),
                   p.test ? format_p_value(p.test->p_value) : "-", percent(p.threshold),
                   to_string(p.verdict),
                   show_reason ? p.reason + (parts.empty() ? "" : "; " + parts) : ""});
      }
      table.print(out);
      out << "\n";
    }
  }
}

void render_unmatched(std::ostream& out, const Comparison& cmp) {
  if (!cmp.not_compared.empty()) {
    out << "Not compared (not ok in both runs, or measured differently):\n";
    for (const NotCompared& p : cmp.not_compared) {
      out << "  " << one_line(point_label(p.workload, p.params, p.gpus)) << ": base "
          << to_string(p.base_status) << ", new " << to_string(p.new_status)
          << (p.message.empty() ? "" : " (" + one_line(p.message) + ")") << "\n";
    }
    out << "\n";
  }
  auto unmatched = [&](const std::string& title, const std::vector<UnmatchedPoint>& list) {
    if (list.empty()) return;
    out << title << "\n";
    for (const UnmatchedPoint& p : list) {
      out << "  " << one_line(point_label(p.workload, p.params, p.gpus)) << " ("
          << to_string(p.status)
          << ")\n";
    }
    out << "\n";
  };
  unmatched("Only in " + one_line(cmp.base_label) + ":", cmp.only_in_base);
  unmatched("Only in " + one_line(cmp.new_label) + ":", cmp.only_in_new);
}

}  // namespace

void render_comparison(std::ostream& out, const Comparison& cmp) {
  out << "Comparing " << one_line(cmp.base_label) << " (" << one_line(cmp.base_path) << ") -> "
      << one_line(cmp.new_label) << " (" << one_line(cmp.new_path) << ")\n\n";
  render_environment(out, cmp);
  render_points(out, cmp);
  if (!cmp.efficiency.empty()) {
    out << "Scaling efficiency:\n";
    TextTable table({"workload", "params", "gpus", "base", "new"}, "llrrr");
    for (const EfficiencyRow& r : cmp.efficiency) {
      table.add({r.workload, format_params(r.params), std::to_string(r.gpus),
                 optional_text(r.base, true), optional_text(r.next, true)});
    }
    table.print(out);
    out << "\n";
  }
  render_unmatched(out, cmp);
  const int slower = cmp.count(Verdict::slower);
  out << "Summary: " << cmp.points.size() << " points compared: " << cmp.count(Verdict::same)
      << " same, " << cmp.count(Verdict::faster) << " faster, " << slower << " slower, "
      << cmp.count(Verdict::noisy) << " noisy";
  if (!cmp.not_compared.empty()) out << "; " << cmp.not_compared.size() << " not compared";
  const std::size_t unmatched_count = cmp.only_in_base.size() + cmp.only_in_new.size();
  if (unmatched_count) out << "; " << unmatched_count << " unmatched";
  out << (slower ? " -> REGRESSION" : "") << "\n";
}

namespace {

struct OfferSection {
  std::string title;
  std::optional<double> OfferCell::*field;
  BestOffer OfferRow::*best;
  bool as_percent;
};

std::string offer_cell_text(const OfferTable& t, const OfferCell& c, const OfferSection& section) {
  std::string text;
  if (!c.present) {
    text = "n/a";
  } else if (c.status != Status::ok) {
    text = to_string(c.status);
  } else if (section.field == &OfferCell::throughput && c.throughput) {
    text = t.quantity.metric.empty() ? format_quantity(*c.throughput, "s")
                                     : significant(*c.throughput);
  } else {
    text = optional_text(c.*(section.field), section.as_percent);
  }
  if (c.unreliable && c.status == Status::ok) text += "*";
  return text;
}

// One section of an offer table; false when no offer has a value for it.
bool render_offer_section(std::ostream& out, const OfferComparison& cmp, const OfferTable& t,
                          const OfferSection& section) {
  // Efficiency at one GPU is 1 by definition: those rows are left out of that section.
  const bool efficiency = section.field == &OfferCell::efficiency;
  bool any = false;
  for (const OfferRow& r : t.rows) {
    if (efficiency && r.gpus <= 1) continue;
    for (const OfferCell& c : r.cells) any = any || (c.*(section.field)).has_value();
  }
  if (!any) return false;
  out << "  " << section.title << "\n";
  std::vector<std::string> header = {"params", "gpus"};
  for (const OfferSummary& s : cmp.offers) header.push_back(s.label);
  if (section.best) header.push_back("best");
  TextTable table(header, "lr" + std::string(cmp.offers.size(), 'r') + "l");
  for (const OfferRow& r : t.rows) {
    if ((efficiency && r.gpus <= 1) || !offer_row_shown(r, section.field)) continue;
    std::vector<std::string> row = {format_params(r.params), offer_row_gpus(r)};
    for (const OfferCell& c : r.cells) row.push_back(offer_cell_text(t, c, section));
    if (section.best) row.push_back(best_offer_text(r.*(section.best), cmp.offers));
    table.add(row);
  }
  table.print(out, 4);
  return true;
}

}  // namespace

void render_offers(std::ostream& out, const OfferComparison& cmp) {
  out << "Offers:\n";
  TextTable offers({"offer", "GPU", "count", "interconnect", "driver", "CUDA", "NCCL", "platform",
                    "$/GPU-h", "host", "file"},
                   "llrllllllll");
  const auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  bool any_price = false;
  for (const OfferSummary& s : cmp.offers) {
    offers.add({s.label, s.gpu_model, offer_gpu_count(s), s.interconnect, dash(s.driver),
                dash(s.cuda), dash(s.nccl), s.platform,
                s.price_per_gpu_hour ? significant(*s.price_per_gpu_hour, 3) : "-", dash(s.host),
                s.path});
    any_price = any_price || s.price_per_gpu_hour.has_value();
  }
  offers.print(out);
  out << "\n";
  for (const OfferTable& t : cmp.tables) {
    out << t.workload << ": " << quantity_name(t.quantity) << "\n";
    const std::string unit = t.quantity.metric.empty() ? "s" : t.quantity.unit;
    const std::string per = unit.empty() ? "" : unit + " ";
    const std::vector<OfferSection> sections = {
        {"throughput" + (unit.empty() ? std::string() : " [" + unit + "]"), &OfferCell::throughput,
         &OfferRow::best_throughput, false},
        {"scaling efficiency", &OfferCell::efficiency, nullptr, true},
        {"per watt [" + per + "per W]", &OfferCell::per_watt, &OfferRow::best_per_watt, false},
        {"per dollar [" + per + "per $/h]", &OfferCell::per_dollar, &OfferRow::best_per_dollar,
         false},
    };
    if (t.per_gpu_quantity) out << "  " << kPerGpuQuantityNote << "\n";
    for (const OfferSection& section : sections) {
      if (!render_offer_section(out, cmp, t, section) &&
          section.field == &OfferCell::per_dollar && !any_price && !t.quantity.metric.empty() &&
          !t.per_gpu_quantity) {
        out << "  per dollar: give --price LABEL=USD_PER_GPU_HOUR for each offer\n";
      }
    }
    out << "\n";
  }
  out << "* noisy or throttled in that run. n/a: the offer did not run this point. Per dollar is "
         "throughput / (price per GPU-hour x GPUs). Offers within "
      << percent(cmp.tie_margin) << " of the best tie: no best is named.\n";
  if (const std::string note = offer_predicted_note(cmp); !note.empty()) out << note << "\n";
}

std::string offer_row_gpus(const OfferRow& row) {
  if (row.predicted) return std::to_string(row.gpus) + " predicted";
  return compared_gpus(row.gpus, row.devices, !row.devices.empty());
}

bool offer_row_shown(const OfferRow& row, std::optional<double> OfferCell::*field) {
  if (!row.predicted) return true;
  return std::any_of(row.cells.begin(), row.cells.end(),
                     [&](const OfferCell& c) { return (c.*field).has_value(); });
}

std::string offer_predicted_note(const OfferComparison& cmp) {
  if (!cmp.predicted_gpus) return "";
  std::string text = "Rows \"" + std::to_string(*cmp.predicted_gpus) +
                     " predicted\": each offer's prediction on that many GPUs from its own "
                     "results and links (mgbench predict; nodes as large as the offer's), not "
                     "a measurement; n/a there: no prediction of that point.";
  for (const std::string& why : cmp.not_predicted) text += " Not predicted: " + why + ".";
  return text;
}

std::string compared_gpus(int gpus, const std::vector<int>& devices, bool with_devices) {
  std::string text = std::to_string(gpus);
  if (!with_devices || devices.empty()) return text;
  std::string list;
  for (int d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
  return text + " (GPU " + list + ")";
}

std::string best_offer_text(const BestOffer& best, const std::vector<OfferSummary>& offers) {
  const auto label = [&](int i) {
    return i >= 0 && static_cast<std::size_t>(i) < offers.size()
               ? offers[static_cast<std::size_t>(i)].label
               : std::string("?");
  };
  if (best.tie()) {
    std::string list;
    for (int i : best.tied) list += (list.empty() ? "" : ", ") + label(i);
    return "tie: " + list;
  }
  return best.offer >= 0 ? label(best.offer) : "-";
}

std::string offer_gpu_count(const OfferSummary& offer) {
  return std::to_string(offer.gpu_count) +
         (offer.nodes > 1 ? " (" + std::to_string(offer.nodes) + " nodes)" : "");
}

}  // namespace mgbench::reports
