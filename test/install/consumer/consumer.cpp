// An out-of-tree C++ program against the installed package: the C++ API's
// headers and libmxfp4jit.so, without a GPU.
#include "mxfp4/JIT/Version.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Runtime/Device.h"

#include <cstdio>

int main() {
  mxfp4::Expected<std::unique_ptr<mxfp4::Device>> dev = mxfp4::Device::open();
  std::printf("consumer c++: %s; device: %s\n", mxfp4::version(),
              dev ? (*dev)->name().c_str() : dev.takeError().message().c_str());
  // What dispatch runs for one shape on sm_90a, decided without a device.
  mxfp4::Expected<mxfp4::GemmA4W4Plan> plan =
      mxfp4::planGemmA4W4({mxfp4::Arch::SM90A, 7168, 2048, false, 132}, 64);
  if (!plan) {
    std::fprintf(stderr, "plan: %s\n", plan.takeError().message().c_str());
    return 1;
  }
  for (const mxfp4::KernelSpec &k : plan->kernels())
    std::printf("  %s\n", k.name().c_str());
  return 0;
}
