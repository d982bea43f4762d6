// The group executor when one rank fails, on four simulated ranks of GPU 0 ({0,0,0,0}):
// whatever the stage (resources, factory, first op, warm-up, a timed sample, the stop rule,
// verify, the
// per-rank details), every rank ends within seconds, under a test-side timeout, and the real
// error reaches the point's message (and the group's exception when the group cannot go
// on). Also: the own all-reduce goes on after a point where one rank skipped an op (its
// peers' barriers timed out), and the training step's NCCL reducer refuses cleanly once
// another thread has aborted the communicators.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "collectives/peer_allreduce.hpp"
#include "training/train_reducer.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/model/workload.hpp"
#include "workload_runner.hpp"

namespace {

[[maybe_unused]] const int kNvlsOff = ::setenv("NCCL_NVLS_ENABLE", "0", 0);

using mgbench::Json;
using mgbench::Params;
using mgbench::PointResult;
using mgbench::Status;
using mgbench::bench::RankEnv;
using mgbench::bench::RankPoint;
using mgbench::bench::Verification;

constexpr double kTestTimeoutS = 60.0;  // far above the few seconds a failing group may take
constexpr int kFailingRank = 2;

// A point that does a tiny amount of GPU work per op and throws "injected fault at <stage>"
// on rank kFailingRank at the stage its params name.
class FaultPoint final : public RankPoint {
 public:
  explicit FaultPoint(RankEnv& env) : env_(env), stage_(env.params->text("stage")) {
    fail_here_ = env.rank == kFailingRank;
    throw_if("factory");
    if (cudaMalloc(&data_, 4096) != cudaSuccess) throw std::runtime_error("cudaMalloc");
  }
  ~FaultPoint() override { (void)cudaFree(data_); }
  void enqueue() override {
    ++calls_;
    if (calls_ == 1) throw_if("first_op");
    if (calls_ == 3) throw_if("warm_up");  // with warmup_s = 0: the one warm-up op
    if (calls_ == 5) throw_if("sample");   // inside the timed samples
    (void)cudaMemsetAsync(data_, calls_ & 0xff, 4096, env_.stream);
  }
  Verification verify() override {
    throw_if("verify");
    return {};
  }
  Json rank_details() override {
    throw_if("details");
    return Json::object();
  }

 private:
  void throw_if(const char* stage) const {
    if (fail_here_ && stage_ == stage) {
      throw std::runtime_error(std::string("injected fault at ") + stage);
    }
  }
  RankEnv& env_;
  std::string stage_;
  bool fail_here_ = false;
  int calls_ = 0;
  void* data_ = nullptr;
};

const bool kFaultRegistered = mgbench::register_workload(
    mgbench::Workload("zz_executor_fault")
        .summary("test-only: throws on one rank at a chosen stage")
        .axis(mgbench::Axis::text("stage", {"none"}))
        .runner(mgbench::bench::make_runner(
            [](RankEnv& env) -> std::unique_ptr<RankPoint> {
              return std::make_unique<FaultPoint>(env);
            },
            nullptr)));

mgbench::RunSettings fault_settings() {
  mgbench::RunSettings s = mgbench::test::fast_settings();
  s.warmup_s = 0;  // one warm-up op: the stages above count on it
  s.gate_timeout_s = 2;
  s.group_timeout_s = 30;
  return s;
}

struct GroupOutcome {
  std::vector<PointResult> results;
  std::string error;  // what the group threw ("" when it returned)
  double seconds = 0;
};

// Runs the group on another thread; gives up the whole test process past kTestTimeoutS (a
// hung rank cannot be joined).
GroupOutcome run_guarded(const std::string& workload, const std::vector<int>& devices,
                         const std::vector<Params>& points,
                         const mgbench::RunSettings& settings = fault_settings()) {
  const auto t0 = std::chrono::steady_clock::now();
  auto future = std::async(std::launch::async, [&] {
    GroupOutcome out;
    try {
      out.results = mgbench::test::run_workload(workload, devices, points, settings);
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  });
  if (future.wait_for(std::chrono::duration<double>(kTestTimeoutS)) !=
      std::future_status::ready) {
    FAIL_CHECK("the group did not end within " << kTestTimeoutS << " s: a rank hangs");
    std::_Exit(1);
  }
  GroupOutcome out = future.get();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace

TEST_CASE("one rank failing at any stage ends every rank with the real error",
          "[executor][faults][gpu]") {
  REQUIRE(kFaultRegistered);
  for (const char* stage : {"factory", "first_op", "warm_up", "sample", "verify", "details"}) {
    INFO("stage " << stage);
    const Params point{{"stage", stage}};
    const GroupOutcome out = run_guarded("zz_executor_fault", {0, 0, 0, 0}, {point, point});
    CHECK(out.seconds < 20.0);
    CAPTURE(out.error);
    if (out.results.empty()) {
      // The group itself gave up (a failure the executor cannot pin on one point): its error,
      // which the orchestrator records as the points' message, must be the rank's own.
      CHECK(out.error.find(std::string("injected fault at ") + stage) != std::string::npos);
      continue;
    }
    const PointResult& first = out.results.front();
    CAPTURE(mgbench::to_string(first.status), first.message, out.error);
    CHECK(first.status == Status::failed);
    CHECK(first.message.find(std::string("injected fault at ") + stage) != std::string::npos);
    if (!out.error.empty()) {
      CHECK(out.error.find("injected fault") != std::string::npos);
    } else {
      // The group went on (the failure was shared by every rank): both points reported.
      CHECK(out.results.size() == 2);
    }
  }
}

TEST_CASE("a stop rule that throws on rank 0 ends every rank with its error",
          "[executor][faults][gpu]") {
  REQUIRE(kFaultRegistered);
  mgbench::RunSettings settings = fault_settings();
  settings.stopping.max_noise = std::nan("");  // refused by the stop rule on rank 0 only
  const GroupOutcome out =
      run_guarded("zz_executor_fault", {0, 0, 0, 0}, {Params{{"stage", "none"}}}, settings);
  CHECK(out.seconds < 20.0);
  const std::string text =
      out.results.empty() ? out.error : out.results.front().message + " " + out.error;
  CAPTURE(text);
  CHECK(text.find("stop rule: invalid criteria") != std::string::npos);
  if (!out.results.empty()) CHECK(out.results.front().status == Status::failed);
}

TEST_CASE("a rank whose CUDA resources fail releases the others at once",
          "[executor][faults][gpu]") {
  REQUIRE(kFaultRegistered);
  // Device 9999 does not exist: rank 2's stream creation fails before any barrier.
  const GroupOutcome out =
      run_guarded("zz_executor_fault", {0, 0, 9999, 0}, {Params{{"stage", "none"}}});
  CHECK(out.seconds < 20.0);
  CAPTURE(out.error);
  CHECK(out.error.find("cudaSetDevice") != std::string::npos);
  CHECK(out.error.find("rank 2 failed") == std::string::npos);  // the cause, not the echo
}

namespace {

// The own all-reduce over a PeerAllreduce that lives for the whole group (as the allreduce
// workload's does); rank 1 skips its op on points with skip=true.
struct PeerGroup {
  std::vector<std::unique_ptr<mgbench::bench::PeerAllreduce>> peers =
      std::vector<std::unique_ptr<mgbench::bench::PeerAllreduce>>(3);
};

class SkipPoint final : public RankPoint {
 public:
  SkipPoint(RankEnv& env, PeerGroup& group) : env_(env) {
    auto& slot = group.peers[env.rank];
    if (slot) {
      slot->reset(env);
    } else {
      slot = std::make_unique<mgbench::bench::PeerAllreduce>(env, 4096 * sizeof(float));
    }
    peer_ = slot.get();
    if (cudaMalloc(&in_, 4096 * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&out_, 4096 * sizeof(float)) != cudaSuccess) {
      throw std::runtime_error("cudaMalloc");
    }
    skip_ = env.params->boolean("skip") && env.rank == 1;
  }
  ~SkipPoint() override {
    (void)cudaFree(in_);
    (void)cudaFree(out_);
  }
  void enqueue() override { run(); }
  Verification verify() override {
    (void)mgbench::kernels::allreduce_fill_input(in_, 4096, mgbench::kernels::DType::fp32,
                                                 env_.rank, 77, env_.stream);
    if (!skip_) run();
    (void)cudaStreamSynchronize(env_.stream);
    Verification v;
    if (peer_->timed_out()) {
      v.ok = false;
      v.message = "barrier timed out";
    }
    return v;
  }

 private:
  void run() {
    peer_->run(in_, out_, 4096, mgbench::kernels::DType::fp32, env_.stream);
  }
  RankEnv& env_;
  mgbench::bench::PeerAllreduce* peer_ = nullptr;
  void* in_ = nullptr;
  void* out_ = nullptr;
  bool skip_ = false;
};

auto peer_group = std::make_shared<PeerGroup>();

const bool kSkipRegistered = mgbench::register_workload(
    mgbench::Workload("zz_peer_skip")
        .summary("test-only: the own all-reduce with one rank skipping its verification op")
        .axis(mgbench::Axis::boolean("skip", {"false"}))
        .runner(mgbench::bench::make_runner(
            [](RankEnv& env) -> std::unique_ptr<RankPoint> {
              return std::make_unique<SkipPoint>(env, *peer_group);
            },
            nullptr)));

}  // namespace

TEST_CASE("the own all-reduce on {0,0,0} is ok again after a rank skipped its op",
          "[allreduce][faults][gpu]") {
  REQUIRE(kSkipRegistered);
  const GroupOutcome out = run_guarded(
      "zz_peer_skip", {0, 0, 0},
      {Params{{"skip", false}}, Params{{"skip", true}}, Params{{"skip", false}}});
  CAPTURE(out.error);
  REQUIRE(out.error.empty());
  REQUIRE(out.results.size() == 3);
  CHECK(out.results[0].status == Status::ok);
  CHECK(out.results[1].status == Status::wrong);  // the peers' barriers gave up
  CAPTURE(out.results[2].message);
  CHECK(out.results[2].status == Status::ok);     // reset: the group goes on
  peer_group->peers.clear();
  peer_group->peers.resize(3);
}

TEST_CASE("the training step's NCCL reducer refuses cleanly after another thread aborted",
          "[train][nccl][faults][gpu]") {
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  mgbench::bench::NcclComms comms({0}, 60.0);
  mgbench::bench::train::NcclReducer reducer(comms.comm(0));
  float* data = nullptr;
  REQUIRE(cudaMalloc(&data, 1024 * sizeof(float)) == cudaSuccess);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  reducer.allreduce(data, 1024, stream);  // works before the abort
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  std::thread aborter([&] { comms.abort("test: aborted from another thread"); });
  aborter.join();
  CHECK(comms.aborted());
  CHECK_THROWS_AS(reducer.allreduce(data, 1024, stream), mgbench::EnvironmentError);
  (void)cudaStreamDestroy(stream);
  (void)cudaFree(data);
}
