//===- Execute.cpp - Workgroups, waves and lanes of a decoded kernel ------===//
//
// Each lane runs its own copy of the program on its own frame. A lane runs
// freely until it reaches an operation the wave executes together (an LDS
// access, a cross-lane or matrix instruction, s_barrier); there it parks.
// Once every live lane of the wave is parked, the wave executes the parked
// operation that comes first in the function's layout, for the lanes parked
// on it (the active lanes, in lane order), and lets them run on. For the
// structured control flow the lowering emits (blocks in program order,
// uniform loops), this is the lockstep execution of the hardware: lanes
// that skip a branch wait at the join until the others reach it, and LDS
// accesses of one wave happen in instruction order. Wave-wide instructions
// (MFMA, WMMA, s_barrier) that not every lane of the wave reaches are
// errors rather than a guess at what the hardware does.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "Scalar.h"
#include "WaveOps.h"

#include "mxfp4/AmdSim/Simulator.h"
#include "mxfp4/Support/BF16.h"

#include "llvm/IR/InstrTypes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

namespace mxfp4::amdsim {
namespace {

/// A launch that runs longer than this is reported as a hang.
constexpr uint64_t kMaxLaneInstructions = uint64_t(1) << 33;

struct Lane {
  uint64_t *frame = nullptr;
  uint32_t pc = 0;
  bool done = false;
  unsigned id[3] = {0, 0, 0};
  unsigned laneInWave = 0;
};

enum class WaveState : uint8_t { Running, AtBarrier, Finished };

class Runner {
public:
  Runner(const Program &p, const GlobalMemory &memory, RunStats &stats)
      : p(p), memory(memory), stats(stats) {}

  Error workgroup(const LaunchGeometry &g, const unsigned groupId[3],
                  const std::vector<uint64_t> &startFrame);

private:
  Error runLane(Lane &l);
  Error execute(Lane &l, const Op &op);
  Error branch(Lane &l, const Op &op);
  Error laneIntrinsic(Lane &l, const Op &op);
  Error waveOp(const Op &op, const std::vector<Lane *> &group, const std::vector<Lane *> &wave);
  Error stepWave(const std::vector<Lane *> &wave, WaveState &state);
  Expected<uint8_t *> address(const Op &op, uint64_t addr, unsigned addressSpace, uint64_t bytes);

  template <typename... Parts> Error failAt(const Op &op, const Parts &...parts) {
    return makeError("amdgpu-sim: ", parts..., " at `", describe(op), "` (workgroup ", group[0],
                     ",", group[1], ",", group[2], ")");
  }

  const Program &p;
  const GlobalMemory &memory;
  RunStats &stats;
  std::vector<uint8_t> lds;
  unsigned group[3] = {0, 0, 0};
  std::vector<uint64_t> scratch;
};

Expected<uint8_t *> Runner::address(const Op &op, uint64_t addr, unsigned addressSpace,
                                    uint64_t bytes) {
  if (addressSpace == 3) {
    if (addr + bytes > lds.size())
      return failAt(op, "LDS access of ", bytes, " bytes at ", addr, " is outside the ", lds.size(),
                    " bytes of LDS");
    return lds.data() + addr;
  }
  if (addressSpace == 0 || addressSpace == 1 || addressSpace == 4) {
    if (!memory.contains(addr, bytes))
      return failAt(op, "global access of ", bytes, " bytes at address ", addr,
                    " is outside every buffer");
    return reinterpret_cast<uint8_t *>(uintptr_t(addr));
  }
  return failAt(op, "address space ", addressSpace, " is not modelled");
}

Error Runner::branch(Lane &l, const Op &op) {
  const std::vector<Edge> &edges = p.edges[op.aux];
  const Edge *e = &edges[0];
  if (op.code == Code::CondBr) {
    e = (l.frame[op.a] & 1) ? &edges[0] : &edges[1];
  } else if (op.code == Code::Switch) {
    const uint64_t v = maskBits(l.frame[op.a], op.at.bits);
    for (const auto &[value, index] : p.switchCases[size_t(op.imm)])
      if (maskBits(value, op.at.bits) == v) {
        e = &edges[index];
        break;
      }
  }
  // Phis read their inputs before any of them is written.
  if (!e->moves.empty()) {
    scratch.clear();
    for (const PhiMove &m : e->moves)
      scratch.insert(scratch.end(), l.frame + m.src, l.frame + m.src + m.count);
    size_t at = 0;
    for (const PhiMove &m : e->moves) {
      std::copy(scratch.begin() + at, scratch.begin() + at + m.count, l.frame + m.dst);
      at += m.count;
    }
  }
  l.pc = e->target;
  return Error::success();
}

Error Runner::runLane(Lane &l) {
  uint64_t executed = 0;
  while (!l.done) {
    const Op &op = p.ops[l.pc];
    if (op.sync)
      break;
    ++executed;
    switch (op.code) {
    case Code::Br:
    case Code::CondBr:
    case Code::Switch:
      if (Error e = branch(l, op))
        return e;
      continue;
    case Code::Ret:
      l.done = true;
      continue;
    default:
      if (Error e = execute(l, op))
        return e;
      ++l.pc;
    }
  }
  stats.laneInstructions += executed;
  if (stats.laneInstructions > kMaxLaneInstructions)
    return makeError("amdgpu-sim: more than ", kMaxLaneInstructions,
                     " lane instructions: the kernel does not terminate");
  return Error::success();
}

Error Runner::execute(Lane &l, const Op &op) {
  uint64_t *f = l.frame;
  const unsigned bits = op.rt.bits;
  switch (op.code) {
  case Code::Add:
  case Code::Sub:
  case Code::Mul:
  case Code::UDiv:
  case Code::SDiv:
  case Code::URem:
  case Code::SRem:
  case Code::Shl:
  case Code::LShr:
  case Code::AShr:
  case Code::And:
  case Code::Or:
  case Code::Xor: {
    bool undefined = false;
    for (uint32_t i = 0; i < op.n; ++i)
      f[op.dst + i] = maskBits(intBinary(op.code, f[op.a + i], f[op.b + i], bits, undefined), bits);
    if (undefined)
      return failAt(op, "undefined integer arithmetic (division by zero or an oversized shift)");
    return Error::success();
  }
  case Code::FAdd:
  case Code::FSub:
  case Code::FMul:
  case Code::FDiv:
    if (op.rt.ty != Ty::F32 && op.rt.ty != Ty::F64)
      return failAt(op, "arithmetic on this float type is not modelled");
    for (uint32_t i = 0; i < op.n; ++i) {
      if (op.rt.ty == Ty::F32) {
        const float x = bitsToFloat(uint32_t(f[op.a + i])), y = bitsToFloat(uint32_t(f[op.b + i]));
        const float r = op.code == Code::FAdd   ? x + y
                        : op.code == Code::FSub ? x - y
                        : op.code == Code::FMul ? x * y
                                                : x / y;
        f[op.dst + i] = floatBits(r);
      } else {
        const double x = toDouble(f[op.a + i], Ty::F64), y = toDouble(f[op.b + i], Ty::F64);
        const double r = op.code == Code::FAdd   ? x + y
                         : op.code == Code::FSub ? x - y
                         : op.code == Code::FMul ? x * y
                                                 : x / y;
        f[op.dst + i] = doubleBits(r);
      }
    }
    return Error::success();
  case Code::FNeg:
    for (uint32_t i = 0; i < op.n; ++i)
      f[op.dst + i] = f[op.a + i] ^ (uint64_t(1) << (bits - 1));
    return Error::success();
  case Code::ICmp:
    for (uint32_t i = 0; i < op.n; ++i)
      f[op.dst + i] = intCompare(op.imm, f[op.a + i], f[op.b + i], op.at.bits);
    return Error::success();
  case Code::FCmp:
    for (uint32_t i = 0; i < op.n; ++i)
      f[op.dst + i] =
          floatCompare(op.imm, toDouble(f[op.a + i], op.at.ty), toDouble(f[op.b + i], op.at.ty));
    return Error::success();
  case Code::Select:
    for (uint32_t i = 0; i < op.n; ++i) {
      const bool c = f[op.a + (op.an == 1 ? 0 : i)] & 1;
      f[op.dst + i] = c ? f[op.b + i] : f[op.c + i];
    }
    return Error::success();
  case Code::ZExt:
  case Code::Trunc:
    for (uint32_t i = 0; i < op.n; ++i)
      f[op.dst + i] = maskBits(maskBits(f[op.a + i], op.at.bits), bits);
    return Error::success();
  case Code::SExt:
    for (uint32_t i = 0; i < op.n; ++i)
      f[op.dst + i] = maskBits(uint64_t(signExtend(f[op.a + i], op.at.bits)), bits);
    return Error::success();
  case Code::Copy:
    std::copy(f + op.a, f + op.a + op.n, f + op.dst);
    return Error::success();
  case Code::BitCast: {
    if (op.at.bits == bits && op.an == op.n) {
      std::copy(f + op.a, f + op.a + op.n, f + op.dst);
      return Error::success();
    }
    std::vector<uint8_t> buffer;
    packBits(f + op.a, op.an, op.at.bits, buffer);
    unpackBits(buffer, op.n, bits, f + op.dst);
    return Error::success();
  }
  case Code::FPTrunc:
    for (uint32_t i = 0; i < op.n; ++i) {
      if (op.at.ty == Ty::F32 && op.rt.ty == Ty::BF16)
        f[op.dst + i] = floatToBf16(bitsToFloat(uint32_t(f[op.a + i])));
      else if (op.at.ty == Ty::F64 && op.rt.ty == Ty::F32)
        f[op.dst + i] = floatBits(float(toDouble(f[op.a + i], Ty::F64)));
      else
        return failAt(op, "this float truncation is not modelled");
    }
    return Error::success();
  case Code::FPExt:
    for (uint32_t i = 0; i < op.n; ++i) {
      const double d = toDouble(f[op.a + i], op.at.ty);
      if (op.rt.ty == Ty::F32)
        f[op.dst + i] = floatBits(float(d)); // exact: a narrower format widens
      else if (op.rt.ty == Ty::F64)
        f[op.dst + i] = doubleBits(d);
      else
        return failAt(op, "this float extension is not modelled");
    }
    return Error::success();
  case Code::FPToUI:
  case Code::FPToSI:
    for (uint32_t i = 0; i < op.n; ++i) {
      const double d = std::trunc(toDouble(f[op.a + i], op.at.ty));
      const bool fits = op.code == Code::FPToSI
                            ? d >= -std::ldexp(1.0, bits - 1) && d < std::ldexp(1.0, bits - 1)
                            : d >= 0 && d < std::ldexp(1.0, bits);
      if (!fits)
        return failAt(op, "float to integer conversion out of range (poison)");
      f[op.dst + i] = maskBits(op.code == Code::FPToSI ? uint64_t(int64_t(d)) : uint64_t(d), bits);
    }
    return Error::success();
  case Code::UIToFP:
  case Code::SIToFP:
    for (uint32_t i = 0; i < op.n; ++i) {
      const uint64_t v = maskBits(f[op.a + i], op.at.bits);
      if (op.rt.ty == Ty::F32)
        f[op.dst + i] =
            floatBits(op.code == Code::SIToFP ? float(signExtend(v, op.at.bits)) : float(v));
      else if (op.rt.ty == Ty::F64)
        f[op.dst + i] =
            doubleBits(op.code == Code::SIToFP ? double(signExtend(v, op.at.bits)) : double(v));
      else
        return failAt(op, "integer conversion to this float type is not modelled");
    }
    return Error::success();
  case Code::ExtractElement: {
    const uint64_t index = f[op.b];
    if (index >= op.an)
      return failAt(op, "element ", index, " of a ", op.an, "-element vector (poison)");
    f[op.dst] = f[op.a + index];
    return Error::success();
  }
  case Code::InsertElement: {
    const uint64_t index = f[op.c];
    if (index >= op.n)
      return failAt(op, "element ", index, " of a ", op.n, "-element vector (poison)");
    std::copy(f + op.a, f + op.a + op.n, f + op.dst);
    f[op.dst + index] = f[op.b];
    return Error::success();
  }
  case Code::ShuffleVector: {
    const std::vector<int32_t> &mask = p.shuffleMasks[op.aux];
    for (uint32_t i = 0; i < op.n; ++i) {
      const int32_t m = mask[i];
      f[op.dst + i] = m < 0 ? 0 : uint32_t(m) < op.an ? f[op.a + m] : f[op.b + (m - op.an)];
    }
    return Error::success();
  }
  case Code::Gep: {
    uint64_t addr = f[op.a] + uint64_t(op.imm);
    for (const GepIndex &g : p.gepIndices[op.aux])
      addr += uint64_t(signExtend(f[g.slot], g.bits)) * uint64_t(g.scale); // wraps like the GPU
    f[op.dst] = maskBits(addr, bits);
    return Error::success();
  }
  case Code::Load:
  case Code::Store: {
    const unsigned addressSpace = op.at.addressSpace;
    const unsigned elementBytes = (bits + 7) / 8;
    const uint64_t bytes = uint64_t(elementBytes) * op.n;
    Expected<uint8_t *> at = address(op, f[op.a], addressSpace, bytes);
    if (!at)
      return at.takeError();
    uint8_t *m = *at;
    if (op.code == Code::Load) {
      for (uint32_t i = 0; i < op.n; ++i) {
        uint64_t v = 0;
        std::memcpy(&v, m + size_t(i) * elementBytes, elementBytes);
        f[op.dst + i] = maskBits(v, bits);
      }
    } else {
      for (uint32_t i = 0; i < op.n; ++i) {
        const uint64_t v = f[op.b + i];
        std::memcpy(m + size_t(i) * elementBytes, &v, elementBytes);
      }
    }
    return Error::success();
  }
  case Code::AtomicRmw: {
    const unsigned bytes = bits / 8;
    Expected<uint8_t *> at = address(op, f[op.a], op.at.addressSpace, bytes);
    if (!at)
      return at.takeError();
    uint64_t old = 0;
    std::memcpy(&old, *at, bytes);
    const uint64_t x = maskBits(old, bits), y = maskBits(f[op.b], bits);
    bool unknown = false;
    uint64_t r = atomicCombine(op.imm, x, y, bits, unknown);
    if (unknown)
      return failAt(op, "atomic operation not modelled");
    r = maskBits(r, bits);
    std::memcpy(*at, &r, bytes);
    f[op.dst] = x;
    return Error::success();
  }
  case Code::Intrinsic:
    return laneIntrinsic(l, op);
  default:
    return failAt(op, "operation not executable here");
  }
}

Error Runner::laneIntrinsic(Lane &l, const Op &op) {
  uint64_t *f = l.frame;
  auto arg = [&](unsigned i, unsigned element = 0) { return f[op.args[i] + element]; };
  const unsigned bits = op.rt.bits;
  switch (op.intr) {
  case Intr::WorkitemId:
    f[op.dst] = l.id[op.imm];
    return Error::success();
  case Intr::WorkgroupId:
    f[op.dst] = group[op.imm];
    return Error::success();
  case Intr::MbcntLo:
  case Intr::MbcntHi: {
    // The set bits of `mask` (one half of the wave's lanes) below this lane.
    const uint32_t mask = uint32_t(arg(0));
    const unsigned base = op.intr == Intr::MbcntLo ? 0 : 32;
    const unsigned below = l.laneInWave <= base ? 0 : std::min(l.laneInWave - base, 32u);
    const uint32_t bitsBelow = below >= 32 ? mask : mask & ((uint32_t(1) << below) - 1);
    f[op.dst] = uint32_t(arg(1)) + uint32_t(__builtin_popcount(bitsBelow));
    return Error::success();
  }
  case Intr::FAbs:
    for (uint32_t i = 0; i < op.n; ++i)
      f[op.dst + i] = arg(0, i) & ~(uint64_t(1) << (bits - 1));
    return Error::success();
  case Intr::UMin:
  case Intr::UMax:
  case Intr::SMin:
  case Intr::SMax:
    for (uint32_t i = 0; i < op.n; ++i) {
      const uint64_t x = maskBits(arg(0, i), bits), y = maskBits(arg(1, i), bits);
      const int64_t sx = signExtend(x, bits), sy = signExtend(y, bits);
      uint64_t r;
      if (op.intr == Intr::UMin)
        r = std::min(x, y);
      else if (op.intr == Intr::UMax)
        r = std::max(x, y);
      else if (op.intr == Intr::SMin)
        r = uint64_t(std::min(sx, sy));
      else
        r = uint64_t(std::max(sx, sy));
      f[op.dst + i] = maskBits(r, bits);
    }
    return Error::success();
  case Intr::UAddSat:
  case Intr::USubSat:
  case Intr::SAddSat:
  case Intr::SSubSat:
    for (uint32_t i = 0; i < op.n; ++i) {
      const uint64_t x = maskBits(arg(0, i), bits), y = maskBits(arg(1, i), bits);
      uint64_t r;
      if (op.intr == Intr::UAddSat) {
        r = std::min(x + y, maskBits(~uint64_t(0), bits)); // bits < 64 here
      } else if (op.intr == Intr::USubSat) {
        r = x > y ? x - y : 0;
      } else {
        // Exact in 128 bits, then clamped to the signed range.
        const __int128 sum = op.intr == Intr::SAddSat
                                 ? __int128(signExtend(x, bits)) + signExtend(y, bits)
                                 : __int128(signExtend(x, bits)) - signExtend(y, bits);
        const __int128 hi = (__int128(1) << (bits - 1)) - 1, lo = -hi - 1;
        r = uint64_t(int64_t(std::max(lo, std::min(hi, sum))));
      }
      f[op.dst + i] = maskBits(r, bits);
    }
    if (bits >= 64 && op.intr == Intr::UAddSat)
      return failAt(op, "64-bit saturating addition is not modelled");
    return Error::success();
  case Intr::Abs:
    for (uint32_t i = 0; i < op.n; ++i) {
      const int64_t x = signExtend(arg(0, i), bits);
      f[op.dst + i] = maskBits(x < 0 ? uint64_t(0) - uint64_t(x) : uint64_t(x), bits);
    }
    return Error::success();
  case Intr::MinNum:
  case Intr::MaxNum:
    for (uint32_t i = 0; i < op.n; ++i) {
      const double x = toDouble(arg(0, i), op.rt.ty), y = toDouble(arg(1, i), op.rt.ty);
      bool pickX = std::isnan(y) || (!std::isnan(x) && (op.intr == Intr::MinNum ? x <= y : x >= y));
      f[op.dst + i] = pickX ? arg(0, i) : arg(1, i);
    }
    return Error::success();
  case Intr::Fma:
    for (uint32_t i = 0; i < op.n; ++i) {
      if (op.rt.ty == Ty::F32)
        f[op.dst + i] =
            floatBits(std::fma(bitsToFloat(uint32_t(arg(0, i))), bitsToFloat(uint32_t(arg(1, i))),
                               bitsToFloat(uint32_t(arg(2, i)))));
      else if (op.rt.ty == Ty::F64)
        f[op.dst + i] =
            doubleBits(std::fma(toDouble(arg(0, i), Ty::F64), toDouble(arg(1, i), Ty::F64),
                                toDouble(arg(2, i), Ty::F64)));
      else
        return failAt(op, "fma on this float type is not modelled");
    }
    return Error::success();
  case Intr::ReduceUMax:
  case Intr::ReduceUMin:
  case Intr::ReduceSMax:
  case Intr::ReduceSMin:
  case Intr::ReduceAdd:
  case Intr::ReduceOr:
  case Intr::ReduceAnd:
  case Intr::ReduceXor: {
    uint64_t r = maskBits(arg(0, 0), bits);
    for (uint32_t i = 1; i < op.argCounts[0]; ++i) {
      const uint64_t x = maskBits(arg(0, i), bits);
      switch (op.intr) {
      case Intr::ReduceUMax:
        r = std::max(r, x);
        break;
      case Intr::ReduceUMin:
        r = std::min(r, x);
        break;
      case Intr::ReduceSMax:
        r = signExtend(x, bits) > signExtend(r, bits) ? x : r;
        break;
      case Intr::ReduceSMin:
        r = signExtend(x, bits) < signExtend(r, bits) ? x : r;
        break;
      case Intr::ReduceAdd:
        r = maskBits(r + x, bits);
        break;
      case Intr::ReduceOr:
        r |= x;
        break;
      case Intr::ReduceAnd:
        r &= x;
        break;
      default:
        r ^= x;
      }
    }
    f[op.dst] = r;
    return Error::success();
  }
  case Intr::BitReverse:
  case Intr::CtPop:
  case Intr::Ctlz:
  case Intr::Cttz:
    for (uint32_t i = 0; i < op.n; ++i) {
      const uint64_t x = maskBits(arg(0, i), bits);
      uint64_t r = 0;
      if (op.intr == Intr::BitReverse) {
        for (unsigned b = 0; b < bits; ++b)
          r |= ((x >> b) & 1) << (bits - 1 - b);
      } else if (op.intr == Intr::CtPop) {
        r = uint64_t(__builtin_popcountll(x));
      } else if (x == 0) {
        r = bits;
      } else if (op.intr == Intr::Ctlz) {
        r = uint64_t(__builtin_clzll(x)) - (64 - bits);
      } else {
        r = uint64_t(__builtin_ctzll(x));
      }
      f[op.dst + i] = r;
    }
    return Error::success();
  case Intr::CvtScalePkFp4Bf16:
  case Intr::CvtScalePkFp4F32: {
    // (old, src..., scale, byte): byte `sel` of old <- two E2M1 codes.
    const bool bf16 = op.intr == Intr::CvtScalePkFp4Bf16;
    float x0, x1, scale;
    uint64_t sel;
    if (bf16) {
      x0 = bf16ToFloat(uint16_t(arg(1, 0)));
      x1 = bf16ToFloat(uint16_t(arg(1, 1)));
      scale = bitsToFloat(uint32_t(arg(2)));
      sel = arg(3);
    } else {
      x0 = bitsToFloat(uint32_t(arg(1)));
      x1 = bitsToFloat(uint32_t(arg(2)));
      scale = bitsToFloat(uint32_t(arg(3)));
      sel = arg(4);
    }
    if (sel > 3)
      return failAt(op, "destination byte ", sel, " is out of range");
    const uint32_t codes = uint32_t(roundToE2M1(x0 / scale)) | uint32_t(roundToE2M1(x1 / scale))
                                                                   << 4;
    const uint32_t old = uint32_t(arg(0));
    f[op.dst] = (old & ~(0xFFu << (8 * sel))) | codes << (8 * sel);
    return Error::success();
  }
  case Intr::CvtScalePk8Fp4Bf16:
  case Intr::CvtScalePk8Fp4F32: {
    const float scale = bitsToFloat(uint32_t(arg(1)));
    uint32_t r = 0;
    for (unsigned i = 0; i < 8; ++i) {
      const float x = op.intr == Intr::CvtScalePk8Fp4Bf16 ? bf16ToFloat(uint16_t(arg(0, i)))
                                                          : bitsToFloat(uint32_t(arg(0, i)));
      r |= uint32_t(roundToE2M1(x / scale)) << (4 * i);
    }
    f[op.dst] = r;
    return Error::success();
  }
  default:
    return failAt(op, "intrinsic not executable per lane");
  }
}

Error Runner::waveOp(const Op &op, const std::vector<Lane *> &groupLanes,
                     const std::vector<Lane *> &wave) {
  ++stats.waveOps;
  const bool wholeWave = groupLanes.size() == wave.size() && wave.size() == p.waveSize;
  // The lanes executing the operation, by position in the wave (null: inactive).
  std::vector<const Lane *> active(p.waveSize, nullptr);
  for (const Lane *l : groupLanes)
    active[l->laneInWave] = l;
  switch (op.intr) {
  case Intr::ReadFirstLane: {
    const Lane &first = *groupLanes.front();
    for (Lane *l : groupLanes)
      std::copy(first.frame + op.args[0], first.frame + op.args[0] + op.n, l->frame + op.dst);
    return Error::success();
  }
  case Intr::DsSwizzle: {
    std::vector<uint64_t> result(groupLanes.size());
    for (size_t i = 0; i < groupLanes.size(); ++i) {
      Expected<unsigned> source =
          swizzleSource(groupLanes[i]->laneInWave, uint32_t(groupLanes[i]->frame[op.args[1]]));
      if (!source)
        return failAt(op, source.takeError().message());
      const Lane *s = *source < active.size() ? active[*source] : nullptr;
      result[i] = s ? s->frame[op.args[0]] : 0; // an inactive source reads 0
    }
    for (size_t i = 0; i < groupLanes.size(); ++i)
      groupLanes[i]->frame[op.dst] = result[i];
    return Error::success();
  }
  case Intr::DsBpermute: {
    // Lane i reads `data` of lane (address[i] / 4) mod the wave size.
    std::vector<uint64_t> result(groupLanes.size());
    for (size_t i = 0; i < groupLanes.size(); ++i) {
      const unsigned source = unsigned(groupLanes[i]->frame[op.args[0]] >> 2) % p.waveSize;
      if (!active[source])
        return failAt(op, "lane ", groupLanes[i]->laneInWave, " reads inactive lane ", source,
                      " (not modelled)");
      result[i] = active[source]->frame[op.args[1]];
    }
    for (size_t i = 0; i < groupLanes.size(); ++i)
      groupLanes[i]->frame[op.dst] = result[i];
    return Error::success();
  }
  case Intr::MfmaScale16x16x128:
  case Intr::MfmaScale32x32x64:
  case Intr::WmmaScale16x16x128: {
    if (!wholeWave)
      return failAt(op, "a matrix instruction reached by ", groupLanes.size(), " of the ",
                    p.waveSize, " lanes of a wave");
    const bool wmma = op.intr == Intr::WmmaScale16x16x128;
    // Operand positions: MFMA (A, B, C, cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b);
    // WMMA (fmt_a, A, fmt_b, B, c_mod, C, sel_a, fmt_sa, scale_a, sel_b, fmt_sb, scale_b, ...).
    const unsigned ia = wmma ? 1 : 0, ib = wmma ? 3 : 1, ic = wmma ? 5 : 2;
    const uint64_t *f0 = groupLanes.front()->frame;
    ScaledMmaLanes in;
    in.lanes = p.waveSize;
    in.regsA = op.argCounts[ia];
    in.regsB = op.argCounts[ib];
    in.accumulators = op.argCounts[ic];
    if (wmma) {
      if (f0[op.args[4]] != 0)
        return failAt(op, "WMMA C modifiers are not modelled");
      in.formatA = int(f0[op.args[0]]);
      in.formatB = int(f0[op.args[2]]);
      in.selA = int(f0[op.args[6]]);
      in.scaleFormatA = int(f0[op.args[7]]);
      in.selB = int(f0[op.args[9]]);
      in.scaleFormatB = int(f0[op.args[10]]);
    } else {
      in.formatA = int(f0[op.args[3]]);
      in.formatB = int(f0[op.args[4]]);
      in.selA = int(f0[op.args[5]]);
      in.selB = int(f0[op.args[7]]);
    }
    const unsigned isa = wmma ? 8 : 6, isb = wmma ? 11 : 8;
    for (const Lane *l : wave) {
      for (unsigned r = 0; r < in.regsA; ++r)
        in.a.push_back(uint32_t(l->frame[op.args[ia] + r]));
      for (unsigned r = 0; r < in.regsB; ++r)
        in.b.push_back(uint32_t(l->frame[op.args[ib] + r]));
      for (unsigned r = 0; r < in.accumulators; ++r)
        in.c.push_back(bitsToFloat(uint32_t(l->frame[op.args[ic] + r])));
      in.scaleA.push_back(uint32_t(l->frame[op.args[isa]]));
      in.scaleB.push_back(uint32_t(l->frame[op.args[isb]]));
    }
    const ScaledMma kind = op.intr == Intr::MfmaScale16x16x128  ? ScaledMma::Mfma16x16x128
                           : op.intr == Intr::MfmaScale32x32x64 ? ScaledMma::Mfma32x32x64
                                                                : ScaledMma::Wmma16x16x128;
    Expected<std::vector<float>> d = scaledMma(kind, in);
    if (!d)
      return failAt(op, d.takeError().message());
    for (size_t i = 0; i < wave.size(); ++i)
      for (unsigned r = 0; r < in.accumulators; ++r)
        wave[i]->frame[op.dst + r] = floatBits((*d)[i * in.accumulators + r]);
    return Error::success();
  }
  default:
    return failAt(op, "not a wave operation");
  }
}

Error Runner::stepWave(const std::vector<Lane *> &wave, WaveState &state) {
  std::vector<Lane *> live;
  for (Lane *l : wave) {
    if (Error e = runLane(*l))
      return e;
    if (!l->done)
      live.push_back(l);
  }
  if (live.empty()) {
    state = WaveState::Finished;
    return Error::success();
  }
  uint32_t pc = live.front()->pc;
  for (const Lane *l : live)
    pc = std::min(pc, l->pc);
  std::vector<Lane *> groupLanes;
  for (Lane *l : live)
    if (l->pc == pc)
      groupLanes.push_back(l);
  const Op &op = p.ops[pc];
  if (op.code == Code::Intrinsic && op.intr == Intr::Barrier) {
    if (groupLanes.size() != wave.size())
      return failAt(op, "s_barrier reached by ", groupLanes.size(), " of the ", wave.size(),
                    " lanes of a wave");
    state = WaveState::AtBarrier;
    return Error::success();
  }
  if (op.code == Code::Intrinsic) {
    if (Error e = waveOp(op, groupLanes, wave))
      return e;
  } else {
    for (Lane *l : groupLanes) {
      if (Error e = execute(*l, op))
        return e;
      ++stats.laneInstructions;
    }
  }
  for (Lane *l : groupLanes)
    ++l->pc;
  return Error::success();
}

Error Runner::workgroup(const LaunchGeometry &g, const unsigned groupId[3],
                        const std::vector<uint64_t> &startFrame) {
  std::copy(groupId, groupId + 3, group);
  const unsigned threads = g.block[0] * g.block[1] * g.block[2];
  const unsigned waves = (threads + p.waveSize - 1) / p.waveSize;
  // Uninitialized LDS reads as NaN-like bytes, so a missing write shows.
  lds.assign(p.ldsBytes + g.sharedBytes, 0xFF);
  std::vector<uint64_t> frames(size_t(threads) * p.frameWords);
  std::vector<Lane> lanes(threads);
  for (unsigned t = 0; t < threads; ++t) {
    Lane &l = lanes[t];
    l.frame = frames.data() + size_t(t) * p.frameWords;
    std::copy(startFrame.begin(), startFrame.end(), l.frame);
    l.pc = p.entry;
    l.id[0] = t % g.block[0];
    l.id[1] = (t / g.block[0]) % g.block[1];
    l.id[2] = t / (g.block[0] * g.block[1]);
    l.laneInWave = t % p.waveSize;
  }
  std::vector<std::vector<Lane *>> waveLanes(waves);
  for (unsigned t = 0; t < threads; ++t)
    waveLanes[t / p.waveSize].push_back(&lanes[t]);
  std::vector<WaveState> states(waves, WaveState::Running);
  while (true) {
    bool running = false;
    for (unsigned w = 0; w < waves; ++w) {
      if (states[w] != WaveState::Running)
        continue;
      running = true;
      // A wave runs until it waits at a barrier or ends.
      while (states[w] == WaveState::Running)
        if (Error e = stepWave(waveLanes[w], states[w]))
          return e;
    }
    if (running)
      continue;
    bool waiting = false;
    for (unsigned w = 0; w < waves; ++w)
      if (states[w] == WaveState::AtBarrier) {
        waiting = true;
        states[w] = WaveState::Running;
        for (Lane *l : waveLanes[w])
          ++l->pc;
      }
    if (!waiting)
      return Error::success();
    ++stats.barriers;
  }
}

} // namespace

Expected<RunStats> runProgram(const Program &p, const LaunchGeometry &g, void **args,
                              const GlobalMemory &memory, uint64_t orderSeed) {
  if (g.block[0] * g.block[1] * g.block[2] == 0 || g.grid[0] * g.grid[1] * g.grid[2] == 0)
    return makeError("amdgpu-sim: an empty grid or workgroup");
  if (!args && !p.arguments.empty())
    return makeError("amdgpu-sim: the kernel takes ", p.arguments.size(), " arguments, got none");
  std::vector<uint64_t> start = p.initialFrame;
  for (size_t i = 0; i < p.arguments.size(); ++i) {
    const Argument &a = p.arguments[i];
    uint64_t v = 0;
    if (a.type.ty == Ty::Ptr)
      v = uint64_t(reinterpret_cast<uintptr_t>(*static_cast<void **>(args[i])));
    else
      std::memcpy(&v, args[i], (a.type.bits + 7) / 8);
    start[a.slot] = maskBits(v, a.type.bits);
  }
  RunStats stats;
  Runner runner(p, memory, stats);
  const uint64_t groups = uint64_t(g.grid[0]) * g.grid[1] * g.grid[2];
  std::vector<uint64_t> order(groups);
  std::iota(order.begin(), order.end(), 0);
  if (orderSeed != 0) {
    std::mt19937_64 rng(orderSeed);
    std::shuffle(order.begin(), order.end(), rng);
  }
  for (uint64_t linear : order) {
    const unsigned id[3] = {unsigned(linear % g.grid[0]), unsigned(linear / g.grid[0] % g.grid[1]),
                            unsigned(linear / (uint64_t(g.grid[0]) * g.grid[1]))};
    if (Error e = runner.workgroup(g, id, start))
      return e;
    ++stats.workgroups;
  }
  return stats;
}

} // namespace mxfp4::amdsim
