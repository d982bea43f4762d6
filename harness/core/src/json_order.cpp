#include "mgbench/core/json_order.hpp"

#include <algorithm>

namespace mgbench {

int compare_values(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() == b.type() && a.is_array()) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (const int c = compare_values(a[i], b[i])) return c;
    }
    return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
  }
  if (a.type() == b.type() && a.is_object()) {
    auto ia = a.begin();  // keys in order (std::map), as operator< walks them
    auto ib = b.begin();
    for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
      if (ia.key() != ib.key()) return ia.key() < ib.key() ? -1 : 1;
      if (const int c = compare_values(*ia, *ib)) return c;
    }
    if (ia == a.end() && ib == b.end()) return 0;
    return ia == a.end() ? -1 : 1;
  }
  // Scalars, or values of different types: operator< does not recurse there.
  if (a < b) return -1;
  return b < a ? 1 : 0;
}

bool params_less(const nlohmann::json& a, const nlohmann::json& b) {
  return compare_values(a, b) < 0;
}

}  // namespace mgbench
