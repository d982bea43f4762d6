// The reports' view of a training step (see training_presentation.hpp).
#include "training/training_presentation.hpp"

namespace mgbench::bench {
namespace {

TableSpec training_table(const TrainingView& view, const std::string& unit) {
  return TableSpec()
      .column(ColumnSpec::gpus())
      .column(ColumnSpec::devices())
      .column(ColumnSpec::params())
      .column(ColumnSpec::metric("step_time_s", "step time")
                  .format(ValueFormat::time)
                  .or_median())
      .column(ColumnSpec::metric(view.item + "_per_s", unit))
      .column(view.per_gpu)
      .column(ColumnSpec::speedup())
      .column(ColumnSpec::efficiency())
      .column(ColumnSpec::metric("exposed_comm_s", "exposed comm")
                  .format(ValueFormat::time)
                  .share("step_time_s"))
      .column(ColumnSpec::metric("overlap_ratio", "overlap").format(ValueFormat::percent, 0))
      .column(ColumnSpec::peak_memory())
      .tail();
}

ChartSpec breakdown_chart(bool host_copy) {
  ChartSpec chart =
      ChartSpec::breakdown("breakdown", {"breakdown_step_s", "step_time_s"}, "compute")
          .titled("step-time breakdown")
          .y_axis("time per step (ms)");
  if (host_copy) chart.part({"h2d_s", "h2d_time_s", "data_copy_s"}, "host-to-device copy", 2);
  chart.part({"optimizer_s", "optimizer_time_s"}, "optimizer", 3)
      .part({"exposed_comm_s"}, "exposed communication", 1)
      .only_with("exposed_comm_s");
  return chart;
}

}  // namespace

Presentation training_presentation(const TrainingView& view) {
  const std::string unit = view.item + "/s";
  const auto mfu = PeakSpec::same_as("model_tflops_per_gpu");
  return Presentation()
      .metric(MetricSpec(view.item + "_per_s", unit, unit).of_peak(mfu))
      .metric(MetricSpec(view.item + "_per_s_per_gpu", unit + " per GPU", unit).of_peak(mfu))
      .metric(MetricSpec("step_time_s", "step time", "s")
                  .format(ValueFormat::time)
                  .better(Better::lower))
      .metric(MetricSpec("exposed_comm_s", "exposed communication", "s")
                  .format(ValueFormat::time)
                  .better(Better::lower))
      .metric(MetricSpec("overlap_ratio", "overlap").format(ValueFormat::percent, 0))
      .metric(MetricSpec("model_tflops_per_gpu", "model TFLOP/s per GPU", "TFLOP/s")
                  .of_peak(PeakSpec::tflops("dtype")))
      .axis(AxisSpec("batch", view.batch_help).with({"global_batch"}).tooltip_word("batch"))
      .table(training_table(view, unit))
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("throughput", view.item + "_per_s")
                 .titled(unit + " vs " + view.batch_words)
                 .y_axis(unit))
      .chart(ChartSpec::memory("memory").titled("peak memory vs " + view.batch_words))
      .chart(breakdown_chart(view.host_copy));
}

}  // namespace mgbench::bench
