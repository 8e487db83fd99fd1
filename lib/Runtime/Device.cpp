//===- Device.cpp - Picking a driver ---------------------------------------===//

#include "mxfp4/Runtime/Device.h"
#include "mxfp4/Support/Env.h"

namespace mxfp4 {

Device::~Device() = default;

llvm::Expected<std::unique_ptr<Device>> Device::open(int ordinal) {
  llvm::Expected<std::unique_ptr<Device>> cuda = openCudaDevice(ordinal);
  if (cuda)
    return cuda;
  std::string cudaWhy = llvm::toString(cuda.takeError());
  llvm::Expected<std::unique_ptr<Device>> hip = openHipDevice(ordinal);
  if (hip)
    return hip;
  std::string hipWhy = llvm::toString(hip.takeError());
  return llvm::createStringError("no device: CUDA: " + cudaWhy + "; HIP: " + hipWhy);
}

llvm::Expected<Arch> targetArch(const Device *device) {
  std::string forced = env::archOverride();
  if (!forced.empty()) {
    if (std::optional<Arch> a = parseArch(forced))
      return *a;
    return llvm::createStringError("MXFP4_ARCH='" + forced +
                                   "' is not a target; expected gfx950, gfx1250 or sm_90a");
  }
  if (!device)
    return llvm::createStringError("no device, and MXFP4_ARCH is not set to pick a target");
  return device->arch();
}

} // namespace mxfp4
