//===- QuantizeMxLaunch.h - Launch a planned quantizer -----------*- C++ -*-===//
//
// The GEMM entry points launch the quantizer their plan (Ops/GemmA4W4Plan.h)
// chose, resolved from the JIT, with the same argument checks as the public
// quantizer ops.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_OPS_QUANTIZEMXLAUNCH_H
#define MXFP4_LIB_OPS_QUANTIZEMXLAUNCH_H

#include "mxfp4/JIT/CompiledKernel.h"
#include "mxfp4/Ops/QuantizeMx.h"

#include <initializer_list>

namespace mxfp4 {

/// Launches the quantizer `kernel` (quant_mxfp4: outputs codes, scales;
/// qdq_mxfp4: the image) with `geometry` over M rows of `a`; `streamed` for
/// a streamed qdq_mxfp4. Errors start with `api`.
Error launchQuantizerKernel(const char *api, Device &dev, void *stream,
                            const CompiledKernel &kernel, const LaunchGeometry &geometry,
                            const void *a, int64_t m, std::initializer_list<void *> outputs,
                            const ImageStream *streamed = nullptr);

} // namespace mxfp4

#endif // MXFP4_LIB_OPS_QUANTIZEMXLAUNCH_H
