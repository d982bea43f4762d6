// ProcessGroup over MPI: every collective is one or two MPI calls on MPI_COMM_WORLD.
#include "mgbench/run/mpi_group.hpp"

// The C interface only (MPI::MPI_C): no C++ bindings from OpenMPI's or MPICH's header.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/run/launcher.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

bool built_with_mpi() { return true; }

namespace {

class MpiGroup : public ProcessGroup {
 public:
  explicit MpiGroup(int report_fd) : report_fd_(report_fd) {
    int provided = 0;
    // The executor's rank thread makes the calls, one at a time.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      throw EnvironmentError("MPI_Init_thread failed");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_);
    MPI_Comm_rank(node_, &local_rank_);
    MPI_Comm_size(node_, &local_size_);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    host_.assign(name, static_cast<std::size_t>(length));
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

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  std::string broadcast(const std::string& from_rank0) override {
    unsigned long long length = rank_ == 0 ? from_rank0.size() : 0;
    MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? from_rank0 : std::string(length, '\0');
    MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
  }

  std::vector<std::string> all_gather(const std::string& mine) override {
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
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(offsets[r]),
                               static_cast<std::size_t>(lengths[r])));
    }
    return out;
  }

  [[noreturn]] void abort(const std::string& reason) override {
    const std::string text = fmt::format("rank {} on {}: {}", rank_, host_, reason);
    if (report_fd_ >= 0) {
      const std::string line = make_worker_line(Json{{"type", "fatal"}, {"message", text}});
      (void)!::write(report_fd_, line.data(), line.size());
    }
    std::fprintf(stderr, "mgbench: %s: ending the group\n", text.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::environment));
    std::_Exit(static_cast<int>(ExitCode::environment));
  }

 private:
  int report_fd_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  MPI_Comm node_ = MPI_COMM_NULL;
  std::string host_;
};

}  // namespace

std::unique_ptr<ProcessGroup> start_mpi_group(int report_fd) {
  return std::make_unique<MpiGroup>(report_fd);
}

}  // namespace mgbench
