// `mgbench sweep`'s options: what the user asked for, validated before any device is probed.
#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/run/sweep.hpp"

namespace mgbench {

namespace {

cxxopts::Options sweep_cli() {
  cxxopts::Options options("mgbench sweep",
                           "Run workloads on 1..N GPUs and batch sizes; record throughput, "
                           "telemetry and scaling efficiency.");
  options.add_options()
      ("gpus", "GPU counts, e.g. 1,2,4,8 (default: powers of two up to the visible count, "
               "plus the count)", cxxopts::value<std::string>())
      ("devices", "physical CUDA devices to use, e.g. 0,1,2,3 (default: all visible)",
       cxxopts::value<std::string>())
      ("workloads", "workloads, e.g. gemm,allreduce (default: all; see `mgbench list`)",
       cxxopts::value<std::string>())
      ("batch-sizes", "per-GPU batch sizes for workloads with a batch axis, or `auto` (grow x2 "
                      "until out of memory)", cxxopts::value<std::string>())
      ("dtypes", "data types, e.g. bf16,fp32", cxxopts::value<std::string>())
      ("param", "override a workload axis: NAME=V1,V2 (repeatable)",
       cxxopts::value<std::vector<std::string>>())
      ("profile", "quick | standard | full",
       cxxopts::value<std::string>()->default_value("standard"))
      ("min-samples", "minimum samples per point", cxxopts::value<std::string>())
      ("min-time", "minimum measured seconds per point", cxxopts::value<std::string>())
      ("max-noise", "noise target in percent: sampling stops once the relative stdev or the "
       "median's CI half-width is below it; a point is noisy when its median's CI is wider "
       "(default 0.5)", cxxopts::value<std::string>())
      ("max-time-per-point", "seconds of sampling before a point stops short of the target",
       cxxopts::value<std::string>())
      ("warmup", "seconds of warm-up before each point's samples, for every workload (default: "
                 "0.05, and 1 for power-bound workloads so that clocks settle at the power "
                 "limit)", cxxopts::value<std::string>())
      ("out", "output directory (default results/<UTC timestamp>-<host>/)",
       cxxopts::value<std::string>())
      ("json", "also write the results JSON here", cxxopts::value<std::string>())
      ("csv", "also write one CSV row per point here", cxxopts::value<std::string>())
      ("dry-run", "print the plan and run nothing")
      ("isolation", "process (a worker per group) | none (in-process, debugging)",
       cxxopts::value<std::string>()->default_value("process"))
      ("launcher", "local (a thread per GPU) | mpirun | srun (a process per GPU); default: srun "
                   "inside a Slurm allocation, local elsewhere", cxxopts::value<std::string>())
      ("hosts", "nodes for the launcher, e.g. h1:8,h2:8 (host:slots)",
       cxxopts::value<std::string>())
      ("hostfile", "nodes for the launcher, OpenMPI hostfile syntax (host slots=N)",
       cxxopts::value<std::string>())
      ("gpus-per-node", "GPUs per node (default: the hosts' slots, else this host's GPUs)",
       cxxopts::value<std::string>())
      ("oversubscribe", "mpirun: allow more ranks than a host's slots")
      ("launcher-arg", "give mpirun or srun this word as it is, after mgbench's own (repeatable; "
                       "write --launcher-arg=--allow-run-as-root for a word starting with -)",
       cxxopts::value<std::string>())
      ("forward-env", "mpirun: pass these variables to every rank too (NAME or PREFIX*, "
                      "comma-separated; docs/DISTRIBUTED.md lists those always passed)",
       cxxopts::value<std::string>())
      ("group-timeout", "kill a group's worker after this many seconds without progress",
       cxxopts::value<std::string>())
      ("resume", "continue the interrupted sweep in this output directory",
       cxxopts::value<std::string>())
      ("scaling", "weak (per-GPU batch fixed) | strong (global batch fixed)",
       cxxopts::value<std::string>()->default_value("weak"))
      ("baseline", "`each`: also run the 1-GPU points on every selected GPU",
       cxxopts::value<std::string>())
      ("telemetry-interval", "NVML sampling period in milliseconds (default 100)",
       cxxopts::value<std::string>())
      ("no-telemetry", "do not sample NVML")
      ("skip-doctor", "skip the cheap doctor checks before the sweep")
      ("no-report", "do not write report.html / report.md")
      ("no-history", "do not record the run in the history database")
      ("redact", "leave the host name, CUDA_/NCCL_/OMPI_/SLURM_ values, GPU serials and other "
                 "processes out of results.json and the reports (docs/SHARING.md)")
      ("db", "history database path", cxxopts::value<std::string>())
      ("price-per-gpu-hour", "USD per GPU-hour, for throughput per dollar",
       cxxopts::value<std::string>())
      ("nvls", "NVLink SHARP for NCCL: on | off | auto (NCCL's default, also when not given); "
               "sets NCCL_NVLS_ENABLE for every worker", cxxopts::value<std::string>())
      ("v,verbose", "more logging")
      ("q,quiet", "only errors and the final table")
      ("h,help", "this help");
  return options;
}

using Args = cxxopts::ParseResult;

std::string str(const Args& args, const char* name) { return args[name].as<std::string>(); }

// The value of `option` among `choices` (name -> value); UsageError naming them otherwise.
template <typename T>
T choose(const std::string& option, const std::string& text,
         std::initializer_list<std::pair<const char*, T>> choices) {
  std::string names;
  for (const auto& [name, value] : choices) {
    if (text == name) return value;
    names += (names.empty() ? "" : " or ") + std::string(name);
  }
  throw UsageError(fmt::format("invalid --{} '{}': expected {}", option, text, names));
}

// --NAME as a number above zero (or at least zero with `allow_zero`), at most 1e8: a time beyond
// that (three years) would overflow the clocks' nanosecond counts once scaled into a time-out.
double parse_number(const Args& args, const char* name, bool allow_zero) {
  const double value = parse_double(str(args, name), std::string("--") + name);
  if (allow_zero ? value < 0 : value <= 0) {
    throw UsageError(fmt::format("invalid --{}: must be {}", name, allow_zero ? ">= 0" : "> 0"));
  }
  if (value > 1e8) throw UsageError(fmt::format("invalid --{}: must be at most 1e8", name));
  return value;
}

// "a=1", "2" (cxxopts splits vector values at commas) glued back into "a=1,2", then parsed.
std::map<std::string, std::vector<std::string>> parse_param_overrides(
    const std::vector<std::string>& pieces) {
  std::vector<std::string> items;
  for (const auto& piece : pieces) {
    if (piece.find('=') == std::string::npos && !items.empty()) {
      items.back() += "," + piece;
    } else {
      items.push_back(piece);
    }
  }
  std::map<std::string, std::vector<std::string>> overrides;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(fmt::format("invalid --param '{}': expected NAME=V1,V2", item));
    }
    overrides[item.substr(0, eq)] =
        split_list(item.substr(eq + 1), "--param " + item.substr(0, eq));
  }
  return overrides;
}

// What to run: GPU counts, devices, workloads and their axes.
void parse_selection(const Args& args, SweepOptions& o) {
  if (args.count("gpus")) o.gpu_counts = parse_gpu_counts(str(args, "gpus"), -1);
  if (args.count("devices")) o.devices = parse_device_list(str(args, "devices"), -1);
  if (args.count("workloads")) o.workloads = split_list(str(args, "workloads"), "--workloads");
  if (args.count("batch-sizes")) {
    if (str(args, "batch-sizes") == "auto") {
      o.batch_auto = true;
    } else {
      o.batch_sizes = split_list(str(args, "batch-sizes"), "--batch-sizes");
      for (const auto& b : o.batch_sizes) parse_positive_int(b, "--batch-sizes value");
    }
  }
  if (args.count("dtypes")) o.dtypes = split_list(str(args, "dtypes"), "--dtypes");
  if (args.count("param")) {
    o.param_overrides = parse_param_overrides(args["param"].as<std::vector<std::string>>());
  }
}

// The profile and its stopping rule.
void apply_profile(const Args& args, SweepOptions& o) {
  o.profile = profile_from_string(str(args, "profile"));
  o.settings.stopping = profile_stopping(o.profile);
  o.settings.profile = to_string(o.profile);
}

// How long each point samples: overrides of the profile's stopping rule.
void parse_stopping(const Args& args, SweepOptions& o) {
  StoppingCriteria& stop = o.settings.stopping;
  if (args.count("min-samples")) {
    stop.min_samples =
        static_cast<std::size_t>(parse_positive_int(str(args, "min-samples"), "--min-samples"));
  }
  if (args.count("min-time")) stop.min_time_s = parse_number(args, "min-time", true);
  if (args.count("max-noise")) {
    std::string text = str(args, "max-noise");
    if (!text.empty() && text.back() == '%') text.pop_back();
    const double pct = parse_double(text, "--max-noise");
    if (pct <= 0 || pct >= 100) {
      throw UsageError(fmt::format("invalid --max-noise '{}': expected a percentage in (0, 100)",
                                   str(args, "max-noise")));
    }
    stop.max_noise = pct / 100.0;
  }
  if (args.count("max-time-per-point")) {
    stop.max_time_s = parse_number(args, "max-time-per-point", false);
  }
  if (args.count("warmup")) {
    o.settings.warmup_s = parse_number(args, "warmup", true);
    o.settings.warmup_given = true;
  }
}

// How the sweep runs: isolation, time-outs, scaling mode, baselines, telemetry.
void parse_execution(const Args& args, SweepOptions& o) {
  o.dry_run = args.count("dry-run") > 0;
  o.isolation = choose<Isolation>("isolation", str(args, "isolation"),
                                  {{"process", Isolation::process}, {"none", Isolation::none}});
  if (args.count("group-timeout")) {
    o.settings.group_timeout_s = parse_number(args, "group-timeout", false);
  } else {
    o.settings.group_timeout_s = std::max(300.0, 20 * o.settings.stopping.max_time_s);
  }
  if (o.settings.warmup_s >= o.settings.group_timeout_s / 2) {
    throw UsageError(fmt::format("invalid --warmup: must be under half the group timeout ({} s)",
                                 o.settings.group_timeout_s));
  }
  o.scaling = choose<ScalingMode>("scaling", str(args, "scaling"),
                                  {{"weak", ScalingMode::weak}, {"strong", ScalingMode::strong}});
  if (args.count("baseline")) {
    choose<bool>("baseline", str(args, "baseline"), {{"each", true}});
    o.baseline_each = true;
  }
  if (args.count("telemetry-interval")) {
    o.settings.telemetry_interval_s =
        static_cast<double>(
            parse_positive_int(str(args, "telemetry-interval"), "--telemetry-interval")) /
        1000.0;
  }
  o.settings.telemetry = args.count("no-telemetry") == 0;
}

// How groups are launched: --launcher, the nodes and GPUs per node.
void parse_launch(const Args& args, SweepOptions& o) {
  LaunchOptions& l = o.launch;
  l.launcher = args.count("launcher")
                   ? choose<Launcher>("launcher", str(args, "launcher"),
                                      {{"local", Launcher::local},
                                       {"mpirun", Launcher::mpirun},
                                       {"srun", Launcher::srun}})
                   : (o.isolation == Isolation::none ? Launcher::local : default_launcher());
  if (args.count("hosts") && args.count("hostfile")) {
    throw UsageError("give --hosts or --hostfile, not both");
  }
  if (args.count("hosts")) l.hosts = parse_host_list(str(args, "hosts"));
  if (args.count("hostfile")) l.hosts = parse_hostfile(str(args, "hostfile"));
  if (args.count("gpus-per-node")) {
    l.gpus_per_node = static_cast<int>(parse_positive_int(str(args, "gpus-per-node"),
                                                          "--gpus-per-node"));
    if (l.gpus_per_node > 4096) throw UsageError("invalid --gpus-per-node: at most 4096");
  }
  l.oversubscribe = args.count("oversubscribe") > 0;
  read_launcher_words(args, l);
  const bool nodes_given = !l.hosts.empty() || l.gpus_per_node > 0 || l.oversubscribe ||
                           !l.launcher_args.empty() || !l.forward_env.empty();
  if (l.launcher == Launcher::local && nodes_given) {
    throw UsageError("--hosts, --hostfile, --gpus-per-node, --oversubscribe, --launcher-arg and "
                     "--forward-env need --launcher mpirun or srun");
  }
  if (!l.forward_env.empty() && l.launcher != Launcher::mpirun) {
    throw UsageError("--forward-env is an mpirun option (srun passes the whole environment)");
  }
  if (l.oversubscribe && l.launcher != Launcher::mpirun) {
    throw UsageError("--oversubscribe is an mpirun option");
  }
  if (l.launcher != Launcher::local && o.isolation == Isolation::none) {
    throw UsageError(fmt::format("--launcher {} starts processes: not with --isolation none",
                                 to_string(l.launcher)));
  }
}

// Where the results go and what is done with them afterwards.
void parse_outputs(const Args& args, SweepOptions& o) {
  if (args.count("out")) o.out_dir = str(args, "out");
  if (args.count("json")) o.json_path = str(args, "json");
  if (args.count("csv")) o.csv_path = str(args, "csv");
  if (args.count("resume")) o.resume_dir = str(args, "resume");
  o.skip_doctor = args.count("skip-doctor") > 0;
  o.no_report = args.count("no-report") > 0;
  o.no_history = args.count("no-history") > 0;
  o.redact = args.count("redact") > 0;
  if (args.count("db")) o.db_path = str(args, "db");
  if (args.count("price-per-gpu-hour")) {
    o.price_per_gpu_hour = parse_number(args, "price-per-gpu-hour", false);
  }
}

// The value --nvls gives NCCL_NVLS_ENABLE ("" for auto: unset).
std::string nvls_variable(const std::string& nvls) {
  return choose<std::string>("nvls", nvls, {{"on", "1"}, {"off", "0"}, {"auto", ""}});
}

// --nvls: NVLink SHARP for every worker (see apply_nvls). Without it nothing changes: NCCL's
// default, or the user's own NCCL_NVLS_ENABLE. Both given and differing: refused.
void parse_nvls(const Args& args, SweepOptions& o) {
  if (!args.count("nvls")) return;
  o.nvls = str(args, "nvls");
  const std::string value = nvls_variable(o.nvls);
  const char* set = std::getenv("NCCL_NVLS_ENABLE");
  const std::string current = set == nullptr || std::string(set) == "2" ? "" : set;
  if (set != nullptr && current != value) {
    throw UsageError(fmt::format("--nvls {} conflicts with NCCL_NVLS_ENABLE={} in the "
                                 "environment: give one of them",
                                 o.nvls, set));
  }
}

}  // namespace

void apply_nvls(const SweepOptions& options) {
  if (options.nvls.empty()) return;
  const std::string value = nvls_variable(options.nvls);
  if (value.empty()) {
    ::unsetenv("NCCL_NVLS_ENABLE");
  } else {
    ::setenv("NCCL_NVLS_ENABLE", value.c_str(), 1);
  }
}

SweepOptions parse_sweep_options(int argc, char** argv) {
  auto cli = sweep_cli();
  const cxxopts::ParseResult args = parse_command_line(cli, argc, argv);
  SweepOptions o;
  o.verbosity = args.count("quiet") ? -1 : (args.count("verbose") ? 1 : 0);
  apply_profile(args, o);
  parse_selection(args, o);
  parse_stopping(args, o);
  parse_execution(args, o);
  parse_launch(args, o);
  parse_outputs(args, o);
  parse_nvls(args, o);
  if (const auto slowdown =
          test_hooks::read_number(test_hooks::kSlowdown, 0.0, test_hooks::kMaxSlowdown)) {
    o.settings.test_slowdown = *slowdown;
  }
  o.settings.batch_auto = o.batch_auto;
  return o;
}

}  // namespace mgbench
