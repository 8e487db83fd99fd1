//===- Device.h - A GPU through its driver library, dlopen'ed ----*- C++ -*-===//
//
// The library builds and runs on machines with no GPU and no GPU SDK: the
// CUDA driver (libcuda.so.1) and HIP (libamdhip64.so) are loaded with dlopen
// on first use, and their types are declared here, not taken from vendor
// headers. Without either, open() fails with an error that starts with
// "no device". Every failing driver call is reported with the call, the
// driver's error name and code, and the kernel involved. Any host thread
// may call: each call makes the device current on it (CUDA: its primary
// context; HIP: its ordinal) for the call's duration and then restores
// what the thread had, so engines' own threads and other devices' work are
// left as they were.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_RUNTIME_DEVICE_H
#define MXFP4_RUNTIME_DEVICE_H

#include "mxfp4/JIT/CompiledKernel.h"

#include "mxfp4/Support/Error.h"
#include <array>
#include <cstdint>
#include <functional>

#include <memory>
#include <string>

namespace mxfp4 {

class Device {
public:
  /// Opens GPU `ordinal` of whichever driver is present (CUDA, then HIP).
  static Expected<std::unique_ptr<Device>> open(int ordinal = 0);

  virtual ~Device();

  /// The device's own target (sm_90a, gfx950, gfx1250).
  virtual Arch arch() const = 0;
  virtual std::string name() const = 0;
  /// "cuda" or "hip".
  virtual std::string_view driver() const = 0;

  virtual Expected<void *> alloc(size_t bytes) = 0;
  virtual void free(void *ptr) = 0;
  virtual Error copyToDevice(void *dst, const void *src, size_t bytes) = 0;
  virtual Error copyToHost(void *dst, const void *src, size_t bytes) = 0;
  virtual Error fill(void *dst, uint8_t byte, size_t bytes, void *stream = nullptr) = 0;
  virtual Error synchronize() = 0;
  /// Whether `stream` is being captured into a graph (CUDA graphs, HIP
  /// graphs): work enqueued there is recorded, not run, and nothing that
  /// allocates or synchronizes may happen meanwhile. False where the driver
  /// has no graphs.
  virtual Expected<bool> capturing(void *stream);
  /// Streaming multiprocessors (compute units); 0 if the driver did not say.
  virtual int multiprocessorCount() const { return 0; }

  /// Loads `kernel`'s code object (once per symbol per device) and launches
  /// it on `stream` (nullptr: the default stream). `args` is the usual
  /// array of pointers to each argument.
  virtual Error launch(const CompiledKernel &kernel, const LaunchGeometry &geometry, void **args,
                       void *stream = nullptr) = 0;

  /// A TMA descriptor (the driver's 128-byte CUtensorMap) of the dense 3-D
  /// array of 32-bit words at `global` (device memory, 16-byte aligned) with
  /// extents `dims` (innermost first), fetched in boxes of `box` words.
  /// CUDA (sm_90a) only; elsewhere an error.
  virtual Expected<std::array<uint8_t, 128>>
  encodeTensorMap(const void *global, std::array<uint64_t, 3> dims, std::array<uint32_t, 3> box);

  /// Milliseconds the device spent on what `work` enqueues on `stream`,
  /// measured with events recorded around it.
  virtual Expected<double> time(const std::function<Error()> &work, void *stream = nullptr) = 0;
};

/// Creates the CUDA / HIP devices (RuntimeCuda.cpp, RuntimeHip.cpp).
Expected<std::unique_ptr<Device>> openCudaDevice(int ordinal);
Expected<std::unique_ptr<Device>> openHipDevice(int ordinal);

/// The target to compile for: MXFP4_ARCH when set (cross-compiling), else the
/// device's. Errors name a bad MXFP4_ARCH value, or say there is no device.
Expected<Arch> targetArch(const Device *device);

} // namespace mxfp4

#endif // MXFP4_RUNTIME_DEVICE_H
