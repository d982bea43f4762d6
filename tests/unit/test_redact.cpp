// --redact: a run prepared for sharing carries no host name, no CUDA_/NCCL_/OMPI_/SLURM_ values,
// no GPU serials or UUIDs and no other users' processes; equal values still hash equal.
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/redact.hpp"

namespace {

mgbench::RunResult identifying_run() {
  mgbench::RunResult run;
  run.host = "gpu-node-17.corp.example";
  run.argv = {"mgbench", "sweep", "--out", "/home/alice/gpu-node-17.corp.example/run",
              "--hosts", "gpu-node-17.corp.example:8,gpu-node-18.corp.example:8"};
  run.settings = {{"profile", "quick"}};
  run.environment = {
      {"host", {{"hostname", "gpu-node-17.corp.example"}, {"kernel", "6.1"}}},
      {"env",
       {{"CUDA_VISIBLE_DEVICES", "0,1"},
        {"NCCL_SOCKET_IFNAME", "ib0"},
        {"SLURM_JOB_ID", "424242"},
        {"OMPI_COMM_WORLD_RANK", "0"}}},
      {"gpus",
       mgbench::Json::array({{{"name", "H200"}, {"serial", "1652823054311"},
                              {"uuid", "GPU-1234"}, {"nvml_uuid", "GPU-1234"}}})}};
  run.doctor = {{"checks", mgbench::Json::array({{{"name", "other_processes"},
                                                  {"status", "warn"},
                                                  {"finding", "other processes: GPU 0: pid 4711 "
                                                              "(bob_train.py, 30 GiB)"}}})}};
  mgbench::PointResult p;
  p.workload = "gemm";
  p.status = mgbench::Status::failed;
  p.message = "CUDA error on gpu-node-17.corp.example rank 0, gpu-node-18.corp.example rank 9";
  p.placement.nodes = 2;
  p.placement.hosts = {"gpu-node-17.corp.example", "gpu-node-18.corp.example"};
  run.points.push_back(p);
  return run;
}

}  // namespace

TEST_CASE("redact: no identifying value is left in the document") {
  const mgbench::RunResult redacted = mgbench::redact_run(identifying_run());
  const std::string text = mgbench::dump_json(mgbench::Json(redacted));
  for (const char* secret : {"gpu-node-17", "gpu-node-18", "1652823054311", "GPU-1234", "424242", "ib0",
                             "4711", "bob_train", "\"0,1\""}) {
    INFO(secret);
    CHECK(text.find(secret) == std::string::npos);
  }
  CHECK(redacted.host.rfind("redacted-", 0) == 0);
  CHECK(redacted.environment["host"]["kernel"] == "6.1");  // not identifying: kept
  CHECK(redacted.environment["gpus"][0]["name"] == "H200");
  CHECK(redacted.settings["redacted"] == true);
}

TEST_CASE("redact: equal values hash equal, so redacted runs still compare") {
  const auto a = mgbench::redact_run(identifying_run());
  auto other = identifying_run();
  other.environment["env"]["NCCL_SOCKET_IFNAME"] = "eth0";
  const auto b = mgbench::redact_run(other);
  CHECK(a.environment["env"]["CUDA_VISIBLE_DEVICES"] == b.environment["env"]["CUDA_VISIBLE_DEVICES"]);
  CHECK(a.environment["env"]["NCCL_SOCKET_IFNAME"] != b.environment["env"]["NCCL_SOCKET_IFNAME"]);
  CHECK(mgbench::is_redacted_variable("SLURM_NODELIST"));
  CHECK_FALSE(mgbench::is_redacted_variable("HOME"));
}
