//===- L2Flush.h - How the bench empties the L2 before a timed call -*- C++ -*-===//
//
// Each timed repetition starts with none of the operands in the L2. A large
// memset does that, but leaves the L2 full of its own dirty lines: the timed
// kernel's first misses then wait on their write-back, a cost of the flush,
// not of the kernel. The clean flush follows the memset with a read-only
// sweep (a small PTX kernel) of more than the L2 holds, so the timed call
// finds the L2 clean and idle, as after a layer that only read its weights.
// The memset stays the default: the reference numbers were taken that
// way. The tax is per byte read, so it weighs on cuBLAS BF16 (4x our weight
// bytes) most (docs/Performance.md, "Method").
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TOOLS_BENCH_L2FLUSH_H
#define MXFP4_TOOLS_BENCH_L2FLUSH_H

#include "mxfp4/Runtime/Device.h"

#include <memory>
#include <optional>
#include <string_view>

namespace mxfp4::bench {

enum class FlushMode {
  Memset, ///< a 512 MiB memset (dirty L2)
  Clean,  ///< the memset, then a read-only sweep of 256 MiB (clean L2)
};

std::optional<FlushMode> parseFlushMode(std::string_view name);
std::string_view toString(FlushMode mode);

class L2Flush {
public:
  /// Allocates the 512 MiB buffer (and a word the sweep never writes).
  static Expected<std::unique_ptr<L2Flush>> create(Device &dev, FlushMode mode);
  L2Flush(const L2Flush &) = delete;
  L2Flush &operator=(const L2Flush &) = delete;
  ~L2Flush();

  /// Enqueues the flush on the default stream; `salt` varies the memset's byte.
  Error run(uint8_t salt);

private:
  L2Flush(Device &dev, FlushMode mode) : dev(&dev), mode(mode) {}
  Device *dev;
  FlushMode mode;
  void *buffer = nullptr, *sink = nullptr;
};

} // namespace mxfp4::bench

#endif // MXFP4_TOOLS_BENCH_L2FLUSH_H
