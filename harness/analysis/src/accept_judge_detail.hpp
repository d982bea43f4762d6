#pragma once
// What the two files of the acceptance judges share (accept_judge.cpp, accept_judge_stages.cpp).
#include <string>
#include <utility>

#include <fmt/format.h>

#include "mgbench/analysis/accept.hpp"

namespace mgbench::accept_detail {

// A checklist line names at most this many findings.
inline constexpr std::size_t kMaxDetails = 12;

inline void add_detail(AcceptItem& item, AcceptDetail detail) {
  if (item.details.size() < kMaxDetails) item.details.push_back(std::move(detail));
}

// An item with its identity and criterion; the judge fills in the rest.
inline AcceptItem make_item(std::string id, std::string stage, AcceptText criterion,
                            std::string subject = "") {
  AcceptItem item;
  item.id = std::move(id);
  item.stage = std::move(stage);
  item.subject = std::move(subject);
  item.criterion = std::move(criterion);
  return item;
}

// A fraction as "90.0 %".
inline std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100); }

}  // namespace mgbench::accept_detail
