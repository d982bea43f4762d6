#pragma once
// How long the NCCL watchdog lets one window of collectives (one timed sample, the warm-up,
// the verification) run before it aborts the communicators, and how many ops one timed
// sample queues behind the start gate. Host-only: the unit tests check these against the
// orchestrator's own progress timeout.
//
// The watchdog must fire well before the orchestrator's no-progress kill (--group-timeout):
// then a hung collective becomes a `timeout` point reported by the worker itself, which
// exits so that a fresh worker runs the points left, instead of the orchestrator killing the
// worker and marking every remaining point "not run". So each window is armed for
//   min(group_timeout / 4, gate_timeout + 10 x expected window + 5 s),
// never less than 1 s: a healthy window (the gate may wait up to gate_timeout for the last
// rank) never trips it, a hung one is aborted within tens of seconds.
//
// NCCL ops per sample: NCCL enqueues each collective into a bounded host-side work queue
// that its kernels drain. Behind a closed start gate nothing drains it, so a long queue of
// collectives can block NCCL's enqueue until the gate times out. A sample therefore queues
// at most kMaxNcclOpsPerSample collective ops (a few per channel of that queue), and the
// gate still opens only after every rank has enqueued everything: the ranks start together,
// which is what the gate is for. Groups without NCCL keep kMaxOpsPerSample (the CUDA launch
// queue holds about a thousand launches; an op may launch dozens of kernels).
#include "mgbench/model/group.hpp"

namespace mgbench::bench {

constexpr int kMaxOpsPerSample = 64;
constexpr int kMaxNcclOpsPerSample = 8;

// Seconds the watchdog allows a window expected to take `expected_window_s`.
double watchdog_deadline_s(const RunSettings& settings, double expected_window_s);

// The ops of one timed sample: enough for target_sample_s at `op_s` seconds per op, at
// least 1, at most the cap above for the group's kind.
int ops_per_sample(const RunSettings& settings, double op_s, bool uses_nccl);

}  // namespace mgbench::bench
