// CPU affinity of the rank threads (see cpu_affinity.hpp).
#include "mgbench/bench/cpu_affinity.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <iterator>

namespace mgbench::bench {

std::vector<int> pin_current_thread(const std::vector<int>& cpus) {
  const std::vector<int> allowed = current_thread_cpus();
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> wanted;
  std::set_intersection(allowed.begin(), allowed.end(), sorted.begin(), sorted.end(),
                        std::back_inserter(wanted));
  if (wanted.empty()) return allowed;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : wanted) CPU_SET(c, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return allowed;
  return wanted;
}

}  // namespace mgbench::bench
