//===- KernelSpec.cpp - What identifies a generated kernel ----------------===//
//
// The spec's enums as name tokens and the factories of the specs the
// library launches. The name and its parser are KernelName.cpp, the
// verifier KernelSpecVerifier.cpp.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/KernelSpec.h"

#include <algorithm>
#include <limits>

namespace mxfp4 {

/// `v` rounded up to a multiple of `align` (invalid values, which the
/// verifier rejects, as they are).
static int64_t roundUpValid(int64_t v, int64_t align) {
  if (v <= 0 || v % align == 0 || v > std::numeric_limits<int64_t>::max() - align)
    return v;
  return v + (align - v % align);
}

int64_t gemmWeightRows(Arch arch, int64_t n) { return roundUpValid(n, targetInfo(arch).defaultBn); }

int64_t gemmWeightK(Arch arch, int64_t k) {
  if (k <= 0)
    return k;
  return std::max<int64_t>(roundUpValid(k, 128), targetInfo(arch).minGemmK);
}

std::string_view toString(OpKind op) {
  switch (op) {
  case OpKind::GemmA4W4:
    return "gemm_a4w4";
  case OpKind::GemmMxA4W4:
    return "gemm_mxa4w4";
  case OpKind::QuantizeMx:
    return "quant_mxfp4";
  case OpKind::QdqMx:
    return "qdq_mxfp4";
  case OpKind::GemmQdqA4W4:
    return "gemm_qdqa4w4";
  case OpKind::MoeCount:
    return "moe_count";
  case OpKind::MoePlace:
    return "moe_place";
  case OpKind::MoeQuant:
    return "moe_quant";
  case OpKind::MoeActQuant:
    return "moe_actq";
  case OpKind::MoeReduce:
    return "moe_reduce";
  case OpKind::MoeGemm:
    return "moe_gemm";
  case OpKind::MoeCast:
    return "moe_cast";
  }
  return "invalid";
}

std::string_view toString(Activation act) {
  switch (act) {
  case Activation::None:
    return "none";
  case Activation::Silu:
    return "silu";
  case Activation::Swiglu:
    return "swiglu";
  case Activation::Situv2:
    return "situv2";
  }
  return "invalid";
}

std::string_view toString(Epilogue e) {
  switch (e) {
  case Epilogue::BF16:
    return "bf16";
  case Epilogue::BF16DumpQuant:
    return "bf16dq";
  case Epilogue::ActMx:
    return "actmx";
  case Epilogue::ActMxDebug:
    return "actmxdbg";
  case Epilogue::Scatter:
    return "scatter";
  }
  return "?";
}

unsigned activationParamCount(Activation act) {
  return act == Activation::Swiglu || act == Activation::Situv2 ? 2 : 0;
}

Expected<KernelSpec> makeGemmA4W4Spec(Arch arch, int64_t n, int64_t k, int64_t bm,
                                      ScaleRounding rounding, Activation activation,
                                      std::array<float, 2> params, OpKind op) {
  if (isQuantizer(op))
    return makeError("makeGemmA4W4Spec: ", toString(op), " is not a GEMM; use makeQuantizeMxSpec");
  KernelSpec s;
  s.op = op;
  s.arch = arch;
  s.n = n;
  s.k = k;
  s.bm = bm;
  s.rounding = rounding;
  // The target's default tile and layouts (sm_90a: one 128-K chunk per
  // step, small TMA stages, so more steps in flight).
  const TargetInfo &target = targetInfo(arch);
  s.bn = target.defaultBn;
  s.bk = target.bkFor(k);
  s.weightLayout = target.weightLayout;
  s.scaleLayout = target.scaleLayout;
  s.activation = activation;
  s.activationParams = params;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeQuantizeMxSpec(Arch arch, int64_t k, int64_t bm, ScaleRounding rounding,
                                        OpKind op) {
  if (!isQuantizer(op))
    return makeError("makeQuantizeMxSpec: ", toString(op), " is not a quantizer");
  KernelSpec s;
  s.op = op;
  s.arch = arch;
  s.n = 0;
  s.k = k;
  s.bm = bm;
  s.bn = 128;
  s.bk = 128;
  s.rounding = rounding;
  s.weightLayout = WeightLayout::RowMajor;
  s.scaleLayout = ScaleLayout::RowMajor;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

/// A SIMT spec with the defaults every one shares.
static KernelSpec simtSpec(OpKind op, Arch arch, int64_t n, int64_t k) {
  KernelSpec s;
  s.op = op;
  s.arch = arch;
  s.n = n;
  s.k = k;
  s.bm = 1;
  s.bn = 256;
  s.bk = 32;
  s.weightLayout = WeightLayout::RowMajor;
  s.scaleLayout = ScaleLayout::RowMajor;
  return s;
}

Expected<KernelSpec> makeMoeQuantSpec(Arch arch, int64_t hidden, ScaleRounding rounding,
                                      int64_t scaleRep) {
  KernelSpec s = simtSpec(OpKind::MoeQuant, arch, 0, hidden);
  s.rounding = rounding;
  s.moeScaleRep = scaleRep;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeMoeActQuantSpec(Arch arch, int64_t inter, Activation activation,
                                         ScaleRounding rounding, int64_t scaleRep) {
  KernelSpec s = simtSpec(OpKind::MoeActQuant, arch, 0, inter);
  s.rounding = rounding;
  s.moeScaleRep = scaleRep;
  s.activation = activation;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeMoeReduceSpec(Arch arch, int64_t hidden, int64_t topk) {
  KernelSpec s = simtSpec(OpKind::MoeReduce, arch, hidden, topk);
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeMoeCastSpec(Arch arch, int64_t hidden) {
  KernelSpec s = simtSpec(OpKind::MoeCast, arch, hidden, 0);
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<std::array<KernelSpec, 2>> makeMoeSortSpecs(Arch arch, int64_t experts, int64_t topk,
                                                     int64_t blockM) {
  std::array<KernelSpec, 2> specs;
  for (int i = 0; i < 2; ++i) {
    KernelSpec &s = specs[size_t(i)];
    s.op = i == 0 ? OpKind::MoeCount : OpKind::MoePlace;
    s.arch = arch;
    s.n = experts;
    s.k = topk;
    s.bm = blockM;
    s.bn = 256;
    s.bk = 16;
    s.weightLayout = WeightLayout::RowMajor;
    s.scaleLayout = ScaleLayout::RowMajor;
    if (Error e = verifyKernelSpec(s))
      return e;
  }
  return specs;
}

} // namespace mxfp4
