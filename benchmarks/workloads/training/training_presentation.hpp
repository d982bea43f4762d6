#pragma once
// How reports show a training step (train_step, transformer_step): the step time and its
// breakdown, the throughput and its share of the dtype's dense peak (through the model TFLOP/s
// per GPU: the MFU), exposed communication, overlap, peak memory; throughput and peak memory
// against the per-GPU batch. The two steps differ only in what `TrainingView` names.
#include <string>

#include "mgbench/model/presentation.hpp"

namespace mgbench::bench {

struct TrainingView {
  std::string item;         // what the throughput counts: "samples" (samples_per_s, ...)
  std::string batch_help;   // the batch axis's name in the reports
  std::string batch_words;  // the batch in chart titles: "samples/s vs <batch_words>"
  ColumnSpec per_gpu;       // the table's column after the throughput
  bool host_copy = false;   // the breakdown has a host-to-device copy part
};

Presentation training_presentation(const TrainingView& view);

}  // namespace mgbench::bench
