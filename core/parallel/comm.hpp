#pragma once
// The ranks of a run. A binary built with MPI (HAYATE_MPI, the default) and launched by mpirun
// runs on every rank of MPI_COMM_WORLD; started any other way, or built without MPI, it is one
// rank and touches no MPI library. Collectives move host bytes; callers stage device data.
// Only this file's implementation includes mpi.h, so the rest of the code compiles alike with
// and without MPI.
#include "config/error.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::core {

// A failure every rank detects alike (a reduced quantity out of bounds): each rank stops on its
// own, the first rank reports it, no rank is aborted, and exit code 3 as for any RuntimeFailure.
class CollectiveFailure : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// A failure already reported (on this rank's stderr, or by the rank that met it): main prints
// nothing more and exits with `code` (2: bad input, 3: a failed run).
class ReportedFailure : public std::runtime_error {
 public:
  explicit ReportedFailure(int code) : std::runtime_error("failure reported"), code(code) {}
  int code;
};

class Comm {
 public:
  // MPI_COMM_WORLD when the process was launched by mpirun, else a single rank.
  static Comm& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  bool distributed() const { return size_ > 1; }
  // This rank's index among the ranks of its host (picks the GPU).
  int local_rank() const { return local_rank_; }

  void barrier() const;
  // Sums, minima and maxima across ranks, in place, the same result on every rank.
  void sum(std::int64_t* values, int n) const;
  void sum(double* values, int n) const;
  std::int64_t min(std::int64_t value) const;
  std::int64_t max(std::int64_t value) const;
  double max(double value) const;
  // `bytes` from rank `from` to every rank.
  void broadcast(void* data, std::size_t bytes, int from = 0) const;
  // Sends `send` to rank `to` and receives `recv` from rank `from` in one exchange.
  void exchange(const void* send, std::size_t send_bytes, int to, void* recv,
                std::size_t recv_bytes, int from, int tag) const;
  // Messages in flight (start_exchange): their buffers stay untouched until wait() returns.
  // Destroying it waits too, so that no transfer outlives its buffers.
  class Pending {
   public:
    Pending();
    ~Pending();
    Pending(const Pending&) = delete;
    Pending& operator=(const Pending&) = delete;
    void wait();
    bool empty() const;

   private:
    friend class Comm;
    struct Requests;
    std::unique_ptr<Requests> requests_;
  };
  // exchange() without waiting: the receive and the send join `pending`, so that several
  // directions travel at once and the caller computes while they do.
  void start_exchange(Pending& pending, const void* send, std::size_t send_bytes, int to,
                      void* recv, std::size_t recv_bytes, int from, int tag) const;
  // Point to point (rank 0 scattering or gathering rank by rank).
  void send(const void* data, std::size_t bytes, int to, int tag) const;
  void recv(void* data, std::size_t bytes, int from, int tag) const;
  // Concatenates every rank's bytes in rank order on rank `to`; `counts` (bytes per rank) is
  // read on `to` only, `recv` needs their sum there.
  void gather(const void* send, std::size_t bytes, void* recv,
              const std::vector<std::size_t>& counts, int to = 0) const;
  // The same concatenation on every rank.
  void all_gather(const void* send, std::size_t bytes, void* recv,
                  const std::vector<std::size_t>& counts) const;
  // Runs f on every rank and lets every rank know whether it failed anywhere, so that no rank
  // waits in a later collective step for one that stopped. One rank: f as it is. Several: bad
  // input every rank met alike propagates (the first rank reports it); any other failure is
  // reported here by each rank that met it (naming the rank, but for the first) and every rank
  // throws ReportedFailure: exit 2 if any rank met bad input, else 3.
  void agree(const std::function<void()>& f) const;
  // agree() over f run by the first rank only (what only it does: the output folder, files).
  void on_root(const std::function<void()>& f) const;
  // Stops every rank at once with this exit code (after a failure only one rank saw).
  [[noreturn]] void abort(int code) const;

  // "MPI: Open MPI v4.1.4 ..., 4 ranks, CUDA-aware: no", or why there is no MPI.
  std::string describe() const;
  // Whether the library takes GPU memory in its calls (it reports CUDA support at run time).
  bool cuda_aware() const;
  // Whether GPU buffers go to MPI directly rather than through host copies (run --gpu-aware;
  // off until main decides). Host backends' buffers are host memory either way.
  bool device_memory() const { return device_memory_; }
  void set_device_memory(bool on) { device_memory_ = on; }

 private:
  friend class MpiSession;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  bool mpi_ = false;
  bool device_memory_ = false;
};

// Initializes MPI when the process was started by mpirun (and the build has MPI) and finalizes
// it on every path out of main; a plain start stays a single rank without MPI.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool initialized_ = false;
};

// Whether a problem can run on several ranks; problems that can declare it when they register.
void declare_distributed(const std::string& problem);
bool runs_distributed(const std::string& problem);
std::vector<std::string> distributed_problems();

// Rows [first, first + count) of a run's `rows`, split over `ranks` in whole groups of `group`
// rows (FHP: row pairs), the first ranks taking the remainder. Deterministic, the same on every
// rank.
struct RowSlab {
  int first = 0, count = 0;
};
RowSlab row_slab(int rows, int group, int ranks, int rank);

}  // namespace hayate::core
