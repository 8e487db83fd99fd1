//===- Jit.cpp - Spec to code object: memory, disk, compile ---------------===//

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Cache/DiskCache.h"

#include <cstdio>
#include <future>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace mxfp4 {

/// A finished lookup: the kernel or the error text (errors are cached too, so
/// a kernel that fails to compile fails fast afterwards).
struct Jit::Outcome {
  std::shared_ptr<const CompiledKernel> kernel;
  std::string error;
  bool remember = false; ///< an error of the kernel itself, not of this attempt
};

struct Jit::Impl {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_future<Outcome>> table;
  std::unique_ptr<DiskCache> disk; ///< null: memory only
  std::once_flag collected;        ///< DiskCache::collect, at the first store
  std::mutex warnMutex;
  std::unordered_set<std::string> warned;
  std::vector<std::string> notStored;

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

std::vector<std::string> Jit::notStored() const {
  std::lock_guard<std::mutex> lock(impl->warnMutex);
  return impl->notStored;
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

  // This thread resolves the kernel; everyone else waits on the future,
  // which is set on every path, exceptions included.
  Source from = Source::Compiled;
  Outcome out;
  try {
    out = resolve(spec, name, from);
  } catch (const std::exception &e) {
    out = {nullptr, "compiling " + name + ": internal error: " + e.what()};
  } catch (...) {
    out = {nullptr, "compiling " + name + ": internal error"};
  }
  if (!out.kernel && !out.remember) {
    // Not a property of the kernel (an exception): the next call retries.
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->table.erase(name);
  }
  promise.set_value(out);
  if (!out.kernel)
    return Error(out.error);
  if (source)
    *source = from;
  return out.kernel;
}

Jit::Outcome Jit::resolve(const KernelSpec &spec, const std::string &name, Source &from) {
  Outcome out;
  out.remember = true;
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
      return out;
    }
    if (opts.assertCacheHit) {
      out.error = "MXFP4_ASSERT_CACHE_HIT is set and kernel " + name + " is not in the cache " +
                  impl->disk->directory();
      return out;
    }
  } else if (opts.assertCacheHit) {
    out.error = "MXFP4_ASSERT_CACHE_HIT is set but the disk cache is disabled, so kernel " + name +
                " cannot be a hit";
    return out;
  }

  Expected<CompiledKernel> compiled = compile(spec);
  if (!compiled) {
    out.error = "compiling " + name + ": " + compiled.takeError().message();
    return out;
  }
  counters.compiles++;
  from = Source::Compiled;
  out.kernel = std::make_shared<CompiledKernel>(std::move(*compiled));
  if (impl->disk)
    store(name, *out.kernel);
  return out;
}

void Jit::store(const std::string &name, const CompiledKernel &kernel) {
  std::call_once(impl->collected, [&] {
    Expected<DiskCache::Collected> c = impl->disk->collect(opts.maxCacheBytes);
    if (!c)
      impl->warnOnce("<collect>", c.takeError().message());
  });
  // Each kernel is tried: one entry that cannot be written (a directory in
  // its place, a full disk for a moment) says nothing about the next.
  if (Error e = impl->disk->store(name, {uint8_t(kernel.format), kernel.binary})) {
    counters.storeFailures++;
    {
      std::lock_guard<std::mutex> lock(impl->warnMutex);
      impl->notStored.push_back(name + ": " + e.message());
    }
    impl->warnOnce("<store>", e.message() + "; kernels that cannot be stored stay in memory only");
  }
}

} // namespace mxfp4
