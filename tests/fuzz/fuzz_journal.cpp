// Journal replay (`sweep --resume`): any bytes give the points and a count of bad lines, or a
// one-line UsageError. Each replayed point is written back, as the resumed sweep does, and the
// header's plan is read as --resume reads it: taken, or refused with a one-line UsageError.
#include "fuzz_support.hpp"
#include "mgbench/run/sweep.hpp"
#include "mgbench/run/journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = mgbench::fuzz::write_input("journal", data, size);
  mgbench::fuzz::expect_only_mgbench_errors("journal", [&] {
    const mgbench::JournalReplay replay = mgbench::replay_journal(path);
    for (const auto& point : replay.points) (void)mgbench::Json(point).dump();
    (void)replay.header.dump();
    const mgbench::Json plan =
        replay.header.is_object() ? replay.header.value("plan_options", mgbench::Json())
                                  : mgbench::Json();
    (void)mgbench::with_recorded_plan(mgbench::SweepOptions{}, {}, plan, path);
  });
  return 0;
}
