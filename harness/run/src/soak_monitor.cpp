// The soak's health watch: NVML (XID events, temperatures, ECC and row-remap counters), a fake
// for tests, and a blind one when NVML is missing.
#include "soak_monitor.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/model/telemetry_keys.hpp"
#include "mgbench/platform/nvml.hpp"
#include "mgbench/run/soak.hpp"

namespace mgbench {

namespace tk = telemetry_keys;

Json SoakMonitor::window_telemetry(std::size_t, const std::vector<int>&) { return nullptr; }

namespace {

template <typename T>
Json or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

class NvmlSoakMonitor : public SoakMonitor {
 public:
  NvmlSoakMonitor(std::shared_ptr<Nvml> nvml, std::vector<int> devices,
                  const std::vector<std::string>& bus_ids)
      : nvml_(std::move(nvml)), devices_(std::move(devices)) {
    for (const auto& id : bus_ids) handles_.push_back(nvml_->device_by_pci_bus_id(id));
    std::vector<NvmlDevice> known;
    for (const auto& h : handles_) {
      if (h) known.push_back(h);
    }
    events_ = nvml_->watch_xid_events(known);
    if (!events_) logging::warn("NVML cannot watch XID events here: XIDs will not be seen");
  }
  ~NvmlSoakMonitor() override { nvml_->free_event_set(events_); }

  Json counters() override {
    Json out = Json::array();
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      const NvmlDevice d = handles_[i];
      Json c{{"device", devices_[i]}};
      if (d) {
        c["ecc_uncorrected_volatile"] = or_null(nvml_->ecc_uncorrected(d, false));
        c["ecc_uncorrected_aggregate"] = or_null(nvml_->ecc_uncorrected(d, true));
        c["ecc_corrected_volatile"] = or_null(nvml_->ecc_corrected(d, false));
        c["ecc_corrected_aggregate"] = or_null(nvml_->ecc_corrected(d, true));
        if (const auto rows = nvml_->remapped_rows(d)) {
          c["remapped_rows"] = {{"corrected", rows->corrected},
                                {"uncorrected", rows->uncorrected},
                                {"pending", rows->pending},
                                {"failure", rows->failure}};
        }
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  Json thresholds() override {
    Json out = Json::array();
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      out.push_back({{"device", devices_[i]}, {"slowdown_c", or_null(slowdown_c(devices_[i]))}});
    }
    return out;
  }

  std::optional<double> slowdown_c(int device) override {
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i] == device && handles_[i]) {
        if (const auto t = nvml_->slowdown_temperature_c(handles_[i])) return *t;
      }
    }
    return std::nullopt;
  }

  std::vector<SoakEvent> poll(int timeout_ms, std::size_t) override {
    std::vector<SoakEvent> found;
    if (events_) {
      if (const auto e = nvml_->wait_xid_event(events_, static_cast<unsigned>(timeout_ms))) {
        found.push_back(xid_event(*e));
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    }
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      if (!handles_[i]) continue;
      const auto temp = nvml_->temperature_c(handles_[i]);
      const auto limit = slowdown_c(devices_[i]);
      if (temp && limit && *temp >= *limit) {
        found.push_back({"temperature", devices_[i], static_cast<double>(*temp),
                         fmt::format("GPU {} reached {} °C, its slowdown threshold is {} °C",
                                     devices_[i], *temp, *limit)});
      }
    }
    return found;
  }

  std::string describe() const override { return "NVML"; }

 private:
  SoakEvent xid_event(const NvmlXidEvent& e) const {
    int device = -1;
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      if (handles_[i].handle == e.device.handle) device = devices_[i];
    }
    return {"xid", device, static_cast<double>(e.xid),
            fmt::format("XID {} on GPU {}", e.xid, device)};
  }

  std::shared_ptr<Nvml> nvml_;
  std::vector<int> devices_;
  std::vector<NvmlDevice> handles_;
  NvmlEventSetHandle events_;
};

// Sees nothing: NVML is missing.
class BlindSoakMonitor : public SoakMonitor {
 public:
  explicit BlindSoakMonitor(std::vector<int> devices) : devices_(std::move(devices)) {}
  Json counters() override {
    Json out = Json::array();
    for (int d : devices_) out.push_back({{"device", d}});
    return out;
  }
  Json thresholds() override { return counters(); }
  std::optional<double> slowdown_c(int) override { return std::nullopt; }
  std::vector<SoakEvent> poll(int timeout_ms, std::size_t) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return {};
  }
  std::string describe() const override { return "none (NVML unavailable)"; }

 private:
  std::vector<int> devices_;
};

// MGBENCH_TEST_SOAK_FAKE: "ok", "xid@W" or "hot@W" (docs/TESTING-HOOKS.md).
class FakeSoakMonitor : public SoakMonitor {
 public:
  static constexpr double kSlowdownC = 90;

  FakeSoakMonitor(std::vector<int> devices, const std::string& spec)
      : devices_(std::move(devices)) {
    const auto at = spec.find('@');
    if (spec != "ok" && at != std::string::npos) {
      fault_ = spec.substr(0, at);
      fault_window_ = std::stoul(spec.substr(at + 1));
    }
    if (spec != "ok" && fault_ != "xid" && fault_ != "hot") {
      throw UsageError("invalid MGBENCH_TEST_SOAK_FAKE '" + spec + "': expected ok, xid@W, hot@W");
    }
  }
  Json counters() override {
    Json out = Json::array();
    for (int d : devices_) {
      out.push_back({{"device", d},
                     {"ecc_uncorrected_volatile", 0},
                     {"ecc_uncorrected_aggregate", 0},
                     {"ecc_corrected_volatile", 0},
                     {"ecc_corrected_aggregate", 0},
                     {"remapped_rows",
                      {{"corrected", 0}, {"uncorrected", 0}, {"pending", false}, {"failure", false}}}});
    }
    return out;
  }
  Json thresholds() override {
    Json out = Json::array();
    for (int d : devices_) out.push_back({{"device", d}, {"slowdown_c", kSlowdownC}});
    return out;
  }
  std::optional<double> slowdown_c(int) override { return kSlowdownC; }
  std::vector<SoakEvent> poll(int timeout_ms, std::size_t window) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 20)));
    if (fault_ == "xid" && window >= fault_window_ && !fired_) {
      fired_ = true;
      return {{"xid", devices_.front(), 79,
               fmt::format("XID 79 on GPU {} (fake)", devices_.front())}};
    }
    return {};
  }
  Json window_telemetry(std::size_t window, const std::vector<int>& devices) override;
  std::string describe() const override { return "fake (MGBENCH_TEST_SOAK_FAKE)"; }

 private:
  std::vector<int> devices_;
  std::string fault_;
  std::size_t fault_window_ = 0;
  bool fired_ = false;
};

// Warms from 50 °C by 1 °C per window; windows 3 and 4 are power-capped at a lower clock; the
// last device runs 2 °C hotter; "hot@W" puts the first device at the threshold in window W.
Json FakeSoakMonitor::window_telemetry(std::size_t window, const std::vector<int>& devices) {
  Json gpus = Json::array();
  const bool capped = window == 3 || window == 4;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    double temp = 50.0 + static_cast<double>(window) + (i + 1 == devices.size() ? 2.0 : 0.0);
    if (fault_ == "hot" && window >= fault_window_ && i == 0) temp = kSlowdownC + 1;
    const auto gauge = [](double v) {
      return Json{{tk::kMin, v}, {tk::kMean, v}, {tk::kMax, v}, {tk::kMedian, v}};
    };
    gpus.push_back(
        {{tk::kDevice, devices[i]},
         {tk::kTemp.key, gauge(temp)},
         {tk::kPower.key, gauge(capped ? 700.0 : 650.0)},
         {tk::kSmClock.key, gauge(capped ? 1600.0 : 1980.0)},
         {tk::kMemClock.key, gauge(3201.0)},
         {tk::kThrottleFraction, capped ? 1.0 : 0.0},
         {tk::kThrottleReasons, capped ? Json::array({"sw_power_cap"}) : Json::array()}});
  }
  return {{tk::kGpus, gpus}};
}

std::uint64_t count_of(const Json& c, const char* key) {
  if (!c.contains(key) || !c[key].is_number_integer()) return 0;
  if (c[key].is_number_unsigned()) return c[key].get<std::uint64_t>();
  const auto v = c[key].get<std::int64_t>();
  return v > 0 ? static_cast<std::uint64_t>(v) : 0;
}

}  // namespace

std::unique_ptr<SoakMonitor> make_soak_monitor(const std::vector<int>& devices,
                                               const std::vector<std::string>& bus_ids) {
  if (const auto fake = test_hooks::read(test_hooks::kSoakFake)) {
    return std::make_unique<FakeSoakMonitor>(devices, *fake);
  }
  if (auto nvml = nvml_instance()) {
    return std::make_unique<NvmlSoakMonitor>(std::move(nvml), devices, bus_ids);
  }
  warn_nvml_unavailable_once("the soak sees no XID, temperature threshold, ECC or row remap");
  return std::make_unique<BlindSoakMonitor>(devices);
}

Json compare_counters(const Json& before, const Json& after) {
  bool ecc = false, remap = false;
  for (std::size_t i = 0; i < std::min(before.size(), after.size()); ++i) {
    const Json& b = before[i];
    const Json& a = after[i];
    for (const char* key : {"ecc_uncorrected_volatile", "ecc_uncorrected_aggregate"}) {
      ecc = ecc || count_of(a, key) > count_of(b, key);
    }
    if (a.contains("remapped_rows")) {
      const Json& ra = a["remapped_rows"];
      const Json rb = b.value("remapped_rows", Json::object());
      remap = remap || ra.value("pending", false) || ra.value("failure", false) ||
              count_of(ra, "corrected") + count_of(ra, "uncorrected") >
                  count_of(rb, "corrected") + count_of(rb, "uncorrected");
    }
  }
  return {{"new_uncorrected_ecc", ecc}, {"row_remap_trouble", remap}};
}

}  // namespace mgbench
