//===- mxfp4-tune.cpp - Tune dense GEMM dispatch into a CSV ---------------===//
//
//   mxfp4-tune --preset=seed-dense,model-dense --out=configs/h200.csv
//   mxfp4-tune --shapes=8448x7168 --m=1,16,128 --out=mine.csv
//   mxfp4-tune --dry-run --arch=gfx950 --shapes=8448x7168 --m=16
//   mxfp4-tune --moe=kimi-k3,gpt-oss-120b --tokens=1,16,128 --out=moe.csv
//
// For each (N, K, M bucket) on the present GPU: the tile table's plan is
// the incumbent; candidates from the target's schedule space
// (Tuning/Candidates.h), compiled ahead on host threads while the GPU
// measures, are screened, and the best few meet the incumbent in
// alternating A/B rounds (Tuning/AbDecision.h), each call after an L2
// flush. A candidate replaces the incumbent only when it wins every round
// by more than the noise, and only after its output passes the float64
// reference check. Each finished point is appended to --out at once, so a
// killed run resumes where it stopped. --dry-run lists the candidates for
// any target without a GPU. MoE layers (--moe) tune block_m the same way,
// each contender checked against the float64 layer on sampled tokens.
//
//===----------------------------------------------------------------------===//

#include "L2Flush.h"
#include "Points.h"

#include "ToolOptions.h"

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Support/Parallel.h"
#include "mxfp4/Tuning/Candidates.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <thread>

using namespace mxfp4;
namespace cl = llvm::cl;

static cl::opt<std::string> presetOpt("preset",
                                      cl::desc("comma-separated: seed-dense, model-dense"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> shapesOpt("shapes", cl::desc("comma-separated NxK (8448x7168,...)"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> shapeFileOpt("shape-file", cl::desc("file of 'N K' lines"),
                                         cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> moeOpt("moe",
                                   cl::desc("comma-separated MoE models (kimi-k3, gpt-oss-120b, "
                                            "deepseek-r1) whose block_m to tune"),
                                   cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> tokensOpt("tokens", cl::desc("--moe: comma-separated token buckets"),
                                      cl::init("1,2,4,8,16,32,64,128,256,512,1024,2048,4096"),
                                      cl::cat(tools::toolCategory()));
static cl::opt<std::string> mOpt("m", cl::desc("comma-separated M buckets"),
                                 cl::init("1,2,4,8,16,32,64,128,256,512,1024,2048,4096"),
                                 cl::cat(tools::toolCategory()));
static cl::opt<std::string> outOpt("out",
                                   cl::desc("the tuned CSV to write (appended to; rows "
                                            "already there are kept and not re-tuned)"),
                                   cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<bool> dryRunOpt("dry-run",
                               cl::desc("list each point's candidates and compile or run nothing"),
                               cl::init(false), cl::cat(tools::toolCategory()));
static cl::opt<std::string> archOpt("arch", cl::desc("--dry-run: gfx950, gfx1250 or sm_90a"),
                                    cl::init("sm_90a"), cl::cat(tools::toolCategory()));
static cl::opt<int64_t> cuOpt("cu-num", cl::desc("--dry-run: the device's SMs / CUs (0: usual)"),
                              cl::init(0), cl::cat(tools::toolCategory()));
static cl::opt<unsigned> keepOpt("keep", cl::desc("candidates per point besides the default"),
                                 cl::init(12), cl::cat(tools::toolCategory()));
static cl::opt<unsigned> perFamilyOpt("per-family", cl::desc("kept candidates per family"),
                                      cl::init(2), cl::cat(tools::toolCategory()));
static cl::opt<unsigned> screenOpt("screen-reps", cl::desc("screening calls per candidate"),
                                   cl::init(5), cl::cat(tools::toolCategory()));
static cl::opt<unsigned> finalistsOpt("finalists",
                                      cl::desc("screened candidates that meet the incumbent"),
                                      cl::init(3), cl::cat(tools::toolCategory()));
static cl::opt<unsigned> roundsOpt("rounds", cl::desc("A/B rounds"), cl::init(3),
                                   cl::cat(tools::toolCategory()));
static cl::opt<unsigned> repsOpt("reps", cl::desc("calls of each side per A/B round"), cl::init(8),
                                 cl::cat(tools::toolCategory()));
static cl::opt<double> minGainOpt("min-gain",
                                  cl::desc("smallest relative gain that replaces (0.01: 1 %)"),
                                  cl::init(0.01), cl::cat(tools::toolCategory()));
static cl::opt<unsigned> jobsOpt("j", cl::desc("host compile threads (default: cores)"),
                                 cl::init(0), cl::cat(tools::toolCategory()));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "mxfp4-tune: " << msg << "\n";
  return 1;
}

static Expected<std::vector<int64_t>> parseList(llvm::StringRef flag, llvm::StringRef text) {
  std::vector<int64_t> out;
  for (llvm::StringRef s : llvm::split(text, ',')) {
    int64_t v;
    if (s.trim().getAsInteger(10, v) || v < 1 || v > (int64_t(1) << 31))
      return makeError("--", flag.str(), ": '", s.str(), "' is not an integer in [1, 2^31]");
    out.push_back(v);
  }
  return out;
}

static Expected<std::vector<std::pair<int64_t, int64_t>>> readShapes() {
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (llvm::StringRef p : llvm::split(presetOpt.getValue(), ',')) {
    if (p.trim().empty())
      continue;
    Expected<std::vector<std::pair<int64_t, int64_t>>> s = presetShapes(p.trim());
    if (!s)
      return s.takeError();
    shapes.insert(shapes.end(), s->begin(), s->end());
  }
  for (llvm::StringRef s : llvm::split(shapesOpt.getValue(), ',')) {
    if (s.trim().empty())
      continue;
    auto [n, k] = s.trim().split('x');
    int64_t nv, kv;
    if (n.getAsInteger(10, nv) || k.getAsInteger(10, kv) || nv < 1 || kv < 1)
      return makeError("--shapes: '", s.str(), "' is not NxK");
    shapes.push_back({nv, kv});
  }
  if (!shapeFileOpt.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(shapeFileOpt);
    if (!buf)
      return makeError("cannot read ", shapeFileOpt.getValue(), ": ", buf.getError().message());
    llvm::SmallVector<llvm::StringRef> lines;
    (*buf)->getBuffer().split(lines, '\n');
    for (auto [i, raw] : llvm::enumerate(lines)) {
      llvm::StringRef line = raw.split('#').first.trim();
      if (line.empty())
        continue;
      llvm::SmallVector<llvm::StringRef> f;
      llvm::SplitString(line, f);
      int64_t n, k;
      if (f.size() != 2 || f[0].getAsInteger(10, n) || f[1].getAsInteger(10, k) || n < 1 || k < 1)
        return makeError(shapeFileOpt.getValue(), ":", i + 1, ": expected 'N K'");
      shapes.push_back({n, k});
    }
  }
  std::set<std::pair<int64_t, int64_t>> seen;
  std::vector<std::pair<int64_t, int64_t>> unique;
  for (auto s : shapes)
    if (seen.insert(s).second)
      unique.push_back(s);
  if (unique.empty() && moeOpt.empty())
    return makeError("no shapes: give --preset, --shapes, --shape-file or --moe");
  return unique;
}

static std::string duration(double s) {
  const int64_t t = int64_t(std::lround(s));
  return t >= 60 ? strCat(t / 60, "m", t % 60, "s") : strCat(t, "s");
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tools::parseToolOptions(argc, argv, "mxfp4-jit dense GEMM tuner\n");
  // lld, run in process by every compile, resets cl::opts: copy them now.
  const std::string out = outOpt;
  const bool dryRun = dryRunOpt;
  CandidateLimits limits;
  limits.keep = keepOpt;
  limits.perFamily = perFamilyOpt;
  TuneSettings settings;
  settings.screenReps = screenOpt;
  settings.finalists = finalistsOpt;
  settings.rounds = roundsOpt;
  settings.reps = repsOpt;
  settings.minGain = minGainOpt;
  const unsigned jobs = jobsOpt ? unsigned(jobsOpt) : hostThreadCount();

  Expected<std::vector<std::pair<int64_t, int64_t>>> shapes = readShapes();
  if (!shapes)
    return fail(shapes.takeError().message());
  Expected<std::vector<int64_t>> ms = parseList("m", mOpt);
  if (!ms)
    return fail(ms.takeError().message());
  Expected<std::vector<int64_t>> tokenList = parseList("tokens", tokensOpt);
  if (!tokenList)
    return fail(tokenList.takeError().message());
  std::vector<const MoeModel *> models;
  for (llvm::StringRef name : llvm::split(moeOpt.getValue(), ',')) {
    if (name.trim().empty())
      continue;
    const MoeModel *found = nullptr;
    for (const MoeModel &mm : moeModels())
      if (name.trim() == mm.name)
        found = &mm;
    if (!found)
      return fail("--moe: unknown model '" + name +
                  "'; expected kimi-k3, gpt-oss-120b or "
                  "deepseek-r1");
    models.push_back(found);
  }

  std::unique_ptr<Device> dev;
  Arch arch;
  int64_t cu;
  if (dryRun) {
    std::optional<Arch> a = parseArch(archOpt);
    if (!a)
      return fail("unknown --arch '" + archOpt + "'; expected gfx950, gfx1250 or sm_90a");
    arch = *a;
    cu = cuOpt;
  } else {
    if (out.empty())
      return fail("give --out=FILE (or --dry-run)");
    Expected<std::unique_ptr<Device>> d = Device::open();
    if (!d)
      return fail(d.takeError().message() + " (--dry-run lists candidates without a GPU)");
    dev = std::move(*d);
    Expected<Arch> a = targetArch(dev.get());
    if (!a)
      return fail(a.takeError().message());
    arch = *a;
    cu = dev->multiprocessorCount();
  }
  const DeviceModel model = deviceModel(arch, cu);

  // Resume: the points --out already holds for this device are done.
  std::set<std::pair<TunedKey, int64_t>> done;
  struct stat st;
  const bool outExists = !out.empty() && ::stat(out.c_str(), &st) == 0 && st.st_size > 0;
  if (outExists) {
    Expected<std::vector<TunedRow>> rows = readTunedCsv(out);
    if (!rows)
      return fail(rows.takeError().message() + " (fix or remove it to start over)");
    for (const TunedRow &r : *rows)
      if (r.key.arch == arch && r.key.computeUnits == cu)
        done.insert({r.key, r.m});
  }

  // A point: a dense (N, K, M) with its candidates, or a MoE layer at a
  // token count with its block_m.
  struct Point {
    TunedKey key;
    int64_t m;
    const MoeModel *moe = nullptr;
    std::vector<DenseCandidate> candidates;
    std::vector<int64_t> blockMs;
  };
  std::vector<Point> points;
  for (auto [n, k] : *shapes)
    for (int64_t m : *ms) {
      const TunedKey key = TunedKey::gemm(arch, cu, n, k);
      if (done.count({key, m}))
        continue;
      Expected<std::vector<DenseCandidate>> cs = denseCandidates(arch, n, k, m, model, limits);
      if (!cs)
        return fail(strCat("N=", n, " K=", k, " M=", m, ": ", cs.takeError().message()));
      points.push_back({key, m, nullptr, std::move(*cs), {}});
    }
  for (const MoeModel *mm : models)
    for (int64_t t : *tokenList) {
      const TunedKey key = moeTunedKey(arch, mm->shape, mm->activation.kind, cu);
      if (done.count({key, t}))
        continue;
      points.push_back({key, t, mm, {}, moeBlockMs(arch, mm->shape, t)});
    }
  if (!done.empty())
    llvm::outs() << "resuming: " << done.size() << " points already in " << out << "\n";

  if (dryRun) {
    for (const Point &p : points) {
      if (p.moe) {
        llvm::outs() << toString(arch) << " " << p.moe->name << " tokens=" << p.m << ": block_m";
        for (size_t i = 0; i < p.blockMs.size(); ++i)
          llvm::outs() << " " << p.blockMs[i] << (i == 0 ? " (default)" : "");
        llvm::outs() << "\n";
        continue;
      }
      llvm::outs() << toString(arch) << " N=" << p.key.n << " K=" << p.key.k << " M=" << p.m << ": "
                   << denseSearchSpaceSize(arch, p.key.n, p.key.k, p.m) << " plans, "
                   << p.candidates.size() << " candidates\n";
      for (const DenseCandidate &c : p.candidates) {
        llvm::outs() << llvm::format("  %-10s %9.1f us  ", c.family.c_str(), c.estimateUs)
                     << (c.isDefault ? "default " : "");
        llvm::outs() << tunedRowFromPlan(c.plan, {}, p.m).kernelNames();
        if (c.plan.splitM)
          llvm::outs() << " split_m=" << c.plan.splitM;
        if (c.plan.streamWorkgroupsPerSm)
          llvm::outs() << " stream_wgs=" << c.plan.streamWorkgroupsPerSm;
        llvm::outs() << "\n";
      }
    }
    return 0;
  }

  // Compile every dense candidate's kernels ahead, in the order the points
  // need them, on host threads; a measurement that gets to a kernel first
  // waits for it in the Jit.
  std::vector<KernelSpec> specs;
  {
    std::set<std::string> seen;
    for (const Point &p : points)
      for (const DenseCandidate &c : p.candidates)
        for (const KernelSpec &s : c.plan.kernels())
          if (seen.insert(s.name()).second)
            specs.push_back(s);
  }
  std::atomic<size_t> nextSpec{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> compilers;
  for (unsigned t = 0; t < std::max(1u, jobs - 1); ++t)
    compilers.emplace_back([&] {
      for (size_t i = nextSpec++; i < specs.size() && !stop; i = nextSpec++)
        (void)Jit::global().get(specs[i]); // errors come back when measured
    });
  auto joinCompilers = [&] {
    stop = true;
    for (std::thread &t : compilers)
      t.join();
    compilers.clear();
  };

  Expected<std::unique_ptr<bench::L2Flush>> flush =
      bench::L2Flush::create(*dev, bench::FlushMode::Memset);
  if (!flush) {
    joinCompilers();
    return fail(flush.takeError().message());
  }
  Protocol protocol(*dev, **flush, settings);
  DensePoints dense(*dev, settings.seed);
  MoePoints moe(*dev, settings.seed);
  llvm::outs() << "inputs seed " << settings.seed << "\n";

  std::ofstream csv(out, std::ios::app);
  if (!csv) {
    joinCompilers();
    return fail("cannot write " + out);
  }
  if (!outExists)
    csv << tunedCsvHeader() << "\n";
  llvm::outs() << "tuning " << points.size() << " points on " << dev->name() << " ("
               << toString(arch) << ", " << cu << " SMs), " << specs.size()
               << " kernels compiling on " << std::max(1u, jobs - 1) << " threads\n";

  const auto start = std::chrono::steady_clock::now();
  std::vector<double> speedups;
  double worst = 1e300;
  std::string worstPoint;
  int failures = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const Point &p = points[i];
    const std::string where = p.moe ? strCat(p.moe->name, " tokens=", p.m)
                                    : strCat("N=", p.key.n, " K=", p.key.k, " M=", p.m);
    TunedRow row;
    row.key = p.key;
    row.m = p.m;
    std::string family;
    Expected<PointResult> r = makeError("not run");
    if (p.moe) {
      if (Error e = moe.prepare(*p.moe, p.m))
        r = std::move(e);
      else
        r = protocol.decide(moe.contenders(p.blockMs));
      if (r) {
        Expected<std::vector<KernelSpec>> gemms = moe.stageGemms(p.blockMs[r->winner]);
        if (gemms)
          row.kernels = *gemms;
        else
          r = gemms.takeError();
        family = strCat("block_m ", p.blockMs[r ? r->winner : 0]);
      }
    } else {
      if (Error e = dense.prepare(p.key.n, p.key.k, p.m))
        r = std::move(e);
      else
        r = protocol.decide(dense.contenders(p.candidates));
      if (r) {
        const DenseCandidate &w = p.candidates[r->winner];
        row = tunedRowFromPlan(w.plan, p.key, p.m);
        family = w.family;
      }
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string eta = duration(elapsed / double(i + 1) * double(points.size() - i - 1));
    if (!r) {
      ++failures;
      llvm::errs() << "mxfp4-tune: " << where << ": " << r.takeError().message() << "\n";
      continue;
    }
    row.us = r->winnerUs;
    row.error = r->relL2;
    row.tuner = "mxfp4-tune-1";
    csv << formatTunedRow(row) << "\n";
    csv.flush();
    const double speedup = r->defaultUs / r->winnerUs;
    speedups.push_back(speedup);
    if (speedup < worst) {
      worst = speedup;
      worstPoint = where;
    }
    llvm::outs() << llvm::format("[%zu/%zu] %s: default %.1f us, tuned %.1f us (%s%s, x%.3f, "
                                 "rel-L2 %.2e), ETA %s\n",
                                 i + 1, points.size(), where.c_str(), r->defaultUs, r->winnerUs,
                                 family.c_str(), r->winner == 0 ? ", the default" : "", speedup,
                                 r->relL2, eta.c_str());
    for (const std::string &line : r->log)
      llvm::outs() << "    " << line << "\n";
    llvm::outs().flush();
  }
  joinCompilers();
  if (!csv)
    return fail("writing " + out + " failed");
  double logSum = 0;
  for (double s : speedups)
    logSum += std::log(s);
  if (!speedups.empty())
    llvm::outs() << llvm::format("summary: %zu points, geomean speedup over the default x%.3f, "
                                 "worst x%.3f (%s), %d failed\n",
                                 speedups.size(), std::exp(logSum / double(speedups.size())), worst,
                                 worstPoint.c_str(), failures);
  return failures ? 1 : 0;
}
