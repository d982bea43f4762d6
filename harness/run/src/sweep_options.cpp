// `mgbench sweep`'s options: what the user asked for, validated before any device is probed. One
// table (kOptions) names every option with its parser and, for those that define the plan, its
// typed value in the journal's header, which `--resume` reads back (sweep.hpp).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/json_number.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/run/sweep.hpp"

namespace mgbench {

namespace {

using Args = cxxopts::ParseResult;

// An option's value as the command line gave it.
struct Given {
  const Args& args;
  const std::string& name;
  std::string text() const { return args[name].as<std::string>(); }
};

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

ScalingMode scaling_of(const std::string& text) {
  return choose<ScalingMode>("scaling", text,
                             {{"weak", ScalingMode::weak}, {"strong", ScalingMode::strong}});
}

// --NAME as a number above zero (or at least zero with `allow_zero`), at most 1e8: a time beyond
// that (three years) would overflow the clocks' nanosecond counts once scaled into a time-out.
double checked_number(double value, const std::string& name, bool allow_zero) {
  if (!std::isfinite(value) || (allow_zero ? value < 0 : value <= 0)) {
    throw UsageError(fmt::format("invalid --{}: must be {}", name, allow_zero ? ">= 0" : "> 0"));
  }
  if (value > 1e8) throw UsageError(fmt::format("invalid --{}: must be at most 1e8", name));
  return value;
}

double parse_number(const Given& v, bool allow_zero) {
  return checked_number(parse_double(v.text(), "--" + v.name), v.name, allow_zero);
}

// --max-noise as a fraction in (0, 1); `shown` is what the user wrote.
double checked_noise(double fraction, const std::string& shown) {
  if (!(fraction > 0 && fraction < 1)) {
    throw UsageError(fmt::format("invalid --max-noise '{}': expected a percentage in (0, 100)",
                                 shown));
  }
  return fraction;
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

void set_profile(Profile profile, SweepOptions& o) {
  o.profile = profile;
  o.settings.stopping = profile_stopping(profile);
  o.settings.profile = to_string(profile);
}

void set_batch_sizes(std::vector<std::string> sizes, bool automatic, SweepOptions& o) {
  for (const auto& b : sizes) parse_positive_int(b, "--batch-sizes value");
  o.batch_sizes = std::move(sizes);
  o.batch_auto = automatic;
  o.settings.batch_auto = automatic;
}

// The value --nvls gives NCCL_NVLS_ENABLE ("" for auto: unset).
std::string nvls_variable(const std::string& nvls) {
  return choose<std::string>("nvls", nvls, {{"on", "1"}, {"off", "0"}, {"auto", ""}});
}

// --nvls: NVLink SHARP for every worker (see apply_nvls). Without it nothing changes: NCCL's
// default, or the user's own NCCL_NVLS_ENABLE. Both given and differing: refused.
void set_nvls(const std::string& nvls, SweepOptions& o) {
  o.nvls = nvls;
  if (nvls.empty()) return;
  const std::string value = nvls_variable(nvls);
  const char* set = std::getenv("NCCL_NVLS_ENABLE");
  const std::string current = set == nullptr || std::string(set) == "2" ? "" : set;
  if (set != nullptr && current != value) {
    throw UsageError(fmt::format("--nvls {} conflicts with NCCL_NVLS_ENABLE={} in the "
                                 "environment: give one of them",
                                 nvls, set));
  }
}

// Reading the journal's plan (untrusted): each value must have the type the command line's parser
// makes, and passes the same checks.
[[noreturn]] void wrong_type(const std::string& key, const char* expected) {
  throw UsageError(fmt::format("--{}: expected {}", key, expected));
}

std::string plan_text(const Json& j, const std::string& key) {
  if (!j.is_string()) wrong_type(key, "a string");
  return j.get<std::string>();
}

// A list as split_list makes it: no item empty or holding a comma ([]: not given).
std::vector<std::string> plan_names(const Json& j, const std::string& key) {
  if (!j.is_array()) wrong_type(key, "a list of names");
  std::vector<std::string> names;
  for (const Json& item : j) {
    const auto* text = item.get_ptr<const std::string*>();
    if (text == nullptr || text->empty() || text->find(',') != std::string::npos) {
      wrong_type(key, "a list of names");
    }
    names.push_back(*text);
  }
  return names;
}

double plan_number(const Json& j, const std::string& key) {
  if (!j.is_number()) wrong_type(key, "a number");
  return j.get<double>();
}

bool plan_flag(const Json& j, const std::string& key) {
  if (!j.is_boolean()) wrong_type(key, "true or false");
  return j.get<bool>();
}

std::vector<int> plan_ints(const Json& j, const std::string& key, bool allow_zero) {
  return checked_int_list(json_integers<std::int64_t>(j, "--" + key), "--" + key + " value",
                          allow_zero);
}

std::map<std::string, std::vector<std::string>> plan_overrides(const Json& j) {
  if (!j.is_object()) wrong_type("param", "an object of lists");
  std::map<std::string, std::vector<std::string>> overrides;
  for (const auto& [name, values] : j.items()) {
    if (name.empty() || name.find('=') != std::string::npos) wrong_type("param", "axis names");
    overrides[name] = plan_names(values, "param " + name);
    if (overrides[name].empty()) wrong_type("param " + name, "a value");
  }
  return overrides;
}

Json hosts_json(const SweepOptions& o) {
  Json hosts = Json::array();
  for (const auto& h : o.launch.hosts) hosts.push_back({{"host", h.host}, {"slots", h.slots}});
  return hosts;
}

void set_hosts(const Json& j, SweepOptions& o) {
  if (!j.is_array()) wrong_type("hosts", "a list of hosts");
  std::vector<HostSlots> hosts;
  for (const Json& h : j) {
    if (!h.is_object() || !h.contains("host") || !h.contains("slots")) {
      wrong_type("hosts", "a list of hosts");
    }
    hosts.push_back({plan_text(h["host"], "hosts"), json_integer<int>(h["slots"], "--hosts slots")});
  }
  o.launch.hosts = checked_hosts(hosts, "the journal's --hosts");
}

// How the command line gives an option.
enum class Kind { flag, text, list };

// An option of the plan in the journal: its key, its typed value written from the options, and
// that value read back into them (checked as the command line's; throws UsageError).
struct PlanValue {
  const char* key = nullptr;
  Json (*get)(const SweepOptions&) = nullptr;
  void (*set)(const Json&, SweepOptions&) = nullptr;
};

struct SweepOption {
  const char* spec;  // cxxopts: "name" or "s,name"
  const char* help;
  Kind kind;
  void (*parse)(const Given&, SweepOptions&);  // nullptr: --help (parse_command_line)
  const char* default_value = nullptr;         // parsed when the option is not given
  PlanValue plan = {};                         // key nullptr: not part of the plan
};

using O = SweepOptions;
using J = Json;

// Every option of `mgbench sweep`, in the order of its help and of parsing (--profile before the
// stopping rule it sets).
const SweepOption kOptions[] = {
    {"gpus", "GPU counts, e.g. 1,2,4,8 (default: powers of two up to the visible count, plus the "
             "count)", Kind::text,
     [](const Given& v, O& o) { o.gpu_counts = parse_gpu_counts(v.text(), -1); }, nullptr,
     {"gpus", [](const O& o) { return J(o.gpu_counts); },
      [](const J& j, O& o) {
        o.gpu_counts = plan_ints(j, "gpus", false);
        std::sort(o.gpu_counts.begin(), o.gpu_counts.end());
      }}},
    {"devices", "physical CUDA devices to use, e.g. 0,1,2,3 (default: all visible)", Kind::text,
     [](const Given& v, O& o) { o.devices = parse_device_list(v.text(), -1); }, nullptr,
     {"devices", [](const O& o) { return J(o.devices); },
      [](const J& j, O& o) { o.devices = plan_ints(j, "devices", true); }}},
    {"workloads", "workloads, e.g. gemm,allreduce (default: all; see `mgbench list`)", Kind::text,
     [](const Given& v, O& o) { o.workloads = split_list(v.text(), "--workloads"); }, nullptr,
     {"workloads", [](const O& o) { return J(o.workloads); },
      [](const J& j, O& o) { o.workloads = plan_names(j, "workloads"); }}},
    {"batch-sizes", "per-GPU batch sizes for workloads with a batch axis, or `auto` (grow x2 "
                    "until out of memory)", Kind::text,
     [](const Given& v, O& o) {
       const bool automatic = v.text() == "auto";
       set_batch_sizes(automatic ? std::vector<std::string>{}
                                 : split_list(v.text(), "--batch-sizes"),
                       automatic, o);
     }, nullptr,
     {"batch-sizes", [](const O& o) { return o.batch_auto ? J("auto") : J(o.batch_sizes); },
      [](const J& j, O& o) {
        const bool automatic = j == Json("auto");
        set_batch_sizes(automatic ? std::vector<std::string>{} : plan_names(j, "batch-sizes"),
                        automatic, o);
      }}},
    {"dtypes", "data types, e.g. bf16,fp32", Kind::text,
     [](const Given& v, O& o) { o.dtypes = split_list(v.text(), "--dtypes"); }, nullptr,
     {"dtypes", [](const O& o) { return J(o.dtypes); },
      [](const J& j, O& o) { o.dtypes = plan_names(j, "dtypes"); }}},
    {"param", "override a workload axis: NAME=V1,V2 (repeatable)", Kind::list,
     [](const Given& v, O& o) {
       o.param_overrides =
           parse_param_overrides(v.args[v.name].as<std::vector<std::string>>());
     }, nullptr,
     {"param", [](const O& o) { return J(o.param_overrides); },
      [](const J& j, O& o) { o.param_overrides = plan_overrides(j); }}},
    {"profile", "quick | standard | full", Kind::text,
     [](const Given& v, O& o) { set_profile(profile_from_string(v.text()), o); }, "standard",
     {"profile", [](const O& o) { return J(to_string(o.profile)); },
      [](const J& j, O& o) { set_profile(profile_from_string(plan_text(j, "profile")), o); }}},
    {"min-samples", "minimum samples per point", Kind::text,
     [](const Given& v, O& o) {
       o.settings.stopping.min_samples =
           static_cast<std::size_t>(parse_positive_int(v.text(), "--min-samples"));
     }, nullptr,
     {"min-samples", [](const O& o) { return J(o.settings.stopping.min_samples); },
      [](const J& j, O& o) {
        o.settings.stopping.min_samples = json_integer<std::size_t>(j, "--min-samples", 1);
      }}},
    {"min-time", "minimum measured seconds per point", Kind::text,
     [](const Given& v, O& o) { o.settings.stopping.min_time_s = parse_number(v, true); },
     nullptr,
     {"min-time", [](const O& o) { return J(o.settings.stopping.min_time_s); },
      [](const J& j, O& o) {
        o.settings.stopping.min_time_s = checked_number(plan_number(j, "min-time"), "min-time",
                                                        true);
      }}},
    {"max-noise", "noise target in percent: sampling stops once the relative stdev or the "
                  "median's CI half-width is below it; a point is noisy when its median's CI is "
                  "wider (default 0.5)", Kind::text,
     [](const Given& v, O& o) {
       std::string text = v.text();
       if (!text.empty() && text.back() == '%') text.pop_back();
       o.settings.stopping.max_noise =
           checked_noise(parse_double(text, "--max-noise") / 100.0, v.text());
     }, nullptr,
     {"max-noise", [](const O& o) { return J(o.settings.stopping.max_noise); },
      [](const J& j, O& o) {
        o.settings.stopping.max_noise = checked_noise(plan_number(j, "max-noise"), j.dump());
      }}},
    {"max-time-per-point", "seconds of sampling before a point stops short of the target",
     Kind::text,
     [](const Given& v, O& o) { o.settings.stopping.max_time_s = parse_number(v, false); },
     nullptr,
     {"max-time-per-point", [](const O& o) { return J(o.settings.stopping.max_time_s); },
      [](const J& j, O& o) {
        o.settings.stopping.max_time_s = checked_number(
            plan_number(j, "max-time-per-point"), "max-time-per-point", false);
      }}},
    {"warmup", "seconds of warm-up before each point's samples, for every workload (default: "
               "0.05, and 1 for power-bound workloads so that clocks settle at the power limit)",
     Kind::text,
     [](const Given& v, O& o) {
       o.settings.warmup_s = parse_number(v, true);
       o.settings.warmup_given = true;
     }, nullptr,
     {"warmup",
      [](const O& o) { return o.settings.warmup_given ? J(o.settings.warmup_s) : J(); },
      [](const J& j, O& o) {
        o.settings.warmup_given = !j.is_null();
        o.settings.warmup_s = j.is_null() ? RunSettings{}.warmup_s
                                          : checked_number(plan_number(j, "warmup"), "warmup",
                                                           true);
      }}},
    {"out", "output directory (default results/<UTC timestamp>-<host>/)", Kind::text,
     [](const Given& v, O& o) { o.out_dir = v.text(); }},
    {"json", "also write the results JSON here", Kind::text,
     [](const Given& v, O& o) { o.json_path = v.text(); }},
    {"csv", "also write one CSV row per point here", Kind::text,
     [](const Given& v, O& o) { o.csv_path = v.text(); }},
    {"dry-run", "print the plan and run nothing", Kind::flag,
     [](const Given&, O& o) { o.dry_run = true; }},
    {"isolation", "process (a worker per group) | none (in-process, debugging)", Kind::text,
     [](const Given& v, O& o) {
       o.isolation = choose<Isolation>("isolation", v.text(),
                                       {{"process", Isolation::process},
                                        {"none", Isolation::none}});
     }, "process"},
    {"launcher", kLaunchHelp.launcher, Kind::text,
     [](const Given& v, O& o) { o.launch.launcher = launcher_option(v.text()); }, nullptr,
     {"launcher", [](const O& o) { return J(to_string(o.launch.launcher)); },
      [](const J& j, O& o) { o.launch.launcher = launcher_option(plan_text(j, "launcher")); }}},
    {"hosts", kLaunchHelp.hosts, Kind::text,
     [](const Given& v, O& o) { o.launch.hosts = parse_host_list(v.text()); }, nullptr,
     {"hosts", hosts_json, set_hosts}},
    {"hostfile", kLaunchHelp.hostfile, Kind::text,
     [](const Given& v, O& o) { o.launch.hosts = parse_hostfile(v.text()); }, nullptr,
     {"hosts", hosts_json, set_hosts}},
    {"gpus-per-node", kLaunchHelp.gpus_per_node, Kind::text,
     [](const Given& v, O& o) { o.launch.gpus_per_node = gpus_per_node_option(v.text()); },
     nullptr,
     {"gpus-per-node", [](const O& o) { return J(o.launch.gpus_per_node); },
      [](const J& j, O& o) {
        o.launch.gpus_per_node = json_integer<int>(j, "--gpus-per-node", 0, 4096);
      }}},
    {"oversubscribe", kLaunchHelp.oversubscribe, Kind::flag,
     [](const Given&, O& o) { o.launch.oversubscribe = true; }, nullptr,
     {"oversubscribe", [](const O& o) { return J(o.launch.oversubscribe); },
      [](const J& j, O& o) { o.launch.oversubscribe = plan_flag(j, "oversubscribe"); }}},
    {"launcher-arg", kLaunchHelp.launcher_arg, Kind::text,
     [](const Given& v, O& o) { o.launch.launcher_args = launcher_words(v.args); }},
    {"forward-env", kLaunchHelp.forward_env, Kind::text,
     [](const Given& v, O& o) { o.launch.forward_env = forward_env_names(v.text()); }},
    {"group-timeout", "kill a group's worker after this many seconds without progress",
     Kind::text,
     [](const Given& v, O& o) { o.settings.group_timeout_s = parse_number(v, false); }},
    {"resume", "continue the interrupted sweep in this output directory", Kind::text,
     [](const Given& v, O& o) { o.resume_dir = v.text(); }},
    {"force", "start over in an --out directory that holds a sweep's journal", Kind::flag,
     [](const Given&, O& o) { o.force = true; }},
    {"scaling", "weak (per-GPU batch fixed) | strong (global batch fixed)", Kind::text,
     [](const Given& v, O& o) { o.scaling = scaling_of(v.text()); }, "weak",
     {"scaling", [](const O& o) { return J(to_string(o.scaling)); },
      [](const J& j, O& o) { o.scaling = scaling_of(plan_text(j, "scaling")); }}},
    {"baseline", "`each`: also run the 1-GPU points on every selected GPU", Kind::text,
     [](const Given& v, O& o) {
       o.baseline_each = choose<bool>("baseline", v.text(), {{"each", true}});
     }, nullptr,
     {"baseline", [](const O& o) { return J(o.baseline_each); },
      [](const J& j, O& o) { o.baseline_each = plan_flag(j, "baseline"); }}},
    {"telemetry-interval", "NVML sampling period in milliseconds (default 100)", Kind::text,
     [](const Given& v, O& o) {
       o.settings.telemetry_interval_s =
           static_cast<double>(parse_positive_int(v.text(), "--telemetry-interval")) / 1000.0;
     }},
    {"no-telemetry", "do not sample NVML", Kind::flag,
     [](const Given&, O& o) { o.settings.telemetry = false; }},
    {"skip-doctor", "skip the cheap doctor checks before the sweep", Kind::flag,
     [](const Given&, O& o) { o.skip_doctor = true; }},
    {"no-report", "do not write report.html / report.md", Kind::flag,
     [](const Given&, O& o) { o.no_report = true; }},
    {"no-history", "do not record the run in the history database", Kind::flag,
     [](const Given&, O& o) { o.no_history = true; }},
    {"redact", "leave the host name, CUDA_/NCCL_/OMPI_/SLURM_ values, GPU serials and other "
               "processes out of results.json and the reports (docs/SHARING.md)", Kind::flag,
     [](const Given&, O& o) { o.redact = true; }},
    {"db", "history database path", Kind::text,
     [](const Given& v, O& o) { o.db_path = v.text(); }},
    {"price-per-gpu-hour", "USD per GPU-hour, for throughput per dollar", Kind::text,
     [](const Given& v, O& o) { o.price_per_gpu_hour = parse_number(v, false); }},
    {"nvls", "NVLink SHARP for NCCL: on | off | auto (NCCL's default, also when not given); "
             "sets NCCL_NVLS_ENABLE for every worker", Kind::text,
     [](const Given& v, O& o) { set_nvls(v.text(), o); }, nullptr,
     {"nvls", [](const O& o) { return J(o.nvls); },
      [](const J& j, O& o) { set_nvls(plan_text(j, "nvls"), o); }}},
    {"v,verbose", "more logging", Kind::flag,
     [](const Given&, O& o) { o.verbosity = std::max(o.verbosity, 1); }},
    {"q,quiet", "only errors and the final table", Kind::flag,
     [](const Given&, O& o) { o.verbosity = -1; }},  // after --verbose: quiet wins
    {"h,help", "this help", Kind::flag, nullptr},
};

std::string long_name(const SweepOption& option) {
  const std::string spec = option.spec;
  return spec.substr(spec.find(',') + 1);  // npos + 1 == 0: the whole spec
}

cxxopts::Options sweep_cli() {
  cxxopts::Options options("mgbench sweep",
                           "Run workloads on 1..N GPUs and batch sizes; record throughput, "
                           "telemetry and scaling efficiency.");
  auto add = options.add_options();
  for (const SweepOption& o : kOptions) {
    if (o.kind == Kind::flag) {
      add(o.spec, o.help);
    } else if (o.kind == Kind::list) {
      add(o.spec, o.help, cxxopts::value<std::vector<std::string>>());
    } else if (o.default_value != nullptr) {
      add(o.spec, o.help, cxxopts::value<std::string>()->default_value(o.default_value));
    } else {
      add(o.spec, o.help, cxxopts::value<std::string>());
    }
  }
  return options;
}

// How groups are launched, across options: what the launcher cannot take, and what cannot be
// combined with it.
void check_launch(const SweepOptions& o) {
  const GroupLauncher& launcher = group_launcher(o.launch.launcher);
  launcher.check_options(o.launch);
  if (launcher.processes_per_gpu() && o.isolation == Isolation::none) {
    throw UsageError(fmt::format("--launcher {} starts processes: not with --isolation none",
                                 to_string(o.launch.launcher)));
  }
}

// What follows from other options, and the checks across them: after the command line, and
// again once a resumed sweep has its journal's plan. `launch_known`: false for a command line
// with --resume, whose launcher comes from the journal (its --launcher-arg words are checked
// against that launcher, not against the default one).
void settle(SweepOptions& o, const std::set<std::string>& named, bool launch_known = true) {
  if (named.count("group-timeout") == 0) {
    o.settings.group_timeout_s = std::max(300.0, 20 * o.settings.stopping.max_time_s);
  }
  if (o.settings.warmup_s >= o.settings.group_timeout_s / 2) {
    throw UsageError(fmt::format("invalid --warmup: must be under half the group timeout ({} s)",
                                 o.settings.group_timeout_s));
  }
  if (launch_known) check_launch(o);
}

// The plan's options that differ from a sweep without options: what the log shows of a plan.
std::string plan_summary(const SweepOptions& o) {
  char name[] = "sweep";
  char* argv[] = {name};
  const SweepOptions plain = parse_sweep_options(1, argv);
  std::string text;
  std::set<std::string> seen;
  for (const SweepOption& option : kOptions) {
    const PlanValue& p = option.plan;
    if (p.key == nullptr || !seen.insert(p.key).second || p.get(o) == p.get(plain)) continue;
    text += fmt::format("{}--{} {}", text.empty() ? "" : " ", p.key, dump_json(p.get(o)));
  }
  return text.empty() ? "the defaults" : text;
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

SweepOptions parse_sweep_options(int argc, char** argv, std::set<std::string>* named) {
  auto cli = sweep_cli();
  const Args args = parse_command_line(cli, argc, argv);
  if (args.count("hosts") && args.count("hostfile")) {
    throw UsageError("give --hosts or --hostfile, not both");
  }
  SweepOptions o;
  std::set<std::string> given;
  for (const SweepOption& option : kOptions) {
    const std::string name = long_name(option);
    const bool here = args.count(name) > 0;
    if (here) given.insert(name);
    if (option.parse != nullptr && (here || option.default_value != nullptr)) {
      option.parse(Given{args, name}, o);
    }
  }
  if (given.count("launcher") == 0) {
    o.launch.launcher = o.isolation == Isolation::none ? Launcher::local : default_launcher();
  }
  settle(o, given, given.count("resume") == 0);
  if (const auto slowdown =
          test_hooks::read_number(test_hooks::kSlowdown, 0.0, test_hooks::kMaxSlowdown)) {
    o.settings.test_slowdown = *slowdown;
  }
  if (named != nullptr) *named = std::move(given);
  return o;
}

Json plan_options_to_json(const SweepOptions& options) {
  Json plan = Json::object();
  for (const SweepOption& option : kOptions) {
    if (option.plan.key != nullptr) plan[option.plan.key] = option.plan.get(options);
  }
  return plan;
}

SweepOptions with_recorded_plan(const SweepOptions& current, const std::set<std::string>& named,
                                const Json& recorded, const std::string& source) {
  SweepOptions planned = current;
  std::set<std::string> seen;
  for (const SweepOption& option : kOptions) {
    const PlanValue& p = option.plan;
    if (p.key == nullptr || !seen.insert(p.key).second) continue;
    try {
      if (!recorded.is_object() || !recorded.contains(p.key)) {
        throw UsageError(fmt::format("--{} is missing", p.key));
      }
      p.set(recorded.at(p.key), planned);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("cannot resume '{}': its plan is not valid: {}", source,
                                   e.what()));
    }
  }
  for (const SweepOption& option : kOptions) {
    const PlanValue& p = option.plan;
    const std::string name = long_name(option);
    if (p.key == nullptr || named.count(name) == 0 || p.get(current) == p.get(planned)) continue;
    throw UsageError(fmt::format(
        "--{} conflicts with the plan being resumed ({}); leave it out, or start a new sweep",
        name, dump_json(p.get(planned))));
  }
  settle(planned, named);
  logging::info("resuming '{}' with the plan of its journal: {}", source, plan_summary(planned));
  return planned;
}

}  // namespace mgbench
