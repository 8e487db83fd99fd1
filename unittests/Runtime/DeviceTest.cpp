//===- DeviceTest.cpp - Runtime behaviour without (or with) a GPU ---------===//

#include "mxfp4/Runtime/Device.h"
#include "TestUtil/Expected.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace mxfp4;

namespace {

TEST(Device, NoDeviceIsAClearError) {
  auto dev = Device::open();
  if (dev)
    GTEST_SKIP() << "a " << (*dev)->driver() << " device is present: " << (*dev)->name();
  std::string msg = dev.takeError().message();
  EXPECT_EQ(msg.rfind("no device", 0), 0u) << msg;
  EXPECT_NE(msg.find("CUDA:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HIP:"), std::string::npos) << msg;
}

TEST(Device, ArchOverride) {
  ::setenv("MXFP4_ARCH", "gfx1250", 1);
  auto a = targetArch(nullptr);
  ASSERT_OK(a);
  EXPECT_EQ(*a, Arch::GFX1250);
  ::setenv("MXFP4_ARCH", "gfx9000", 1);
  EXPECT_ERROR_CONTAINS(targetArch(nullptr), "MXFP4_ARCH='gfx9000' is not a target");
  ::unsetenv("MXFP4_ARCH");
  EXPECT_ERROR_CONTAINS(targetArch(nullptr), "MXFP4_ARCH is not set");
}

TEST(Device, WrongCodeObjectFormatIsRefused) {
  auto dev = Device::open();
  if (!dev) {
    (void)dev.takeError();
    GTEST_SKIP() << "no device";
  }
  CompiledKernel k;
  k.symbol = "not_a_kernel";
  k.format = (*dev)->driver() == "cuda" ? BinaryFormat::HSACO : BinaryFormat::PTX;
  void *args[1] = {nullptr};
  EXPECT_ERROR_CONTAINS([&] { return (*dev)->launch(k, k.geometry(1), args); }(),
                        "not_a_kernel");
}

} // namespace
