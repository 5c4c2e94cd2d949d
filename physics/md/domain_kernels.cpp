// The kernels of MD's exchanges between ranks (md/domain.hpp), compiled once for every enabled
// backend and both precisions; every other translation unit sees them declared extern. A unit
// of their own: in shared_kernels.cpp their code changed how the compiler inlined the neighbor
// search of one rank.
#define HAYATE_MD_DEFINE_SHARED_KERNELS
#include "md/domain.hpp"

#include <algorithm>
#include <limits>

namespace hayate::md {
HAYATE_FOR_EACH_SPACE(HAYATE_MD_DOMAIN_SPACE, )
}  // namespace hayate::md

namespace hayate::md {

std::int64_t repeated_atom_id(const core::Comm& comm, std::vector<std::int64_t> ids) {
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  std::sort(ids.begin(), ids.end());
  // The smallest repeated id, whichever ranks hold it: the one a single rank's check names.
  std::int64_t repeated = none;
  for (std::size_t k = 1; k < ids.size(); ++k)
    if (ids[k] == ids[k - 1]) {
      repeated = ids[k];
      break;
    }
  const int ranks = comm.size(), me = comm.rank();
  std::vector<std::int64_t> other;
  for (int step = 1; step < ranks; ++step) {
    // Rank me + step gets this rank's ids, each pair of ranks meets once from either side.
    const int to = (me + step) % ranks, from = (me - step + ranks) % ranks;
    std::uint64_t mine = ids.size(), theirs = 0;
    comm.exchange(&mine, sizeof mine, to, &theirs, sizeof theirs, from, 41);
    other.resize(std::size_t(theirs));
    comm.exchange(ids.data(), ids.size() * sizeof(std::int64_t), to, other.data(),
                  other.size() * sizeof(std::int64_t), from, 42);
    for (std::size_t i = 0, j = 0; i < ids.size() && j < other.size() && ids[i] < repeated;) {
      if (ids[i] < other[j])
        ++i;
      else if (other[j] < ids[i])
        ++j;
      else
        repeated = ids[i];
    }
  }
  if (ranks > 1) repeated = comm.min(repeated);
  return repeated == none ? 0 : repeated;
}

}  // namespace hayate::md
