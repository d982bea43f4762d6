// Test hooks: read only behind MGBENCH_ENABLE_TEST_WORKLOADS=1, bounded values, listed for the
// environment, and part of the fingerprint.
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/sweep.hpp"

namespace hooks = mgbench::test_hooks;

namespace {

// Sets environment variables for one scope, then removes them.
struct Env {
  std::vector<std::string> names;
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      ::setenv(name, value, 1);
      names.push_back(name);
    }
  }
  ~Env() {
    for (const auto& name : names) ::unsetenv(name.c_str());
  }
};

mgbench::SweepOptions parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return mgbench::parse_sweep_options(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("test hooks: without the switch no hook is read", "[hooks]") {
  const Env env{{hooks::kSlowdown, "5"},
                {hooks::kFakeDevices, "2"},
                {hooks::kJournalFailAfter, "1"},
                {hooks::kEnable, "yes"}};  // only "1" turns them on
  CHECK_FALSE(hooks::enabled());
  CHECK_FALSE(hooks::read(hooks::kSlowdown));
  CHECK(hooks::active().empty());
  CHECK(parse({"sweep"}).settings.test_slowdown == 0);
}

TEST_CASE("test hooks: with the switch they are read and listed", "[hooks]") {
  const Env env{{hooks::kEnable, "1"}, {hooks::kSlowdown, "0.5"}, {hooks::kFakeDevices, "2"}};
  CHECK(parse({"sweep"}).settings.test_slowdown == Approx(0.5));
  const auto active = hooks::active();
  REQUIRE(active.size() == 2);
  CHECK(active.at(hooks::kSlowdown) == "0.5");
  CHECK(active.at(hooks::kFakeDevices) == "2");
}

TEST_CASE("test hooks: a failing journal is not listed (it changes no figure)", "[hooks]") {
  const Env env{{hooks::kEnable, "1"}, {hooks::kJournalFailAfter, "2"}};
  CHECK(hooks::read(hooks::kJournalFailAfter) == std::optional<std::string>("2"));
  CHECK(hooks::active().empty());
}

TEST_CASE("test hooks: the training step's double reduction is listed when set", "[hooks]") {
  const Env env{{hooks::kEnable, "1"}, {hooks::kTrainDoubleReduce, "1"}};
  const auto active = hooks::active();
  REQUIRE(active.size() == 1);
  CHECK(active.at(hooks::kTrainDoubleReduce) == "1");
}

TEST_CASE("test hooks: huge, negative and non-numeric values are refused", "[hooks]") {
  const Env env{{hooks::kEnable, "1"}};
  for (const char* value : {"1e300", "1e20", "101", "-1", "nan", "inf", "2x"}) {
    const Env slow{{hooks::kSlowdown, value}};
    INFO(value);
    CHECK_THROWS_AS(parse({"sweep"}), mgbench::UsageError);
  }
  const Env fake{{hooks::kFakeDevices, "100000000"}};
  CHECK_THROWS_AS(hooks::read_number(hooks::kFakeDevices, 0, hooks::kMaxFakeDevices),
                  mgbench::UsageError);
}

TEST_CASE("test hooks: they change the fingerprint", "[hooks]") {
  mgbench::Json env{{"gpus", mgbench::Json::array({mgbench::Json{{"name", "Fake GPU"}}})},
                    {"gpu_count", 1}};
  const std::string plain = mgbench::fingerprint_hash(env);
  env["test_hooks"] = mgbench::Json::object();
  CHECK(mgbench::fingerprint_hash(env) == plain);  // none active: the same
  env["test_hooks"] = mgbench::Json{{hooks::kSlowdown, "0.5"}};
  const std::string slowed = mgbench::fingerprint_hash(env);
  CHECK(slowed != plain);
  env["test_hooks"] = mgbench::Json{{hooks::kSlowdown, "0.25"}};
  CHECK(mgbench::fingerprint_hash(env) != slowed);
}
