// ProcessGroup over MPI: every collective is one or two MPI calls on MPI_COMM_WORLD, preceded,
// once the arrival watch is on, by every rank's arrival message to rank 0.
#include "mgbench/run/mpi_group.hpp"

// The C interface only (MPI::MPI_C): no C++ bindings from OpenMPI's or MPICH's header.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/run/launcher.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

bool built_with_mpi() { return true; }

namespace {

constexpr int kArrivalTag = 7301;
// Rank 0 polls the arrivals busily this long, then sleeps between polls.
constexpr double kBusyPollS = 0.05;

using Clock = std::chrono::steady_clock;

void write_line(int fd, const std::string& line) {
  if (fd >= 0) (void)write_fully(fd, line);  // a reader that went away: nothing more to do
}

// Nodes of N consecutive ranks instead of the machines (a test hook; nullopt: the machines).
std::optional<int> ranks_per_node() {
  const auto n = test_hooks::read_number(test_hooks::kRanksPerNode, 1, kMaxRank);
  return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
}

class MpiGroup : public LaunchedGroup {
 public:
  explicit MpiGroup(int report_fd) : report_fd_(report_fd) {
    const std::optional<int> per_node = ranks_per_node();  // a bad value: before MPI starts
    const auto granted = test_hooks::read_number(test_hooks::kMpiThreadLevel, 0, 3);
    int provided = 0;
    // The executor's rank thread makes the calls, one at a time: not the thread that started MPI.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      throw EnvironmentError("MPI_Init_thread failed");
    }
    const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                          MPI_THREAD_MULTIPLE};
    if (granted) provided = levels[static_cast<std::size_t>(*granted)];
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      throw EnvironmentError(fmt::format(
          "this MPI library grants thread level {} below MPI_THREAD_SERIALIZED ({}), which a "
          "process per GPU needs (its rank thread makes the MPI calls): use an MPI built with "
          "thread support", provided, MPI_THREAD_SERIALIZED));
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (per_node) {
      MPI_Comm_split(MPI_COMM_WORLD, rank_ / *per_node, rank_, &node_);
    } else {
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_);
    }
    MPI_Comm_rank(node_, &local_rank_);
    MPI_Comm_size(node_, &local_size_);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    host_.assign(name, static_cast<std::size_t>(length));
    hosts_ = all_gather(host_, "start-up");  // rank 0 names late ranks with their hosts
  }
  ~MpiGroup() override {
    MPI_Comm_free(&node_);
    MPI_Finalize();
  }
  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  const std::string& host() const override { return host_; }

  void watch_arrivals(double deadline_s) override { deadline_s_ = deadline_s; }
  void set_device(int ordinal, const std::string& bus_id) override {
    device_ = ordinal;
    bus_id_ = bus_id;
  }
  int device() const override { return device_; }
  std::string device_bus_id() const override { return bus_id_; }

  void barrier(const std::string& step) override {
    arrive(step);
    MPI_Barrier(MPI_COMM_WORLD);
    arrived();
  }

  std::string broadcast(const std::string& from_rank0, const std::string& step) override {
    arrive(step);
    unsigned long long length = rank_ == 0 ? from_rank0.size() : 0;
    MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? from_rank0 : std::string(length, '\0');
    MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD);
    arrived();
    return out;
  }

  std::vector<std::string> all_gather(const std::string& mine, const std::string& step) override {
    arrive(step);
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> offsets(lengths.size());
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                   MPI_CHAR, MPI_COMM_WORLD);
    arrived();
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(offsets[r]),
                               static_cast<std::size_t>(lengths[r])));
    }
    return out;
  }

  [[noreturn]] void abort(const std::string& reason) override { end(reason, false); }
  [[noreturn]] void abort_launch(const std::string& reason) override { end(reason, true); }

 private:
  [[noreturn]] void end(const std::string& reason, bool launch) {
    const std::string text = fmt::format("rank {} on {}: {}", rank_, host_, reason);
    Json fatal{{"type", "fatal"}, {"message", text}};
    if (launch) fatal["launch"] = true;
    write_line(report_fd_, make_worker_line(fatal));
    std::fprintf(stderr, "mgbench: %s: ending the group\n", text.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::environment));
    std::_Exit(static_cast<int>(ExitCode::environment));
  }

  // Before a collective (arrival watch on): the other ranks post their arrival, numbered, to
  // rank 0 and go on into the collective; rank 0 waits for every arrival first.
  void arrive(const std::string& step) {
    if (deadline_s_ <= 0 || size_ < 2) return;
    ++collective_;
    if (rank_ != 0) {
      sent_ = collective_;
      MPI_Isend(&sent_, 1, MPI_UNSIGNED_LONG_LONG, 0, kArrivalTag, MPI_COMM_WORLD, &send_);
      return;
    }
    wait_for_arrivals(step);
  }

  // After the collective, rank 0 has taken this rank's arrival: the send is complete.
  void arrived() {
    if (send_ != MPI_REQUEST_NULL) MPI_Wait(&send_, MPI_STATUS_IGNORE);
  }

  void wait_for_arrivals(const std::string& step) {
    std::vector<unsigned long long> got(static_cast<std::size_t>(size_), 0);
    std::vector<MPI_Request> pending(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
    for (int r = 1; r < size_; ++r) {
      MPI_Irecv(&got[r], 1, MPI_UNSIGNED_LONG_LONG, r, kArrivalTag, MPI_COMM_WORLD, &pending[r]);
    }
    const Clock::time_point start = Clock::now();
    bool reported = false;
    for (;;) {
      bool all = true;
      for (MPI_Request& request : pending) {
        int done = 1;
        if (request != MPI_REQUEST_NULL) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        all = all && done != 0;
      }
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      if (all) {
        if (reported) report_stall(step, waited, {});
        break;
      }
      if (!reported && waited >= deadline_s_) {
        report_stall(step, waited, pending);
        reported = true;
      }
      if (waited < kBusyPollS) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    for (int r = 1; r < size_; ++r) {
      if (got[r] != collective_) {
        abort(fmt::format("rank {} arrived at collective #{} where rank 0 is at #{} ({})", r,
                          got[r], collective_, step));
      }
    }
  }

  // Writes a `stalled` line: the ranks whose arrival is still pending (none: all arrived).
  void report_stall(const std::string& step, double waited_s,
                    const std::vector<MPI_Request>& pending) {
    WorkerStall stall{step, waited_s, {}};
    for (std::size_t r = 0; r < pending.size(); ++r) {
      if (pending[r] != MPI_REQUEST_NULL) {
        stall.missing.push_back({static_cast<int>(r), hosts_.at(r)});
      }
    }
    write_line(report_fd_, make_worker_line(stall_message(stall)));
    std::fprintf(stderr, "mgbench: rank 0 at '%s' after %.1f s: %zu rank(s) missing\n",
                 step.c_str(), waited_s, stall.missing.size());
  }

  int report_fd_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  MPI_Comm node_ = MPI_COMM_NULL;
  std::string host_;
  std::vector<std::string> hosts_;  // every rank's, in rank order
  double deadline_s_ = 0;           // arrival watch (0: off)
  int device_ = -1;
  std::string bus_id_;
  unsigned long long collective_ = 0, sent_ = 0;
  MPI_Request send_ = MPI_REQUEST_NULL;
};

}  // namespace

std::unique_ptr<LaunchedGroup> start_mpi_group(int report_fd) {
  return std::make_unique<MpiGroup>(report_fd);
}

}  // namespace mgbench
