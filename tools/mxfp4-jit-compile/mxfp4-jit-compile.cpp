//===- mxfp4-jit-compile.cpp - Fill a kernel cache ahead of time -----------===//
//
//   mxfp4-jit-compile --preset=seed-dense --arch=gfx950,gfx1250 --cache-dir=DIR
//   mxfp4-jit-compile --shapes=FILE --arch=gfx950 --verify
//   mxfp4-jit-compile --from-csv=configs/h200.csv,mine.csv --cache-dir=DIR
//   mxfp4-jit-compile --preset=seed-dense --arch=gfx950 --write-csv=FILE
//
// Compiles every kernel of a preset, of tuned CSV rows (Ops/TunedCsv.h:
// exactly what dispatch runs from them, for the rows' targets) or of a
// shape list (lines "N K [BM]" or canonical kernel names; '#' starts a
// comment) for each target, in parallel,
// through the same Jit the library uses, so a later process with
// MXFP4_ASSERT_CACHE_HIT=1 finds everything. Prints a progress bar on a
// terminal and a summary: kernels, hits, cold compile p50/p95, bytes.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "mxfp4/Cache/DiskCache.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Ops/QuantizeMx.h"
#include "mxfp4/Support/Parallel.h"
#include "mxfp4/Target/Compile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace mxfp4;
namespace cl = llvm::cl;

static cl::opt<std::string>
    presetOpt("preset",
              cl::desc("seed-dense or model-dense: the kernels dispatch runs at the preset's "
                       "(N, K, M) points; seed-moe or model-moe: the MoE kernels at 1 to 4096 "
                       "tokens"),
              cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> shapesOpt("shapes",
                                      cl::desc("file of 'N K [BM]' lines or kernel names"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string>
    fromCsvOpt("from-csv",
               cl::desc("comma-separated tuned CSVs: the kernels dispatch runs from their rows"),
               cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string>
    csvWinsOpt("csv-wins",
               cl::desc("with --from-csv: the file whose row wins where two have rows for one "
                        "key and M with other kernels (otherwise that is an error)"),
               cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string>
    writeCsvOpt("write-csv",
                cl::desc("with a dense --preset: write its points as tuned CSV rows (the tile "
                         "table's plans) to this file, and compile nothing"),
                cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> serveMOpt(
    "serve-m",
    cl::desc("with --from-csv: instead of the rows' kernels, get what dispatch runs for the "
             "rows' shapes at these comma-separated M, as a process serving them would "
             "(MXFP4_TUNED_CSV must name the files; with MXFP4_ASSERT_CACHE_HIT=1 a miss fails)"),
    cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> archOpt("arch",
                                    cl::desc("comma-separated targets: gfx950,gfx1250,sm_90a"),
                                    cl::init("gfx950,gfx1250"), cl::cat(tools::toolCategory()));
static cl::opt<std::string> roundingOpt("rounding", cl::desc("scale rounding for shape lines"),
                                        cl::init("roundup"), cl::cat(tools::toolCategory()));
static cl::opt<std::string> cacheDirOpt("cache-dir",
                                        cl::desc("cache directory (default: MXFP4_CACHE_DIR, XDG)"),
                                        cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<unsigned>
    jobsOpt("j", cl::desc("parallel compiles (default: MXFP4_NUM_THREADS or cores)"), cl::init(0),
            cl::cat(tools::toolCategory()));
static cl::opt<bool> verifyOpt("verify", cl::desc("reload every entry from disk and compare"),
                               cl::init(false), cl::cat(tools::toolCategory()));
static cl::opt<bool> timeLookupsOpt(
    "time-lookups",
    cl::desc("after compiling, time a first lookup in a fresh JIT (disk hit, as in a new "
             "process) and repeated in-memory lookups"),
    cl::init(false), cl::cat(tools::toolCategory()));
static cl::opt<bool> listOpt("list",
                             cl::desc("print the kernels' names, one a line, and compile nothing"),
                             cl::init(false), cl::cat(tools::toolCategory()));
static cl::opt<bool> fingerprintOpt("print-fingerprint", cl::desc("print the compiler fingerprint"),
                                    cl::init(false), cl::cat(tools::toolCategory()));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "mxfp4-jit-compile: " << printable(msg.str(), 1000) << "\n";
  return 1;
}

/// One work item: a spec, or a line that failed to become one.
struct Item {
  std::string label;
  std::optional<KernelSpec> spec;
  std::string error;
};

static void addShape(std::vector<Item> &items, Arch arch, int64_t n, int64_t k, int64_t bm,
                     ScaleRounding r) {
  Item it;
  it.label = strCat(toString(arch), " n=", n, " k=", k, " bm=", bm);
  if (auto s = makeGemmA4W4Spec(arch, n, k, bm, r))
    it.spec = *s;
  else
    it.error = s.takeError().message();
  items.push_back(std::move(it));
}

static llvm::Error readShapes(llvm::StringRef path, llvm::ArrayRef<Arch> archs, ScaleRounding r,
                              std::vector<Item> &items) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError("cannot read " + path + ": " + buf.getError().message());
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (auto [i, raw] : llvm::enumerate(lines)) {
    llvm::StringRef line = raw.split('#').first.trim();
    if (line.empty())
      continue;
    llvm::SmallVector<llvm::StringRef> f;
    llvm::SplitString(line, f);
    if (f.size() == 1) { // a canonical kernel name
      Item it;
      it.label = printable(f[0]);
      if (auto s = parseKernelName(f[0]))
        it.spec = *s;
      else
        it.error = s.takeError().message();
      items.push_back(std::move(it));
      continue;
    }
    int64_t n, k, bm = 16;
    if (f.size() > 3 || f[0].getAsInteger(10, n) || f[1].getAsInteger(10, k) ||
        (f.size() == 3 && f[2].getAsInteger(10, bm)))
      return llvm::createStringError(path + ":" + llvm::Twine(i + 1) +
                                     ": expected 'N K [BM]' or "
                                     "a kernel name, got '" +
                                     printable(line) + "'");
    for (Arch a : archs)
      addShape(items, a, n, k, bm, r);
  }
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tools::parseToolOptions(argc, argv, "mxfp4-jit ahead-of-time cache filler\n");
  // lld, run in process by every compile, resets cl::opts: copy them now.
  const std::string preset = presetOpt, shapes = shapesOpt, cacheDir = cacheDirOpt;
  const bool verify = verifyOpt, timeLookups = timeLookupsOpt;
  unsigned jobs = jobsOpt ? unsigned(jobsOpt) : hostThreadCount();

  if (fingerprintOpt) {
    llvm::outs() << compilerFingerprint() << "\n";
    return 0;
  }
  std::vector<Arch> archs;
  for (llvm::StringRef a : llvm::split(archOpt.getValue(), ',')) {
    std::optional<Arch> arch = parseArch(a.trim());
    if (!arch)
      return fail("unknown target '" + a + "' in --arch; expected gfx950, gfx1250 or sm_90a");
    archs.push_back(*arch);
  }
  std::optional<ScaleRounding> rounding = parseScaleRounding(roundingOpt);
  if (!rounding)
    return fail("unknown --rounding '" + roundingOpt + "'");

  if (!writeCsvOpt.empty()) {
    if (preset.empty())
      return fail("--write-csv needs a dense --preset");
    std::vector<TunedRow> rows;
    for (Arch a : archs) {
      Expected<std::vector<TunedRow>> r = presetTunedRows(preset, a);
      if (!r)
        return fail("--write-csv: " + r.takeError().message());
      rows.insert(rows.end(), r->begin(), r->end());
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(writeCsvOpt, ec);
    if (ec)
      return fail("cannot write " + writeCsvOpt + ": " + ec.message());
    os << formatTunedCsv(rows);
    os.close();
    if (os.has_error())
      return fail("cannot write " + writeCsvOpt + ": " + os.error().message());
    llvm::outs() << rows.size() << " rows written to " << writeCsvOpt << "\n";
    return 0;
  }

  std::vector<Item> items;
  // Tuned rows: one table, so two files' rows for one key and M with other
  // kernels are an error naming both.
  TunedTable csvRows;
  std::vector<std::string> csvFiles;
  for (llvm::StringRef f : llvm::split(fromCsvOpt.getValue(), ','))
    if (!f.trim().empty())
      csvFiles.push_back(f.trim().str());
  const std::string wins = csvWinsOpt;
  if (!wins.empty() && llvm::find(csvFiles, wins) == csvFiles.end())
    return fail("--csv-wins=" + wins + " is not one of the --from-csv files");
  // The winner first, kept over any later row of its keys.
  std::stable_partition(csvFiles.begin(), csvFiles.end(),
                        [&](const std::string &f) { return f == wins; });
  for (const std::string &f : csvFiles) {
    Expected<std::vector<TunedRow>> rows = readTunedCsv(f);
    if (!rows)
      return fail(rows.takeError().message());
    if (rows->empty())
      return fail(f + ": no rows");
    if (Error e = csvRows.add(std::move(*rows), wins.empty() ? TunedTable::Collision::Error
                                                             : TunedTable::Collision::Keep))
      return fail(e.message() + " (--csv-wins=FILE)");
  }
  if (!serveMOpt.empty()) {
    if (csvRows.empty())
      return fail("--serve-m needs --from-csv");
    std::vector<int64_t> ms;
    for (llvm::StringRef m : llvm::split(serveMOpt.getValue(), ',')) {
      int64_t v;
      if (m.trim().getAsInteger(10, v) || v < 1)
        return fail("--serve-m: '" + m + "' is not an M >= 1");
      ms.push_back(v);
    }
    std::set<std::string> seen;
    std::set<TunedKey> keys;
    GemmA4W4Options options;
    options.rounding = *rounding;
    for (const TunedRow *row : csvRows.rows())
      if (row->key.op == TunedOp::Gemm && keys.insert(row->key).second)
        for (int64_t m : ms)
          for (bool small : {true, false}) {
            const TunedKey &k = row->key;
            Expected<GemmA4W4Plan> plan =
                planGemmA4W4({k.arch, k.n, k.k, small, k.computeUnits}, m, options);
            Item it;
            it.label = strCat("serve ", toString(k.arch), " n=", k.n, " k=", k.k, " m=", m);
            if (!plan) {
              it.error = plan.takeError().message();
              items.push_back(std::move(it));
              continue;
            }
            for (const KernelSpec &spec : plan->kernels())
              if (seen.insert(spec.name()).second)
                items.push_back({it.label, spec, ""});
          }
  } else if (!csvRows.empty()) {
    for (PresetKernel &pk : tunedRowKernels(csvRows.rows(), *rounding))
      items.push_back({std::move(pk.label), std::move(pk.spec), std::move(pk.error)});
  }
  if (!preset.empty()) {
    // Exactly the kernels dispatch (planGemmA4W4) runs at the preset's
    // points: on sm_90a for weights with scales below 128 and for others.
    for (Arch a : archs) {
      Expected<std::vector<PresetKernel>> kernels = presetKernels(preset, a, *rounding);
      if (!kernels)
        return fail("--preset: " + kernels.takeError().message());
      for (PresetKernel &pk : *kernels)
        items.push_back({std::move(pk.label), std::move(pk.spec), std::move(pk.error)});
    }
  }
  if (!shapes.empty())
    if (llvm::Error e = readShapes(shapes, archs, *rounding, items))
      return fail(llvm::toString(std::move(e)));
  if (items.empty())
    return fail("nothing to compile: give --preset=seed-dense, --from-csv=FILE or --shapes=FILE");
  if (listOpt) {
    for (const Item &it : items)
      if (it.spec)
        llvm::outs() << it.spec->name() << "\n";
      else
        llvm::errs() << "mxfp4-jit-compile: error: " << it.label << ": " << it.error << "\n";
    return llvm::any_of(items, [](const Item &it) { return !it.spec; }) ? 1 : 0;
  }

  auto optsStart = std::chrono::steady_clock::now();
  Jit::Options opts = Jit::Options::fromEnv(); // computes the compiler fingerprint once
  double fingerprintMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - optsStart)
          .count();
  if (!cacheDir.empty()) {
    opts.cacheDir = cacheDir;
    opts.disableDisk = false;
  }
  Jit jit(opts);

  struct Result {
    Jit::Source source = Jit::Source::Compiled;
    double ms = 0;
    size_t bytes = 0;
    std::string error;
  };
  std::vector<Result> results(items.size());
  std::atomic<size_t> done{0};
  std::mutex printMutex;
  bool tty = llvm::sys::Process::StandardErrIsDisplayed();
  auto progress = [&](const std::string &label) {
    std::lock_guard<std::mutex> lock(printMutex);
    size_t d = ++done, total = items.size();
    if (!tty)
      return;
    const int width = 30;
    int filled = int(width * d / total);
    llvm::errs() << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
                 << d << "/" << total << " " << llvm::StringRef(label).take_front(60) << "\x1b[K";
    if (d == total)
      llvm::errs() << "\n";
  };

  auto t0 = std::chrono::steady_clock::now();
  // Compiles are independent: hand them to `jobs` threads, one item at a time.
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < items.size(); i = next++) {
      Result &r = results[i];
      if (!items[i].spec) {
        r.error = items[i].error;
      } else {
        auto k = jit.get(*items[i].spec, &r.source);
        if (!k) {
          r.error = k.takeError().message();
        } else {
          r.ms = (*k)->compileMs();
          r.bytes = (*k)->binary.size();
        }
      }
      progress(items[i].label);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(jobs, items.size()); ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
  double wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::vector<double> cold;
  size_t compiled = 0, hits = 0, failed = 0, bytes = 0;
  for (auto [item, r] : llvm::zip(items, results)) {
    if (!r.error.empty()) {
      ++failed;
      llvm::errs() << "mxfp4-jit-compile: error: " << item.label << ": " << r.error << "\n";
      continue;
    }
    bytes += r.bytes;
    if (r.source == Jit::Source::Compiled) {
      ++compiled;
      cold.push_back(r.ms);
    } else {
      ++hits;
    }
  }
  // Compiled but not in the cache: a later process would miss them.
  const std::vector<std::string> lost = jit.notStored();
  for (const std::string &why : lost)
    llvm::errs() << "mxfp4-jit-compile: error: not stored: " << why << "\n";
  failed += lost.size();
  std::sort(cold.begin(), cold.end());
  auto pct = [&](double p) {
    return cold.empty() ? 0.0 : cold[size_t(p * double(cold.size() - 1) + 0.5)];
  };
  llvm::outs() << "kernels " << items.size() << ": compiled " << compiled << ", cache hits " << hits
               << ", failed " << failed << (lost.empty() ? "" : " (not stored included)") << "\n";
  if (!cold.empty())
    llvm::outs() << llvm::format("cold compile: p50 %.1f ms, p95 %.1f ms (%u jobs, wall %.0f ms)\n",
                                 pct(0.5), pct(0.95), jobs, wallMs);
  llvm::outs() << "code objects: " << bytes << " bytes in "
               << (opts.disableDisk || opts.cacheDir.empty() ? std::string("memory only")
                                                             : opts.cacheDir)
               << "\n";

  if (verify && !(opts.disableDisk || opts.cacheDir.empty())) {
    DiskCache disk(opts.cacheDir, opts.fingerprint);
    size_t ok = 0, bad = 0;
    for (auto [item, r] : llvm::zip(items, results)) {
      if (!r.error.empty())
        continue;
      auto e = disk.load(item.spec->name());
      if (!e) {
        ++bad;
        llvm::errs() << "mxfp4-jit-compile: verify: " << e.takeError().message() << "\n";
      } else if (!*e || (*e)->payload.size() != r.bytes) {
        ++bad;
        llvm::errs() << "mxfp4-jit-compile: verify: " << item.spec->name()
                     << " is missing or differs\n";
      } else {
        ++ok;
      }
    }
    llvm::outs() << "verify: " << ok << " entries reload, " << bad << " bad\n";
    if (bad)
      return 1;
  }
  if (timeLookups && !failed) {
    // A fresh Jit has an empty memory table, like a new process: its first
    // get() is a disk hit. Then the in-memory path, spec -> code object.
    using clock = std::chrono::steady_clock;
    Jit fresh(opts);
    const KernelSpec &spec = *items.front().spec;
    auto t = clock::now();
    Jit::Source src;
    auto k = fresh.get(spec, &src);
    double diskUs = std::chrono::duration<double, std::micro>(clock::now() - t).count();
    if (!k)
      return fail(k.takeError().message());
    const int reps = 100000;
    t = clock::now();
    for (int i = 0; i < reps; ++i)
      if (!fresh.get(spec))
        return fail("in-memory lookup failed");
    double memUs = std::chrono::duration<double, std::micro>(clock::now() - t).count() / reps;
    llvm::outs() << llvm::format("new process: fingerprint %.2f ms, first lookup (%s) %.1f us; "
                                 "in-memory lookup %.3f us\n",
                                 fingerprintMs, src == Jit::Source::Disk ? "disk hit" : "compiled",
                                 diskUs, memUs);
  }
  return failed ? 1 : 0;
}
