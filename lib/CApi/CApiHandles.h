//===- CApiHandles.h - What the C API's opaque handles hold ------*- C++ -*-===//
//
// Internal to the library and its tests (which wrap a fake host Device in
// an mxfp4_device to check the C entry points without a GPU).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_CAPI_CAPIHANDLES_H
#define MXFP4_LIB_CAPI_CAPIHANDLES_H

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Runtime/Device.h"

#include <memory>

struct mxfp4_device {
  std::unique_ptr<mxfp4::Device> device;
};

struct mxfp4_gemm_weight {
  std::unique_ptr<mxfp4::PreparedWeight> weight;
};

struct mxfp4_moe_weights {
  std::unique_ptr<mxfp4::MoeWeights> weights;
  const mxfp4::Device *device; ///< the one they were prepared on
};

struct mxfp4_jit {
  std::unique_ptr<mxfp4::Jit> owned; ///< null for the process-wide JIT
  mxfp4::Jit *jit;
};

#endif // MXFP4_LIB_CAPI_CAPIHANDLES_H
