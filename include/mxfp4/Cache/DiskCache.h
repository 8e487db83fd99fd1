//===- DiskCache.h - Code objects on disk, safe across processes -*- C++ -*-===//
//
// One file per kernel under `<dir>/<fingerprint hash>/<kernel name>.mxco`.
// The fingerprint (compiler version, LLVM version, pipeline) is part of the
// path and of the entry, so an upgraded compiler never loads a stale kernel.
// Entries are written to a unique temporary file and renamed into place
// (atomic on POSIX), so concurrent writers never leave a torn entry and
// readers see a whole entry or none. Each entry carries its name, the
// fingerprint, the payload length and an XXH64 checksum; any mismatch is
// reported as corruption so the caller can rebuild.
//
// Each fingerprint directory also holds FINGERPRINT (the full text), so a
// runtime-only build, which cannot compute a compiler's fingerprint, can
// find the entries written by its own mxfp4-jit version.
//
// Entry layout (little endian):
//   "MXFP4CO2" | u32 name length | name | u32 fingerprint length | fingerprint
//   | u8 format | u64 payload length | u64 xxh64(name, fingerprint, format, payload) | payload
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CACHE_DISKCACHE_H
#define MXFP4_CACHE_DISKCACHE_H

#include "mxfp4/Support/Error.h"

#include <optional>
#include <string>
#include <string_view>

namespace mxfp4 {

class DiskCache {
public:
  DiskCache(std::string dir, std::string fingerprint);

  /// Where the entry for `name` lives.
  std::string pathFor(std::string_view name) const;

  struct Entry {
    uint8_t format = 0;
    std::string payload;
  };

  /// The entry for `name`: std::nullopt on a miss, an error (naming the path
  /// and what is wrong) for an unreadable or corrupt entry.
  Expected<std::optional<Entry>> load(std::string_view name) const;

  /// Writes the entry atomically (creating directories as needed).
  Error store(std::string_view name, const Entry &entry) const;

  const std::string &directory() const { return dir; }

  /// The one fingerprint under `root` that starts with `identity` (see
  /// compilerIdentity()); an error when there is none or more than one.
  static Expected<std::string> findFingerprint(std::string_view root, std::string_view identity);

private:
  std::string dir; ///< <root>/<fingerprint hash>
  std::string fingerprint;
};

} // namespace mxfp4

#endif // MXFP4_CACHE_DISKCACHE_H
