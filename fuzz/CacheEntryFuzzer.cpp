//===- CacheEntryFuzzer.cpp - The disk cache reading arbitrary entries -----===//
//
// Whatever bytes sit where an entry belongs, load() returns an entry or a
// "corrupt cache entry" error, never a crash, and an entry it returns
// stores and reloads unchanged; a valid entry cut short is corrupt.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Cache/DiskCache.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string root = [] {
    std::string dir = (std::filesystem::temp_directory_path() /
                       ("mxfp4-cache-fuzz-" + std::to_string(::getpid())))
                          .string();
    std::filesystem::create_directories(dir);
    return dir;
  }();
  const DiskCache cache(root, "fuzz fingerprint");
  const std::string name = "gemm_a4w4_fuzz";
  const std::string path = cache.pathFor(name);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  // Byte 0 picks the case: even, the rest is the file; odd, a valid entry
  // holding the rest is stored, then cut to (byte 1) / 255 of its length.
  const bool valid = size > 0 && data[0] % 2 == 1;
  const std::string rest(reinterpret_cast<const char *>(data) + (size > 0), size - (size > 0));
  if (valid) {
    if (cache.store(name, {uint8_t(data[0] >> 1), rest}))
      std::abort();
    Expected<std::optional<DiskCache::Entry>> whole = cache.load(name);
    if (!whole || !*whole || (*whole)->payload != rest)
      std::abort();
    const uint64_t length = std::filesystem::file_size(path);
    const uint64_t cut = size > 1 ? length * data[1] / 255 : length;
    std::filesystem::resize_file(path, cut);
    Expected<std::optional<DiskCache::Entry>> cutEntry = cache.load(name);
    if (cut < length ? bool(cutEntry) : !cutEntry)
      std::abort(); // a shortened entry is corrupt, a whole one loads
    if (!cutEntry)
      (void)cutEntry.takeError();
    return 0;
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(rest.data(), std::streamsize(rest.size()));
  }
  Expected<std::optional<DiskCache::Entry>> entry = cache.load(name);
  if (!entry) {
    if (entry.takeError().message().rfind("corrupt cache entry", 0) != 0)
      std::abort();
    return 0;
  }
  if (!*entry)
    std::abort(); // the file is there: not a miss
  if (cache.store(name, **entry))
    std::abort();
  Expected<std::optional<DiskCache::Entry>> again = cache.load(name);
  if (!again || !*again || (*again)->payload != (*entry)->payload ||
      (*again)->format != (*entry)->format)
    std::abort();
  return 0;
}
