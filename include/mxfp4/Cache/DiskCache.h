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
// Nothing read is trusted: only regular files are opened (no links, no
// FIFOs or devices), and none larger than kMaxEntryBytes. collect() removes
// the temporary files a process killed between write and rename leaves,
// and keeps the cache under a size cap by evicting the oldest entries.
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
  /// No code object comes near this; a larger file is refused unread.
  static constexpr uint64_t kMaxEntryBytes = uint64_t(64) << 20;

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

  struct Collected {
    size_t temporaries = 0; ///< stale .tmp-* files removed
    size_t evicted = 0;     ///< entries removed to get under the cap
    uint64_t bytes = 0;     ///< entry bytes left under the root
  };
  /// Housekeeping over the whole cache root (every fingerprint): removes
  /// temporary files older than `tmpAgeSeconds` (younger ones may be a
  /// writer's in flight), then, when the entries exceed `maxBytes` (0: no
  /// cap), removes the least recently written until they take 90 % of it.
  /// Another process may still read an evicted entry's open file; its next
  /// lookup is a miss.
  Expected<Collected> collect(uint64_t maxBytes, int64_t tmpAgeSeconds = 600) const;

  /// The one fingerprint under `root` that starts with `identity` (see
  /// compilerIdentity()); an error when there is none or more than one.
  static Expected<std::string> findFingerprint(std::string_view root, std::string_view identity);

private:
  std::string dir; ///< <root>/<fingerprint hash>
  std::string fingerprint;
};

} // namespace mxfp4

#endif // MXFP4_CACHE_DISKCACHE_H
