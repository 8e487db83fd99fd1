//===- Jit.cpp - Spec to code object: memory, disk, compile ---------------===//

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Cache/DiskCache.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <future>
#include <mutex>

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
  llvm::StringMap<std::shared_future<Outcome>> table;
  std::unique_ptr<DiskCache> disk; ///< null: memory only
  std::atomic<bool> storeFailed{false}; ///< after one failed write, stop trying
  std::mutex warnMutex;
  llvm::StringSet<> warned;

  /// Prints `message` once per `key` for the life of the process.
  void warnOnce(llvm::StringRef key, const llvm::Twine &message) {
    std::lock_guard<std::mutex> lock(warnMutex);
    if (warned.insert(key).second)
      llvm::errs() << "mxfp4-jit: warning: " << message << "\n";
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

llvm::Expected<std::shared_ptr<const CompiledKernel>> Jit::get(const KernelSpec &spec,
                                                               Source *source) {
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
      return llvm::createStringError(o.error);
    counters.memoryHits++;
    if (source)
      *source = Source::Memory;
    return o.kernel;
  }

  // This thread resolves the kernel; everyone else waits on the future.
  Outcome out;
  Source from = Source::Compiled;
  auto finish = [&]() -> llvm::Expected<std::shared_ptr<const CompiledKernel>> {
    promise.set_value(out);
    if (!out.kernel)
      return llvm::createStringError(out.error);
    if (source)
      *source = from;
    return out.kernel;
  };

  if (impl->disk) {
    llvm::Expected<std::optional<DiskCache::Entry>> entry = impl->disk->load(name);
    if (!entry) {
      counters.corruptEntries++;
      impl->warnOnce(name, llvm::toString(entry.takeError()) + "; rebuilding it");
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
    out.error = "MXFP4_ASSERT_CACHE_HIT is set but the disk cache is disabled, so kernel " +
                name + " cannot be a hit";
    return finish();
  }

  llvm::Expected<CompiledKernel> compiled = compile(spec);
  if (!compiled) {
    out.error = "compiling " + name + ": " + llvm::toString(compiled.takeError());
    return finish();
  }
  counters.compiles++;
  out.kernel = std::make_shared<CompiledKernel>(std::move(*compiled));
  if (impl->disk && !impl->storeFailed)
    if (llvm::Error e = impl->disk->store(name, {uint8_t(out.kernel->format), out.kernel->binary})) {
      impl->storeFailed = true;
      impl->warnOnce("<store>", llvm::toString(std::move(e)) +
                                    "; new kernels stay in memory only in this process");
    }
  return finish();
}

} // namespace mxfp4
