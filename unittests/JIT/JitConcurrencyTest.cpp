//===- JitConcurrencyTest.cpp - Threads racing on the JIT and its cache ---===//
//
// Threads asking one Jit, and several Jits (as processes would) sharing one
// cache directory, for the same and different kernels, with a fake
// compiler: no lookup fails, each Jit compiles a kernel at most once, every
// entry on disk is whole, and eviction running beside readers never serves
// a damaged entry. Only the standard library and the JIT's runtime half, so
// the runtime-only build runs it under ThreadSanitizer
// (scripts/check-sanitizers.sh); the full build runs it in ctest.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Cache/DiskCache.h"
#include "mxfp4/JIT/Jit.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

using namespace mxfp4;
namespace fs = std::filesystem;

namespace {

/// A fresh directory under the system's temporary one, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mxfp4-jit-race-XXXXXX").string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Counts its compiles per kernel; the code object names the kernel.
struct FakeCompiler {
  std::atomic<int> calls{0};
  CompileFn fn() {
    return [this](const KernelSpec &s) -> Expected<CompiledKernel> {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(2)); // widen races
      CompiledKernel k;
      k.spec = s;
      k.symbol = s.name();
      k.binary = std::string(4096, 'x') + "code object of " + s.name();
      return k;
    };
  }
};

/// `count` distinct kernels.
std::vector<KernelSpec> kernels(int count) {
  std::vector<KernelSpec> out;
  for (int i = 0; i < count; ++i) {
    Expected<KernelSpec> s = makeGemmA4W4Spec(Arch::GFX950, 256 * (i + 1), 1024, 16);
    EXPECT_TRUE(bool(s));
    if (s)
      out.push_back(*s);
  }
  return out;
}

Jit::Options opts(const fs::path &dir, uint64_t maxBytes = 0) {
  Jit::Options o;
  o.cacheDir = dir.string();
  o.fingerprint = "fp-race";
  o.maxCacheBytes = maxBytes;
  return o;
}

/// Runs `body(thread)` on `threads` threads at once.
template <typename Body> void race(int threads, Body body) {
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      while (!go.load())
        std::this_thread::yield();
      body(t);
    });
  go = true;
  for (std::thread &t : pool)
    t.join();
}

TEST(JitRace, ThreadsOfOneJitCompileEachKernelOnce) {
  TempDir dir;
  FakeCompiler fc;
  Jit jit(opts(dir.path), fc.fn());
  const std::vector<KernelSpec> ks = kernels(6);
  std::vector<std::string> errors(8);
  std::vector<std::vector<const CompiledKernel *>> seen(8);
  race(8, [&](int t) {
    for (int round = 0; round < 20; ++round)
      for (size_t i = 0; i < ks.size(); ++i) {
        const KernelSpec &s = ks[(i + size_t(t)) % ks.size()];
        Expected<std::shared_ptr<const CompiledKernel>> k = jit.get(s);
        if (!k) {
          errors[t] = k.takeError().message();
          return;
        }
        if ((*k)->symbol != s.name())
          errors[t] = "got " + (*k)->symbol + " for " + s.name();
        if (round == 0)
          seen[t].push_back(k->get());
      }
  });
  for (const std::string &e : errors)
    EXPECT_EQ(e, "");
  EXPECT_EQ(fc.calls, int(ks.size()));
  EXPECT_EQ(jit.stats().compiles, ks.size());
  EXPECT_EQ(jit.stats().memoryHits + jit.stats().compiles, 8u * 20u * ks.size());
  // Every thread holds the one kernel object per spec.
  for (int t = 1; t < 8; ++t)
    for (const CompiledKernel *k : seen[t])
      EXPECT_NE(std::find(seen[0].begin(), seen[0].end(), k), seen[0].end());
}

TEST(JitRace, JitsSharingADirectoryLoseNothing) {
  TempDir dir;
  const std::vector<KernelSpec> ks = kernels(12);
  constexpr int kJits = 4, kThreads = 4;
  std::vector<std::unique_ptr<FakeCompiler>> compilers;
  std::vector<std::unique_ptr<Jit>> jits;
  for (int j = 0; j < kJits; ++j) {
    compilers.push_back(std::make_unique<FakeCompiler>());
    jits.push_back(std::make_unique<Jit>(opts(dir.path), compilers.back()->fn()));
  }
  std::vector<std::string> errors(kJits * kThreads);
  race(kJits * kThreads, [&](int t) {
    Jit &jit = *jits[size_t(t / kThreads)];
    for (size_t i = 0; i < ks.size(); ++i) {
      const KernelSpec &s = ks[(i * 5 + size_t(t)) % ks.size()];
      Expected<std::shared_ptr<const CompiledKernel>> k = jit.get(s);
      if (!k)
        errors[t] = k.takeError().message();
      else if ((*k)->binary != std::string(4096, 'x') + "code object of " + s.name())
        errors[t] = "wrong code object for " + s.name();
    }
  });
  for (const std::string &e : errors)
    EXPECT_EQ(e, "");
  for (int j = 0; j < kJits; ++j) {
    EXPECT_LE(compilers[j]->calls, int(ks.size())) << "Jit " << j << " compiled a kernel twice";
    EXPECT_EQ(jits[j]->stats().corruptEntries, 0u);
    EXPECT_EQ(jits[j]->stats().storeFailures, 0u);
  }
  // A later "process" finds every kernel on disk, whole.
  FakeCompiler later;
  Jit fresh(opts(dir.path), later.fn());
  for (const KernelSpec &s : ks) {
    Jit::Source from = Jit::Source::Compiled;
    EXPECT_TRUE(bool(fresh.get(s, &from)));
    EXPECT_EQ(from, Jit::Source::Disk) << s.name();
  }
  EXPECT_EQ(later.calls, 0);
  // No temporary file is left behind.
  for (const fs::directory_entry &e : fs::recursive_directory_iterator(dir.path))
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << e.path();
}

TEST(JitRace, EvictionBesideReadersNeverServesADamagedEntry) {
  TempDir dir;
  const std::vector<KernelSpec> ks = kernels(16);
  {
    FakeCompiler fill;
    Jit jit(opts(dir.path), fill.fn());
    for (const KernelSpec &s : ks)
      ASSERT_TRUE(bool(jit.get(s)));
  }
  // Readers (each a fresh Jit, as processes starting) load every kernel
  // while collectors cap the cache below what it holds: each lookup is a
  // whole entry or a miss that recompiles, never corrupt.
  std::atomic<int> corrupt{0};
  std::vector<std::string> errors(8);
  race(8, [&](int t) {
    if (t < 2) {
      DiskCache cache(dir.path.string(), "fp-race");
      for (int i = 0; i < 10; ++i)
        if (Expected<DiskCache::Collected> c = cache.collect(uint64_t(40) << 10); !c)
          errors[t] = c.takeError().message();
      return;
    }
    for (int round = 0; round < 4; ++round) {
      FakeCompiler fc;
      Jit jit(opts(dir.path), fc.fn());
      for (const KernelSpec &s : ks) {
        Expected<std::shared_ptr<const CompiledKernel>> k = jit.get(s);
        if (!k)
          errors[t] = k.takeError().message();
        else if ((*k)->binary.find("code object of " + s.name()) == std::string::npos)
          errors[t] = "wrong code object for " + s.name();
      }
      corrupt += int(jit.stats().corruptEntries);
    }
  });
  for (const std::string &e : errors)
    EXPECT_EQ(e, "");
  EXPECT_EQ(corrupt, 0);
}

TEST(JitRace, AFailingCompileReachesEveryWaiter) {
  std::atomic<int> calls{0};
  Jit jit(Jit::Options{}, [&](const KernelSpec &) -> Expected<CompiledKernel> {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return makeError("backend exploded");
  });
  const KernelSpec s = kernels(1)[0];
  std::vector<std::string> errors(8);
  race(8, [&](int t) {
    Expected<std::shared_ptr<const CompiledKernel>> k = jit.get(s);
    errors[t] = k ? "no error" : k.takeError().message();
  });
  for (const std::string &e : errors)
    EXPECT_NE(e.find("backend exploded"), std::string::npos) << e;
  EXPECT_EQ(calls, 1) << "a compile error is remembered";
}

} // namespace
