// compare's input: two or more results documents (separated by a line "@@@") are read with the
// results loader, then compared as `mgbench compare` does: the gate between the first two
// (with the others as --baseline runs) and the offer table over all, as JSON. (The rendering of
// hostile strings is the reports tests' business.)
#include <sstream>

#include "fuzz_support.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/results.hpp"

namespace {

std::vector<std::string> split_documents(const std::string& text) {
  std::vector<std::string> documents(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "@@@") {
      documents.emplace_back();
    } else {
      documents.back() += line + "\n";
    }
  }
  return documents;
}

void compare_all(const std::vector<mgbench::RunResult>& runs) {
  using namespace mgbench;
  const CompareOptions options;
  std::vector<const RunResult*> noise_runs;
  for (const RunResult& run : runs) noise_runs.push_back(&run);
  const NoiseMap noise = estimate_noise(noise_runs, options);
  const Comparison cmp =
      compare_runs(runs[0], runs[1], options, runs.size() > 2 ? &noise : nullptr);
  (void)comparison_to_json(cmp).dump();
  (void)comparison_exit_code(cmp);
  std::vector<Offer> offers;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    offers.push_back({"run" + std::to_string(i), "in.json", &runs[i],
                      i == 0 ? std::optional<double>(2.5) : std::nullopt});
  }
  const OfferComparison table = compare_offers(offers, options);
  (void)offers_to_json(table).dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> documents =
      split_documents(std::string(reinterpret_cast<const char*>(data), size));
  if (documents.size() < 2 || documents.size() > 4) return 0;
  mgbench::fuzz::expect_only_mgbench_errors("compare", [&] {
    std::vector<mgbench::RunResult> runs;
    for (const std::string& text : documents) {
      const std::string path = mgbench::fuzz::write_input(
          "compare", reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
      runs.push_back(mgbench::load_results(path));
    }
    compare_all(runs);
  });
  return 0;
}
