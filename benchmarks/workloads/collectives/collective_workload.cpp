// What the collective workloads share: runner options, presentation and the declaration of an
// NCCL collective (see collective_workload.hpp).
#include "collectives/collective_workload.hpp"

#include <iterator>
#include <memory>

#include "collectives/allreduce_math.hpp"
#include "collectives/collective_point.hpp"
#include "work_costs.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/measurement.hpp"

namespace mgbench::bench {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Parameters of some collectives that tell points apart: shown where they vary (the table's
// varying-parameter column) and in the plateau summary. (Constant-initialised: the workloads'
// declarations use it during static initialisation, in other files.)
constexpr const char* kVariants[] = {"root", "algo", "proto"};

TableSpec collective_table(const std::vector<std::string>& keys) {
  std::vector<std::string> sort{"gpus"};
  sort.insert(sort.end(), keys.begin(), keys.end());
  sort.insert(sort.end(), std::begin(kVariants), std::end(kVariants));
  sort.push_back("inplace");
  sort.push_back("bytes");
  TableSpec t = TableSpec().split_by({"dtype"}).sort_by(sort).no_fixed_caption();
  t.column(ColumnSpec::gpus())
      .column(ColumnSpec::param("bytes", "size").format(ValueFormat::bytes))
      .column(ColumnSpec::metric("size_bytes", "moved").format(ValueFormat::bytes))
      .column(ColumnSpec::param("count"))
      .column(ColumnSpec::metric("count", "count").format(ValueFormat::count));
  for (const auto& k : keys) t.column(ColumnSpec::param(k));
  return t.column(ColumnSpec::params())
      .column(ColumnSpec::param("inplace", "in-place"))
      .column(ColumnSpec::metric("time_us", "time (us)")
                  .format(ValueFormat::fixed, 2)
                  .or_median(1e6))
      .column(ColumnSpec::metric("device_time_us", "device (us)").format(ValueFormat::fixed, 2))
      .column(ColumnSpec::metric("host_time_us", "host-launched (us)")
                  .format(ValueFormat::fixed, 2))
      .column(ColumnSpec::metric("algbw_GBps", "algbw (GB/s)").format(ValueFormat::fixed, 2))
      .column(ColumnSpec::metric("busbw_GBps", "busbw (GB/s)")
                  .format(ValueFormat::fixed, 2)
                  .when_absent("\u2014"))
      .column(ColumnSpec::verification("wrong", "#wrong", "N/A"))
      .tail();
}

SummarySpec plateau_spec(const std::vector<std::string>& keys) {
  SummarySpec s("plateau", "plateau", "median busbw over message sizes >= 64 MiB");
  s.column("gpus", "GPUs", ValueFormat::count).column("dtype", "dtype");
  for (const auto& k : keys) s.column(k, k);
  for (const char* k : kVariants) s.column(k, k);
  return s.column("inplace", "in-place")
      .column("measured", "timing, cache")
      .column("plateau_busbw_GBps", "plateau busbw (GB/s)", ValueFormat::fixed, 2);
}

std::vector<collective::SummaryKey> summary_keys(const CollectiveDecl& d) {
  std::vector<collective::SummaryKey> keys{{"dtype", ""}, {"inplace", ""}};
  if (collective::has_root(d.kind)) keys.push_back({"root", ""});
  if (!d.algos.empty()) keys.push_back({"algo", "default"});
  if (d.proto) keys.push_back({"proto", "default"});
  return keys;
}

GroupRunner nccl_runner(collective::Kind kind) {
  return [kind](GroupContext& ctx) {
    RunnerOptions options = collective_runner_options();
    options.needs_nccl = true;
    options.nccl_env = collective::nccl_env;
    GroupRunner run = make_runner(
        [kind](RankEnv& env) -> std::unique_ptr<RankPoint> {
          const Params& p = *env.params;
          const std::string waived = collective::waiver(
              kind, env.nranks, p.contains("inplace") && p.boolean("inplace"));
          if (!waived.empty()) throw WaivedError(waived);
          return std::make_unique<NcclCollectivePoint>(env, kind);
        },
        [kind](const Params& params, int nranks, double seconds) {
          return collective::metrics(kind, static_cast<std::uint64_t>(params.integer("bytes")),
                                     params.text("dtype"), nranks, seconds);
        },
        options);
    run(ctx);
  };
}

std::vector<std::string> with_default(std::vector<std::string> values) {
  values.insert(values.begin(), "default");
  return values;
}

}  // namespace

RunnerOptions collective_runner_options() {
  RunnerOptions options;
  // Default host: nccl-tests' method, and the latency an eagerly launching framework waits
  // for; small messages are also timed device-side, shown next to it (docs/METHODOLOGY.md).
  options.default_timing = TimingMethod::host;
  options.default_cache = CacheMode::cold;
  options.time_both = [](const Params& p) {
    return static_cast<std::uint64_t>(p.integer("bytes")) < kTimeBothBelowBytes;
  };
  options.limits = {LimitCheck{"algbw_GBps", LimitKind::copy}};
  return options;
}

Presentation collective_presentation(const std::vector<std::string>& keys) {
  return Presentation()
      .metric(MetricSpec("busbw_GBps", "busbw", "GB/s")
                  .format(ValueFormat::fixed, 2)
                  .of_peak(PeakSpec::peer_link()))
      .metric(MetricSpec("algbw_GBps", "algbw", "GB/s").format(ValueFormat::fixed, 2))
      .metric(MetricSpec("time_us", "time", "us")
                  .format(ValueFormat::fixed, 2)
                  .better(Better::lower))
      .axis(AxisSpec("bytes", "message size")
                .format(ValueFormat::bytes)
                .log2()
                .with({"count"})
                .tooltip_word("size"))
      .table(collective_table(keys))
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("busbw", "busbw_GBps")
                 .titled("bus bandwidth vs message size")
                 .y_axis("busbw (GB/s)")
                 .split_by({"dtype"})
                 .or_metric("algbw_GBps", "algorithm bandwidth vs message size",
                            "1 GPU: busbw is undefined (no bus)"))
      .chart(ChartSpec::line("time", "time_us")
                 .titled("time vs message size")
                 .y_axis("time (us)", AxisScale::log10)
                 .split_by({"dtype"})
                 .or_median(1e6))
      .chart(ChartSpec::overlay("collectives-busbw", "busbw_GBps")
                 .titled("bus bandwidth of every collective vs message size")
                 .y_axis("busbw (GB/s)")
                 .split_by({"dtype"}))
      .summary(plateau_spec(keys));
}

std::vector<std::uint64_t> collective_sizes(Profile profile) {
  // Standard: x64 steps from 1 KiB to 256 MiB: the launch-bound start, 64 KiB and 4 MiB around
  // the protocol switches, and a plateau size; four sizes, so that the six collectives at four
  // GPU counts add about 14 % to the default sweep (docs/METHODOLOGY.md). Full: 8 B .. 1 GiB in
  // x2 steps, as the all-reduce. Quick (run only when named): 1 MiB and 256 MiB.
  if (profile == Profile::quick) return {kMiB, 256 * kMiB};
  if (profile == Profile::full) return allreduce::size_list(8, 1024 * kMiB, 2);
  return allreduce::size_list(1024, 256 * kMiB, 64);
}

Workload nccl_collective_workload(const CollectiveDecl& d) {
  using collective::Kind;
  Workload w(collective::to_string(d.kind));
  w.category(WorkloadCategory::collective)
      .summary(d.summary)
      .formulas(d.formulas + " " + d.single_rank +
                " Summary: plateau busbw = median busbw over sizes >= 64 MiB.")
      .notes({"profiles: standard and full; not in quick's default selection (name it with "
              "--workloads for bf16 at 1 MiB and 256 MiB)"})
      .axis(Axis::size("bytes", allreduce::size_strings(collective_sizes(Profile::standard)))
                .quick(allreduce::size_strings(collective_sizes(Profile::quick)))
                .full(allreduce::size_strings(collective_sizes(Profile::full)))
                .describe("total size as nccl-tests prints it (rounded down to whole elements "
                          "per rank)"))
      .axis(Axis::text("dtype", {"bf16"})
                .full({"fp32", "bf16", "fp16", "int32"})
                .allowed({"fp32", "bf16", "fp16", "int32"})
                .describe("element type"));
  if (collective::has_inplace(d.kind)) {
    w.axis(Axis::boolean("inplace", {"false"}).full({"false", "true"}).describe(
        "in-place (NCCL's in-place layout for the collective) or out-of-place"));
  }
  if (collective::has_root(d.kind)) {
    w.axis(Axis::text("root", {"0"}).describe(
        "root rank, or 'all' for one point per rank of the group (a slow root shows)"));
  }
  if (!d.algos.empty()) {
    w.axis(Axis::text("algo", {"default"}).allowed(with_default(d.algos)).describe(
        "NCCL_ALGO for this point's communicators; default: NCCL's own choice"));
  }
  if (d.proto) {
    w.axis(Axis::text("proto", {"default"})
               .allowed({"default", "ll", "ll128", "simple"})
               .describe("NCCL_PROTO for this point's communicators; default: NCCL's own choice"));
  }
  const std::vector<collective::SummaryKey> summary = summary_keys(d);
  const std::string name = collective::to_string(d.kind);
  return w.axis(timing_axis("host"))
      .axis(cache_axis("cold"))
      .expand_per_gpus([kind = d.kind](const AxisValues& values, int gpus) {
        return collective::expand_points(kind, values, gpus);
      })
      .summarize([name, summary](const std::vector<PointResult>& points) {
        return collective::plateau_summary(name, summary, points);
      })
      .throughput("busbw_GBps", "GB/s")
      .cost([kind = d.kind](const Params& params) { return collective_cost(kind, params); })
      .present(collective_presentation({}))
      .estimate_seconds_per_point(1.0)
      .selected_by_default_in({Profile::standard, Profile::full})
      .runner(nccl_runner(d.kind));
}

}  // namespace mgbench::bench
