// The environment fingerprint of a run as tables: key/value rows, and one table per array of
// objects (per-GPU records side by side, differences marked).
#include <algorithm>
#include <map>
#include <set>

#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {
namespace {

bool array_of_objects(const Json& v) {
  return v.is_array() && !v.empty() &&
         std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_object(); });
}

// Scalars and small arrays go to `kv`; every array of objects (per-GPU records...) becomes a
// table of its own with one column per element, so differences between GPUs line up.
void split_environment(const Json& v, const std::string& key, Table& kv,
                       std::vector<Table>& lists) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      split_environment(it.value(), key.empty() ? it.key() : key + "." + it.key(), kv, lists);
    }
    return;
  }
  if (array_of_objects(v)) {
    Table t;
    t.title = key;
    t.column("field");
    std::vector<std::string> fields;
    std::vector<std::map<std::string, std::string>> values;
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::string label = std::to_string(i);
      for (const char* id : {"index", "device", "rank"}) {
        if (v[i].contains(id) && v[i][id].is_number_integer()) {
          label = format_json_value(v[i][id]);
          break;
        }
      }
      const bool gpus = key == "gpus" || (key.size() >= 5 && key.substr(key.size() - 5) == ".gpus");
      t.column(gpus ? "GPU " + label : label);
      values.emplace_back();
      for (const auto& [k, val] : flatten_json(v[i])) {
        if (std::find(fields.begin(), fields.end(), k) == fields.end()) fields.push_back(k);
        values.back()[k] = val;
      }
    }
    // Fields that differ between elements are marked, identities (uuid, bus id...) aside.
    const auto identity = [](const std::string& f) {
      for (const char* id :
           {"index", "uuid", "serial", "pci", "bus_id", "device", "rank", "minor"}) {
        if (f.find(id) != std::string::npos) return true;
      }
      return false;
    };
    for (const auto& f : fields) {
      std::vector<std::string> row{f};
      std::set<std::string> distinct;
      for (const auto& m : values) {
        const auto it = m.find(f);
        row.push_back(it == m.end() ? "" : it->second);
        distinct.insert(row.back());
      }
      t.add_row(std::move(row),
                distinct.size() > 1 && !identity(f) ? RowTone::warn : RowTone::normal);
    }
    lists.push_back(std::move(t));
    return;
  }
  for (const auto& [k, val] : flatten_json(v, key)) kv.add_row({k, val});
}

}  // namespace

std::vector<Table> environment_tables(const RunResult& run) {
  Table kv;
  kv.title = "Environment";
  kv.column("key").column("value");
  std::vector<Table> lists;
  if (run.environment.is_object()) split_environment(run.environment, "", kv, lists);
  std::vector<Table> out;
  if (!kv.empty()) out.push_back(std::move(kv));
  for (auto& t : lists) out.push_back(std::move(t));
  return out;
}


}  // namespace mgbench::reports
