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

DiskCache::DiskCache(std::string root, std::string fp) : fingerprint(std::move(fp)) {
  llvm::SmallString<256> p(root);
  std::string hash;
  llvm::raw_string_ostream(hash) << llvm::format_hex_no_prefix(llvm::xxh3_64bits(fingerprint), 16);
  llvm::sys::path::append(p, hash);
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

llvm::Error DiskCache::store(llvm::StringRef name, const Entry &entry) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create cache directory " + dir + ": " + ec.message());
  std::string path = pathFor(name);
  llvm::SmallString<256> tmp;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%%%%%", fd, tmp))
    return llvm::createStringError("cannot create a temporary file next to " + path + ": " +
                                   ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    auto le32 = [&](uint32_t v) {
      char b[4];
      llvm::support::endian::write<uint32_t, llvm::endianness::little>(b, v);
      os.write(b, 4);
    };
    auto le64 = [&](uint64_t v) {
      char b[8];
      llvm::support::endian::write<uint64_t, llvm::endianness::little>(b, v);
      os.write(b, 8);
    };
    os << kMagic;
    le32(uint32_t(name.size()));
    os << name;
    le32(uint32_t(fingerprint.size()));
    os << fingerprint;
    os.write(char(entry.format));
    le64(entry.payload.size());
    le64(checksum(name, fingerprint, entry.format, entry.payload));
    os << entry.payload;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return llvm::createStringError("cannot write cache entry " + path + ": " + ec.message());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::createStringError("cannot move cache entry into place at " + path + ": " +
                                   ec.message());
  }
  return llvm::Error::success();
}

} // namespace mxfp4
