//===- CApiContractTest.cpp - The API's checks on a fake host device -------===//
//
// Every argument check of the GEMM, quantizer and MoE entry points runs
// before any launch, so a fake Device in host memory (TestUtil/FakeDevice.h)
// exercises them in CPU CI, through the C API (which wraps the C++ one):
// bad input is an error naming the problem and launches nothing, good
// input reaches the launch, and every allocation is freed.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/mxfp4.h"

#include "CApiHandles.h"
#include "TestUtil/FakeDevice.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>
#include <vector>

using mxfp4::test::FakeDevice;

namespace {

// The kernels this file gets are compiled into memory only.
const bool kMemoryOnly = [] { return ::setenv("MXFP4_DISABLE_CACHE", "1", 1) == 0; }();

std::string lastError() { return mxfp4_last_error_message(); }

#define EXPECT_STATUS(call, status, text)                                                          \
  do {                                                                                             \
    EXPECT_EQ((call), (status)) << lastError();                                                    \
    EXPECT_NE(lastError().find(text), std::string::npos) << lastError();                           \
  } while (0)

class CApiContract : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(kMemoryOnly);
    auto owned = std::make_unique<FakeDevice>(mxfp4::Arch::GFX950);
    fake = owned.get();
    dev = new mxfp4_device{std::move(owned)};
    std::vector<uint8_t> codes(kN * kK / 2, 0x21), scales(kN * kK / 32, 127);
    ASSERT_EQ(mxfp4_gemm_weight_prepare(dev, codes.data(), codes.size(), scales.data(),
                                        scales.size(), kN, kK, MXFP4_ARCH_DEVICE, &w),
              MXFP4_STATUS_OK)
        << lastError();
    ASSERT_EQ(mxfp4_device_alloc(dev, kM * kK * 2, &a), MXFP4_STATUS_OK);
    ASSERT_EQ(mxfp4_device_alloc(dev, kM * kN * 2, &out), MXFP4_STATUS_OK);
  }
  void TearDown() override {
    EXPECT_EQ(mxfp4_device_free(dev, a), MXFP4_STATUS_OK);
    EXPECT_EQ(mxfp4_device_free(dev, out), MXFP4_STATUS_OK);
    mxfp4_gemm_weight_destroy(w);
    EXPECT_EQ(fake->liveAllocations(), 0u) << "the weights or their scratch leaked";
    EXPECT_EQ(fake->badFrees, 0u);
    mxfp4_device_destroy(dev);
  }

  static constexpr int64_t kN = 256, kK = 256, kM = 64;
  FakeDevice *fake = nullptr;
  mxfp4_device *dev = nullptr;
  mxfp4_gemm_weight *w = nullptr;
  void *a = nullptr, *out = nullptr;
};

TEST_F(CApiContract, BadGemmArgumentsLaunchNothing) {
  char *misaligned = static_cast<char *>(a) + 8;
  EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, nullptr, kM, w, out, nullptr), MXFP4_STATUS_ERROR,
                "activation pointer must not be null");
  EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, misaligned, kM, w, out, nullptr), MXFP4_STATUS_ERROR,
                "16-byte aligned");
  EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, a, kM, w, nullptr, nullptr), MXFP4_STATUS_ERROR,
                "output pointer must not be null");
  EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, a, kM, w, misaligned, nullptr), MXFP4_STATUS_ERROR,
                "output pointer must be 16-byte aligned");
  for (int64_t m : {int64_t(0), int64_t(-1), INT64_MIN})
    EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, a, m, w, out, nullptr), MXFP4_STATUS_ERROR,
                  "M must be >= 1");
  // Products that wrap int64 must not pass the 32-bit indexing check.
  for (int64_t m : {int64_t(1) << 23, int64_t(1) << 56, int64_t(1) << 62, INT64_MAX})
    EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, a, m, w, out, nullptr), MXFP4_STATUS_ERROR,
                  "too large for 32-bit indexing");
  mxfp4_gemm_options bad{0, MXFP4_ROUNDING_EVEN};
  EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, a, kM, w, out, &bad), MXFP4_STATUS_INVALID_ARGUMENT,
                "struct_size");
  mxfp4_gemm_options badRounding{sizeof(mxfp4_gemm_options), static_cast<mxfp4_rounding>(9)};
  EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, a, kM, w, out, &badRounding),
                MXFP4_STATUS_INVALID_ARGUMENT, "not an mxfp4_rounding");
  EXPECT_STATUS(mxfp4_gemm_mx_a4w4(dev, nullptr, nullptr, nullptr, kM, w, out), MXFP4_STATUS_ERROR,
                "must not be null");
  EXPECT_TRUE(fake->launches.empty());
}

TEST_F(CApiContract, WeightsBelongToTheirDevice) {
  mxfp4_device other{std::make_unique<FakeDevice>(mxfp4::Arch::GFX950)};
  EXPECT_STATUS(mxfp4_gemm_a4w4(&other, nullptr, a, kM, w, out, nullptr),
                MXFP4_STATUS_INVALID_ARGUMENT, "another device");
  EXPECT_TRUE(fake->launches.empty());
}

TEST_F(CApiContract, GoodArgumentsReachTheLaunch) {
  // The fake cannot run the kernel; the call gets that far, JIT included.
  EXPECT_STATUS(mxfp4_gemm_a4w4(dev, nullptr, a, kM, w, out, nullptr), MXFP4_STATUS_ERROR,
                "fake device: cannot run gemm_a4w4_gfx950_n256_k256");
  ASSERT_EQ(fake->launches.size(), 1u);
  const mxfp4::LaunchGeometry &g = fake->launches[0].geometry;
  EXPECT_GE(g.grid[0] * g.grid[1] * g.grid[2], 1u);
  fake->launchSucceeds = true;
  EXPECT_EQ(mxfp4_gemm_a4w4(dev, nullptr, a, 1, w, out, nullptr), MXFP4_STATUS_OK) << lastError();
  EXPECT_EQ(fake->launches.size(), 2u);
}

TEST_F(CApiContract, QuantizerChecksComeFirst) {
  void *codes = nullptr, *scales = nullptr;
  ASSERT_EQ(mxfp4_device_alloc(dev, kM * kK / 2, &codes), MXFP4_STATUS_OK);
  ASSERT_EQ(mxfp4_device_alloc(dev, kM * kK / 32, &scales), MXFP4_STATUS_OK);
  EXPECT_STATUS(mxfp4_quantize(dev, nullptr, a, 0, kK, codes, scales, MXFP4_ROUNDING_EVEN),
                MXFP4_STATUS_ERROR, "M must be >= 1");
  EXPECT_STATUS(mxfp4_quantize(dev, nullptr, nullptr, kM, kK, codes, scales, MXFP4_ROUNDING_EVEN),
                MXFP4_STATUS_ERROR, "must not be null");
  for (int64_t m : {int64_t(1) << 31, int64_t(1) << 57, INT64_MAX})
    EXPECT_STATUS(mxfp4_quantize(dev, nullptr, a, m, kK, codes, scales, MXFP4_ROUNDING_EVEN),
                  MXFP4_STATUS_ERROR, "too large for 32-bit indexing");
  EXPECT_STATUS(
      mxfp4_quantize(dev, nullptr, a, kM, kK, codes, scales, static_cast<mxfp4_rounding>(-1)),
      MXFP4_STATUS_INVALID_ARGUMENT, "not an mxfp4_rounding");
  EXPECT_TRUE(fake->launches.empty());
  EXPECT_EQ(mxfp4_device_free(dev, codes), MXFP4_STATUS_OK);
  EXPECT_EQ(mxfp4_device_free(dev, scales), MXFP4_STATUS_OK);
}

TEST_F(CApiContract, MoeChecksComeFirst) {
  const mxfp4_moe_shape shape{4, 2, 128, 64};
  const int64_t e = shape.experts, h = shape.hidden, i = shape.inter;
  std::vector<uint8_t> w1(e * 2 * i * h / 2, 0x11), s1(e * 2 * i * h / 32, 127);
  std::vector<uint8_t> w2(e * h * i / 2, 0x11), s2(e * h * i / 32, 127);
  mxfp4_moe_weights *moe = nullptr;
  ASSERT_EQ(mxfp4_moe_weights_prepare(dev, &shape, w1.data(), w1.size(), s1.data(), s1.size(),
                                      w2.data(), w2.size(), s2.data(), s2.size(), nullptr, nullptr,
                                      MXFP4_GATE_UP_GUGU, MXFP4_ARCH_DEVICE, &moe),
            MXFP4_STATUS_OK)
      << lastError();
  void *ids = nullptr, *weights = nullptr;
  ASSERT_EQ(mxfp4_device_alloc(dev, 64 * 2 * 4, &ids), MXFP4_STATUS_OK);
  ASSERT_EQ(mxfp4_device_alloc(dev, 64 * 2 * 4, &weights), MXFP4_STATUS_OK);
  mxfp4_moe_options o{};
  o.struct_size = sizeof(o);
  o.activation = MXFP4_ACTIVATION_SILU;
  auto run = [&](int64_t tokens, const void *hidden) {
    return mxfp4_fused_moe_a4w4(dev, nullptr, hidden, tokens, static_cast<int32_t *>(ids),
                                static_cast<float *>(weights), moe, &o, out);
  };
  EXPECT_STATUS(mxfp4_fused_moe_a4w4(dev, nullptr, a, 8, static_cast<int32_t *>(ids),
                                     static_cast<float *>(weights), moe, nullptr, out),
                MXFP4_STATUS_INVALID_ARGUMENT, "options is NULL");
  EXPECT_STATUS(run(0, a), MXFP4_STATUS_ERROR, "tokens");
  EXPECT_STATUS(run(8, nullptr), MXFP4_STATUS_ERROR, "null");
  EXPECT_STATUS(run(int64_t(1) << 60, a), MXFP4_STATUS_ERROR, "tokens");
  o.activation = static_cast<mxfp4_activation>(0);
  EXPECT_STATUS(run(8, a), MXFP4_STATUS_INVALID_ARGUMENT, "not an mxfp4_activation");
  o.activation = MXFP4_ACTIVATION_SWIGLU; // its limit must be > 0
  EXPECT_STATUS(run(8, a), MXFP4_STATUS_ERROR, "limit");
  o.activation = MXFP4_ACTIVATION_SILU;
  o.block_m = 24;
  EXPECT_STATUS(run(8, a), MXFP4_STATUS_ERROR, "block");
  EXPECT_TRUE(fake->launches.empty());
  mxfp4_device other{std::make_unique<FakeDevice>(mxfp4::Arch::GFX950)};
  EXPECT_STATUS(mxfp4_fused_moe_a4w4(&other, nullptr, a, 8, static_cast<int32_t *>(ids),
                                     static_cast<float *>(weights), moe, &o, out),
                MXFP4_STATUS_INVALID_ARGUMENT, "another device");
  mxfp4_moe_weights_destroy(moe);
  EXPECT_EQ(mxfp4_device_free(dev, ids), MXFP4_STATUS_OK);
  EXPECT_EQ(mxfp4_device_free(dev, weights), MXFP4_STATUS_OK);
}

TEST(CApiDevice, AllocationsAreChecked) {
  mxfp4_device dev{std::make_unique<FakeDevice>()};
  void *p = &dev;
  EXPECT_STATUS(mxfp4_device_alloc(&dev, 0, &p), MXFP4_STATUS_INVALID_ARGUMENT, "bytes is 0");
  EXPECT_EQ(p, nullptr);
  ASSERT_EQ(mxfp4_device_alloc(&dev, 100, &p), MXFP4_STATUS_OK);
  char host[100] = {1};
  EXPECT_EQ(mxfp4_copy_to_device(&dev, p, host, sizeof host), MXFP4_STATUS_OK);
  EXPECT_STATUS(mxfp4_copy_to_device(&dev, p, host, 1000), MXFP4_STATUS_ERROR,
                "outside every allocation");
  EXPECT_STATUS(mxfp4_copy_to_host(&dev, nullptr, p, 4), MXFP4_STATUS_INVALID_ARGUMENT, "NULL");
  EXPECT_EQ(mxfp4_copy_to_host(&dev, host, p, 0), MXFP4_STATUS_OK);
  char name[8];
  EXPECT_EQ(mxfp4_device_name(&dev, name, sizeof name), MXFP4_STATUS_OK);
  EXPECT_STREQ(name, "fake ho"); // truncated, terminated
  mxfp4_arch arch;
  EXPECT_EQ(mxfp4_device_arch(&dev, &arch), MXFP4_STATUS_OK);
  EXPECT_EQ(arch, MXFP4_ARCH_GFX950);
  EXPECT_EQ(mxfp4_device_free(&dev, p), MXFP4_STATUS_OK);
  EXPECT_EQ(static_cast<FakeDevice &>(*dev.device).liveAllocations(), 0u);
}

} // namespace
