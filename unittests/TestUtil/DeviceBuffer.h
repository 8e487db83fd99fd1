//===- DeviceBuffer.h - RAII device memory for GPU tests ---------*- C++ -*-===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_DEVICEBUFFER_H
#define MXFP4_UNITTESTS_TESTUTIL_DEVICEBUFFER_H

#include "mxfp4/Runtime/Device.h"

#include "gtest/gtest.h"

#include <vector>

namespace mxfp4::test {

/// The GPU, or skip the test ("no device" here).
#define OPEN_DEVICE_OR_SKIP(var)                                                                   \
  auto var##Or = ::mxfp4::Device::open();                                                          \
  if (!var##Or)                                                                                    \
    GTEST_SKIP() << var##Or.takeError().message();                                           \
  ::mxfp4::Device &var = **var##Or

class DeviceBuffer {
public:
  DeviceBuffer(Device &dev, size_t bytes) : dev(dev), bytes(bytes) {
    auto p = dev.alloc(bytes);
    if (!p) {
      ADD_FAILURE() << p.takeError().message();
      return;
    }
    ptr = *p;
  }
  ~DeviceBuffer() { dev.free(ptr); }
  void *get() const { return ptr; }
  size_t size() const { return bytes; }

  template <typename T> void upload(const std::vector<T> &host) {
    ASSERT_LE(host.size() * sizeof(T), bytes);
    Error e = dev.copyToDevice(ptr, host.data(), host.size() * sizeof(T));
    ASSERT_FALSE(bool(e)) << e.message();
  }
  template <typename T> std::vector<T> download(size_t count) {
    std::vector<T> host(count);
    Error e = dev.copyToHost(host.data(), ptr, count * sizeof(T));
    EXPECT_FALSE(bool(e)) << e.message();
    return host;
  }
  void fill(uint8_t byte) {
    Error e = dev.fill(ptr, byte, bytes);
    EXPECT_FALSE(bool(e)) << e.message();
  }

private:
  Device &dev;
  void *ptr = nullptr;
  size_t bytes;
};

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_DEVICEBUFFER_H
