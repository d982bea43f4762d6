// transformer_step through the real binary without a GPU: `mgbench list` documents it (presets,
// strategies, formulas), and a dry run on 1, 2, 4 and 8 GPUs plans every strategy where it can
// run (tp from 2 GPUs, tp_dp from 4), with a note for what it leaves out.
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;

namespace {

// The block of `mgbench list` that describes `name`.
std::string list_block(const std::string& out, const std::string& name) {
  const std::string text = "\n" + out;
  const auto at = text.find("\n" + name + ":");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find("\n\n", at + 1) - at);
}

// GPU count of each planned group -> the strategies of its points.
std::map<int, std::multiset<std::string>> strategies_by_gpus(const std::string& plan) {
  std::map<int, std::multiset<std::string>> out;
  std::istringstream in(plan);
  std::string line;
  int gpus = 0;
  while (std::getline(in, line)) {
    if (line.find("  group ") == 0) {
      const auto at = line.find("GPUs ");
      const std::string devices = line.substr(at + 5, line.find(' ', at + 5) - at - 5);
      gpus = 1;
      for (char c : devices) gpus += c == ',';
      continue;
    }
    const auto s = line.find("strategy=");
    if (s != std::string::npos && line.find('#') != std::string::npos) {
      out[gpus].insert(line.substr(s + 9, line.find(' ', s) - s - 9));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("list documents transformer_step: presets, strategies, formulas") {
  const auto r = run_mgbench("list");
  REQUIRE(r.exit_code == 0);
  const std::string block = list_block(r.out, "transformer_step");
  REQUIRE_FALSE(block.empty());
  for (const char* text :
       {"model=llama3-1b", "model=llama3-8b", "model=llama3-70b", "hidden 4096", "8 kv heads",
        "MLP 28672", "vocab 128256 left out", "model=custom", "6 P + 12 L heads*head_dim seq",
        "MFU", "--param strategy", "tp_dp", "GEMM-based", "--param layers"}) {
    CAPTURE(text);
    CHECK(block.find(text) != std::string::npos);
  }
  CHECK(list_block(r.out, "gemm").find("--param shape") != std::string::npos);
}

TEST_CASE("a dry run on 1, 2, 4 and 8 GPUs plans every strategy where it can run") {
  const auto r =
      run_mgbench("sweep --dry-run --gpus 1,2,4,8 --workloads transformer_step");
  REQUIRE(r.exit_code == 0);
  const auto plan = strategies_by_gpus(r.out);
  REQUIRE(plan.size() == 4);
  const auto has = [&](int gpus, const std::string& s) { return plan.at(gpus).count(s); };
  CHECK(has(1, "ddp") == 1);
  CHECK(has(1, "fsdp") == 1);
  CHECK(has(1, "tp") == 0);
  CHECK(has(1, "tp_dp") == 0);
  CHECK(has(2, "tp") == 1);
  CHECK(has(2, "tp_dp") == 0);
  for (int n : {4, 8}) {
    CAPTURE(n);
    for (const char* s : {"ddp", "fsdp", "tp", "tp_dp"}) CHECK(has(n, s) == 1);
  }
  CHECK(r.out.find("Note: transformer_step on 1 GPU: 1 point left out: tp needs at least 2 GPUs") !=
        std::string::npos);
  CHECK(r.out.find("Note: transformer_step on 2 GPUs: 1 point left out: tp_dp with tp_size 2 "
                   "needs a multiple of 4 GPUs") != std::string::npos);
}

TEST_CASE("a dry run leaves out tensor parallelism that does not divide the heads") {
  // 3 GPUs: tp 3 does not divide 32 heads; tp_dp with tp_size 2 needs a multiple of 4.
  const auto r = run_mgbench(
      "sweep --dry-run --gpus 3 --workloads transformer_step --param strategy=tp,tp_dp,ddp");
  REQUIRE(r.exit_code == 0);
  const auto plan = strategies_by_gpus(r.out);
  REQUIRE(plan.count(3) == 1);
  CHECK(plan.at(3) == std::multiset<std::string>{"ddp"});
  CHECK(r.out.find("does not divide the heads (32)") != std::string::npos);
}
