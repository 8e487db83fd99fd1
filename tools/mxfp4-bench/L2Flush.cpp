//===- L2Flush.cpp - How the bench empties the L2 before a timed call -----===//

#include "L2Flush.h"

#include <algorithm>

namespace mxfp4::bench {
namespace {

constexpr size_t kMemsetBytes = size_t(512) << 20;
/// Five times the H200's 50 MiB L2: every line the memset left is evicted.
constexpr size_t kSweepBytes = size_t(256) << 20;

/// Reads `n16` 16-byte words at `src` (grid-stride) and XORs them; stores
/// the XOR to `sink` only if it equals a constant, so the loads are live but
/// nothing is written in practice.
constexpr const char *kSweepPtx = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry mxfp4_bench_l2_sweep(.param .u64 src, .param .u64 n16, .param .u64 sink)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [n16];
  ld.param.u64 %rd3, [sink];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  cvt.u64.u32 %rd4, %r3;
  mul.wide.u32 %rd5, %r1, %r2;
  add.u64 %rd4, %rd4, %rd5;
  mul.wide.u32 %rd6, %r4, %r2;
  mov.b32 %r10, 0;
$Lloop:
  setp.ge.u64 %p1, %rd4, %rd2;
  @%p1 bra $Ldone;
  shl.b64 %rd7, %rd4, 4;
  add.u64 %rd8, %rd1, %rd7;
  ld.global.v4.b32 {%r5, %r6, %r7, %r8}, [%rd8];
  xor.b32 %r10, %r10, %r5;
  xor.b32 %r10, %r10, %r6;
  xor.b32 %r10, %r10, %r7;
  xor.b32 %r10, %r10, %r8;
  add.u64 %rd4, %rd4, %rd6;
  bra.uni $Lloop;
$Ldone:
  setp.ne.u32 %p2, %r10, 0x9E3779B9;
  @%p2 bra $Lend;
  st.global.u32 [%rd3], %r10;
$Lend:
  ret;
}
)";

CompiledKernel sweepKernel() {
  CompiledKernel k;
  k.symbol = "mxfp4_bench_l2_sweep";
  k.format = BinaryFormat::PTX;
  k.binary = kSweepPtx;
  return k;
}

} // namespace

std::optional<FlushMode> parseFlushMode(std::string_view name) {
  if (name == "memset")
    return FlushMode::Memset;
  if (name == "clean")
    return FlushMode::Clean;
  return std::nullopt;
}

std::string_view toString(FlushMode mode) {
  switch (mode) {
  case FlushMode::Memset:
    return "memset";
  case FlushMode::Clean:
    return "clean";
  }
  return "?";
}

Expected<std::unique_ptr<L2Flush>> L2Flush::create(Device &dev, FlushMode mode) {
  std::unique_ptr<L2Flush> f(new L2Flush(dev, mode));
  if (mode == FlushMode::Clean && dev.driver() != "cuda")
    return makeError("--flush=clean sweeps the L2 with a PTX kernel: CUDA devices only");
  auto buffer = dev.alloc(kMemsetBytes);
  if (!buffer)
    return buffer.takeError();
  f->buffer = *buffer;
  auto sink = dev.alloc(16);
  if (!sink)
    return sink.takeError();
  f->sink = *sink;
  return f;
}

L2Flush::~L2Flush() {
  if (buffer)
    dev->free(buffer);
  if (sink)
    dev->free(sink);
}

Error L2Flush::run(uint8_t salt) {
  if (Error e = dev->fill(buffer, salt, kMemsetBytes))
    return e;
  if (mode == FlushMode::Memset)
    return Error::success();
  static const CompiledKernel kernel = sweepKernel();
  LaunchGeometry g;
  g.grid[0] = unsigned(std::max(dev->multiprocessorCount(), 1) * 8);
  g.block[0] = 256;
  uint64_t n16 = kSweepBytes / 16;
  void *src = buffer, *sinkPtr = sink;
  void *args[] = {&src, &n16, &sinkPtr};
  return dev->launch(kernel, g, args);
}

} // namespace mxfp4::bench
