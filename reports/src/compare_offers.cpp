// The comparison report's offer sections: the offers' fingerprints and, per workload, the
// offers side by side (throughput, scaling efficiency, per watt, per dollar, best per row).
#include <fmt/format.h>

#include "compare_internal.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports::cmp {
namespace {

struct Part {
  std::string title;
  std::optional<double> OfferCell::*value;
  BestOffer OfferRow::*best;  // nullptr: no best offer for this part
};

bool is_efficiency(const Part& part) { return part.value == &OfferCell::efficiency; }

bool any_value(const OfferTable& t, const Part& part) {
  for (const OfferRow& r : t.rows) {
    if (is_efficiency(part) && r.gpus <= 1) continue;  // 1 at one GPU by definition
    for (const OfferCell& c : r.cells) {
      if ((c.*(part.value)).has_value()) return true;
    }
  }
  return false;
}

std::string offer_cell(const OfferTable& t, const OfferRow& r, std::size_t i, const Part& part) {
  if (i >= r.cells.size() || !r.cells[i].present) return td_num("n/a", "na");
  const OfferCell& c = r.cells[i];
  if (c.status != Status::ok) return td_num(to_string(c.status), "bad-status");
  const std::optional<double>& v = c.*(part.value);
  std::string text = "-";
  if (v && is_efficiency(part)) {
    text = format_percent(*v);
  } else if (v && part.value == &OfferCell::throughput && t.quantity.metric.empty()) {
    text = format_quantity(*v, "s");
  } else if (v) {
    text = format_sig(*v, 4);
  }
  if (c.unreliable) text += "*";
  const BestOffer* best = part.best != nullptr ? &(r.*(part.best)) : nullptr;
  if (v && best != nullptr && !best->tie() && best->offer == static_cast<int>(i)) {
    return "<td class=\"num best\">\u2605 " + esc(text) + "</td>";
  }
  return td_num(text);
}

std::string part_table(const Context& ctx, const OfferTable& t, const Part& part,
                       const std::vector<std::string>& vary, const Presentation& presentation) {
  const auto& offers = ctx.offer_cmp->offers;
  HtmlTable table;
  table.column("parameters");
  table.column("GPUs", true);
  for (const OfferSummary& o : offers) table.column(o.label, true);
  if (part.best != nullptr) table.column("best");
  for (const OfferRow& r : t.rows) {
    if ((is_efficiency(part) && r.gpus <= 1) || !offer_row_shown(r, part.value)) continue;
    std::vector<std::string> cells = {td(params_text(r.params, vary, presentation)),
                                      td_num(offer_row_gpus(r))};
    for (std::size_t i = 0; i < offers.size(); ++i) cells.push_back(offer_cell(t, r, i, part));
    if (part.best != nullptr) cells.push_back(td(best_offer_text(r.*(part.best), offers)));
    table.add(std::move(cells));
  }
  return "<h4>" + esc(part.title) + "</h4>\n" + table.render();
}

}  // namespace

std::string offers_summary_section(const Context& ctx) {
  HtmlTable t;
  for (const char* h : {"offer", "GPU", "count", "interconnect", "driver", "CUDA", "NCCL",
                        "platform", "$/GPU-h", "host", "started", "file"}) {
    const std::string name = h;
    t.column(name, name == "count" || name == "$/GPU-h");
  }
  const auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  const auto& offers = ctx.offer_cmp->offers;
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const OfferSummary& o = offers[i];
    t.add({td(o.label), td(dash(o.gpu_model)), td_num(offer_gpu_count(o)),
           td(dash(o.interconnect)), td(dash(o.driver)), td(dash(o.cuda)), td(dash(o.nccl)),
           td(dash(o.platform)),
           td_num(o.price_per_gpu_hour ? format_sig(*o.price_per_gpu_hour, 3) : "-"),
           td(dash(o.host)), td(dash(i < ctx.runs.size() ? ctx.runs[i]->started_at : "")),
           td(o.path, "path")});
  }
  return section_open("offers", "Offers") + t.render() + "</section>\n";
}

std::string offer_tables(const Context& ctx, const std::string& workload) {
  bool any_price = false;
  for (const OfferSummary& o : ctx.offer_cmp->offers) any_price |= o.price_per_gpu_hour.has_value();
  const Presentation& presentation = ctx.presentation_of(workload);
  std::string out;
  for (const OfferTable& t : ctx.offer_cmp->tables) {
    if (t.workload != workload) continue;
    const bool is_time = t.quantity.metric.empty();
    const std::string unit = is_time ? "" : t.quantity.unit;
    std::vector<const Params*> params;
    for (const OfferRow& r : t.rows) params.push_back(&r.params);
    const auto vary = varying_keys(params);
    const std::string per = unit.empty() ? "" : unit + " ";
    const Part parts[] = {
        {"Throughput" + (unit.empty() ? std::string() : " (" + unit + ")"), &OfferCell::throughput,
         &OfferRow::best_throughput},
        {"Scaling efficiency", &OfferCell::efficiency, nullptr},
        {"Per watt (" + per + "per W)", &OfferCell::per_watt, &OfferRow::best_per_watt},
        {"Per dollar (" + per + "per $/h: throughput / (price per GPU-hour x GPUs))",
         &OfferCell::per_dollar, &OfferRow::best_per_dollar}};
    out += "<h3>" + esc(workload + ": offers side by side") + "</h3>\n";
    std::string cap = quantity_caption(t.quantity, false);
    const std::string fixed = fixed_params_text(params, vary, presentation);
    if (!fixed.empty()) cap += " Same in every row: " + fixed + ".";
    cap +=
        " Best offer per row: \u2605 and bold; offers within " +
        format_percent(ctx.offer_cmp->tie_margin, 0) +
        " of the best are a tie (no \u2605). * noisy or throttled in that run; n/a: the offer "
        "did not run this point.";
    out += caption(cap);
    if (const std::string note = offer_predicted_note(*ctx.offer_cmp); !note.empty()) {
      out += "<p class=\"note\">" + esc(note) + "</p>\n";
    }
    if (t.per_gpu_quantity) out += "<p class=\"note\">" + esc(kPerGpuQuantityNote) + "</p>\n";
    for (const Part& part : parts) {
      if (any_value(t, part)) {
        out += part_table(ctx, t, part, vary, presentation);
      } else if (part.value == &OfferCell::per_dollar && !any_price && !is_time &&
                 !t.per_gpu_quantity) {
        out +=
            "<p class=\"note\">Per dollar: give --price LABEL=USD_PER_GPU_HOUR for each "
            "offer.</p>\n";
      }
    }
  }
  return out;
}

}  // namespace mgbench::reports::cmp
