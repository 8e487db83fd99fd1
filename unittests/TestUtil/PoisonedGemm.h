//===- PoisonedGemm.h - One gemmA4W4 run into a poisoned output -*- C++ -*-===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_POISONEDGEMM_H
#define MXFP4_UNITTESTS_TESTUTIL_POISONEDGEMM_H

#include "TestUtil/DeviceBuffer.h"
#include "mxfp4/Ops/GemmA4W4.h"

#include <vector>

namespace mxfp4::test {

/// Runs gemmA4W4 on `da` (M rows) into `dc`, poisoned with `poison` first,
/// and returns the M x N output.
inline Expected<std::vector<uint16_t>> poisonedGemm(Device &dev, const DeviceBuffer &da,
                                                    DeviceBuffer &dc, int64_t m, int64_t n,
                                                    const PreparedWeight &w,
                                                    const GemmA4W4Options &o, uint8_t poison,
                                                    void *stream = nullptr) {
  dc.fill(poison);
  // The fill runs on the default stream; another one need not wait for it.
  if (stream)
    if (Error e = dev.synchronize())
      return std::move(e);
  if (Error e = gemmA4W4(dev, stream, da.get(), m, w, dc.get(), o))
    return std::move(e);
  if (Error e = dev.synchronize())
    return std::move(e);
  return dc.download<uint16_t>(size_t(m * n));
}

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_POISONEDGEMM_H
