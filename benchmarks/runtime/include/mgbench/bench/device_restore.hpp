#pragma once
// Restores the calling thread's current CUDA device at scope exit, but only to a device of
// the group: a thread that never chose a device reports device 0, and setting it back would
// create a CUDA context on GPU 0 even when GPU 0 is not part of the group (memory taken from
// another job, or a failure when GPU 0 is exclusive-process, busy or faulty). Code of a group
// never touches a device outside it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

namespace mgbench::bench {

// The device to restore: `saved` when it belongs to `group`, else -1 (leave it).
inline int device_to_restore(int saved, const std::vector<int>& group) {
  return std::find(group.begin(), group.end(), saved) != group.end() ? saved : -1;
}

class DeviceRestore {
 public:
  explicit DeviceRestore(const std::vector<int>& group) {
    int saved = -1;
    if (cudaGetDevice(&saved) != cudaSuccess) saved = -1;
    device_ = device_to_restore(saved, group);
  }
  ~DeviceRestore() {
    if (device_ >= 0) (void)cudaSetDevice(device_);
  }
  DeviceRestore(const DeviceRestore&) = delete;
  DeviceRestore& operator=(const DeviceRestore&) = delete;

 private:
  int device_ = -1;
};

}  // namespace mgbench::bench
