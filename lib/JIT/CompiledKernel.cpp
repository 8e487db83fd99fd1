//===- CompiledKernel.cpp - A code object and how to launch it ------------===//

#include "mxfp4/JIT/CompiledKernel.h"
#include "mxfp4/Kernels/Sm90Geometry.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"

#include <algorithm>

namespace mxfp4 {

std::string_view toString(BinaryFormat f) {
  switch (f) {
  case BinaryFormat::HSACO:
    return "hsaco";
  case BinaryFormat::PTX:
    return "ptx";
  case BinaryFormat::CUBIN:
    return "cubin";
  }
  return "invalid";
}

BinaryFormat binaryFormatFor(Arch arch) {
  return arch == Arch::SM90A ? BinaryFormat::PTX : BinaryFormat::HSACO;
}

double CompiledKernel::compileMs() const {
  double ms = 0;
  for (const StageTiming &t : timings)
    ms += t.ms;
  return ms;
}

unsigned launchedGridX(const LaunchGeometry &g, int multiprocessors) {
  if (g.persistentPerSm && multiprocessors > 0)
    return std::min(g.grid[0], g.persistentPerSm * unsigned(multiprocessors));
  return g.grid[0];
}

LaunchGeometry CompiledKernel::geometry(int64_t m) const {
  LaunchGeometry g;
  // The SIMT kernels (Kernels/MoeSort.h, Kernels/MoeElementwise.h), BN
  // threads: moe_count one workgroup per kMoeCountGroup experts, moe_place
  // one per expert; the elementwise ones one thread per 32-element block of
  // `m` padded rows of K (moe_quant, moe_actq) or per 8 outputs of `m`
  // tokens of N (moe_reduce, moe_cast).
  if (isSimt(spec.op)) {
    g.block[0] = unsigned(spec.bn);
    int64_t work = spec.n;
    if (spec.op == OpKind::MoeCount)
      work = (spec.n + kMoeCountGroup - 1) / kMoeCountGroup * spec.bn;
    else if (spec.op == OpKind::MoePlace)
      work = spec.n * spec.bn;
    else if (spec.op == OpKind::MoeReduce || spec.op == OpKind::MoeCast)
      work = m * spec.n / 8;
    else // every block of the padded row (moePaddedRow)
      work = m * moePaddedRow(spec.arch, spec.k) / 32;
    g.grid[0] = unsigned(std::max<int64_t>(1, (work + spec.bn - 1) / spec.bn));
    return g;
  }
  // The quantizer has one workgroup per BM x BK block; GEMMs one per output tile.
  g.grid[0] = unsigned(isQuantizer(spec.op) ? spec.k / spec.bk
                                            : gemmWeightRows(spec.arch, spec.n) / spec.bn);
  g.grid[1] = unsigned((m + spec.bm - 1) / spec.bm);
  g.grid[2] = unsigned(spec.splitK);
  // The streamed image's quantizer loops over its pieces: at most a few
  // workgroups per SM (the launch sets how many; Ops/QuantizeMx.cpp).
  if (isQuantizer(spec.op) && spec.imageStream) {
    g.grid[0] *= g.grid[1];
    g.grid[1] = 1;
    g.persistentPerSm = 2;
  }
  // gfx950: 4 waves of 64; gfx1250: 4 waves of 32; sm_90a: a warpgroup or
  // two (Sm90Pipeline.h); sm_90a GEMMs keep activations and weight stages in dynamic
  // shared memory.
  g.block[0] = spec.arch == Arch::GFX950 ? 256 : 128;
  if (spec.arch == Arch::SM90A && !isQuantizer(spec.op)) {
    g.block[0] = unsigned(sm90WorkgroupThreads(spec));
    const sm90::SharedLayout layout = sm90SharedLayout(spec);
    g.sharedBytes = unsigned(layout.totalBytes());
    if (spec.persistent) {
      // Tile t is N tile t % (N / BN), M tile t / (N / BN) (TileToNVVM.cpp).
      g.grid[0] *= g.grid[1];
      g.grid[1] = 1;
      g.persistentPerSm = unsigned(sm90::workgroupsPerSm(layout));
    }
    if (spec.streamK) {
      // At most one workgroup per iteration (tile and K step), shrunk to
      // those resident at once (Sm90StreamK.cpp).
      g.grid[0] = unsigned(streamKIterations(spec, m));
      g.grid[1] = 1;
      g.persistentPerSm = unsigned(sm90::workgroupsPerSm(layout));
    }
    // gemm_qdqa4w4 waits for qdq_mxfp4's image after its prologue.
    g.programmaticDependent = spec.op == OpKind::GemmQdqA4W4;
  }
  return g;
}

} // namespace mxfp4
