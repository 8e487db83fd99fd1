//===- SimulatorTest.cpp - Lanes, waves and memory of the simulator -------===//

#include "mxfp4/AmdSim/Simulator.h"
#include "mxfp4/AmdSim/GemmCheck.h"

#include "TestUtil/Expected.h"
#include "TestUtil/Random.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <vector>

using namespace mxfp4;
using namespace mxfp4::amdsim;

namespace {

const char *kPrelude = R"(
target datalayout = "e-p:64:64-p1:64:64-p3:32:32-i64:64-n32:64-S32-A5-G1"
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare void @llvm.amdgcn.s.barrier()
)";

/// Runs kernel `k` of `body` on one workgroup of `threads` with `out`
/// (ints) as its only argument.
Expected<RunStats> runOn(const std::string &body, unsigned threads, unsigned groups,
                         std::vector<int32_t> &out, unsigned wave = 64) {
  Expected<std::unique_ptr<Kernel>> k = Kernel::fromIR(std::string(kPrelude) + body, "k", wave);
  if (!k)
    return k.takeError();
  GlobalMemory memory;
  memory.add(out.data(), out.size() * sizeof(int32_t));
  void *ptr = out.data();
  void *args[] = {&ptr};
  LaunchGeometry g;
  g.grid[0] = groups;
  g.block[0] = threads;
  return (*k)->run(g, args, memory);
}

TEST(AmdSimulator, LanesOfAWaveAccessLdsInLockstep) {
  // Each lane stores its id, then reads its neighbour's, with no barrier:
  // right only if the wave executes the store for all lanes first.
  const char *body = R"(
@lds = internal addrspace(3) global [64 x i32] undef
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(3) @lds, i32 %t
  store i32 %t, ptr addrspace(3) %p
  %n = add i32 %t, 1
  %m = and i32 %n, 63
  %q = getelementptr i32, ptr addrspace(3) @lds, i32 %m
  %v = load i32, ptr addrspace(3) %q
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %o
  ret void
})";
  std::vector<int32_t> out(64, -1);
  ASSERT_OK(runOn(body, 64, 1, out));
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[size_t(t)], (t + 1) % 64);
}

TEST(AmdSimulator, BarrierOrdersWavesAndDivergentLanesReconverge) {
  // Wave 1 writes LDS under a branch taken by half its lanes; after the
  // barrier wave 0 reads it; phis merge the two paths.
  const char *body = R"(
@lds = internal addrspace(3) global [128 x i32] undef
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(3) @lds, i32 %t
  store i32 0, ptr addrspace(3) %p
  %odd = and i32 %t, 1
  %c = icmp eq i32 %odd, 1
  br i1 %c, label %then, label %join
then:
  %x = mul i32 %t, 3
  store i32 %x, ptr addrspace(3) %p
  br label %join
join:
  %tag = phi i32 [ 1000, %then ], [ 2000, %entry ]
  call void @llvm.amdgcn.s.barrier()
  %r = xor i32 %t, 64
  %q = getelementptr i32, ptr addrspace(3) @lds, i32 %r
  %v = load i32, ptr addrspace(3) %q
  %s = add i32 %v, %tag
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %s, ptr addrspace(1) %o
  ret void
})";
  std::vector<int32_t> out(128, -1);
  Expected<RunStats> stats = runOn(body, 128, 1, out);
  ASSERT_OK(stats);
  EXPECT_EQ(stats->barriers, 1u);
  for (int t = 0; t < 128; ++t) {
    const int other = t ^ 64;
    EXPECT_EQ(out[size_t(t)], (other % 2 ? 3 * other : 0) + (t % 2 ? 1000 : 2000)) << t;
  }
}

TEST(AmdSimulator, CrossLaneReads) {
  const char *body = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %s = call i32 @llvm.amdgcn.ds.swizzle(i32 %t, i32 1055)
  %f = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %t)
  %hi = shl i32 %f, 8
  %v = or i32 %s, %hi
  %base = mul i32 %g, 64
  %i = add i32 %base, %t
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %v, ptr addrspace(1) %o
  ret void
})";
  // 1055 = and 0x1F, xor 1: lanes swap with their neighbour.
  std::vector<int32_t> out(128, -1);
  ASSERT_OK(runOn(body, 64, 2, out));
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(out[size_t(i)], (i % 64) ^ 1);
  // Wave 0 of a workgroup of 128 threads reads lane 0, wave 1 lane 64.
  std::vector<int32_t> wide(128, -1);
  ASSERT_OK(runOn(body, 128, 1, wide));
  EXPECT_EQ(wide[70] >> 8, 64);
  EXPECT_EQ(wide[5] >> 8, 0);
}

TEST(AmdSimulator, OutOfBoundsGlobalAccessIsAnError) {
  const char *body = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %t, ptr addrspace(1) %o
  ret void
})";
  std::vector<int32_t> out(63, -1); // one element short
  EXPECT_ERROR_CONTAINS(runOn(body, 64, 1, out), "outside every buffer");
}

TEST(AmdSimulator, UnmodelledIntrinsicsAndPartialBarriersAreErrors) {
  const char *unknown = R"(
declare i32 @llvm.amdgcn.permlane16.swap(i32, i32, i1, i1)
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %x = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %t)
  %y = call i32 @llvm.amdgcn.ds.swizzle(i32 %x, i32 49152)
  ret void
})";
  std::vector<int32_t> out(64);
  EXPECT_ERROR_CONTAINS(runOn(unknown, 64, 1, out), "rotate or FFT");
  const char *partial = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %c = icmp ult i32 %t, 8
  br i1 %c, label %sync, label %done
sync:
  call void @llvm.amdgcn.s.barrier()
  br label %done
done:
  ret void
})";
  EXPECT_ERROR_CONTAINS(runOn(partial, 64, 1, out), "s_barrier reached by 8 of the 64");
  const char *call = R"(
declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)
declare float @llvm.sqrt.f32(float)
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %s = call float @llvm.sqrt.f32(float 2.0)
  ret void
})";
  EXPECT_ERROR_CONTAINS(runOn(call, 64, 1, out), "`llvm.sqrt.f32` is not modelled");
  EXPECT_ERROR_CONTAINS(Kernel::fromIR("define void @k() { ret void }", "k", 48), "32 or 64");
  EXPECT_ERROR_CONTAINS(Kernel::fromIR(std::string(kPrelude), "missing", 64), "no kernel");
}

/// The dense GEMMs of both AMD targets, run through the public API on the
/// simulated device: every tile family, BK 128 with several K steps, M
/// tails, N and K tails, every scale rounding.
struct GemmPoint {
  Arch arch;
  int64_t n, k, m, bm, bk;
  ScaleRounding rounding;
  int64_t splitK = 0; ///< 0: dispatch decides
};

class AmdSimGemm : public testing::TestWithParam<GemmPoint> {};

TEST_P(AmdSimGemm, MatchesReferenceAndCpuQuantizer) {
  const GemmPoint &p = GetParam();
  GemmCheckOptions o;
  o.arch = p.arch;
  o.n = p.n;
  o.k = p.k;
  o.m = p.m;
  o.rounding = p.rounding;
  if (p.bm)
    o.bm = p.bm;
  if (p.bk)
    o.bk = p.bk;
  if (p.splitK)
    o.splitK = p.splitK;
  o.seed = test::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed " << o.seed);
  Expected<GemmCheckResult> r = checkGemmA4W4(o);
  ASSERT_OK(r);
  EXPECT_TRUE(r->passed()) << r->kernel << ": " << r->firstFailure;
  EXPECT_EQ(r->outOfTolerance, 0);
  EXPECT_TRUE(r->guardIntact);
  EXPECT_TRUE(r->repeatable);
  EXPECT_EQ(r->quantizedMismatches, 0);
  EXPECT_GT(r->stats.waveOps, 0u);
  std::printf("[ amdgpu-sim ] %s M=%lld: max |err|/sum|ab| %.2e, rel-L2 %.2e\n", r->kernel.c_str(),
              (long long)p.m, r->maxNormalized, r->relL2);
}

std::vector<GemmPoint> gemmPoints() {
  std::vector<GemmPoint> points;
  for (Arch arch : {Arch::GFX950, Arch::GFX1250}) {
    for (int64_t bm : {16, 64})
      for (int64_t m : {1, 17, 77})
        points.push_back({arch, 256, 512, m, bm, 0, kDefaultScaleRounding});
    // BK 128 over 33 K steps, both tiles.
    points.push_back({arch, 256, 4224, 17, 16, 128, kDefaultScaleRounding});
    points.push_back({arch, 256, 4224, 77, 64, 128, kDefaultScaleRounding});
    // N and K tails.
    points.push_back({arch, 200, 416, 33, 0, 0, kDefaultScaleRounding});
    // Split-K: dispatch's (16 splits of 33 K steps at M = 1), uneven
    // splits (5 of 33) at both tiles with M, N and K tails, and two splits
    // of two steps.
    points.push_back({arch, 512, 4224, 1, 0, 0, kDefaultScaleRounding});
    points.push_back({arch, 300, 4192, 21, 16, 128, kDefaultScaleRounding, 5});
    points.push_back({arch, 300, 4192, 70, 64, 128, kDefaultScaleRounding, 5});
    points.push_back({arch, 256, 512, 9, 16, 0, kDefaultScaleRounding, 2});
    for (ScaleRounding r : allScaleRoundings())
      points.push_back({arch, 256, 256, 5, 16, 0, r});
  }
  return points;
}

INSTANTIATE_TEST_SUITE_P(Shapes, AmdSimGemm, testing::ValuesIn(gemmPoints()), [](const auto &info) {
  const GemmPoint &p = info.param;
  return std::string(toString(p.arch)) + "_n" + std::to_string(p.n) + "_k" + std::to_string(p.k) +
         "_m" + std::to_string(p.m) + "_bm" + std::to_string(p.bm) + "_bk" + std::to_string(p.bk) +
         "_ks" + std::to_string(p.splitK) + "_" + std::string(toString(p.rounding));
});

} // namespace
