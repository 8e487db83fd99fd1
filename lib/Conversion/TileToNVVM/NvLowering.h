//===- NvLowering.h - State of the mxtile -> NVVM (sm_90a) lowering -*- C++ -*-===//
//
// Hopper has no FP4 tensor cores, so the exact path dequantizes: weights
// E2M1 -> BF16 in registers with the E8M0 scale folded in, activations
// quantized inline to MXFP4 (bit for bit the CPU quantizer) and dequantized
// to BF16 in shared memory, then wgmma.mma_async m64nBMk16 BF16 with FP32
// accumulators, the weights as the register A operand and the activations
// as the shared-memory B operand. A and B are swapped: weight rows are the
// MMA M dimension, the tokens the N dimension (BM = 8..256).
//
// CTA: one warpgroup (4 warps); warp w owns weight rows n0 + 32w .. +31 (two
// m16 tiles i), so wgmma i covers rows {32w + 16i + r}: its A fragment is
// the mma.sync m16n8k16 fragment of tile i, its accumulator fragment that of
// the n8 token tiles. With BM 128, two warpgroups share the activation tile
// and each of the 8 warps owns 16 rows (one m64n128 wgmma per warpgroup and
// step), halving the weight conversions per MMA; BM 256 (on the activation
// image only) does the same with one m64n256 wgmma, halving them again.
// Inside each 128-K chunk, MMA step s, thread t =
// lane%4 and register half h (a0/a1: h = 0, a2/a3: h = 1) use k = 32t + 8(s/2) + 2(s%2) + h + {0,
// 4}: the same permutation on both operands, so each thread's weight bytes for a row are 16
// contiguous bytes and one E8M0 scale (the sm90-mma16 layouts), and each bf16x2 register is the
// nibble pair (j, j+4) of one packed word.
//
// The weights reach shared memory by TMA, S K steps ahead (one mbarrier per
// stage; Kernels/Sm90Pipeline.h has the layout), and each thread reads its
// fragments from there into registers one step ahead of the wgmmas.
//
// Shared memory holds the activations of a step in the wgmma no-swizzle
// K-major layout for that permutation: per 128-K chunk kc, MMA step s, token
// group G (8 tokens) and half h, one 8 x 16-byte core matrix whose row r
// (token 8G + r) holds, at bytes 4t..4t+3, K = 32t + 8(s/2) + 2(s%2) + h + {0, 4}.
// The K loop quantizes (or dequantizes MXFP4) into two such buffers
// (Sm90KLoop.cpp), or, on activations qdq_mxfp4 already wrote in this
// layout (the activation image), has them copied into each weight stage
// (Sm90StagedKLoop.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_CONVERSION_TILETONVVM_NVLOWERING_H
#define MXFP4_LIB_CONVERSION_TILETONVVM_NVLOWERING_H

#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseMap.h"

namespace mxfp4::nv {

struct Config {
  int64_t bm = 16, bn = 128, bk = 128;
  /// The quantizer kernels: no MMA; qdq_mxfp4 of BM 64 (`stagesImage`)
  /// stages its dequantized block in shared memory (BM x BK bf16) for bulk
  /// copies.
  bool quantizeOnly = false;
  bool stagesImage = false;
  /// Every weight scale is below 128 (schedule: folded_scales): one
  /// multiply dequantizes (Sm90Mma.cpp).
  bool foldedScales = false;
  /// The activations arrive as the image qdq_mxfp4 writes (mxtile.load_qdq)
  /// and are copied into the weight stages (Sm90StagedKLoop.cpp).
  bool stagedActivations = false;
  /// Register cap for ptxas (.maxnreg); 0: none.
  int64_t maxRegisters = 0;
  /// TMA stages; 0: the tile's default (Kernels/Sm90Pipeline.h).
  int64_t stages = 0;
  /// Two warpgroups below BM 128 (schedule: two_warpgroups).
  bool twoWarpgroups = false;
  /// A persistent grid (schedule: persistent): each workgroup loops over the
  /// output tiles, its stages receiving the next tile's first steps while
  /// it finishes one (TileToNVVM.cpp, Sm90StagedKLoop.cpp); 0: one tile per
  /// workgroup, else the number of N tiles.
  int64_t persistentTilesX = 0;
  /// Stream-K (schedule: stream_k; Sm90StreamK.cpp): each workgroup takes an
  /// equal run of the (tile, K step) iterations; persistentTilesX holds the
  /// number of N tiles. Its stages and output staging are those of a
  /// one-tile kernel.
  bool streamK = false;
  /// The decode variant (schedule: decode; Sm90DecodeKLoop.cpp): its K
  /// steps per workgroup, whose activations it quantizes first, each into
  /// its own buffer; the weights go from global memory to registers. 0: not
  /// this variant.
  int64_t decodeSteps = 0;
  /// The decode variant's warpgroups (schedule: decode_groups), each taking
  /// decodeSteps / decodeGroups of the K steps as a workgroup of its own
  /// would (Sm90DecodeKLoop.cpp); the first sums their partial tiles and
  /// alone runs the epilogue, the others leave.
  int64_t decodeGroups = 1;
  /// The warp-split variant (schedule: warp_split_k; Sm90WarpSplitK.cpp): its
  /// warps, which divide the K loop's chunks among themselves and sum their
  /// partial tiles in shared memory. 0: not this variant.
  int64_t warpSplitK = 0;
  /// The streamed activation image (schedule: image_stream;
  /// Sm90ImageStream.cpp): on the quantizer the GEMM's split count, on the
  /// GEMM the quantizer's rows per piece; 0: not streamed.
  int64_t imageStream = 0;
  /// The streamed image's 128-K chunks per row (K / 128), and on the GEMM
  /// the workgroups that read each chunk of a block (its N tiles).
  int64_t imageSteps = 0, imageReaders = 0;
  /// The quantizer loops over its pieces, publishing each (streamed image).
  bool streamsImage() const { return quantizeOnly && imageStream; }
  bool persistent() const { return persistentTilesX != 0 && !streamK; }
  /// The kernel body runs inside a loop over tiles (persistent or stream-K).
  bool tileLoop() const { return persistentTilesX != 0; }
  /// Warpgroups per workgroup: 2 for BM 128 or when asked (each warp then
  /// owns 16 weight rows, one wgmma per warpgroup and MMA step), else 1
  /// (each warp owns BN / 4 rows).
  int64_t warpgroups() const { return sm90::gemmWarpgroups(bm, twoWarpgroups, bn); }
  /// The threads of the epilogue (and of each decode group's K loop).
  int64_t threads() const { return 128 * warpgroups(); }
  /// The threads of a workgroup.
  int64_t blockThreads() const { return warpSplitK ? 32 * warpSplitK : threads() * decodeGroups; }
  /// m16 weight tiles per warp (wgmmas per MMA step and warpgroup; the
  /// warp-split variant: each warp's tiles are the workgroup's).
  int64_t tilesPerWarp() const { return warpSplitK ? bn / 16 : bn / 64 / warpgroups(); }
  /// Shared memory of a GEMM workgroup (dynamic: it exceeds 48 KiB).
  sm90::SharedLayout shared() const {
    if (warpSplitK)
      return sm90::warpSplitKSharedLayout(bn, warpSplitK);
    if (decodeSteps)
      return sm90::decodeSharedLayout(bm, bk, decodeSteps, bn);
    return sm90::sharedLayout(bm, bk, stagedActivations, stages, persistent(), bn);
  }

  int64_t chunksPerStep() const { return bk / 128; }
  int64_t tokenTiles() const { return bm / 8; }
  int64_t wordsPerBuffer() const { return bm * bk / 2; } ///< 32-bit smem words
  /// Bytes of one (chunk, step) slab of core matrices: BM/8 groups x 2 x 128.
  int64_t slabBytes() const { return bm * 32; }
  int64_t quantChunks() const { return bm * bk / (8 * threads()); }
};

/// Weight registers of one K step: words[kc][i][h] (vector<4xi32>) and one
/// scale word per chunk (i32).
struct WeightRegs {
  llvm::SmallVector<mlir::Value> words;
  llvm::SmallVector<mlir::Value> scales;
};

class Sm90Emitter {
public:
  /// `smem`: the activation buffers (i32 words); `stageVectors` /
  /// `stageWords`: the weight stages as 16-byte vectors / 32-bit words;
  /// `smemBase`: the shared address of byte 0 (i64).
  Sm90Emitter(const Config &cfg, mlir::Value smem, mlir::Value stageVectors = {},
              mlir::Value stageWords = {}, mlir::Value smemBase = {})
      : cfg(cfg), smem(smem), stageVectors(stageVectors), stageWords(stageWords),
        smemBase(smemBase) {}

  void emitIds(mlir::ImplicitLocOpBuilder &b);
  /// Lowers one op of the kernel body.
  mlir::LogicalResult lower(mlir::ImplicitLocOpBuilder &b, mlir::Operation *op);

  /// The persistent kernel (Sm90Persistent.cpp): the body of `kernel`
  /// lowered inside the loop over this workgroup's tiles.
  mlir::LogicalResult lowerPersistent(mlir::ImplicitLocOpBuilder &b, mlir::func::FuncOp kernel);
  /// The stream-K kernel (Sm90StreamK.cpp): the body of `kernel` lowered
  /// inside the loop over this workgroup's segments.
  mlir::LogicalResult lowerStreamK(mlir::ImplicitLocOpBuilder &b, mlir::func::FuncOp kernel);
  /// The streamed quantizer (Sm90ImageStream.cpp): the body of `kernel`
  /// lowered inside the loop over this workgroup's pieces of the image,
  /// each published in its flag once written.
  mlir::LogicalResult lowerStreamedQuantizer(mlir::ImplicitLocOpBuilder &b,
                                             mlir::func::FuncOp kernel);

  mlir::IRMapping mapping;
  /// The streamed image's flags (Config::imageStream): i32 per (128-row
  /// block, 128-K chunk), block * K / 128 + chunk; and the kernel's M
  /// argument (index) their counts derive from.
  mlir::Value imageFlags, rowsArg;

private:
  /// Lowers the ops of `kernel`'s body but its return (inside a tile loop).
  mlir::LogicalResult lowerBody(mlir::ImplicitLocOpBuilder &b, mlir::func::FuncOp kernel);
  /// Sets tileCount from the kernel's M argument (kernels with a tile loop).
  mlir::LogicalResult countTiles(mlir::ImplicitLocOpBuilder &b, mlir::func::FuncOp kernel);
  /// Coordinate `id` of linear tile `tile` of a persistent kernel.
  mlir::Value tileCoordinate(mlir::ImplicitLocOpBuilder &b, tile::TileIdOp id, mlir::Value tile);
  /// `v` (index math of the kernel body) as it is for linear tile `tile`.
  mlir::Value valueForTile(mlir::ImplicitLocOpBuilder &b, mlir::Value v, mlir::Value tile);
  mlir::LogicalResult lowerKLoop(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop);
  /// One K step of a pipelined loop: given the induction variable, the trip
  /// number, this step's weight registers and the accumulators (updated in
  /// place), emits the step and returns the next step's weight registers.
  using StepBody =
      llvm::function_ref<WeightRegs(mlir::Value iv, mlir::Value trip, const WeightRegs &regs,
                                    llvm::MutableArrayRef<mlir::Value> accs)>;
  /// The do-while loop (scf.while) both K loops share: accumulators and the
  /// weights read one step ahead are loop-carried; one wgmma wait_group 0
  /// after it. Returns the final accumulators.
  llvm::SmallVector<mlir::Value> emitStepLoop(mlir::ImplicitLocOpBuilder &b, mlir::Value lb,
                                              mlir::Value ub, mlir::Value step,
                                              llvm::ArrayRef<mlir::Value> accInit,
                                              const WeightRegs &first, StepBody body);
  /// The K loop of a kernel on the activation image (Sm90StagedKLoop.cpp):
  /// activations and weights arrive together in the stages.
  mlir::LogicalResult lowerStagedKLoop(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop,
                                       tile::LoadQdqOp act, tile::LoadWeightOp weight,
                                       llvm::ArrayRef<mlir::Value> init);
  /// The decode variant's K loop (Sm90DecodeKLoop.cpp).
  mlir::LogicalResult lowerDecodeKLoop(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop,
                                       tile::LoadOp load, tile::QuantizeOp quant,
                                       tile::LoadWeightOp weight, tile::LoadScalesOp scales,
                                       llvm::ArrayRef<mlir::Value> init);
  /// The warp-split variant's K loop (Sm90WarpSplitK.cpp): each warp runs
  /// its share of the chunks with mma.sync, the partial tiles are summed in
  /// warp order, and the first warp alone runs the epilogue
  /// (`firstGroupOnly`).
  mlir::LogicalResult lowerWarpSplitKLoop(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop,
                                          tile::LoadOp load, tile::QuantizeOp quant,
                                          tile::LoadWeightOp weight, tile::LoadScalesOp scales);
  /// The warp-split variant after its K loop: the warps' `partial` tiles
  /// summed in warp order as the accumulators of `loop`'s result, in the
  /// first warp, which alone runs the rest (`firstGroupOnly`).
  mlir::LogicalResult sumWarpTiles(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop,
                                   llvm::ArrayRef<mlir::Value> partial);
  /// With decode groups: the warpgroups' partial tiles of `loop` summed in
  /// warpgroup order into the first one's accumulators; the epilogue after
  /// it is the first warpgroup's alone (`firstGroupOnly`).
  void sumDecodeGroups(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop, mlir::Value group,
                       int64_t groupSteps);
  /// The barrier of decode group `group`'s threads (the workgroup's with
  /// one group).
  void groupBarrier(mlir::ImplicitLocOpBuilder &b, mlir::Value group);
  /// This lane's two 16-byte units (halves h = 0, 1) of 16-row weight tile
  /// `tile`'s 128-K chunk `chunk` (of `rowChunks`), loaded from `words` (the
  /// sm90-mma16 layout as vector<4xi32>), appended to `out`.
  void loadWeightFragments(mlir::ImplicitLocOpBuilder &b, mlir::Value words, mlir::Value tile,
                           int64_t rowChunks, mlir::Value chunk,
                           llvm::SmallVectorImpl<mlir::Value> &out);
  /// This thread's weight words and scales of K step `st` of `loop`, read
  /// from global memory (the decode variant; st < the loop's steps).
  WeightRegs fetchWeights(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop,
                          tile::LoadWeightOp weight, tile::LoadScalesOp scales, mlir::Value st);
  // Sm90Store.cpp
  mlir::LogicalResult lowerStore(mlir::ImplicitLocOpBuilder &b, tile::StoreOp op);
  /// MoE stage 1's fused epilogue (Sm90StoreActMx.cpp).
  mlir::LogicalResult lowerStoreActMx(mlir::ImplicitLocOpBuilder &b, tile::StoreActMxOp op);
  /// MoE stage 2's atomic epilogue (Sm90StoreScatterAdd.cpp).
  mlir::LogicalResult lowerStoreScatterAdd(mlir::ImplicitLocOpBuilder &b,
                                           tile::StoreScatterAddOp op);
  /// Split-K through a global workspace (Sm90Store.cpp): every split but
  /// the last stores its partial `tiles` and leaves; the last (by index)
  /// waits for them and passes their sum, in split order, to `finish`.
  /// `ws` is the workspace's global pointer.
  mlir::LogicalResult sumSplitsThroughWorkspace(
      mlir::ImplicitLocOpBuilder &b, llvm::ArrayRef<mlir::Value> tiles, mlir::Value ws,
      mlir::Value counters, int64_t splits,
      llvm::function_ref<mlir::LogicalResult(llvm::ArrayRef<mlir::Value>)> finish);
  /// Stream-K's store of this segment's `tiles` (Sm90StreamK.cpp): whole
  /// tiles leave as usual; partial ones meet in the workspace `ws` and the
  /// last of the tile's segments (by `counters`) sums them in K order.
  mlir::LogicalResult storeStreamK(mlir::ImplicitLocOpBuilder &b, llvm::ArrayRef<mlir::Value> tiles,
                                   mlir::Value out, mlir::Value row0, mlir::Value col0,
                                   mlir::Value ld, mlir::Value valid, mlir::Value ws,
                                   mlir::Value counters);
  /// The workgroup whose stream-K run holds iteration `it` (index; in the
  /// stream-K part), and the first iteration of workgroup `w`'s run.
  mlir::Value streamOwner(mlir::ImplicitLocOpBuilder &b, mlir::Value it);
  mlir::Value streamRunStart(mlir::ImplicitLocOpBuilder &b, mlir::Value w);
  /// This thread's vector q (of nVec) in slot `slot` (i64) of the f32
  /// workspace `ws` (a global pointer): 16-byte unit (slot * nVec + q) *
  /// threads + tid, so every warp stores and loads 512 contiguous bytes.
  mlir::Value workspaceVector(mlir::ImplicitLocOpBuilder &b, mlir::Value ws, mlir::Value slot,
                              int64_t q, int64_t nVec);
  /// After the workgroup's stores: the leader adds its arrival to
  /// counters[counter] (index) between gpu-scope fences, behind a barrier;
  /// every thread gets whether it was the last (the old count equal to
  /// `lastOld`), through the shared i32 at `flag`, and the last one's loads
  /// after it see every arrival's stores.
  mlir::Value arriveLast(mlir::ImplicitLocOpBuilder &b, mlir::Value counters, mlir::Value counter,
                         mlir::Value lastOld, mlir::Value flag);
  /// Emits `body` for thread 0 only (an scf.if on it).
  void inLeader(mlir::ImplicitLocOpBuilder &b, llvm::function_ref<void()> body);
  /// A barrier of the epilogue's threads: the workgroup's, or with decode
  /// groups the first warpgroup's (named barrier 1), the others having left.
  void barrier(mlir::ImplicitLocOpBuilder &b);
  /// In the leader, behind a barrier after the workgroup's stores: a
  /// gpu-scope fence (release) and counters[counter] += 1; the old count.
  mlir::Value releaseArrival(mlir::ImplicitLocOpBuilder &b, mlir::Value counters,
                             mlir::Value counter);
  /// After the workgroup's stores: the leader releases them by adding 1 to
  /// counters[counter] (index), behind a barrier, and does not wait.
  void arrive(mlir::ImplicitLocOpBuilder &b, mlir::Value counters, mlir::Value counter);
  /// The leader waits until counters[counter] holds at least `arrivals`,
  /// acquires their stores and subtracts them; a barrier then lets every
  /// thread load them.
  void waitForArrivals(mlir::ImplicitLocOpBuilder &b, mlir::Value counters, mlir::Value counter,
                       int64_t arrivals);
  /// The streamed GEMM's last thread, before the barrier ahead of step
  /// `first`'s copies when `first` starts a group of imageGroup() steps:
  /// waits until the quantizer's pieces of the group's chunks are published
  /// and acquires them for the bulk copies (Sm90ImageStream.cpp).
  void waitImageSteps(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop,
                      tile::LoadWeightOp weight, tile::LoadQdqOp act, mlir::Value first,
                      mlir::Value steps);
  /// The K steps whose image one wait acquires: the prologue's S - 1.
  int64_t imageGroup() const { return std::max<int64_t>(cfg.shared().stages - 1, 1); }
  /// After the K loop of `steps` steps: the workgroup counts itself into
  /// the flags of the chunks it read, the last reader zeroing each.
  void countImageReads(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop,
                       tile::LoadWeightOp weight, tile::LoadQdqOp act, mlir::Value steps);
  /// The global address of flag (block, chunk).
  mlir::Value imageFlag(mlir::ImplicitLocOpBuilder &b, mlir::Value block, mlir::Value chunk);
  /// Coordinate `id` (K block or row tile) of the streamed quantizer's piece.
  mlir::Value streamedCoordinate(mlir::ImplicitLocOpBuilder &b, tile::TileIdOp id,
                                 mlir::Value piece);
  /// The leader zeroes counters[counter] for the next launch.
  void resetCounter(mlir::ImplicitLocOpBuilder &b, mlir::Value counters, mlir::Value counter);
  /// Stores the bf16 tile `tiles` through shared memory (Sm90Store.cpp):
  /// stmatrix, then 16-byte stores to `out` (row-major, `ld` columns)
  /// from row `row0`, column `col0`, for the `valid` rows that exist (and,
  /// with `nTail`, the 16-byte units below column `ld`).
  mlir::LogicalResult storeThroughShared(mlir::ImplicitLocOpBuilder &b,
                                         llvm::ArrayRef<mlir::Value> tiles, mlir::Value out,
                                         mlir::Value row0, mlir::Value col0, mlir::Value ld,
                                         mlir::Value valid, bool nTail);
  using ElementFn = llvm::function_ref<void(mlir::Value acc, mlir::Value at)>;
  using ElementsOf =
      llvm::function_ref<void(int64_t i, int64_t j, mlir::Value vec, ElementFn body)>;
  /// Split-K over a cluster of `splits` workgroups: sums the partial `tiles`
  /// through distributed shared memory and stores each sum once (through
  /// `forEachElementOf` and `storeOut`).
  mlir::LogicalResult storeClusterSplitK(mlir::ImplicitLocOpBuilder &b,
                                         llvm::ArrayRef<mlir::Value> tiles, int64_t splits,
                                         ElementsOf forEachElementOf, ElementFn storeOut);

  // Sm90Quantize.cpp
  /// The activation chunks of one step starting at K element `col`.
  llvm::SmallVector<mlir::Value> loadActivations(mlir::ImplicitLocOpBuilder &b, tile::LoadOp op,
                                                 mlir::Value col);
  /// Quantizes, dequantizes and stores `chunks` (from loadActivations at `col`)
  /// into shared memory at word offset `buffer` (null: not at all, the
  /// quantizer kernels; qdq_mxfp4 of BM 64 stages there before its bulk
  /// copies to the activation image); writes the dump or (below BM 64) the
  /// image if asked.
  void quantizeToSmem(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                      llvm::ArrayRef<mlir::Value> chunks, mlir::Value col, mlir::Value buffer);
  /// One K step's chunks (loadActivations at `col`) for quantizeSteps, and
  /// the shared-memory word offset they go to (null: none).
  struct StepChunks {
    llvm::ArrayRef<mlir::Value> chunks;
    mlir::Value col, buffer;
  };
  /// quantizeToSmem (without a dump) of several K steps at once: their
  /// block maxima, shuffles and rounding interleave.
  void quantizeSteps(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                     llvm::ArrayRef<StepChunks> steps);
  /// quantizeToSmem with the codes dumped: chunk by chunk, on the f32 path.
  void quantizeAndDump(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                       llvm::ArrayRef<mlir::Value> chunks, mlir::Value col, mlir::Value buffer);
  /// The E8M0 code of each chunk's 32-block (op's rounding mode).
  llvm::SmallVector<mlir::Value> blockScaleCodes(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                                                 llvm::ArrayRef<mlir::Value> chunks);
  /// Per-thread coordinates of quantizer chunk r: token row, 16-byte unit of
  /// K inside the step (col8), and the 4-lane group position.
  struct QuantCoords {
    mlir::Value row, col8, t, p, kc;
  };
  QuantCoords quantCoords(mlir::ImplicitLocOpBuilder &b, int64_t r);
  /// Writes the 4 bf16x2 `words` of the dequantized chunk at `q` (K step
  /// at `col`) into the activation image of `op` (qdq_mxfp4 below BM 64).
  void storeImageChunk(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op, const QuantCoords &q,
                       llvm::ArrayRef<mlir::Value> words, mlir::Value col);
  /// qdq_mxfp4 of BM 64: copies the block it staged in shared memory (word 0 on,
  /// the layout of a BM-row GEMM buffer) into the activation image of `op`
  /// (K step at `col`) with bulk copies, whole 8-row groups per slab.
  void storeImageFromSmem(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op, mlir::Value col);
  /// Writes the quantized chunk at `q` (E2M1 `codes` and `sign` bits per
  /// element, E8M0 `code`) into the dump buffers of `op`.
  void dumpChunk(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op, const QuantCoords &q,
                 mlir::Value codes, mlir::Value sign, mlir::Value nanScale, mlir::Value code,
                 mlir::Value col);
  /// Stores the 4 bf16x2 words of a dequantized chunk at `q` into the
  /// buffer at word offset `buffer`, in the wgmma core-matrix layout.
  void storeChunk(mlir::ImplicitLocOpBuilder &b, const QuantCoords &q,
                  llvm::ArrayRef<mlir::Value> words, mlir::Value buffer);

  // Sm90LoadMx.cpp: activations that arrive quantized (mxtile.load_mx).
  /// Per 32-element block of this thread: its codes (vector<4xi32>, zero for
  /// rows past M) and its scale (i32).
  llvm::SmallVector<mlir::Value> loadMxActivations(mlir::ImplicitLocOpBuilder &b, tile::LoadMxOp op,
                                                   mlir::Value col);
  /// Dequantizes `loaded` (from loadMxActivations) into the buffer at `buffer`.
  void dequantizeToSmem(mlir::ImplicitLocOpBuilder &b, llvm::ArrayRef<mlir::Value> loaded,
                        mlir::Value buffer);
  /// Block r of this thread: row, t and chunk kc (p unset).
  QuantCoords mxBlockCoords(mlir::ImplicitLocOpBuilder &b, int64_t r);
  int64_t mxBlocksPerThread() const;

  // Sm90Tma.cpp: the weight stages.
  /// Thread 0 initialises the stage barriers; a proxy fence and a barrier
  /// publish them.
  void initStages(mlir::ImplicitLocOpBuilder &b);
  /// Thread 0 starts the TMA copies of the weights and scales of K step `st`
  /// of `loop` (counted from its first step; none when st >= `steps`) into
  /// stage st % S; with `act`, also the bulk copies of the step's
  /// activations from the image.
  /// `parts`: all of it, or the weights (with the stage's expect_tx) and
  /// later the activations, so the weights need not wait for the kernel
  /// that writes the image (griddepcontrol.wait between the two).
  enum class StageParts { All, Weights, Activations };
  /// Persistent kernels: `slot` is the workgroup's step counted across
  /// tiles (its stage and phase; default `st`), `tile` the linear tile
  /// whose step it is (default this one), and `enable` a further condition.
  struct StageTarget {
    mlir::Value slot, tile, enable;
  };
  void issueStage(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop, tile::LoadWeightOp w,
                  mlir::Value st, mlir::Value steps, tile::LoadQdqOp act = {},
                  StageParts parts = StageParts::All, StageTarget target = {});
  /// Starts the copies of the stream-K workgroup's step `j` (counted from
  /// its first, whole tiles first) into stage j % S, if it has that many.
  void issueStreamStep(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop, tile::LoadWeightOp w,
                       tile::LoadQdqOp act, mlir::Value j, StageParts parts = StageParts::All);
  /// Waits for step `st`'s stage to land and reads this thread's fragments.
  WeightRegs loadWeights(mlir::ImplicitLocOpBuilder &b, mlir::Value st);
  /// A pointer to byte `offset` of shared memory.
  mlir::Value sharedPtr(mlir::ImplicitLocOpBuilder &b, mlir::Value offset);

  // Sm90Wgmma.cpp
  /// Issues the step's wgmmas (weights `regs`, activations in the buffer at
  /// word offset `buffer`) into `accs` (2 x BM/2 f32, wgmma i's fragment at
  /// [i * BM/2, (i+1) * BM/2)) and commits them as one group.
  void mmaStep(mlir::ImplicitLocOpBuilder &b, const WeightRegs &regs, mlir::Value buffer,
               llvm::MutableArrayRef<mlir::Value> accs);
  /// The accumulator fragments as the per-tile vector<4xf32> the store and
  /// activation lowering use, and back.
  llvm::SmallVector<mlir::Value> flattenAccumulators(mlir::ImplicitLocOpBuilder &b,
                                                     llvm::ArrayRef<mlir::Value> tiles);
  llvm::SmallVector<mlir::Value> tileAccumulators(mlir::ImplicitLocOpBuilder &b,
                                                  llvm::ArrayRef<mlir::Value> flat);

  /// `v` as it will be when the loop's induction variable is `iv`: values
  /// computed in the loop body from the induction variable are re-emitted.
  mlir::Value valueAt(mlir::ImplicitLocOpBuilder &b, mlir::Value v, mlir::scf::ForOp loop,
                      mlir::Value iv);
  /// The same at step `st` of the loop (index, counted from its first).
  mlir::Value valueAtStep(mlir::ImplicitLocOpBuilder &b, mlir::Value v, mlir::scf::ForOp loop,
                          mlir::Value st);

  const Config &cfg;
  mlir::Value smem, stageVectors, stageWords, smemBase;
  /// Accumulator tiles: tilesPerWarp() x tokenTiles() vector<4xf32>, [i][j].
  llvm::DenseMap<mlir::Value, llvm::SmallVector<mlir::Value>> accumulators;
  mlir::Value tid, lane, warp, g, t;
  /// With decode groups, after the K loop: the scf.if in which the first
  /// warpgroup runs the epilogue (the kernel returns after it).
  mlir::scf::IfOp firstGroupOnly;
  /// moe_gemm: the rest of the kernel runs inside this if, for row blocks
  /// that hold rows (mxtile.group_block).
  mlir::scf::IfOp groupGuard;
  /// Persistent kernels: this workgroup's tile iteration, its linear tile,
  /// the next one it takes, and the number of tiles.
  mlir::Value tileIter, currentTile, nextTile, tileCount;
  /// The streamed quantizer: its row tiles (ceil(M / BM)); its piece is
  /// currentTile.
  mlir::Value streamRowTiles;
  /// Stream-K (Sm90StreamK.cpp): the K steps of a tile; the waves of whole
  /// tiles every workgroup takes first (one tile each); the first iteration
  /// of the stream-K part and its number of iterations (split evenly over
  /// the grid); this workgroup's first stream-K iteration and its number of
  /// steps in all (whole tiles and stream-K). The current segment: its K
  /// steps [segK0, segK1) of currentTile, its first step counted from the
  /// workgroup's first (segBase), whether it is the workgroup's first
  /// stream-K segment (i1), and the shared byte offset where its output
  /// tile is staged (the stage of its last step, free once the loop ends).
  mlir::Value tileSteps, streamWaves, streamBase, streamTotal, streamStart, streamLen;
  mlir::Value segK0, segK1, segBase, segFirstStream, outputRegion;
};

// Sm90Mma.cpp: E2M1/E8M0 -> BF16 in registers.
/// E8M0 byte `which` (i32, 0..3) of `word` as a bf16x2 splat of 2^(S-127),
/// or, `folded` (S < 128 only), of 2^(S-1) = 2^126 * 2^(S-127).
mlir::Value scalePair(mlir::ImplicitLocOpBuilder &b, mlir::Value word, mlir::Value which,
                      bool folded = false);
/// Nibbles j and j + 4 (j < 4) of `word` (8 packed E2M1) as bf16x2 bits
/// (i32, nibble j in the low half), scaled by `scale` from scalePair with
/// the same `folded`.
mlir::Value dequantPair(mlir::ImplicitLocOpBuilder &b, mlir::Value word, int j, mlir::Value scale,
                        bool folded = false);
/// The same for a stored sm90-mma16 weight word, whose bits are reordered
/// for a cheaper extraction (Format/Sm90WeightBits.h).
mlir::Value dequantWeightPair(mlir::ImplicitLocOpBuilder &b, mlir::Value word, int j,
                              mlir::Value scale, bool folded = false);

// Sm90Quantize.cpp: the quantizer's arithmetic, shared with the warp-split
// variant.
/// The |x| maximum of an 8-element bf16 chunk, as the bit pattern in an i32.
mlir::Value chunkAmax(mlir::ImplicitLocOpBuilder &b, mlir::Value chunk);
/// The dequantized words of each 8-element chunk (word j: elements j and
/// j + 4) for E8M0 `codes` (one per chunk), zeros where `rowOk` is false.
llvm::SmallVector<llvm::SmallVector<mlir::Value>> qdqChunks(mlir::ImplicitLocOpBuilder &b,
                                                            llvm::ArrayRef<mlir::Value> chunks,
                                                            llvm::ArrayRef<mlir::Value> codes,
                                                            llvm::ArrayRef<mlir::Value> rowOk);

/// The A fragment (a0..a3) of one m16 weight tile for nibble pairs j0 and
/// j0 + 1: words `w0` / `w1` of its rows g / g + 8, scaled by `sc0` / `sc1`
/// (Sm90Mma.cpp; the wgmma and mma.sync K loops share it).
llvm::SmallVector<mlir::Value> weightFragment(mlir::ImplicitLocOpBuilder &b, mlir::Value w0,
                                              mlir::Value w1, int j0, mlir::Value sc0,
                                              mlir::Value sc1, bool folded);

/// Whether a GEMM's tiles reach past the activations' K or C's N columns
/// (`ld`): they cover the weights' padded K and rows (gemmWeightK,
/// gemmWeightRows), which may be more than one tile past them (K = 128
/// runs two steps; N = 2880 in BN 64 tiles covers 2944).
inline bool sm90KTail(mlir::Value ld) {
  return hasTail(ld, [](int64_t k) { return gemmWeightK(Arch::SM90A, k); });
}
inline bool sm90NTail(mlir::Value ld) {
  return hasTail(ld, [](int64_t n) { return gemmWeightRows(Arch::SM90A, n); });
}

/// The activation image's slab of MMA step 0 of 128-K chunk `chunk` of
/// 128-row block `block`, the image's K being `ld` (Kernels/Sm90Pipeline.h:
/// 8 slabs per chunk, the chunks of a block in turn). Index values.
mlir::Value imageSlab0(mlir::ImplicitLocOpBuilder &b, mlir::Value block, mlir::Value ld,
                       mlir::Value chunk);

/// Orders this thread's shared-memory writes before the async proxy (wgmma)
/// reads them; a barrier must follow.
void fenceProxyAsync(mlir::ImplicitLocOpBuilder &b);

} // namespace mxfp4::nv

#endif // MXFP4_LIB_CONVERSION_TILETONVVM_NVLOWERING_H
