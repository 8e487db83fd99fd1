//===- JitTest.cpp - The JIT's memory table and disk cache ----------------===//
//
// A fake compiler (counting calls, returning the name as the code object)
// makes these fast and exact; one test runs the real compiler end to end.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Cache/DiskCache.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Target/Compile.h"
#include "TestUtil/LLVMExpected.h"

#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <thread>

using namespace mxfp4;

namespace {

/// A fresh temporary directory, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("mxfp4-jit-test", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
};

/// An empty regular file `name` in `dir`: no directory can be made below it.
llvm::SmallString<128> emptyFile(const TempDir &dir, llvm::StringRef name) {
  llvm::SmallString<128> file(dir.path);
  llvm::sys::path::append(file, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  EXPECT_FALSE(ec) << ec.message();
  return file;
}

struct FakeCompiler {
  std::atomic<int> calls{0};
  CompileFn fn() {
    return [this](const KernelSpec &s) -> Expected<CompiledKernel> {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(20)); // widen races
      CompiledKernel k;
      k.spec = s;
      k.symbol = s.name();
      k.binary = "code object of " + s.name();
      k.timings = {{"fake", 20.0}};
      return k;
    };
  }
};

KernelSpec spec(int64_t n = 512, int64_t bm = 16) {
  auto s = makeGemmA4W4Spec(Arch::GFX950, n, 1024, bm);
  EXPECT_TRUE(bool(s));
  return s ? *s : KernelSpec();
}

Jit::Options opts(llvm::StringRef dir, llvm::StringRef fp = "fp-test") {
  Jit::Options o;
  o.cacheDir = dir.str();
  o.fingerprint = fp.str();
  return o;
}

TEST(Jit, CompilesOncePerProcessUnderConcurrency) {
  TempDir dir;
  FakeCompiler fc;
  Jit jit(opts(dir.path), fc.fn());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&] {
      auto k = jit.get(spec());
      if (k && (*k)->binary == "code object of " + spec().name())
        ++ok;
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(ok, 16);
  EXPECT_EQ(fc.calls, 1);
  EXPECT_EQ(jit.stats().compiles, 1u);
  EXPECT_EQ(jit.stats().memoryHits, 15u);
}

TEST(Jit, SecondProcessHitsTheDisk) {
  TempDir dir;
  FakeCompiler fc;
  {
    Jit first(opts(dir.path), fc.fn());
    Jit::Source src;
    ASSERT_OK(first.get(spec(), &src));
    EXPECT_EQ(src, Jit::Source::Compiled);
    ASSERT_OK(first.get(spec(), &src));
    EXPECT_EQ(src, Jit::Source::Memory);
  }
  Jit second(opts(dir.path), fc.fn()); // a new process, as far as the cache can tell
  Jit::Source src;
  auto k = second.get(spec(), &src);
  ASSERT_OK(k);
  EXPECT_EQ(src, Jit::Source::Disk);
  EXPECT_EQ((*k)->binary, "code object of " + spec().name());
  EXPECT_EQ(fc.calls, 1);
}

TEST(Jit, NewFingerprintNeverLoadsAStaleKernel) {
  TempDir dir;
  FakeCompiler fc;
  ASSERT_OK(Jit(opts(dir.path, "compiler v1"), fc.fn()).get(spec()));
  Jit::Source src;
  ASSERT_OK(Jit(opts(dir.path, "compiler v2"), fc.fn()).get(spec(), &src));
  EXPECT_EQ(src, Jit::Source::Compiled);
  EXPECT_EQ(fc.calls, 2);
}

TEST(DiskCache, RuntimeOnlyBuildsFindTheirFingerprint) {
  TempDir dir;
  FakeCompiler fc;
  // Two compilers of one mxfp4-jit version (say, different pipelines) would
  // make the choice ambiguous; another version's entries are ignored.
  ASSERT_OK(Jit(opts(dir.path, "mxfp4-jit 1.0 (abc); LLVM 22; pipeline A"), fc.fn()).get(spec()));
  ASSERT_OK(Jit(opts(dir.path, "mxfp4-jit 0.9 (old); LLVM 22; pipeline A"), fc.fn()).get(spec(768)));
  auto fp = DiskCache::findFingerprint(dir.path, "mxfp4-jit 1.0 (abc); LLVM 22; ");
  ASSERT_OK(fp);
  EXPECT_EQ(*fp, "mxfp4-jit 1.0 (abc); LLVM 22; pipeline A");
  // ...and it names the directory that holds that compiler's entry.
  EXPECT_TRUE(llvm::sys::fs::exists(DiskCache(std::string(dir.path), *fp).pathFor(spec().name())));

  EXPECT_ERROR_CONTAINS(DiskCache::findFingerprint(dir.path, "mxfp4-jit 2.0 (new); LLVM 22; "),
                        "no kernels built by 'mxfp4-jit 2.0 (new); LLVM 22'");

  ASSERT_OK(Jit(opts(dir.path, "mxfp4-jit 1.0 (abc); LLVM 22; pipeline B"), fc.fn()).get(spec()));
  EXPECT_ERROR_CONTAINS(DiskCache::findFingerprint(dir.path, "mxfp4-jit 1.0 (abc); LLVM 22; "),
                        "2 compiler fingerprints");

  // A FINGERPRINT file that does not hash to its directory's name is not trusted.
  llvm::SmallString<128> fake(dir.path);
  llvm::sys::path::append(fake, "0123456789abcdef");
  ASSERT_FALSE(llvm::sys::fs::create_directories(fake));
  llvm::sys::path::append(fake, "FINGERPRINT");
  {
    std::error_code ec;
    llvm::raw_fd_ostream(fake, ec) << "mxfp4-jit 3.0 (x); LLVM 22; forged";
    ASSERT_FALSE(ec);
  }
  EXPECT_ERROR_CONTAINS(DiskCache::findFingerprint(dir.path, "mxfp4-jit 3.0 (x); LLVM 22; "),
                        "no kernels built by");
  EXPECT_ERROR_CONTAINS(DiskCache::findFingerprint(dir.path + "/missing", "mxfp4-jit"),
                        "cannot read AOT cache directory");
}

/// Damages the cache entry of spec() with `mutate`, then expects a rebuild.
void expectRebuildAfter(llvm::function_ref<void(std::string &)> mutate, llvm::StringRef why) {
  TempDir dir;
  FakeCompiler fc;
  ASSERT_OK(Jit(opts(dir.path), fc.fn()).get(spec()));
  std::string path = DiskCache(std::string(dir.path), "fp-test").pathFor(spec().name());
  auto buf = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buf));
  std::string bytes = (*buf)->getBuffer().str();
  mutate(bytes);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << bytes;
  }
  auto load = DiskCache(std::string(dir.path), "fp-test").load(spec().name());
  EXPECT_ERROR_CONTAINS(load, why);
  Jit jit(opts(dir.path), fc.fn());
  Jit::Source src;
  auto k = jit.get(spec(), &src);
  ASSERT_OK(k);
  EXPECT_EQ(src, Jit::Source::Compiled);
  EXPECT_EQ(jit.stats().corruptEntries, 1u);
  EXPECT_EQ((*k)->binary, "code object of " + spec().name());
  // The rebuilt entry is whole again.
  auto again = DiskCache(std::string(dir.path), "fp-test").load(spec().name());
  ASSERT_OK(again);
  EXPECT_TRUE(again->has_value());
}

TEST(Jit, TruncatedEntryIsRebuilt) {
  expectRebuildAfter([](std::string &b) { b.resize(b.size() - 7); }, "truncated or appended");
}
TEST(Jit, FlippedBitIsRebuilt) {
  expectRebuildAfter([](std::string &b) { b[b.size() - 3] ^= 0x10; }, "checksum mismatch");
}
TEST(Jit, GarbageEntryIsRebuilt) {
  expectRebuildAfter([](std::string &b) { b = "not a code object"; }, "bad magic");
}
TEST(Jit, EmptyEntryIsRebuilt) {
  expectRebuildAfter([](std::string &b) { b.clear(); }, "bad magic");
}

TEST(Jit, AssertCacheHitMakesAMissAnError) {
  TempDir dir;
  FakeCompiler fc;
  Jit::Options o = opts(dir.path);
  o.assertCacheHit = true;
  EXPECT_ERROR_CONTAINS(Jit(o, fc.fn()).get(spec()), "MXFP4_ASSERT_CACHE_HIT is set and kernel");
  EXPECT_EQ(fc.calls, 0);
  ASSERT_OK(Jit(opts(dir.path), fc.fn()).get(spec())); // fill it
  ASSERT_OK(Jit(o, fc.fn()).get(spec()));                // now a hit
}

TEST(Jit, UnwritableCacheDirDegradesToMemory) {
  TempDir dir;
  // A directory below a regular file cannot be created (even by root).
  llvm::SmallString<128> file = emptyFile(dir, "a-file");
  llvm::SmallString<128> below(file);
  llvm::sys::path::append(below, "cache");
  FakeCompiler fc;
  Jit jit(opts(below), fc.fn());
  ASSERT_OK(jit.get(spec(512)));
  ASSERT_OK(jit.get(spec(768)));
  Jit::Source src;
  ASSERT_OK(jit.get(spec(512), &src));
  EXPECT_EQ(src, Jit::Source::Memory);
  EXPECT_EQ(fc.calls, 2);
}

TEST(Jit, UnwritableCacheDirCountsEveryKernel) {
  TempDir dir;
  llvm::SmallString<128> file = emptyFile(dir, "a-file");
  FakeCompiler fc;
  Jit jit(opts(file), fc.fn());
  ASSERT_OK(jit.get(spec(512)));
  ASSERT_OK(jit.get(spec(768)));
  EXPECT_EQ(jit.stats().storeFailures, 2u);
  std::vector<std::string> lost = jit.notStored();
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_EQ(lost[0].rfind(spec(512).name() + ": cannot create cache directory", 0), 0u) << lost[0];
}

TEST(Jit, OneUnstorableEntryDoesNotStopTheOthers) {
  TempDir dir;
  FakeCompiler fc;
  DiskCache disk(dir.path, "fp-test");
  // A directory where the first kernel's entry would go: its rename fails.
  std::filesystem::create_directories(disk.pathFor(spec(512).name()));
  Jit jit(opts(dir.path), fc.fn());
  ASSERT_OK(jit.get(spec(512)));
  ASSERT_OK(jit.get(spec(768)));
  ASSERT_OK(jit.get(spec(1024)));
  EXPECT_EQ(jit.stats().storeFailures, 1u);
  ASSERT_EQ(jit.notStored().size(), 1u);
  EXPECT_NE(jit.notStored()[0].find(spec(512).name()), std::string::npos);
  for (int64_t n : {768, 1024}) {
    auto e = disk.load(spec(n).name());
    ASSERT_OK(e);
    EXPECT_TRUE(e->has_value()) << n << " was not stored";
  }
}

TEST(Jit, AThrowingCompileFailsEveryWaiterAndIsRetried) {
  std::atomic<int> calls{0};
  Jit jit(opts(""), [&](const KernelSpec &s) -> Expected<CompiledKernel> {
    if (++calls == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50)); // let the waiters queue
      throw std::runtime_error("backend threw");
    }
    CompiledKernel k;
    k.spec = s;
    k.symbol = s.name();
    k.binary = "ok";
    return k;
  });
  std::vector<std::thread> threads;
  std::atomic<int> threw{0}, failed{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      try {
        auto k = jit.get(spec());
        if (!k && k.takeError().message().find("backend threw") != std::string::npos)
          ++failed;
      } catch (...) {
        ++threw;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(threw, 0);
  // The compiling thread and whoever waited on it see the error; a thread
  // that came after it was forgotten compiles again.
  EXPECT_GE(failed, 1);
  auto k = jit.get(spec());
  ASSERT_OK(k);
  EXPECT_EQ((*k)->binary, "ok");
  EXPECT_LE(calls, 5);
}

/// Replaces spec()'s entry with what `make` puts at the path, then expects
/// a load to refuse it quickly (within `seconds`), and the JIT to rebuild.
void expectRefused(llvm::function_ref<void(const std::string &)> make, llvm::StringRef why) {
  TempDir dir;
  FakeCompiler fc;
  ASSERT_OK(Jit(opts(dir.path), fc.fn()).get(spec()));
  std::string path = DiskCache(dir.path, "fp-test").pathFor(spec().name());
  std::filesystem::remove(path);
  make(path);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_ERROR_CONTAINS(DiskCache(dir.path, "fp-test").load(spec().name()), why);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  Jit jit(opts(dir.path), fc.fn());
  Jit::Source src;
  ASSERT_OK(jit.get(spec(), &src));
  EXPECT_EQ(src, Jit::Source::Compiled);
}

TEST(DiskCache, AFifoEntryIsRefusedNotOpenedBlocking) {
  expectRefused([](const std::string &p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); },
                "is not a regular file");
}
TEST(DiskCache, ALinkedEntryIsRefused) {
  expectRefused([](const std::string &p) { std::filesystem::create_symlink("/dev/zero", p); },
                "is a symbolic link");
}
TEST(DiskCache, AHugeEntryIsRefusedUnread) {
  expectRefused(
      [](const std::string &p) {
        std::filesystem::path path(p);
        { std::ofstream(path).put('x'); }
        std::filesystem::resize_file(path, uint64_t(1) << 30); // sparse
      },
      "more than the");
}

TEST(DiskCache, CollectRemovesStaleTemporariesAndKeepsTheCap) {
  TempDir dir;
  FakeCompiler fc;
  {
    Jit jit(opts(dir.path), fc.fn());
    for (int64_t n : {512, 768, 1024, 1280})
      ASSERT_OK(jit.get(spec(n)));
  }
  DiskCache disk(dir.path, "fp-test");
  namespace fs = std::filesystem;
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  // What a process killed between write and rename leaves, and one in flight.
  std::string stale = disk.pathFor("x") + ".tmp-1-2-3", fresh = disk.pathFor("y") + ".tmp-4-5-6";
  { std::ofstream(stale) << "partial"; }
  { std::ofstream(fresh) << "partial"; }
  fs::last_write_time(stale, old);
  // The oldest entry goes first.
  fs::last_write_time(disk.pathFor(spec(768).name()), old);
  uint64_t one = fs::file_size(disk.pathFor(spec(512).name()));
  uint64_t rest = fs::file_size(disk.pathFor(spec(1024).name())) +
                  fs::file_size(disk.pathFor(spec(1280).name())) + one;
  auto c = disk.collect(rest * 7 / 6); // evicting one entry gets under 90 % of it
  ASSERT_OK(c);
  EXPECT_EQ(c->temporaries, 1u);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_EQ(c->evicted, 1u);
  EXPECT_FALSE(fs::exists(disk.pathFor(spec(768).name())));
  EXPECT_EQ(c->bytes, rest);
  auto none = disk.collect(0);
  ASSERT_OK(none);
  EXPECT_EQ(none->evicted, 0u);
}

TEST(Jit, CompileErrorsAreReportedAndRemembered) {
  std::atomic<int> calls{0};
  Jit jit(opts(""), [&](const KernelSpec &) -> Expected<CompiledKernel> {
    ++calls;
    return Error("backend exploded");
  });
  EXPECT_ERROR_CONTAINS(jit.get(spec()), "backend exploded");
  EXPECT_ERROR_CONTAINS(jit.get(spec()), "backend exploded");
  EXPECT_EQ(calls, 1);
}

TEST(Jit, RealCompilerEndToEnd) {
  TempDir dir;
  Jit jit(opts(dir.path, compilerFingerprint()));
  auto k = jit.get(spec());
  ASSERT_OK(k);
  EXPECT_EQ((*k)->format, BinaryFormat::HSACO);
  EXPECT_EQ((*k)->binary.substr(1, 3), "ELF");
  EXPECT_GT((*k)->compileMs(), 0.0);
  LaunchGeometry g = (*k)->geometry(33);
  EXPECT_EQ(g.grid[0], 2u); // N = 512 / 256
  EXPECT_EQ(g.grid[1], 3u); // ceil(33 / 16)
  EXPECT_EQ(g.block[0], 256u);
}

TEST(Jit, Sm90aShipsPtxOrACubin) {
  auto spec = makeGemmA4W4Spec(Arch::SM90A, 256, 512, 8);
  ASSERT_OK(spec);
  ::setenv("MXFP4_PTXAS", "none", 1);
  auto ptx = compileKernel(*spec);
  ::unsetenv("MXFP4_PTXAS");
  ASSERT_OK(ptx);
  EXPECT_EQ(ptx->format, BinaryFormat::PTX);
  EXPECT_NE(ptx->binary.find(".target sm_90a"), std::string::npos);
  // With ptxas on this machine the compiler goes on to machine code.
  if (std::optional<std::string> cubin = ptxToCubin(ptx->binary, spec->name())) {
    EXPECT_EQ(cubin->substr(1, 3), "ELF");
  }
}

} // namespace
