//===- Device.cpp - Picking a driver ---------------------------------------===//

#include "mxfp4/Runtime/Device.h"
#include "mxfp4/Support/Env.h"

namespace mxfp4 {

Device::~Device() = default;

Expected<std::array<uint8_t, 128>> Device::encodeTensorMap(const void *, std::array<uint64_t, 3>,
                                                           std::array<uint32_t, 3>) {
  return makeError("TMA descriptors need a CUDA device; this one is driven by ", driver());
}

Expected<bool> Device::capturing(void *) { return false; }

Expected<std::unique_ptr<Device>> Device::open(int ordinal) {
  Expected<std::unique_ptr<Device>> cuda = openCudaDevice(ordinal);
  if (cuda)
    return cuda;
  std::string cudaWhy = cuda.takeError().message();
  Expected<std::unique_ptr<Device>> hip = openHipDevice(ordinal);
  if (hip)
    return hip;
  std::string hipWhy = hip.takeError().message();
  return Error("no device: CUDA: " + cudaWhy + "; HIP: " + hipWhy);
}

Expected<Arch> targetArch(const Device *device) {
  std::string forced = env::archOverride();
  if (!forced.empty()) {
    if (std::optional<Arch> a = parseArch(forced))
      return *a;
    return Error("MXFP4_ARCH='" + forced + "' is not a target; expected gfx950, gfx1250 or sm_90a");
  }
  if (!device)
    return Error("no device, and MXFP4_ARCH is not set to pick a target");
  return device->arch();
}

} // namespace mxfp4
