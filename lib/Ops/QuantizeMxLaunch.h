//===- QuantizeMxLaunch.h - Launch a planned quantizer -----------*- C++ -*-===//
//
// The GEMM entry points launch the quantizer their plan (Ops/GemmA4W4Plan.h)
// chose, with the same argument checks as the public quantizer ops.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_OPS_QUANTIZEMXLAUNCH_H
#define MXFP4_LIB_OPS_QUANTIZEMXLAUNCH_H

#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Ops/QuantizeMx.h"

#include <vector>

namespace mxfp4 {

/// Launches `spec` (quant_mxfp4: outputs codes, scales; qdq_mxfp4: the
/// image) over M rows of `a`; `streamed` for a streamed qdq_mxfp4. Errors
/// start with `api`.
Error launchQuantizerSpec(const char *api, Device &dev, void *stream, const KernelSpec &spec,
                          const void *a, int64_t m, std::vector<void *> outputs,
                          const ImageStream *streamed = nullptr);

} // namespace mxfp4

#endif // MXFP4_LIB_OPS_QUANTIZEMXLAUNCH_H
