//===- Jit.cpp - Spec to code object: memory, disk, compile ---------------===//

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Cache/DiskCache.h"

#include <cstdio>
#include <future>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace mxfp4 {

namespace {
/// A finished lookup: the kernel or the error text (errors are cached too, so
/// a kernel that fails to compile fails fast afterwards).
struct Outcome {
  std::shared_ptr<const CompiledKernel> kernel;
  std::string error;
};
} // namespace

struct Jit::Impl {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_future<Outcome>> table;
  std::unique_ptr<DiskCache> disk;      ///< null: memory only
  std::atomic<bool> storeFailed{false}; ///< after one failed write, stop trying
  std::mutex warnMutex;
  std::unordered_set<std::string> warned;

  /// Prints `message` once per `key` for the life of the process.
  void warnOnce(const std::string &key, const std::string &message) {
    std::lock_guard<std::mutex> lock(warnMutex);
    if (warned.insert(key).second)
      std::fprintf(stderr, "mxfp4-jit: warning: %s\n", message.c_str());
  }
};

Jit::Jit(Options options, CompileFn fn)
    : opts(std::move(options)), compile(std::move(fn)), impl(std::make_unique<Impl>()) {
  if (!compile)
    compile = defaultCompileFn();
  if (!opts.disableDisk && !opts.cacheDir.empty())
    impl->disk = std::make_unique<DiskCache>(opts.cacheDir, opts.fingerprint);
}

Jit::~Jit() = default;

Jit &Jit::global() {
  static Jit jit(Options::fromEnv());
  return jit;
}

Expected<std::shared_ptr<const CompiledKernel>> Jit::get(const KernelSpec &spec, Source *source) {
  std::string name = spec.name();
  std::promise<Outcome> promise;
  std::shared_future<Outcome> future;
  bool owner = false;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    auto [it, inserted] = impl->table.try_emplace(name);
    if (inserted) {
      it->second = promise.get_future().share();
      owner = true;
    }
    future = it->second;
  }
  if (!owner) {
    const Outcome &o = future.get();
    if (!o.kernel)
      return Error(o.error);
    counters.memoryHits++;
    if (source)
      *source = Source::Memory;
    return o.kernel;
  }

  // This thread resolves the kernel; everyone else waits on the future.
  Outcome out;
  Source from = Source::Compiled;
  auto finish = [&]() -> Expected<std::shared_ptr<const CompiledKernel>> {
    promise.set_value(out);
    if (!out.kernel)
      return Error(out.error);
    if (source)
      *source = from;
    return out.kernel;
  };

  if (impl->disk) {
    Expected<std::optional<DiskCache::Entry>> entry = impl->disk->load(name);
    if (!entry) {
      counters.corruptEntries++;
      impl->warnOnce(name, entry.takeError().message() + "; rebuilding it");
    } else if (*entry) {
      auto k = std::make_shared<CompiledKernel>();
      k->spec = spec;
      k->symbol = name;
      k->format = BinaryFormat((*entry)->format);
      k->binary = std::move((*entry)->payload);
      out.kernel = std::move(k);
      counters.diskHits++;
      from = Source::Disk;
      return finish();
    }
    if (opts.assertCacheHit) {
      out.error = "MXFP4_ASSERT_CACHE_HIT is set and kernel " + name + " is not in the cache " +
                  impl->disk->directory();
      return finish();
    }
  } else if (opts.assertCacheHit) {
    out.error = "MXFP4_ASSERT_CACHE_HIT is set but the disk cache is disabled, so kernel " + name +
                " cannot be a hit";
    return finish();
  }

  Expected<CompiledKernel> compiled = compile(spec);
  if (!compiled) {
    out.error = "compiling " + name + ": " + compiled.takeError().message();
    return finish();
  }
  counters.compiles++;
  out.kernel = std::make_shared<CompiledKernel>(std::move(*compiled));
  if (impl->disk && !impl->storeFailed)
    if (Error e = impl->disk->store(name, {uint8_t(out.kernel->format), out.kernel->binary})) {
      impl->storeFailed = true;
      impl->warnOnce("<store>", e.message() + "; new kernels stay in memory only in this process");
    }
  return finish();
}

} // namespace mxfp4
