#pragma once
// Console rendering of `mgbench compare`: the regression comparison of two runs and the
// side-by-side offer table. Registered with the harness (mgbench/compare.hpp) at static
// initialisation, so the `compare` command finds them without including reports/.
#include <ostream>
#include <string>
#include <vector>

#include "mgbench/analysis/compare.hpp"
#include "mgbench/core/params.hpp"

namespace mgbench::reports {

void render_comparison(std::ostream& out, const Comparison& comparison);
void render_offers(std::ostream& out, const OfferComparison& comparison);

// "dtype=bf16 m=8192" (strings unquoted, keys in order); "-" for no parameters.
std::string format_params(const Params& params);
// Four significant digits with the unit: "712.3 TFLOP/s"; times scale to ns/us/ms/s.
std::string format_quantity(double value, const std::string& unit);
// "+3.1 %" / "-12.0 %".
std::string format_change(double fraction);
// "0.0123", "3.2e-07".
std::string format_p_value(double p);

// Shared by the console and HTML offer tables: the GPU cell of a row ("8", or "1 (GPU 5)" for a
// per-device 1-GPU row), the best cell ("B", "tie: A, B", "-"), an offer's GPU count ("16 (2
// nodes)"), and why a per-GPU quantity has no per-watt or per-dollar figure.
std::string offer_row_gpus(const OfferRow& row);
std::string best_offer_text(const BestOffer& best, const std::vector<OfferSummary>& offers);
std::string offer_gpu_count(const OfferSummary& offer);
// Whether a row has a place in the part of `field`: a predicted row (OfferRow::predicted) only
// where some offer has a value (a prediction has no per-watt figure).
bool offer_row_shown(const OfferRow& row, std::optional<double> OfferCell::*field);
// What the predicted rows are and which offers have none ("" without --predict-gpus).
std::string offer_predicted_note(const OfferComparison& cmp);
inline constexpr const char* kPerGpuQuantityNote =
    "Per watt and per dollar are left out: this figure is per GPU and does not add across GPUs "
    "(a collective's bus bandwidth), so dividing it by power or price would compare nothing.";
// The GPU cell of a compared point: "8", or "1 (GPU 5)" when `devices` must tell apart points
// measured alone on several GPUs.
std::string compared_gpus(int gpus, const std::vector<int>& devices, bool with_devices);

}  // namespace mgbench::reports
