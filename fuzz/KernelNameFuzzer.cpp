//===- KernelNameFuzzer.cpp - parseKernelName on arbitrary bytes ----------===//
//
// Names come from CSVs, caches and command lines. Any input either fails
// with a message or parses to a verified spec whose canonical name is the
// input itself (parseKernelName inverts name() exactly).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/KernelSpec.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view name(reinterpret_cast<const char *>(data), size);
  mxfp4::Expected<mxfp4::KernelSpec> spec = mxfp4::parseKernelName(name);
  if (!spec) {
    if (spec.takeError().message().empty())
      std::abort(); // every error says what is wrong
    return 0;
  }
  if (spec->name() != name || mxfp4::verifyKernelSpec(*spec))
    std::abort();
  return 0;
}
