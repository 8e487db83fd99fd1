//===- DiskCache.cpp - Code objects on disk, safe across processes --------===//

#include "mxfp4/Cache/DiskCache.h"
#include "mxfp4/Support/Hash.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace mxfp4 {

// Version 2: XXH64 checksums (version 1 used LLVM's xxh3).
static constexpr std::string_view kMagic = "MXFP4CO2";
static constexpr std::string_view kFingerprintFile = "FINGERPRINT";
static constexpr uint64_t kMaxFingerprintBytes = 1 << 16;

static uint64_t checksum(std::string_view name, std::string_view fingerprint, uint8_t format,
                         std::string_view payload) {
  std::string all;
  all.reserve(name.size() + fingerprint.size() + payload.size() + 3);
  all.append(name);
  all.push_back('\0');
  all.append(fingerprint);
  all.push_back('\0');
  all.push_back(char(format));
  all.append(payload);
  return xxh64(all);
}

/// The name of the directory that holds the entries of `fingerprint`.
static std::string fingerprintDirName(std::string_view fingerprint) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)xxh64(fingerprint));
  return hex;
}

static std::string errnoText(int err) { return std::strerror(err); }

namespace {
/// A file's bytes, or why they could not be read: errno, or `refused`.
struct FileRead {
  std::string data;
  int err = 0;
  std::string refused; ///< not a regular file, or larger than the limit
};
} // namespace

/// The whole of the regular file at `path`, at most `limit` bytes. Nothing
/// in a cache directory is trusted: a FIFO would block forever, a device
/// or a link to one could be endless, so neither is opened through a link
/// nor read unless it is a regular file of bounded size.
static FileRead readFile(const std::string &path, uint64_t limit) {
  FileRead r;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    r.err = errno;
    if (r.err == ELOOP)
      r.refused = "is a symbolic link";
    return r;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    r.err = errno;
  } else if (!S_ISREG(st.st_mode)) {
    r.refused = "is not a regular file";
  } else if (uint64_t(st.st_size) > limit) {
    r.refused =
        strCat("is ", uint64_t(st.st_size), " bytes, more than the ", limit, " any entry can be");
  } else {
    r.data.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < r.data.size()) {
      ssize_t n = ::read(fd, r.data.data() + got, r.data.size() - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        r.err = errno;
        break;
      }
      if (n == 0)
        break; // shrank while read: the header's length check reports it
      got += size_t(n);
    }
    r.data.resize(got);
  }
  ::close(fd);
  return r;
}

DiskCache::DiskCache(std::string root, std::string fp)
    : dir((fs::path(root) / fingerprintDirName(fp)).string()), fingerprint(std::move(fp)) {}

std::string DiskCache::pathFor(std::string_view name) const {
  return (fs::path(dir) / strCat(name, ".mxco")).string();
}

namespace {
/// Reads little-endian fields off a buffer, failing instead of overrunning.
struct Reader {
  std::string_view data;
  bool ok = true;
  std::string_view bytes(uint64_t n) {
    if (!ok || n > data.size()) {
      ok = false;
      return {};
    }
    std::string_view r = data.substr(0, n);
    data.remove_prefix(n);
    return r;
  }
  template <typename T> T integer() {
    std::string_view b = bytes(sizeof(T));
    T v = 0;
    for (size_t i = 0; ok && i < sizeof(T); ++i)
      v |= T(uint8_t(b[i])) << (8 * i);
    return v;
  }
};

template <typename T> void appendLittleEndian(std::string &out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out.push_back(char(uint8_t(uint64_t(v) >> (8 * i))));
}
} // namespace

Expected<std::optional<DiskCache::Entry>> DiskCache::load(std::string_view name) const {
  std::string path = pathFor(name);
  FileRead file = readFile(path, kMaxEntryBytes);
  auto corrupt = [&](const auto &...why) {
    return makeError("corrupt cache entry ", path, ": ", why...);
  };
  if (!file.refused.empty())
    return corrupt(file.refused);
  if (file.err == ENOENT || file.err == ENOTDIR) // no entry, or no directory for one: a miss
    return std::optional<Entry>();
  if (file.err)
    return makeError("cannot read cache entry ", path, ": ", errnoText(file.err));
  Reader r{file.data};
  if (r.bytes(kMagic.size()) != kMagic)
    return corrupt("bad magic (not an mxfp4-jit code object, or another format version)");
  std::string_view storedName = r.bytes(r.integer<uint32_t>());
  std::string_view storedFp = r.bytes(r.integer<uint32_t>());
  uint8_t format = r.integer<uint8_t>();
  uint64_t length = r.integer<uint64_t>();
  uint64_t sum = r.integer<uint64_t>();
  if (!r.ok)
    return corrupt("truncated header");
  if (storedName != name)
    return corrupt("holds kernel '", storedName, "'");
  if (storedFp != fingerprint)
    return corrupt("built by another compiler ('", storedFp, "')");
  if (length != r.data.size())
    return corrupt("payload is ", r.data.size(), " bytes, header says ", length,
                   " (truncated or appended to)");
  if (checksum(name, fingerprint, format, r.data) != sum)
    return corrupt("checksum mismatch");
  return std::optional<Entry>(Entry{format, std::string(r.data)});
}

/// A temporary file name next to `path` that no other thread or process uses.
static std::string temporaryName(const std::string &path) {
  static std::atomic<uint64_t> counter{0};
  uint64_t salt = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".tmp-%d-%llx-%llx", int(::getpid()),
                (unsigned long long)counter.fetch_add(1), (unsigned long long)(salt & 0xFFFFFF));
  return path + suffix;
}

/// Writes the concatenated `parts` to `path` through a unique temporary file
/// and a rename, so readers see the whole file or none.
static Error writeAtomically(const std::string &path,
                             std::initializer_list<std::string_view> parts) {
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    tmp = temporaryName(path);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return makeError("cannot create a temporary file next to ", path, ": ", errnoText(errno));
  for (std::string_view part : parts) {
    while (!part.empty()) {
      ssize_t n = ::write(fd, part.data(), part.size());
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        return makeError("cannot write ", path, ": ", errnoText(err));
      }
      part.remove_prefix(size_t(n));
    }
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return makeError("cannot write ", path, ": ", errnoText(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return makeError("cannot move ", path, " into place: ", errnoText(err));
  }
  return Error::success();
}

Error DiskCache::store(std::string_view name, const Entry &entry) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return makeError("cannot create cache directory ", dir, ": ", ec.message());
  std::string fpPath = (fs::path(dir) / kFingerprintFile).string();
  if (!fs::exists(fpPath, ec))
    if (Error e = writeAtomically(fpPath, {fingerprint}))
      return e;

  std::string header(kMagic);
  appendLittleEndian(header, uint32_t(name.size()));
  header += name;
  appendLittleEndian(header, uint32_t(fingerprint.size()));
  header += fingerprint;
  header.push_back(char(entry.format));
  appendLittleEndian(header, uint64_t(entry.payload.size()));
  appendLittleEndian(header, checksum(name, fingerprint, entry.format, entry.payload));
  return writeAtomically(pathFor(name), {header, entry.payload});
}

Expected<DiskCache::Collected> DiskCache::collect(uint64_t maxBytes, int64_t tmpAgeSeconds) const {
  const fs::path root = fs::path(dir).parent_path();
  const auto now = fs::file_time_type::clock::now();
  struct Item {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type written;
  };
  std::vector<Item> entries;
  Collected out;
  std::error_code ec;
  // Two levels: <root>/<fingerprint hash>/<file>; links are not followed.
  for (fs::directory_iterator d(root, ec), end; d != end && !ec; d.increment(ec)) {
    std::error_code fec;
    if (!d->is_directory(fec) || d->is_symlink(fec))
      continue;
    for (fs::directory_iterator f(d->path(), fec); f != end && !fec; f.increment(fec)) {
      std::error_code iec;
      if (!f->is_regular_file(iec) || f->is_symlink(iec))
        continue;
      const std::string file = f->path().filename().string();
      const fs::file_time_type written = f->last_write_time(iec);
      if (iec)
        continue;
      if (file.find(".tmp-") != std::string::npos) {
        if (now - written > std::chrono::seconds(tmpAgeSeconds) && fs::remove(f->path(), iec))
          ++out.temporaries;
      } else if (f->path().extension() == ".mxco") {
        uint64_t bytes = f->file_size(iec);
        if (!iec)
          entries.push_back({f->path(), bytes, written});
      }
    }
  }
  // No root (yet, or a file in its place): nothing to collect; store says why.
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    return makeError("cannot read cache directory ", root.string(), ": ", ec.message());
  for (const Item &e : entries)
    out.bytes += e.bytes;
  if (maxBytes == 0 || out.bytes <= maxBytes)
    return out;
  std::sort(entries.begin(), entries.end(),
            [](const Item &a, const Item &b) { return a.written < b.written; });
  for (const Item &e : entries) {
    if (out.bytes <= maxBytes / 10 * 9)
      break;
    std::error_code rec;
    if (fs::remove(e.path, rec)) {
      out.bytes -= e.bytes;
      ++out.evicted;
    }
  }
  return out;
}

/// `s` without trailing characters from `chars`.
static std::string_view trimRight(std::string_view s, std::string_view chars) {
  size_t end = s.find_last_not_of(chars);
  return end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
}

Expected<std::string> DiskCache::findFingerprint(std::string_view root, std::string_view identity) {
  std::vector<std::string> matches;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; it != end && !ec; it.increment(ec)) {
    FileRead f = readFile((it->path() / kFingerprintFile).string(), kMaxFingerprintBytes);
    if (f.err || !f.refused.empty())
      continue; // not a fingerprint directory
    std::string &fp = f.data;
    // Only trust a directory whose name is the hash of what it claims to hold.
    if (fp.compare(0, identity.size(), identity) == 0 &&
        it->path().filename() == fingerprintDirName(fp))
      matches.push_back(std::move(fp));
  }
  std::string_view who = trimRight(identity, "; ");
  if (ec)
    return makeError("cannot read AOT cache directory ", root, ": ", ec.message());
  if (matches.empty())
    return makeError("no kernels built by '", who, "' under ", root);
  if (matches.size() > 1)
    return makeError(matches.size(), " compiler fingerprints under ", root, " start with '", who,
                     "'; keep one AOT cache per directory");
  return std::move(matches.front());
}

} // namespace mxfp4
