// The `--batch-sizes auto` out-of-memory boundary the executor applies (host only).
#include <string>

#include "catch_compat.hpp"
#include "mgbench/bench/batch_boundary.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

using mgbench::Json;
using mgbench::Params;
using mgbench::Status;
using mgbench::bench::BatchBoundary;

namespace {

Params point(std::int64_t batch, const std::string& dtype = "bf16") {
  return Json{{"batch", batch}, {"dtype", dtype}, {"layers", 8}};
}

}  // namespace

TEST_CASE("batch boundary: the series key ignores only the batch") {
  CHECK(BatchBoundary::series_key(point(8)) == BatchBoundary::series_key(point(4096)));
  CHECK(BatchBoundary::series_key(point(8)) != BatchBoundary::series_key(point(8, "fp16")));
  CHECK(BatchBoundary::series_key(point(8)).find("batch") == std::string::npos);
  const Params no_batch{{"dtype", "bf16"}, {"layers", 8}};
  CHECK(BatchBoundary::series_key(no_batch) == BatchBoundary::series_key(point(16)));
}

TEST_CASE("batch boundary: nothing is skipped before an OOM") {
  BatchBoundary boundary;
  for (std::int64_t b : {8, 16, 32, 64}) {
    CHECK(boundary.skip_reason(point(b)).empty());
    boundary.record(point(b), Status::ok);
  }
  CHECK(boundary.skip_reason(point(1 << 20)).empty());
}

TEST_CASE("batch boundary: batches above an OOM of the same series are skipped") {
  BatchBoundary boundary;
  boundary.record(point(64), Status::oom);
  CHECK(boundary.skip_reason(point(32)).empty());
  CHECK(boundary.skip_reason(point(64)).empty());  // the boundary itself may run again
  const std::string reason = boundary.skip_reason(point(128));
  CHECK(reason == "above the OOM boundary: batch 64 ran out of memory");
  CHECK_FALSE(boundary.skip_reason(point(4096)).empty());
  // Another series is not affected.
  CHECK(boundary.skip_reason(point(128, "fp16")).empty());
}

TEST_CASE("batch boundary: the smallest OOM batch wins and other statuses do not count") {
  BatchBoundary boundary;
  boundary.record(point(256), Status::oom);
  boundary.record(point(512), Status::oom);
  CHECK(boundary.skip_reason(point(300)) ==
        "above the OOM boundary: batch 256 ran out of memory");
  boundary.record(point(32), Status::oom);
  CHECK(boundary.skip_reason(point(64)) == "above the OOM boundary: batch 32 ran out of memory");
  for (Status s : {Status::ok, Status::failed, Status::wrong, Status::timeout, Status::waived,
                   Status::skipped}) {
    boundary.record(point(2, "fp32"), s);
  }
  CHECK(boundary.skip_reason(point(4096, "fp32")).empty());
}

TEST_CASE("batch boundary: points without a batch are never skipped nor recorded") {
  BatchBoundary boundary;
  const Params no_batch{{"dtype", "bf16"}, {"layers", 8}};
  boundary.record(no_batch, Status::oom);
  CHECK(boundary.skip_reason(no_batch).empty());
  CHECK(boundary.skip_reason(point(1 << 20)).empty());
}
