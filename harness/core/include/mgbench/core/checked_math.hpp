#pragma once
// Allocation sizes computed from parameters: a product that does not fit in size_t is an error,
// never a wrapped (tiny) buffer that a kernel then overruns.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "mgbench/core/error.hpp"

namespace mgbench {

// The product of `factors`; throws UsageError "<what> overflows (a x b x ...)" when it does not
// fit in std::size_t.
inline std::size_t checked_product(std::initializer_list<std::uint64_t> factors,
                                   const std::string& what) {
  static_assert(sizeof(std::size_t) == sizeof(std::uint64_t), "64-bit size_t expected");
  std::size_t product = 1;
  for (std::uint64_t f : factors) {
    if (__builtin_mul_overflow(product, static_cast<std::size_t>(f), &product)) {
      std::string terms;
      for (std::uint64_t g : factors) terms += (terms.empty() ? "" : " x ") + std::to_string(g);
      throw UsageError(what + " overflows (" + terms + ")");
    }
  }
  return product;
}

// a + b, with the same error.
inline std::size_t checked_sum(std::size_t a, std::size_t b, const std::string& what) {
  std::size_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw UsageError(what + " overflows (" + std::to_string(a) + " + " + std::to_string(b) + ")");
  }
  return sum;
}

}  // namespace mgbench
