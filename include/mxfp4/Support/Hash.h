//===- Hash.h - The 64-bit hash of cache entries and directories -*- C++ -*-===//
//
// XXH64 (the xxHash 64-bit algorithm, seed 0): fast, well-distributed, and a
// fixed, published function, so cache files are checkable by other tools.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_HASH_H
#define MXFP4_SUPPORT_HASH_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mxfp4 {

uint64_t xxh64(const void *data, size_t size, uint64_t seed = 0);
inline uint64_t xxh64(std::string_view s) { return xxh64(s.data(), s.size()); }

} // namespace mxfp4

#endif // MXFP4_SUPPORT_HASH_H
