#pragma once
// Console rendering of `mgbench compare`: the regression comparison of two runs and the
// side-by-side offer table. Registered with the harness (mgbench/compare.hpp) at static
// initialisation, so the `compare` command finds them without including reports/.
#include <ostream>
#include <string>

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

}  // namespace mgbench::reports
