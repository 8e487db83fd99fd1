//===- DiskCache.cpp - Code objects on disk, safe across processes --------===//

#include "mxfp4/Cache/DiskCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace mxfp4 {

static constexpr llvm::StringLiteral kMagic = "MXFP4CO1";

static uint64_t checksum(llvm::StringRef name, llvm::StringRef fingerprint, uint8_t format,
                         llvm::StringRef payload) {
  std::string all;
  all.reserve(name.size() + fingerprint.size() + payload.size() + 3);
  all.append(name.data(), name.size());
  all.push_back('\0');
  all.append(fingerprint.data(), fingerprint.size());
  all.push_back('\0');
  all.push_back(char(format));
  all.append(payload.data(), payload.size());
  return llvm::xxh3_64bits(llvm::StringRef(all));
}

/// The name of the directory that holds the entries of `fingerprint`.
static std::string fingerprintDirName(llvm::StringRef fingerprint) {
  std::string hash;
  llvm::raw_string_ostream(hash) << llvm::format_hex_no_prefix(llvm::xxh3_64bits(fingerprint), 16);
  return hash;
}

DiskCache::DiskCache(std::string root, std::string fp) : fingerprint(std::move(fp)) {
  llvm::SmallString<256> p(root);
  llvm::sys::path::append(p, fingerprintDirName(fingerprint));
  dir = std::string(p);
}

std::string DiskCache::pathFor(llvm::StringRef name) const {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name + ".mxco");
  return std::string(p);
}

namespace {
/// Reads little-endian fields off a buffer, failing instead of overrunning.
struct Reader {
  llvm::StringRef data;
  bool ok = true;
  llvm::StringRef bytes(uint64_t n) {
    if (!ok || n > data.size()) {
      ok = false;
      return {};
    }
    llvm::StringRef r = data.take_front(n);
    data = data.drop_front(n);
    return r;
  }
  template <typename T> T integer() {
    llvm::StringRef b = bytes(sizeof(T));
    return ok ? llvm::support::endian::read<T, llvm::endianness::little>(b.data()) : T(0);
  }
};
} // namespace

llvm::Expected<std::optional<DiskCache::Entry>> DiskCache::load(llvm::StringRef name) const {
  std::string path = pathFor(name);
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) {
    // No entry, or no directory to hold one: a miss.
    if (buf.getError() == std::errc::no_such_file_or_directory ||
        buf.getError() == std::errc::not_a_directory)
      return std::nullopt;
    return llvm::createStringError("cannot read cache entry " + path + ": " +
                                   buf.getError().message());
  }
  auto corrupt = [&](const llvm::Twine &why) {
    return llvm::createStringError("corrupt cache entry " + path + ": " + why);
  };
  Reader r{(*buf)->getBuffer()};
  if (r.bytes(kMagic.size()) != kMagic)
    return corrupt("bad magic (not an mxfp4-jit code object, or another format version)");
  llvm::StringRef storedName = r.bytes(r.integer<uint32_t>());
  llvm::StringRef storedFp = r.bytes(r.integer<uint32_t>());
  uint8_t format = r.integer<uint8_t>();
  uint64_t length = r.integer<uint64_t>();
  uint64_t sum = r.integer<uint64_t>();
  if (!r.ok)
    return corrupt("truncated header");
  if (storedName != name)
    return corrupt("holds kernel '" + storedName + "'");
  if (storedFp != fingerprint)
    return corrupt("built by another compiler ('" + storedFp + "')");
  if (length != r.data.size())
    return corrupt("payload is " + llvm::Twine(r.data.size()) + " bytes, header says " +
                   llvm::Twine(length) + " (truncated or appended to)");
  if (checksum(name, fingerprint, format, r.data) != sum)
    return corrupt("checksum mismatch");
  return Entry{format, r.data.str()};
}

/// Writes the concatenated `parts` to `path` through a unique temporary file
/// and a rename, so readers see the whole file or none.
static llvm::Error writeAtomically(const std::string &path, llvm::ArrayRef<llvm::StringRef> parts) {
  llvm::SmallString<256> tmp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%%%%%", fd, tmp))
    return llvm::createStringError("cannot create a temporary file next to " + path + ": " +
                                   ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    for (llvm::StringRef part : parts)
      os << part;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return llvm::createStringError("cannot write " + path + ": " + ec.message());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::createStringError("cannot move " + path + " into place: " + ec.message());
  }
  return llvm::Error::success();
}

static constexpr llvm::StringLiteral kFingerprintFile = "FINGERPRINT";

llvm::Error DiskCache::store(llvm::StringRef name, const Entry &entry) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create cache directory " + dir + ": " + ec.message());
  llvm::SmallString<256> fpPath(dir);
  llvm::sys::path::append(fpPath, kFingerprintFile);
  if (!llvm::sys::fs::exists(fpPath))
    if (llvm::Error e = writeAtomically(std::string(fpPath), {fingerprint}))
      return e;

  std::string header;
  auto le = [&](auto v) {
    char b[sizeof(v)];
    llvm::support::endian::write<decltype(v), llvm::endianness::little>(b, v);
    header.append(b, sizeof(v));
  };
  header += kMagic;
  le(uint32_t(name.size()));
  header += name;
  le(uint32_t(fingerprint.size()));
  header += fingerprint;
  header.push_back(char(entry.format));
  le(uint64_t(entry.payload.size()));
  le(checksum(name, fingerprint, entry.format, entry.payload));
  return writeAtomically(pathFor(name), {header, entry.payload});
}

llvm::Expected<std::string> DiskCache::findFingerprint(llvm::StringRef root,
                                                       llvm::StringRef identity) {
  std::vector<std::string> matches;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::SmallString<256> p(it->path());
    llvm::sys::path::append(p, kFingerprintFile);
    auto buf = llvm::MemoryBuffer::getFile(p, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buf)
      continue; // not a fingerprint directory (or one from before FINGERPRINT existed)
    llvm::StringRef fp = (*buf)->getBuffer();
    // Only trust a directory whose name is the hash of what it claims to hold.
    if (fp.starts_with(identity) &&
        llvm::sys::path::filename(it->path()) == fingerprintDirName(fp))
      matches.push_back(fp.str());
  }
  if (ec)
    return llvm::createStringError("cannot read AOT cache directory " + root + ": " + ec.message());
  if (matches.empty())
    return llvm::createStringError("no kernels built by '" + identity.rtrim("; ") + "' under " +
                                   root);
  if (matches.size() > 1)
    return llvm::createStringError(llvm::Twine(matches.size()) + " compiler fingerprints under " +
                                   root + " start with '" + identity.rtrim("; ") +
                                   "'; keep one AOT cache per directory");
  return matches.front();
}

} // namespace mxfp4
