//===- SimDevice.h - An AMD GPU simulated on the CPU -------------*- C++ -*-===//
//
// A Device whose memory is host memory and whose launches run the kernel's
// LLVM IR in the simulator (Simulator.h), so the public API (weight
// preparation, dispatch, launches) runs end to end for gfx950 and gfx1250
// without the GPU. Slow: for correctness on small shapes, not for timing.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_AMDSIM_SIMDEVICE_H
#define MXFP4_AMDSIM_SIMDEVICE_H

#include "mxfp4/AmdSim/Simulator.h"
#include "mxfp4/Runtime/Device.h"

#include <map>
#include <memory>
#include <mutex>

namespace mxfp4::amdsim {

class SimDevice : public Device {
public:
  /// `arch`: gfx950 or gfx1250.
  static Expected<std::unique_ptr<SimDevice>> create(Arch arch);
  ~SimDevice() override;

  Arch arch() const override { return target; }
  std::string name() const override;
  std::string_view driver() const override { return "amdgpu-sim"; }
  /// MI355X's compute units for gfx950; gfx1250 reports none (unknown).
  int multiprocessorCount() const override;

  Expected<void *> alloc(size_t bytes) override;
  void free(void *ptr) override;
  Error copyToDevice(void *dst, const void *src, size_t bytes) override;
  Error copyToHost(void *dst, const void *src, size_t bytes) override;
  Error fill(void *dst, uint8_t byte, size_t bytes, void *stream = nullptr) override;
  Error synchronize() override { return Error::success(); }
  /// Runs the kernel to completion before returning.
  Error launch(const CompiledKernel &kernel, const LaunchGeometry &geometry, void **args,
               void *stream = nullptr) override;
  /// The simulator does not model time: always an error.
  Expected<double> time(const std::function<Error()> &work, void *stream = nullptr) override;

  /// Buffers allocated and not freed.
  size_t liveAllocations() const;
  /// What the launches so far executed, summed.
  RunStats totals() const;
  /// Runs each launch's workgroups in a random order drawn from `seed`
  /// and the launch's number (0: in id order).
  void setWorkgroupOrderSeed(uint64_t seed);
  /// The symbol of the last kernel launched ("" before any).
  std::string lastKernel() const;

private:
  explicit SimDevice(Arch arch) : target(arch) {}
  Error checkRange(const void *p, size_t bytes) const;

  Arch target;
  GlobalMemory memory;
  mutable std::mutex mutex;
  std::map<void *, size_t> live;
  std::map<std::string, std::unique_ptr<Kernel>> kernels; ///< by symbol
  RunStats sum;
  std::string last;
  uint64_t orderSeed = 0, launches = 0;
};

} // namespace mxfp4::amdsim

#endif // MXFP4_AMDSIM_SIMDEVICE_H
