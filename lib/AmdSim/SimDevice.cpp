//===- SimDevice.cpp - An AMD GPU simulated on the CPU --------------------===//

#include "mxfp4/AmdSim/SimDevice.h"

#include <cstdlib>
#include <cstring>

namespace mxfp4::amdsim {

Expected<std::unique_ptr<SimDevice>> SimDevice::create(Arch arch) {
  if (arch != Arch::GFX950 && arch != Arch::GFX1250)
    return makeError("amdgpu-sim: simulates gfx950 and gfx1250, not ", toString(arch));
  return std::unique_ptr<SimDevice>(new SimDevice(arch));
}

SimDevice::~SimDevice() {
  for (auto &[p, n] : live)
    std::free(p);
}

std::string SimDevice::name() const { return strCat("simulated ", toString(target)); }

int SimDevice::multiprocessorCount() const { return target == Arch::GFX950 ? 256 : 0; }

Expected<void *> SimDevice::alloc(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  if (rounded < bytes)
    return makeError("amdgpu-sim: cannot allocate ", bytes, " bytes");
  void *p = std::aligned_alloc(256, rounded);
  if (!p)
    return makeError("amdgpu-sim: out of host memory for ", bytes, " bytes");
  std::lock_guard<std::mutex> lock(mutex);
  live[p] = bytes;
  memory.add(p, bytes);
  return p;
}

void SimDevice::free(void *ptr) {
  if (!ptr)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  if (live.erase(ptr)) {
    memory.remove(ptr);
    std::free(ptr);
  }
}

Error SimDevice::checkRange(const void *p, size_t bytes) const {
  if (!memory.contains(uint64_t(reinterpret_cast<uintptr_t>(p)), bytes))
    return makeError("amdgpu-sim: ", bytes, " bytes at address ",
                     uint64_t(reinterpret_cast<uintptr_t>(p)), " are outside every allocation");
  return Error::success();
}

Error SimDevice::copyToDevice(void *dst, const void *src, size_t bytes) {
  if (Error e = checkRange(dst, bytes))
    return e;
  std::memcpy(dst, src, bytes);
  return Error::success();
}

Error SimDevice::copyToHost(void *dst, const void *src, size_t bytes) {
  if (Error e = checkRange(src, bytes))
    return e;
  std::memcpy(dst, src, bytes);
  return Error::success();
}

Error SimDevice::fill(void *dst, uint8_t byte, size_t bytes, void *) {
  if (Error e = checkRange(dst, bytes))
    return e;
  std::memset(dst, byte, bytes);
  return Error::success();
}

Error SimDevice::launch(const CompiledKernel &kernel, const LaunchGeometry &geometry, void **args,
                        void *) {
  if (kernel.spec.arch != target)
    return makeError("amdgpu-sim: ", kernel.symbol, " was compiled for ",
                     toString(kernel.spec.arch), ", this device is ", toString(target));
  const Kernel *k;
  uint64_t seed;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kernels.find(kernel.symbol);
    if (it == kernels.end()) {
      Expected<std::unique_ptr<Kernel>> built = Kernel::fromSpec(kernel.spec);
      if (!built)
        return built.takeError();
      it = kernels.emplace(kernel.symbol, std::move(*built)).first;
    }
    k = it->second.get();
    last = kernel.symbol;
    seed = orderSeed ? orderSeed + launches : 0;
    ++launches;
  }
  Expected<RunStats> stats = k->run(geometry, args, memory, seed);
  if (!stats)
    return stats.takeError();
  std::lock_guard<std::mutex> lock(mutex);
  sum.workgroups += stats->workgroups;
  sum.laneInstructions += stats->laneInstructions;
  sum.waveOps += stats->waveOps;
  sum.barriers += stats->barriers;
  return Error::success();
}

Expected<double> SimDevice::time(const std::function<Error()> &, void *) {
  return makeError("amdgpu-sim: the simulator does not model time");
}

size_t SimDevice::liveAllocations() const {
  std::lock_guard<std::mutex> lock(mutex);
  return live.size();
}

void SimDevice::setWorkgroupOrderSeed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex);
  orderSeed = seed;
}

std::string SimDevice::lastKernel() const {
  std::lock_guard<std::mutex> lock(mutex);
  return last;
}

RunStats SimDevice::totals() const {
  std::lock_guard<std::mutex> lock(mutex);
  return sum;
}

} // namespace mxfp4::amdsim
