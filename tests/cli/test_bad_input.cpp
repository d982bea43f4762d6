// Bad input to every command that reads something: truncated, huge, deeply nested and
// wrong-typed JSON, other schema versions, a directory where a file should be, unreadable files,
// hostile strings. Each case must end with its exit code (2 usage, 4 environment), exactly one
// line on stderr naming the problem, nothing on stdout, no signal, and the case's directory
// unchanged (nothing half-written). docs/BAD-INPUT.md lists the same table.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "bad_input_support.hpp"
#include "catch_compat.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::BadInputCase;
using mgbench::test::one_line;
using mgbench::test::run_mgbench;
using mgbench::test::snapshot;

namespace {

const BadInputCase kCases[] = {
    // report: the results file
    {"report: missing file", "", "report $D/nope.json -o $D/r.html", 2, "cannot read"},
    {"report: empty file", ": > e.json", "report $D/e.json -o $D/r.html", 2, "not valid JSON"},
    {"report: truncated JSON", "head -c 5000 $S/report_sample.json > t.json",
     "report $D/t.json -o $D/r.html", 2, "not valid JSON"},
    {"report: binary garbage", "head -c 4096 /dev/urandom > g.json; printf '\\377' >> g.json",
     "report $D/g.json -o $D/r.html", 2, "not valid JSON"},
    {"report: a directory as the results file", "mkdir d.json", "report $D/d.json -o $D/r.html", 2,
     "d.json"},
    {"report: deeply nested arrays", "head -c 500000 /dev/zero | tr '\\0' '[' > n.json",
     "report $D/n.json -o $D/r.html", 2, "n.json"},
    {"report: deeply nested objects", "yes '{\"a\":' | head -n 200000 | tr -d '\\n' > o.json",
     "report $D/o.json -o $D/r.html", 2, "o.json"},
    {"report: huge unterminated string",
     "{ printf '{\"schema_version\":2,\"host\":\"'; head -c 30000000 /dev/zero | tr '\\0' x; } > "
     "h.json",
     "report $D/h.json -o $D/r.html", 2, "a string longer than"},
    {"report: top level is an array", "printf '[1,2,3]' > a.json", "report $D/a.json -o $D/r.html",
     2, "not a JSON object"},
    {"report: top level is null", "printf 'null' > a.json", "report $D/a.json -o $D/r.html", 2,
     "not a JSON object"},
    {"report: no schema_version", "printf '{\"points\":[]}' > v.json",
     "report $D/v.json -o $D/r.html", 2, "schema_version"},
    {"report: schema_version is a string",
     "printf '{\"schema_version\":\"2\",\"points\":[]}' > v.json", "report $D/v.json -o $D/r.html",
     2, "schema_version"},
    {"report: schema_version 99 (newer)", "printf '{\"schema_version\":99,\"points\":[]}' > v.json",
     "report $D/v.json -o $D/r.html", 2, "unsupported results schema_version 99"},
    {"report: schema_version 0 (older)", "printf '{\"schema_version\":0,\"points\":[]}' > v.json",
     "report $D/v.json -o $D/r.html", 2, "unsupported results schema_version 0"},
    {"report: schema_version is a float",
     "printf '{\"schema_version\":2.5,\"points\":[]}' > v.json", "report $D/v.json -o $D/r.html", 2,
     "schema_version"},
    {"report: points is a string", "printf '{\"schema_version\":2,\"points\":\"many\"}' > v.json",
     "report $D/v.json -o $D/r.html", 2, "malformed"},
    {"report: no points", "printf '{\"schema_version\":2}' > v.json",
     "report $D/v.json -o $D/r.html", 2, "points"},
    {"report: gpus is a string", MGBENCH_POINT(",\"gpus\":\"two\""),
     "report $D/p.json -o $D/r.html", 2, "gpus"},
    {"report: gpus is 1e300", MGBENCH_POINT(",\"gpus\":1e300"), "report $D/p.json -o $D/r.html", 2,
     "gpus"},
    {"report: index is negative", MGBENCH_POINT(",\"index\":-1"), "report $D/p.json -o $D/r.html",
     2, "index"},
    {"report: a sample is a string", MGBENCH_POINT(",\"samples\":[\"fast\"]"),
     "report $D/p.json -o $D/r.html", 2, "malformed point"},
    {"report: unknown status", MGBENCH_POINT(",\"status\":\"great\""),
     "report $D/p.json -o $D/r.html", 2, "great"},
    {"report: params is an array", MGBENCH_POINT(",\"params\":[1]"),
     "report $D/p.json -o $D/r.html", 2, "params"},
    // A missing directory of the output is created; a file in its place cannot be.
    {"report: output under a file, not a directory",
     "cp $S/report_sample.json r.json; printf x > f", "report $D/r.json -o $D/f/r.html", 4,
     "f/r.html"},
    {"report: output is a directory", "cp $S/report_sample.json r.json; mkdir out.html",
     "report $D/r.json -o $D/out.html", 4, "out.html"},
    {"report: hostile --format (newline, escape)", "cp $S/report_sample.json r.json",
     "report $D/r.json --format \"$(printf 'x\\n\\033[31mred')\"", 2, "unknown --format"},
    {"report: two results files", "cp $S/report_sample.json r.json", "report $D/r.json $D/r.json",
     2, "expected one results file"},
    // compare: its inputs and options
    {"compare: one input", "", "compare $S/compare/base.json", 2, "at least two"},
    {"compare: two empty file names", "", "compare '' ''", 2, "an empty results file name"},
    {"compare: NEW missing", "", "compare $S/compare/base.json $D/nope.json", 2, "cannot read"},
    {"compare: NEW is a directory", "mkdir d.json", "compare $S/compare/base.json $D/d.json", 2,
     "d.json"},
    {"compare: NEW truncated", "head -c 3000 $S/compare/slower.json > t.json",
     "compare $S/compare/base.json $D/t.json", 2, "not valid JSON"},
    {"compare: BASE from a newer schema", "printf '{\"schema_version\":3,\"points\":[]}' > v.json",
     "compare $D/v.json $S/compare/base.json", 2, "unsupported results schema_version 3"},
    {"compare: wrong-typed point", MGBENCH_POINT(",\"devices\":\"0,1\""),
     "compare $S/compare/base.json $D/p.json", 2, "devices"},
    {"compare: --threshold not a number", "",
     "compare $S/compare/base.json $S/compare/slower.json --threshold abc", 2, "abc"},
    {"compare: --threshold 150%", "",
     "compare $S/compare/base.json $S/compare/slower.json --threshold 150%", 2, "--threshold"},
    {"compare: --alpha 2", "", "compare $S/compare/base.json $S/compare/slower.json --alpha 2", 2,
     "--alpha"},
    {"compare: --price without offers", "",
     "compare $S/compare/base.json $S/compare/slower.json --price base=2", 2, "--price"},
    {"compare: --price for no label", "",
     "compare $S/compare/base.json $S/compare/slower.json --offers --price zz=2", 2, "zz"},
    {"compare: empty --label", "", "compare $S/compare/base.json $S/compare/slower.json --label ''",
     2, "empty label"},
    {"compare: --baseline is a directory", "mkdir b.json",
     "compare $S/compare/base.json $S/compare/slower.json --baseline $D/b.json", 2, "b.json"},
    // history: its database and options
    {"history: no subcommand", "", "history", 2, "expected a subcommand"},
    {"history: unknown subcommand", "", "history frob", 2, "unknown subcommand"},
    {"history: show without a run", "", "history show --db $D/h.db", 2, "expected one RUN"},
    {"history: database is a directory", "mkdir h.db", "history list --db $D/h.db",
     2, "is a directory"},
    {"history: database is not SQLite", "head -c 8192 /dev/urandom > h.db",
     "history list --db $D/h.db", 2, "not an SQLite database"},
    {"history: database is a FIFO", "mkfifo h.db", "history list --db $D/h.db", 2,
     "h.db is a FIFO, not a regular file"},
    {"history: the database's -wal is a FIFO", ": > h.db; mkfifo h.db-wal",
     "history show last --db $D/h.db", 2, "h.db-wal is a FIFO, not a regular file"},
    {"history: trend without --workload", "", "history trend --db $D/h.db", 2, "--workload"},
    {"history: --gpus on list", "", "history list --gpus 2 --db $D/h.db", 2, "--gpus"},
    {"history: hostile --by (newline, escape)", "",
     "history trend --workload gemm --metric tflops --by \"$(printf 'x\\n\\033[2J')\" --db $D/h.db",
     2, "--by"},
    {"history: --gpus with a newline", "",
     "history trend --workload gemm --metric tflops --gpus \"$(printf '1\\n2')\" --db $D/h.db", 2,
     "--gpus"},
    // info and doctor: options (checked before any device is probed)
    {"info: unknown option", "", "info --bogus", 2, "bogus"},
    {"info: stray argument", "", "info extra", 2, "extra"},
    {"doctor: --load-seconds 0", "", "doctor --load-seconds 0", 2, "--load-seconds"},
    {"doctor: --load-seconds not a number", "", "doctor --load-seconds abc", 2, "abc"},
    {"doctor: --load-seconds 1e9", "", "doctor --load-seconds 1e9", 2, "--load-seconds"},
    {"doctor: --hosts with an empty name", "", "doctor --hosts a,,b", 2, "host"},
    {"doctor: --hostfile missing", "", "doctor --hostfile $D/none", 2, "none"},
    {"doctor: --launcher local", "", "doctor --launcher local", 2, "--launcher"},
    // sweep: options and the journal of --resume (all before any device is probed)
    {"sweep: --resume of a directory without a journal", "mkdir run", "sweep --resume $D/run", 2,
     "journal"},
    {"sweep: --resume with a garbage journal",
     "mkdir run; head -c 4096 /dev/urandom > run/journal.jsonl", "sweep --resume $D/run", 2,
     "no header"},
    {"sweep: --resume with a deeply nested journal header",
     "mkdir run; { printf '{\"type\":\"header\",\"run\":'; head -c 300000 /dev/zero | tr '\\0' "
     "'['; "
     "} > run/journal.jsonl",
     "sweep --resume $D/run", 2, "no header"},
    {"sweep: --resume with a journal of another version",
     "mkdir run; printf '%s\\n' '{\"type\":\"header\",\"run\":{\"argv\":[\"mgbench\",\"sweep\"],"
     "\"tool\":{\"version\":\"9.9.9\"}}}' > run/journal.jsonl",
     "sweep --resume $D/run", 2, "9.9.9"},
    {"sweep: --resume where the journal is a directory", "mkdir -p run/journal.jsonl",
     "sweep --resume $D/run", 2, "journal"},
    {"sweep: --resume with a journal that records no plan",
     "mkdir run; printf '%s\\n' '{\"type\":\"header\",\"run\":{\"argv\":[\"mgbench\",\"sweep\"]}}' "
     "> run/journal.jsonl",
     "sweep --resume $D/run", 2, "records no plan"},
    {"sweep: --resume with a hostile plan in the journal",
     "mkdir run; printf '%s\\n' '{\"type\":\"header\",\"run\":{\"plan_options\":{\"gpus\":[-1]}}}' "
     "> run/journal.jsonl",
     "sweep --resume $D/run", 2, "--gpus value '-1'"},
    {"sweep: --out is a file", "printf x > out",
     "sweep --workloads selftest --gpus 1 --skip-doctor --no-telemetry --no-history -q --out $D/out",
     4, "cannot create the output directory"},
    {"sweep: hostile --workloads (newline, escape)", "",
     "sweep --dry-run --workloads \"$(printf 'gemm\\n\\033[31mx')\"", 2, "unknown workload"},
    {"sweep: --group-timeout 1e300 (would overflow the clock)", "",
     "sweep --dry-run --gpus 1 --group-timeout 1e300", 2, "at most 1e8"},
    {"sweep: --max-time-per-point 1e12", "", "sweep --dry-run --gpus 1 --max-time-per-point 1e12",
     2, "at most 1e8"},
    {"sweep: --warmup -1", "", "sweep --dry-run --gpus 1 --warmup -1", 2, "must be >= 0"},
    {"sweep: --warmup as long as the group timeout", "",
     "sweep --dry-run --gpus 1 --warmup 200 --group-timeout 300", 2,
     "under half the group timeout"},
    {"sweep: --dtypes fp7", "", "sweep --dry-run --dtypes fp7", 2, "unknown dtype 'fp7'"},
    {"sweep: --workloads nope", "", "sweep --dry-run --workloads nope", 2,
     "unknown workload 'nope'"},
    {"sweep: h2d timing=graph with pageable memory", "",
     "sweep --dry-run --gpus 1 --workloads h2d --param timing=graph --param memory=pageable", 2,
     "timing=graph cannot time memory=pageable"},
    {"sweep: gemm shape that is not MxNxK", "",
     "sweep --dry-run --gpus 1 --workloads gemm --param shape=8192x4096", 2,
     "gemm shape '8192x4096'"},
    {"sweep: transformer_step model=custom without its dimensions", "",
     "sweep --dry-run --gpus 1 --workloads transformer_step --param model=custom", 2,
     "model=custom needs hidden, heads and mlp"},
    {"sweep: transformer_step dimensions without model=custom", "",
     "sweep --dry-run --gpus 1 --workloads transformer_step --param hidden=1024", 2,
     "add --param model=custom"},
    {"sweep: transformer_step heads that do not divide hidden", "",
     "sweep --dry-run --gpus 1 --workloads transformer_step --param model=custom "
     "--param hidden=1000 --param heads=16 --param mlp=2048", 2,
     "heads (16) must divide hidden (1000)"},
    {"sweep: transformer_step strategy nope", "",
     "sweep --dry-run --gpus 1 --workloads transformer_step --param strategy=nope", 2,
     "strategy"},
    // sweep: launchers and their nodes
    {"sweep: --launcher pbs", "", "sweep --dry-run --gpus 1 --launcher pbs", 2,
     "invalid --launcher 'pbs'"},
    {"sweep: --hosts with a bad slot count", "",
     "sweep --dry-run --gpus 1 --launcher mpirun --hosts n1:8,n2:x", 2, "invalid slot count 'x'"},
    {"sweep: --hosts with a hostile host name", "",
     "sweep --dry-run --gpus 1 --launcher mpirun --hosts \"$(printf 'n1\\033[31m:8')\"", 2,
     "invalid host name"},
    {"sweep: --hostfile missing", "", "sweep --dry-run --gpus 1 --launcher mpirun --hostfile $D/h",
     2, "cannot read hostfile"},
    {"sweep: --hostfile with a bad line", "printf 'n1 slots=8\\nn2 cpus=8\\n' > h",
     "sweep --dry-run --gpus 1 --launcher mpirun --hostfile $D/h", 2, "line 2"},
    {"sweep: --hosts with the local launcher", "",
     "sweep --dry-run --gpus 1 --launcher local --hosts n1:8", 2, "need --launcher mpirun or srun"},
    {"sweep: --nvls with an unknown value", "", "sweep --dry-run --gpus 1 --nvls maybe", 2,
     "invalid --nvls 'maybe'"},
    {"sweep: --launcher-arg with the local launcher", "",
     "sweep --dry-run --gpus 1 --launcher local --launcher-arg=--allow-run-as-root", 2,
     "need --launcher mpirun or srun"},
    {"sweep: --forward-env with a bad name", "",
     "sweep --dry-run --gpus 1 --launcher mpirun --forward-env A-B", 2,
     "invalid --forward-env 'A-B'"},
    {"sweep: --forward-env with srun", "",
     "sweep --dry-run --gpus 1 --launcher srun --forward-env FOO", 2,
     "--forward-env is an mpirun option"},
    // predict: links, counts and workloads
    {"predict: missing results file", "", "predict $D/nope.json", 2,
     "cannot read"},
    {"predict: unknown --intra", "", "predict $S/report_sample.json --intra nvlink9", 2,
     "invalid --intra 'nvlink9'"},
    {"predict: a network as --intra", "", "predict $S/report_sample.json --intra ib-ndr", 2,
     "is an inter-node link"},
    {"predict: --inter 0", "", "predict $S/report_sample.json --inter 0", 2,
     "invalid --inter '0'"},
    {"predict: --gpus 12 on nodes of 8", "", "predict $S/report_sample.json --gpus 1,12", 2,
     "does not fill whole nodes"},
    {"predict: --gpus 0", "", "predict $S/report_sample.json --gpus 0", 2,
     "invalid --gpus value '0'"},
    {"predict: --gpus-per-node 0", "", "predict $S/report_sample.json --gpus-per-node 0", 2,
     "--gpus-per-node"},
    {"predict: --nvls with an unknown value", "", "predict $S/report_sample.json --nvls maybe", 2,
     "invalid --nvls 'maybe'"},
    {"predict: a workload the results lack", "", "predict $S/report_sample.json --workload membw", 2,
     "no ok point of workload 'membw'"},
    // compare --predict-gpus and report --predict
    {"compare: --predict-gpus 0", "",
     "compare $S/compare/base.json $S/compare/slower.json --offers --predict-gpus 0", 2,
     "invalid --predict-gpus '0'"},
    {"compare: --predict-gpus -4", "",
     "compare $S/compare/base.json $S/compare/slower.json --offers --predict-gpus -4", 2,
     "invalid --predict-gpus '-4'"},
    {"compare: --predict-gpus not a number", "",
     "compare $S/compare/base.json $S/compare/slower.json --offers --predict-gpus 8x", 2,
     "invalid --predict-gpus '8x'"},
    {"compare: --predict-gpus without offers", "",
     "compare $S/compare/base.json $S/compare/slower.json --predict-gpus 16", 2,
     "--predict-gpus applies to the offer comparison"},
    {"report: --predict with a format without charts", "",
     "report $S/report_sample.json --predict --format text", 2,
     "--predict draws on the efficiency chart"},
    {"report: --intra without --predict", "",
     "report $S/report_sample.json --intra nvlink4 -o $D/r.html", 2, "apply with --predict"},
    {"report: --predict with an unknown --intra", "",
     "report $S/report_sample.json --predict --intra nvlink9 -o $D/r.html", 2,
     "invalid --intra 'nvlink9'"},
    // sweep: the collectives' root, NCCL algorithm and in-place variant
    {"sweep: a root that is not a rank", "",
     "sweep --dry-run --gpus 1 --workloads broadcast --param root=first", 2,
     "root 'first' is not a rank"},
    {"sweep: an NCCL algorithm the collective does not have", "",
     "sweep --dry-run --gpus 1 --workloads broadcast --param algo=tree", 2,
     "parameter 'algo' 'tree'"},
    {"sweep: in-place all-to-all", "",
     "sweep --dry-run --gpus 1 --workloads alltoall --param inplace=true", 2,
     "unknown parameter 'inplace'"},
};

}  // namespace

TEST_CASE("bad input: one line, exit 2 or 4, no signal, nothing written") {
  for (const BadInputCase& c : kCases) mgbench::test::check_bad_input_case(c);
  CHECK(sizeof(kCases) / sizeof(kCases[0]) >= 40);
}

// chmod 000 does not stop root: as root the command runs as user nobody (setpriv), and where
// that is impossible the case is not checked and says why.
TEST_CASE("bad input: an unreadable results file exits 2 with one line") {
  const std::string dir = mgbench::test::temp_dir("bad-input-unreadable");
  const std::string file = dir + "/r.json";
  REQUIRE(std::system(
              ("cp " MGBENCH_SOURCE_DIR "/tests/data/report_sample.json " + file).c_str()) == 0);
  ::chmod(file.c_str(), 0);
  ::chmod(dir.c_str(), 0755);
  std::string prefix;
  if (::geteuid() == 0) {
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) {
      WARN("running as root without setpriv: chmod 000 does not stop root, case not checked");
      std::filesystem::remove_all(dir);
      return;
    }
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  for (const std::string& command :
       {"report " + file + " -o " + dir + "/r.html", "compare " + file + " " + file}) {
    const auto before = snapshot(dir);
    const auto r = run_mgbench(command, prefix);
    INFO("mgbench " << command << "\nexit " << r.exit_code << "\nstderr: " << r.err);
    std::cout << "| unreadable results file (chmod 000) | `mgbench " << command << "` | "
              << r.exit_code << " | " << r.err.substr(0, r.err.find('\n')) << " |\n";
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("cannot read") != std::string::npos);
    CHECK(snapshot(dir) == before);
  }
  std::filesystem::remove_all(dir);
}
