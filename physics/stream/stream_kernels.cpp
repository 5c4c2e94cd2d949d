// The STREAM kernels, compiled once for every enabled backend and precision
// (exec/instantiate.hpp says why).
#define HAYATE_STREAM_DEFINE_KERNELS
#include "stream/stream_kernels.hpp"

namespace hayate::stream {
HAYATE_FOR_EACH_SPACE(HAYATE_STREAM_KERNELS, )
}  // namespace hayate::stream
