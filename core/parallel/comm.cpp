#include "parallel/comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#ifdef HAYATE_HAVE_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace hayate::core {
namespace {

#ifdef HAYATE_HAVE_MPI
// Set by the launchers of Open MPI, MPICH (Hydra) and PMIx-based ones (srun, prterun).
bool launched_by_mpirun() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(var)) return true;
  return false;
}

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw RuntimeFailure(fmt::format("MPI {} failed: {}", what, std::string(text, length)));
}

// MPI counts are ints: larger messages go in pieces of at most 1 GiB.
constexpr std::size_t piece = std::size_t(1) << 30;
#endif

std::vector<std::string>& distributed_names() {
  static std::vector<std::string> names;
  return names;
}

}  // namespace

Comm& Comm::world() {
  static Comm comm;
  return comm;
}

MpiSession::MpiSession(int& argc, char**& argv) {
#ifdef HAYATE_HAVE_MPI
  if (!launched_by_mpirun()) return;
  MPI_Init(&argc, &argv);
  initialized_ = true;
  // Errors come back as codes and become exceptions (check), not aborts inside the library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Comm& w = Comm::world();
  w.mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &w.local_rank_);
  MPI_Comm_free(&node);
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#ifdef HAYATE_HAVE_MPI
  if (initialized_) MPI_Finalize();
#endif
}

void Comm::barrier() const {
#ifdef HAYATE_HAVE_MPI
  if (mpi_) check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
#endif
}

void Comm::sum(std::int64_t* values, int n) const {
#ifdef HAYATE_HAVE_MPI
  if (mpi_)
    check(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), "sum");
#else
  (void)values;
  (void)n;
#endif
}

void Comm::sum(double* values, int n) const {
#ifdef HAYATE_HAVE_MPI
  if (mpi_)
    check(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "sum");
#else
  (void)values;
  (void)n;
#endif
}

std::int64_t Comm::min(std::int64_t value) const {
#ifdef HAYATE_HAVE_MPI
  if (mpi_)
    check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD), "min");
#endif
  return value;
}

std::int64_t Comm::max(std::int64_t value) const {
#ifdef HAYATE_HAVE_MPI
  if (mpi_)
    check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "max");
#endif
  return value;
}

double Comm::max(double value) const {
#ifdef HAYATE_HAVE_MPI
  if (mpi_)
    check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "max");
#endif
  return value;
}

void Comm::broadcast(void* data, std::size_t bytes, int from) const {
#ifdef HAYATE_HAVE_MPI
  if (!mpi_) return;
  auto* p = static_cast<char*>(data);
  for (std::size_t done = 0; done < bytes; done += piece)
    check(MPI_Bcast(p + done, int(std::min(piece, bytes - done)), MPI_BYTE, from, MPI_COMM_WORLD),
          "broadcast");
#else
  (void)data;
  (void)bytes;
  (void)from;
#endif
}

void Comm::exchange(const void* send, std::size_t send_bytes, int to, void* recv,
                    std::size_t recv_bytes, int from, int tag) const {
  if (to == rank_ && from == rank_) {
    if (send_bytes != recv_bytes) throw std::logic_error("Comm::exchange: sizes differ");
    std::memcpy(recv, send, send_bytes);
    return;
  }
#ifdef HAYATE_HAVE_MPI
  const auto* s = static_cast<const char*>(send);
  auto* r = static_cast<char*>(recv);
  const std::size_t n = std::max(send_bytes, recv_bytes);
  for (std::size_t done = 0; done < n || done == 0; done += piece) {
    const std::size_t sb = done < send_bytes ? std::min(piece, send_bytes - done) : 0;
    const std::size_t rb = done < recv_bytes ? std::min(piece, recv_bytes - done) : 0;
    check(MPI_Sendrecv(s + (sb ? done : 0), int(sb), MPI_BYTE, to, tag, r + (rb ? done : 0),
                       int(rb), MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "exchange");
    if (n == 0) break;
  }
#else
  throw std::logic_error("Comm::exchange: another rank without MPI");
#endif
}

struct Comm::Pending::Requests {
#ifdef HAYATE_HAVE_MPI
  std::vector<MPI_Request> list;
#endif
};

Comm::Pending::Pending() : requests_(std::make_unique<Requests>()) {}

Comm::Pending::~Pending() {
  try {
    wait();
  } catch (...) {
    // A failed transfer was reported by the wait() that the caller made, or the run is
    // already unwinding from another failure.
  }
}

bool Comm::Pending::empty() const {
#ifdef HAYATE_HAVE_MPI
  return requests_->list.empty();
#else
  return true;
#endif
}

void Comm::Pending::wait() {
#ifdef HAYATE_HAVE_MPI
  auto& list = requests_->list;
  if (list.empty()) return;
  const int code = MPI_Waitall(int(list.size()), list.data(), MPI_STATUSES_IGNORE);
  list.clear();
  check(code, "wait");
#endif
}

void Comm::start_exchange(Pending& pending, const void* send, std::size_t send_bytes, int to,
                          void* recv, std::size_t recv_bytes, int from, int tag) const {
  if (to == rank_ && from == rank_) {
    exchange(send, send_bytes, to, recv, recv_bytes, from, tag);
    return;
  }
#ifdef HAYATE_HAVE_MPI
  // Receives first, so that a matching send finds its buffer posted; pieces of one (from, tag)
  // arrive in the order they were sent.
  auto& list = pending.requests_->list;
  auto* r = static_cast<char*>(recv);
  for (std::size_t done = 0; done < recv_bytes || done == 0; done += piece) {
    const std::size_t rb = recv_bytes ? std::min(piece, recv_bytes - done) : 0;
    list.emplace_back();
    check(MPI_Irecv(r + done, int(rb), MPI_BYTE, from, tag, MPI_COMM_WORLD, &list.back()),
          "receive");
    if (recv_bytes == 0) break;
  }
  const auto* s = static_cast<const char*>(send);
  for (std::size_t done = 0; done < send_bytes || done == 0; done += piece) {
    const std::size_t sb = send_bytes ? std::min(piece, send_bytes - done) : 0;
    list.emplace_back();
    check(MPI_Isend(s + done, int(sb), MPI_BYTE, to, tag, MPI_COMM_WORLD, &list.back()), "send");
    if (send_bytes == 0) break;
  }
#else
  (void)pending;
  throw std::logic_error("Comm::start_exchange: another rank without MPI");
#endif
}

void Comm::send(const void* data, std::size_t bytes, int to, int tag) const {
#ifdef HAYATE_HAVE_MPI
  const auto* p = static_cast<const char*>(data);
  for (std::size_t done = 0; done < bytes; done += piece)
    check(MPI_Send(p + done, int(std::min(piece, bytes - done)), MPI_BYTE, to, tag, MPI_COMM_WORLD),
          "send");
#else
  (void)data;
  (void)bytes;
  (void)to;
  (void)tag;
  throw std::logic_error("Comm::send without MPI");
#endif
}

void Comm::recv(void* data, std::size_t bytes, int from, int tag) const {
#ifdef HAYATE_HAVE_MPI
  auto* p = static_cast<char*>(data);
  for (std::size_t done = 0; done < bytes; done += piece)
    check(MPI_Recv(p + done, int(std::min(piece, bytes - done)), MPI_BYTE, from, tag,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "receive");
#else
  (void)data;
  (void)bytes;
  (void)from;
  (void)tag;
  throw std::logic_error("Comm::recv without MPI");
#endif
}

void Comm::gather(const void* send, std::size_t bytes, void* recv,
                  const std::vector<std::size_t>& counts, int to) const {
  constexpr int tag = 7001;
  if (rank_ != to) {
    this->send(send, bytes, to, tag);
    return;
  }
  auto* out = static_cast<char*>(recv);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_)
      std::memcpy(out, send, bytes);
    else
      this->recv(out, counts.at(std::size_t(r)), r, tag);
    out += counts.at(std::size_t(r));
  }
}

void Comm::all_gather(const void* send, std::size_t bytes, void* recv,
                      const std::vector<std::size_t>& counts) const {
  std::size_t total = 0;
  for (const std::size_t c : counts) total += c;
  gather(send, bytes, recv, counts, 0);
  broadcast(recv, total, 0);
}

namespace {

void print_failure(const std::exception_ptr& error, const std::string& prefix) {
  try {
    std::rethrow_exception(error);
  } catch (const ReportedFailure&) {
  } catch (const InputError& e) {
    for (const auto& d : e.diagnostics())
      std::fprintf(stderr, "error: %s%s\n", prefix.c_str(), d.str().c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: run failed: %sout of memory\n", prefix.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: run failed: %s%s\n", prefix.c_str(), e.what());
  }
  std::fflush(stderr);
}

}  // namespace

void Comm::agree(const std::function<void()>& f) const {
  int code = 0;
  std::exception_ptr error;
  try {
    f();
  } catch (const ReportedFailure& e) {
    code = e.code;
    error = std::current_exception();
  } catch (const InputError&) {
    code = 2;
    error = std::current_exception();
  } catch (...) {
    code = 3;
    error = std::current_exception();
  }
  if (!distributed()) {
    if (error) std::rethrow_exception(error);
    return;
  }
  // Bad input outranks a failed run: a rank refused by its input would have failed later.
  const auto rank_of = [](int c) { return c == 2 ? 2 : c == 0 ? 0 : 1; };
  const int worst = int(max(std::int64_t(rank_of(code))));
  const int best = int(min(std::int64_t(rank_of(code))));
  if (worst == 0) return;
  if (code == 2 && best == 2) std::rethrow_exception(error);  // the same input on every rank
  if (error)
    print_failure(error, root() ? std::string() : fmt::format("rank {} of {}: ", rank_, size_));
  throw ReportedFailure(worst == 2 ? 2 : 3);
}

void Comm::on_root(const std::function<void()>& f) const {
  agree([&] {
    if (root()) f();
  });
}

void Comm::abort(int code) const {
#ifdef HAYATE_HAVE_MPI
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

// Open MPI's CUDA extension: MPIX_CUDA_AWARE_SUPPORT is what the headers hayate was compiled
// against support, MPIX_Query_cuda_support() what the library loaded at run time supports. Only
// the second counts: a CUDA-aware build of the same library (same ABI) may be the one loaded.
#if defined(HAYATE_HAVE_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT)
#define HAYATE_MPI_CUDA_QUERY 1
#endif

bool Comm::cuda_aware() const {
#ifdef HAYATE_MPI_CUDA_QUERY
  return mpi_ && MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::string Comm::describe() const {
#ifdef HAYATE_HAVE_MPI
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string v(version, std::size_t(length));
  if (const auto cut = v.find_first_of(",\n"); cut != std::string::npos) v.resize(cut);
  std::string aware = "no (the library has no CUDA query)";
#ifdef HAYATE_MPI_CUDA_QUERY
  // The library is asked only after MPI_Init, which a plain start never calls.
  aware = !mpi_                            ? "asked under mpirun (mpirun -np 1 hayate info)"
          : MPIX_Query_cuda_support() == 1 ? "yes"
                                           : "no";
#endif
  return fmt::format("MPI: {}; {} rank{}{}; CUDA-aware: {}", v, size_, size_ == 1 ? "" : "s",
                     mpi_ ? "" : " (not launched by mpirun)", aware);
#else
  return "MPI: not built (configure with -DHAYATE_MPI=ON); 1 rank";
#endif
}

void declare_distributed(const std::string& problem) {
  auto& names = distributed_names();
  if (std::find(names.begin(), names.end(), problem) == names.end()) names.push_back(problem);
}

bool runs_distributed(const std::string& problem) {
  const auto& names = distributed_names();
  return std::find(names.begin(), names.end(), problem) != names.end();
}

std::vector<std::string> distributed_problems() {
  return distributed_names();
}

RowSlab row_slab(int rows, int group, int ranks, int rank) {
  const int groups = rows / group;
  const int base = groups / ranks, extra = groups % ranks;
  const int first_group = rank * base + std::min(rank, extra);
  return RowSlab{first_group * group, (base + (rank < extra ? 1 : 0)) * group};
}

}  // namespace hayate::core
