// Test hooks end to end: a sweep with a hook warns and records it in its environment (with a
// fake-device environment compare can see), a resume under other hooks is refused, and
// `compare` calls no regression across runs with different hooks (exit 5, says why).
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::Json;
using mgbench::test::kQuiet;
using mgbench::test::kSelftestEnv;
using mgbench::test::run_mgbench;

namespace {

struct Dir {
  std::string path;
  explicit Dir(const std::string& tag) : path(mgbench::test::temp_dir(tag)) {}
  ~Dir() { std::filesystem::remove_all(path); }
};

const std::string kSweep = "sweep --workloads selftest --param behavior=ok,brief --gpus 1,2";

// The results document at `path` with 20 samples per point around `op_s` seconds.
Json with_samples(const std::string& path, double op_s) {
  Json doc = Json::parse(mgbench::test::read_text(path));
  for (Json& p : doc["points"]) {
    Json samples = Json::array();
    for (int i = 0; i < 20; ++i) samples.push_back(op_s * (1.0 + 0.001 * (i % 5)));
    p["samples"] = samples;
    p["stats"]["n"] = 20;
    p["stats"]["median"] = op_s;
    p["metrics"]["ops_per_s"] = p["gpus"].get<double>() / op_s;
    p["noisy"] = false;
  }
  return doc;
}

std::string save(const std::string& path, const Json& doc) {
  std::ofstream(path) << doc.dump();
  return path;
}

}  // namespace

TEST_CASE("a sweep with test hooks warns and records them in its environment") {
  Dir dir("hooks-env");
  const auto r = run_mgbench(kSweep + " --out " + dir.path + "/out" +
                                 " --no-history --no-report --skip-doctor --no-telemetry",
                             kSelftestEnv);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("test hooks active (MGBENCH_TEST_FAKE_DEVICES=2)") != std::string::npos);
  const auto run = mgbench::load_results(dir.path + "/out/results.json");
  const Json& env = run.environment;
  CHECK(env.at("test_hooks") == Json{{"MGBENCH_TEST_FAKE_DEVICES", "2"}});
  // Fake devices still get an environment: compare sees them, and a fingerprint.
  CHECK(env.at("fake_devices") == true);
  CHECK(env.at("gpu_count") == 2);
  CHECK(env.at("gpus").size() == 2);
  CHECK(env.at("fingerprint_hash").get<std::string>().size() == 16);
}

TEST_CASE("resuming under other test hooks is refused (exit 2, one line)") {
  Dir dir("hooks-resume");
  const std::string out = dir.path + "/out";
  REQUIRE(run_mgbench(kSweep + " --out " + out + kQuiet, kSelftestEnv).exit_code == 0);
  const auto r = run_mgbench("sweep --resume " + out + kQuiet,
                             kSelftestEnv + " MGBENCH_TEST_SLOWDOWN=0.5");
  CHECK(r.exit_code == 2);
  CHECK(mgbench::test::line_count(r.err) == 1);
  CHECK(r.err.find("test hooks") != std::string::npos);
  // The same hooks resume.
  CHECK(run_mgbench("sweep --resume " + out + kQuiet, kSelftestEnv).exit_code == 0);
}

TEST_CASE("compare calls no regression across runs with different test hooks (exit 5)") {
  Dir dir("hooks-compare");
  REQUIRE(run_mgbench(kSweep + " --out " + dir.path + "/out" + kQuiet, kSelftestEnv).exit_code ==
          0);
  const std::string written = dir.path + "/out/results.json";
  const std::string base = save(dir.path + "/base.json", with_samples(written, 1e-3));
  Json slower = with_samples(written, 1.5e-3);
  const std::string same_hooks = save(dir.path + "/same.json", slower);
  // Same hooks on both sides: a real regression, exit 1.
  const auto gate = run_mgbench("compare " + base + " " + same_hooks);
  CHECK(gate.exit_code == 1);
  slower["environment"]["test_hooks"]["MGBENCH_TEST_SLOWDOWN"] = "0.5";
  const std::string other_hooks = save(dir.path + "/other.json", slower);
  const auto r = run_mgbench("compare " + base + " " + other_hooks);
  CHECK(r.exit_code == 5);
  CHECK(r.err.find("different test hooks") != std::string::npos);
  CHECK(r.err.find("MGBENCH_TEST_SLOWDOWN") != std::string::npos);
  const auto json = run_mgbench("compare --json " + base + " " + other_hooks);
  CHECK(json.exit_code == 5);
  CHECK(Json::parse(json.out).at("summary").at("exit_code") == 5);
}

TEST_CASE("compare exits 5 when every point is noisy") {
  Dir dir("hooks-noisy");
  REQUIRE(run_mgbench(kSweep + " --out " + dir.path + "/out" + kQuiet, kSelftestEnv).exit_code ==
          0);
  Json doc = with_samples(dir.path + "/out/results.json", 1e-3);
  for (Json& p : doc["points"]) p["noisy"] = true;
  const std::string a = save(dir.path + "/a.json", doc), b = save(dir.path + "/b.json", doc);
  const auto r = run_mgbench("compare " + a + " " + b);
  CHECK(r.exit_code == 5);
  CHECK(r.err.find("noisy") != std::string::npos);
}
