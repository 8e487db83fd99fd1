//===- mxfp4-bench.cpp - Our dense A4W4 GEMM against cuBLAS, same run -----===//
//
//   mxfp4-bench --preset=seed-dense --json=FILE
//   mxfp4-bench --n=8448 --k=7168 --m=1,16,128
//   mxfp4-bench --op=moe_sort --json=FILE        (MoeSortBench.h)
//   mxfp4-bench --op=moe [--models=a,b] --json=FILE (MoeBench.h)
//   mxfp4-bench --model=gfx950                    (CostModel.h; no GPU)
//
// Per point, on the same device and in the same run: our gemmA4W4 (inline
// activation quantization included), cuBLAS BF16 on unquantized weights and
// cuBLASLt FP8 e4m3. L2 is flushed before every repetition (a 512 MiB
// memset; --flush=clean also sweeps the dirty lines out: L2Flush.h); times
// are CUDA-event medians. Prints us, effective TB/s and
// TFLOP/s, the roofline floor max(bytes / 4.25 TB/s, FLOPs / 700 TFLOP/s)
// and our ratio to it, the speedup over cuBLAS BF16, and the CPU time one
// call takes the host (ours and cuBLAS BF16's; medians), ours also without
// the driver's launches (lib_us: the library's own share, HostOverhead.h).
//
//===----------------------------------------------------------------------===//

#include "CostModel.h"
#include "CublasPeer.h"
#include "HostOverhead.h"
#include "L2Flush.h"
#include "MoeBench.h"
#include "MoeSortBench.h"
#include "ToolOptions.h"

#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Support/BF16.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <random>

using namespace mxfp4;
namespace cl = llvm::cl;

static cl::opt<std::string>
    presetOpt("preset",
              cl::desc("seed-dense: the seed's 24 points; model-dense: the dense shapes of "
                       "DeepSeek-R1 FP4, Kimi-K3 and AITER's dense tests beyond the seed's, at the "
                       "seed's M"),
              cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> opOpt("op", cl::desc("gemm_a4w4 (default), moe_sort or moe"),
                                  cl::init("gemm_a4w4"), cl::cat(tools::toolCategory()));
static cl::opt<int64_t> blockMOpt("block-m", cl::desc("moe_sort: block_m"), cl::init(32),
                                  cl::cat(tools::toolCategory()));
static cl::opt<std::string> modelsOpt("models",
                                      cl::desc("moe: kimi-k3, gpt-oss-120b, deepseek-r1 "
                                               "(comma-separated; default all)"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> tokensOpt("tokens",
                                      cl::desc("moe: comma-separated token counts (default 1, "
                                               "16, 128, 1024, 4096)"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> nOpt("n", cl::desc("comma-separated N"), cl::init("8448"),
                                 cl::cat(tools::toolCategory()));
static cl::opt<std::string> kOpt("k", cl::desc("comma-separated K"), cl::init("7168"),
                                 cl::cat(tools::toolCategory()));
static cl::opt<std::string> mOpt("m", cl::desc("comma-separated M"), cl::init("1,16,128"),
                                 cl::cat(tools::toolCategory()));
static cl::opt<unsigned> repsOpt("reps", cl::desc("timed repetitions per kernel"), cl::init(30),
                                 cl::cat(tools::toolCategory()));
static cl::opt<std::string> jsonOpt("json", cl::desc("write the results as JSON here"),
                                    cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> bmOpt("bm", cl::desc("comma-separated M tiles to force (tuning)"),
                                  cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> splitOpt("split-k",
                                     cl::desc("comma-separated split-K factors to force"),
                                     cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string>
    bnOpt("bn", cl::desc("comma-separated N tiles to force (sm_90a: 128, 64, 192)"), cl::init(""),
          cl::cat(tools::toolCategory()));
static cl::opt<std::string> bkOpt("bk", cl::desc("comma-separated K tiles to force (tuning)"),
                                  cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> stagesOpt("stages",
                                      cl::desc("comma-separated sm_90a TMA stage counts to force"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string>
    wgOpt("warpgroups", cl::desc("comma-separated sm_90a warpgroup counts (1, 2) to force"),
          cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> psOpt("persistent",
                                  cl::desc("comma-separated 0/1: force a persistent grid off/on "
                                           "(sm_90a gemm_qdqa4w4 without split-K)"),
                                  cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> qbmOpt("quantizer-bm",
                                   cl::desc("comma-separated row tiles of qdq_mxfp4 to force "
                                            "(8..64; sm_90a dequantize-once)"),
                                   cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> decOpt("decode",
                                   cl::desc("comma-separated 0/1/G: force the decode variant "
                                            "off/on, or on with G warpgroups splitting K "
                                            "(sm_90a inline quantization, BM < 128)"),
                                   cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> wkOpt("warp-split-k",
                                  cl::desc("comma-separated warp counts W: force the warp-split "
                                           "variant with W warps (0: off; sm_90a inline "
                                           "quantization, M <= 8)"),
                                  cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> isOpt("image-stream",
                                  cl::desc("comma-separated quantizer workgroups per SM: force "
                                           "the streamed activation image (0: off; sm_90a "
                                           "dequantize-once, BM 128)"),
                                  cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> skOpt("stream-k",
                                  cl::desc("comma-separated 0/1: force stream-K off/on (sm_90a "
                                           "gemm_qdqa4w4, BM 128/256, without split-K)"),
                                  cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> splitMOpt("split-m",
                                      cl::desc("comma-separated row splits to force (0: none; "
                                               "sm_90a dequantize-once)"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> preOpt("prequant",
                                   cl::desc("comma-separated 0/1/2: force inline quantization (0), "
                                            "a separate quant_mxfp4 pass (1) or qdq_mxfp4 pass "
                                            "(2) (tuning)"),
                                   cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<bool> wideScalesOpt(
    "wide-scales",
    cl::desc("weight scales 2^-5..2^3 (some >= 2: the unfolded sm_90a kernels) instead of "
             "2^-11..2^-1 (as in real checkpoints)"),
    cl::init(false), cl::cat(tools::toolCategory()));
static cl::opt<std::string>
    flushOpt("flush",
             cl::desc("before each repetition: memset (512 MiB, leaves the L2 dirty) or clean "
                      "(the memset, then a read-only sweep)"),
             cl::init("memset"), cl::cat(tools::toolCategory()));
static cl::opt<std::string> modelOpt("model",
                                     cl::desc("print the cost model's times of the seed's dense "
                                              "points on this target (gfx950, gfx1250, sm_90a) "
                                              "beside the HBM floor and the seed's measured "
                                              "times, without a GPU, and exit"),
                                     cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<bool> peersOpt("peers", cl::desc("also time cuBLAS BF16 and FP8"), cl::init(true),
                              cl::cat(tools::toolCategory()));

static constexpr double kHbmBytesPerS = 4.25e12, kBf16FlopsPerS = 700e12;

namespace {
struct Row {
  int64_t n, k, m;
  double ours = 0, bf16 = 0, fp8 = 0;
  double oursHost = 0, bf16Host = 0; ///< CPU microseconds of one call (median)
  double oursLibrary = 0;            ///< the same without the driver's launches
  int64_t launches = 0;              ///< kernels one call of ours launches
  double bytes = 0, flops = 0;
  /// The kernels dispatch runs at this point (planGemmA4W4), and the
  /// schedule of its (last) GEMM as JSON (toJson, one key per field).
  std::vector<std::string> kernels;
  std::string schedule = "{}";
};

/// The comma-separated integers of a list flag (none when it is empty); a
/// malformed entry ends the program with an error naming the flag.
std::vector<int64_t> parseList(const cl::opt<std::string> &flag) {
  std::vector<int64_t> v;
  if (flag.empty())
    return v;
  for (llvm::StringRef part : llvm::split(flag.getValue(), ',')) {
    int64_t x;
    if (part.trim().getAsInteger(10, x)) {
      std::string shown;
      for (char c : part.take_front(32))
        shown.push_back(c >= 0x20 && c < 0x7f ? c : '?');
      llvm::errs() << "mxfp4-bench: --" << flag.ArgStr << ": '" << shown << "' is not an integer\n";
      std::exit(1);
    }
    v.push_back(x);
  }
  return v;
}

int fail(const llvm::Twine &msg) {
  llvm::errs() << "mxfp4-bench: " << msg << "\n";
  return 1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tools::parseToolOptions(argc, argv, "mxfp4-jit dense A4W4 benchmark\n");
  if (!modelOpt.empty()) {
    std::optional<Arch> arch = parseArch(modelOpt);
    if (!arch)
      return fail("--model=" + modelOpt + ": expected gfx950, gfx1250 or sm_90a");
    return bench::runCostModel(*arch);
  }
  const unsigned reps = repsOpt;
  const std::string json = jsonOpt;
  const bool withPeers = peersOpt;
  const std::vector<int64_t> bms = parseList(bmOpt), splits = parseList(splitOpt),
                             bks = parseList(bkOpt), bns = parseList(bnOpt),
                             pres = parseList(preOpt), stageList = parseList(stagesOpt),
                             wgs = parseList(wgOpt), pss = parseList(psOpt),
                             qbms = parseList(qbmOpt), decs = parseList(decOpt),
                             sks = parseList(skOpt), splitMs = parseList(splitMOpt),
                             wks = parseList(wkOpt), iss = parseList(isOpt);
  std::vector<std::array<int64_t, 3>> points;
  if (!presetOpt.empty()) {
    // The presets' points are dispatch's (Ops/GemmA4W4Plan.h): what
    // mxfp4-jit-compile --preset compiles ahead of time.
    Expected<std::vector<std::pair<int64_t, int64_t>>> shapes = presetShapes(presetOpt);
    if (!shapes)
      return fail("--preset: " + shapes.takeError().message());
    for (auto [n, k] : *shapes)
      for (int64_t m : kPresetMs)
        points.push_back({n, k, m});
  } else {
    for (int64_t n : parseList(nOpt))
      for (int64_t k : parseList(kOpt))
        for (int64_t m : parseList(mOpt))
          points.push_back({n, k, m});
  }
  const std::optional<bench::FlushMode> flushMode = bench::parseFlushMode(flushOpt);
  if (!flushMode)
    return fail("--flush=" + flushOpt + ": expected memset or clean");
  auto devOr = Device::open();
  if (!devOr)
    return fail(devOr.takeError().message());
  Device &dev = **devOr;
  std::unique_ptr<bench::CublasPeer> peer;
  if (withPeers) {
    auto p = bench::CublasPeer::load();
    if (p)
      peer = std::move(*p);
    else
      llvm::errs() << "mxfp4-bench: no peer: " << p.takeError().message() << "\n";
  }
  auto alloc = [&](size_t bytes) -> void * {
    auto p = dev.alloc(bytes);
    if (!p) {
      llvm::errs() << "mxfp4-bench: " << p.takeError().message() << "\n";
      std::exit(1);
    }
    return *p;
  };
  auto flushOr = bench::L2Flush::create(dev, *flushMode);
  if (!flushOr)
    return fail(flushOr.takeError().message());
  bench::L2Flush &flush = **flushOr;
  const size_t wsBytes = size_t(64) << 20;
  void *workspace = alloc(wsBytes);
  std::mt19937_64 rng(12345);
  // Device time: the median of `reps` event-timed calls, each after the L2
  // flush (whose memset hides the host's work on the call). `hostUs`, if
  // given, gets the median CPU time the call itself takes to enqueue its
  // work (what bounds back-to-back calls when the GPU waits on the host).
  auto timeIt = [&](const std::function<Error()> &launch, double *hostUs = nullptr) -> double {
    for (int w = 0; w < 3; ++w)
      if (Error e = launch()) {
        llvm::errs() << "mxfp4-bench: " << e.message() << "\n";
        return -1;
      }
    std::vector<double> ms, host;
    for (unsigned r = 0; r < reps; ++r) {
      if (Error e = flush.run(uint8_t(r))) {
        llvm::errs() << "mxfp4-bench: L2 flush: " << e.message() << "\n";
        return -1;
      }
      auto t = dev.time([&] {
        auto t0 = std::chrono::steady_clock::now();
        Error e = launch();
        host.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
        return e;
      });
      if (!t) {
        llvm::errs() << "mxfp4-bench: " << t.takeError().message() << "\n";
        return -1;
      }
      ms.push_back(*t);
    }
    if (hostUs)
      *hostUs = median(host);
    return median(ms) * 1000.0;
  };

  if (opOpt == "moe_sort") {
    llvm::outs() << "L2 flush before each repetition: " << bench::toString(*flushMode) << "\n";
    const int rc = bench::runMoeSortBench(dev, timeIt, json, blockMOpt);
    dev.free(workspace);
    return rc;
  }
  if (opOpt == "moe") {
    llvm::outs() << "L2 flush before each repetition: " << bench::toString(*flushMode) << "\n";
    const int rc = bench::runMoeBench(dev, timeIt, json, modelsOpt, tokensOpt);
    dev.free(workspace);
    return rc;
  }
  if (opOpt != "gemm_a4w4")
    return fail("--op=" + opOpt + ": expected gemm_a4w4, moe_sort or moe");

  std::vector<Row> rows;
  llvm::outs() << "L2 flush before each repetition: " << bench::toString(*flushMode) << "\n";
  llvm::outs() << llvm::format("%-6s %-6s %-5s %9s %7s %8s %9s %7s %10s %9s %8s %8s %7s %9s\n", "N",
                               "K", "M", "ours_us", "TB/s", "TFLOP/s", "floor_us", "x_floor",
                               "cublas_bf16", "cublas_fp8", "speedup", "host_us", "lib_us",
                               "bf16_host");
  for (auto [n, k, m] : points) {
    Row row{n, k, m};
    std::vector<uint8_t> wq(size_t(n * k / 2)), ws(size_t(n * k / 32));
    for (auto &b : wq)
      b = uint8_t(rng());
    for (auto &s : ws)
      s = wideScalesOpt ? uint8_t(122 + rng() % 9) : uint8_t(116 + rng() % 11);
    auto prepared = prepareGemmA4W4Weight(dev, wq, ws, n, k);
    if (!prepared)
      return fail(prepared.takeError().message());
    Expected<GemmA4W4Plan> plan = planGemmA4W4(
        {(*prepared)->arch(), n, k, (*prepared)->scalesBelow128(), dev.multiprocessorCount()}, m);
    if (!plan)
      return fail(plan.takeError().message());
    for (const KernelSpec &s : plan->kernels())
      row.kernels.push_back(s.name());
    row.schedule = toJson(plan->gemms.back().schedule());
    std::vector<uint16_t> a(size_t(m * k));
    std::normal_distribution<float> normal;
    for (auto &x : a)
      x = floatToBf16(normal(rng));
    void *da = alloc(a.size() * 2), *dc = alloc(size_t(m * n * 2));
    (void)dev.copyToDevice(da, a.data(), a.size() * 2);
    row.ours = timeIt([&] { return gemmA4W4(dev, nullptr, da, m, **prepared, dc); }, &row.oursHost);
    if (Expected<bench::LibraryHostTime> lib =
            bench::libraryHostTime(dev, wq, ws, n, k, m, da, dc, std::max(reps, 200u))) {
      row.oursLibrary = lib->us;
      row.launches = lib->launches;
    } else {
      return fail(lib.takeError().message());
    }
    for (int64_t pre : pres.empty() ? std::vector<int64_t>{-1} : pres)
    for (int64_t st : stageList.empty() ? std::vector<int64_t>{0} : stageList)
    for (int64_t wg : wgs.empty() ? std::vector<int64_t>{0} : wgs)
    for (int64_t ps : pss.empty() ? std::vector<int64_t>{-1} : pss)
      for (int64_t qbm : qbms.empty() ? std::vector<int64_t>{0} : qbms)
        for (int64_t dec : decs.empty() ? std::vector<int64_t>{-1} : decs)
        for (int64_t wk : wks.empty() ? std::vector<int64_t>{-1} : wks)
        for (int64_t is : iss.empty() ? std::vector<int64_t>{-1} : iss)
          for (int64_t streamK : sks.empty() ? std::vector<int64_t>{-1} : sks)
            for (int64_t splitM : splitMs.empty() ? std::vector<int64_t>{-1} : splitMs)
              for (int64_t bn : bns.empty() ? std::vector<int64_t>{0} : bns)
                for (int64_t bk : bks.empty() ? std::vector<int64_t>{0} : bks)
                  for (int64_t bm : bms.empty() ? std::vector<int64_t>{0} : bms)
                    for (int64_t sk : splits.empty() ? std::vector<int64_t>{0} : splits) {
                      if (bms.empty() && splits.empty() && bks.empty() && bns.empty() &&
                          pres.empty() && stageList.empty() && wgs.empty() && pss.empty() &&
                          qbms.empty() && decs.empty() && sks.empty() && splitMs.empty() &&
                          wks.empty() && iss.empty())
                        break;
                      GemmA4W4Options o;
                      if (pre >= 0)
                        o.overrides.preQuantize = pre != 0;
                      if (pre >= 1)
                        o.overrides.dequantizeOnce = pre == 2;
                      if (bm)
                        o.overrides.bm = bm;
                      if (sk)
                        o.overrides.splitK = sk;
                      if (bk)
                        o.overrides.bk = bk;
                      if (bn)
                        o.overrides.bn = bn;
                      if (st)
                        o.overrides.stages = st;
                      if (wg)
                        o.overrides.twoWarpgroups = wg == 2;
                      if (ps >= 0)
                        o.overrides.persistent = ps != 0;
                      if (qbm)
                        o.overrides.quantizerBm = qbm;
                      if (dec >= 0)
                        o.overrides.decode = dec != 0;
                      if (dec >= 1)
                        o.overrides.decodeGroups = dec;
                      if (streamK >= 0)
                        o.overrides.streamK = streamK != 0;
                      if (wk >= 0)
                        o.overrides.warpSplitK = wk;
                      if (is >= 0)
                        o.overrides.imageStream = is;
                      if (splitM >= 0)
                        o.overrides.splitM = splitM;
                      double us =
                          timeIt([&] { return gemmA4W4(dev, nullptr, da, m, **prepared, dc, o); });
                      llvm::outs() << llvm::format(
                          "  tune N=%lld K=%lld M=%lld prequant=%lld stages=%lld wg=%lld ps=%lld "
                          "qbm=%lld dec=%lld wk=%lld is=%lld sk=%lld "
                          "split-m=%lld bn=%lld bk=%lld bm=%lld split-k=%lld: %.1f us\n",
                          (long long)n, (long long)k, (long long)m, (long long)pre, (long long)st,
                          (long long)wg, (long long)ps, (long long)qbm, (long long)dec,
                          (long long)wk, (long long)is, (long long)streamK, (long long)splitM, (long long)bn, (long long)bk,
                          (long long)bm, (long long)sk, us);
                      llvm::outs().flush(); // a sweep killed by a timeout keeps its lines
                    }
    row.bytes = double(n * k / 2 + n * k / 32 + m * k * 2 + m * n * 2);
    row.flops = 2.0 * double(m) * double(n) * double(k);
    if (peer) {
      void *wb = alloc(size_t(n * k * 2));
      (void)dev.fill(wb, 0x3C, size_t(n * k * 2)); // bf16 ~0.0115
      row.bf16 =
          timeIt([&] { return peer->gemmBf16(da, wb, dc, m, n, k, nullptr); }, &row.bf16Host);
      dev.free(wb);
      void *w8 = alloc(size_t(n * k)), *a8 = alloc(size_t(m * k));
      (void)dev.fill(w8, 0x30, size_t(n * k));
      (void)dev.fill(a8, 0x30, size_t(m * k));
      row.fp8 = timeIt([&] { return peer->gemmFp8(a8, w8, dc, m, n, k, workspace, wsBytes, nullptr); });
      dev.free(w8);
      dev.free(a8);
    }
    dev.free(da);
    dev.free(dc);
    double floorUs = std::max(row.bytes / kHbmBytesPerS, row.flops / kBf16FlopsPerS) * 1e6;
    llvm::outs() << llvm::format(
        "%-6lld %-6lld %-5lld %9.1f %7.2f %8.1f %9.1f %7.2f %10.1f %9.1f %8.2f %8.1f %7.2f %9.1f\n",
        (long long)n, (long long)k, (long long)m, row.ours, row.bytes / (row.ours * 1e-6) / 1e12,
        row.flops / (row.ours * 1e-6) / 1e12, floorUs, row.ours / floorUs, row.bf16, row.fp8,
        row.bf16 > 0 ? row.bf16 / row.ours : 0.0, row.oursHost, row.oursLibrary, row.bf16Host);
    llvm::outs().flush();
    rows.push_back(row);
  }
  if (!json.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(json, ec);
    if (ec)
      return fail("cannot write " + json + ": " + ec.message());
    os << "{\"device\": \"" << dev.name() << "\", \"reps\": " << reps << ", \"flush\": \""
       << bench::toString(*flushMode) << "\", \"points\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row &r = rows[i];
      double floorUs = std::max(r.bytes / kHbmBytesPerS, r.flops / kBf16FlopsPerS) * 1e6;
      os << llvm::format("  {\"n\": %lld, \"k\": %lld, \"m\": %lld, \"ours_us\": %.2f, "
                         "\"cublas_bf16_us\": %.2f, \"cublas_fp8_us\": %.2f, \"floor_us\": %.2f, "
                         "\"bytes\": %.0f, \"flops\": %.0f, \"ours_host_us\": %.2f, "
                         "\"ours_library_host_us\": %.3f, \"ours_launches\": %lld, "
                         "\"cublas_bf16_host_us\": %.2f, ",
                         (long long)r.n, (long long)r.k, (long long)r.m, r.ours, r.bf16, r.fp8,
                         floorUs, r.bytes, r.flops, r.oursHost, r.oursLibrary,
                         (long long)r.launches, r.bf16Host);
      os << "\"schedule\": " << r.schedule << ", \"kernels\": [";
      for (size_t j = 0; j < r.kernels.size(); ++j)
        os << (j ? ", \"" : "\"") << r.kernels[j] << "\"";
      os << "]}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    os << "]}\n";
  }
  dev.free(workspace);
  return 0;
}
