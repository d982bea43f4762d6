#pragma once
// The order of JSON values (parameters above all) in time linear in their size.
#include <nlohmann/json.hpp>

namespace mgbench {

// -1, 0 or 1 as `a` orders before, with or after `b` in nlohmann's operator< order (numbers by
// value, strings bytewise, arrays and objects element by element), in time linear in their
// size: operator< compares equal nested values twice per level, 2^depth steps in all. Every
// sort of points or series by their parameters uses this.
int compare_values(const nlohmann::json& a, const nlohmann::json& b);
// compare_values(a, b) < 0.
bool params_less(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace mgbench
