//===- Program.h - A kernel's LLVM IR as a register machine -----*- C++ -*-===//
//
// Decode.cpp turns one LLVM IR function into a flat list of operations on a
// per-lane frame of 64-bit words: every SSA value (and every constant) owns
// `count` consecutive words, one per vector element, holding the element's
// bits (integers zero-extended, floats as their encoding, pointers as
// addresses: 64-bit host addresses in global memory, 32-bit LDS offsets).
// Execute.cpp runs it.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_AMDSIM_PROGRAM_H
#define MXFP4_LIB_AMDSIM_PROGRAM_H

#include "mxfp4/AmdSim/Simulator.h"
#include "mxfp4/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Instruction;
} // namespace llvm

namespace mxfp4::amdsim {

/// The kind of one element.
enum class Ty : uint8_t { Int, BF16, F16, F32, F64, Ptr };

struct ElemType {
  Ty ty = Ty::Int;
  uint16_t bits = 32;       ///< width of the encoding
  uint8_t addressSpace = 0; ///< pointers
};

enum class Code : uint8_t {
  // Integer and float arithmetic, element-wise.
  Add,
  Sub,
  Mul,
  UDiv,
  SDiv,
  URem,
  SRem,
  Shl,
  LShr,
  AShr,
  And,
  Or,
  Xor,
  FAdd,
  FSub,
  FMul,
  FDiv,
  FNeg,
  ICmp,
  FCmp,
  Select,
  // Casts, element-wise (BitCast repacks the bits).
  ZExt,
  SExt,
  Trunc,
  BitCast,
  FPTrunc,
  FPExt,
  FPToUI,
  FPToSI,
  UIToFP,
  SIToFP,
  Copy,
  ExtractElement,
  InsertElement,
  ShuffleVector,
  Gep,
  Load,
  Store,
  AtomicRmw,
  Br,
  CondBr,
  Switch,
  Ret,
  Intrinsic,
};

/// Intrinsics the simulator knows.
enum class Intr : uint8_t {
  WorkitemId,
  WorkgroupId,
  MbcntLo,
  MbcntHi,
  ReadFirstLane,
  Barrier,
  DsSwizzle,
  DsBpermute,
  MfmaScale16x16x128,
  MfmaScale32x32x64,
  WmmaScale16x16x128,
  CvtScalePkFp4Bf16,
  CvtScalePkFp4F32,
  CvtScalePk8Fp4Bf16,
  CvtScalePk8Fp4F32,
  FAbs,
  UMin,
  UMax,
  SMin,
  SMax,
  UAddSat,
  USubSat,
  SAddSat,
  SSubSat,
  Abs,
  MinNum,
  MaxNum,
  Fma,
  ReduceUMax,
  ReduceUMin,
  ReduceSMax,
  ReduceSMin,
  ReduceAdd,
  ReduceOr,
  ReduceAnd,
  ReduceXor,
  BitReverse,
  CtPop,
  Ctlz,
  Cttz,
};

/// A variable index of a GEP: offset += sext(index) * scale.
struct GepIndex {
  uint32_t slot;
  uint16_t bits;
  int64_t scale;
};

/// A phi's move on one CFG edge.
struct PhiMove {
  uint32_t dst, src, count;
};

struct Edge {
  uint32_t target = 0; ///< first non-phi operation of the successor
  std::vector<PhiMove> moves;
};

struct Op {
  Code code;
  Intr intr = Intr::WorkitemId;
  bool sync = false; ///< the wave executes it together (LDS access, wave op)
  ElemType rt;       ///< result element type
  ElemType at;       ///< operand 0 element type
  uint32_t n = 1;    ///< result elements
  uint32_t an = 1;   ///< operand 0 elements
  uint32_t dst = 0;
  uint32_t a = 0, b = 0, c = 0;
  int64_t imm = 0;            ///< predicate, GEP offset, access bytes, dimension
  uint32_t aux = 0;           ///< index into Program's side tables
  std::vector<uint32_t> args; ///< intrinsic operands (slots)
  std::vector<ElemType> argTypes;
  std::vector<uint32_t> argCounts;
  const llvm::Instruction *inst = nullptr;
};

struct Argument {
  uint32_t slot;
  ElemType type;
};

struct Program {
  std::vector<Op> ops;
  uint32_t entry = 0;
  uint32_t frameWords = 0;
  /// The frame every lane starts from: the constants in place.
  std::vector<uint64_t> initialFrame;
  std::vector<Argument> arguments;
  std::vector<std::vector<GepIndex>> gepIndices;
  std::vector<std::vector<int32_t>> shuffleMasks;
  std::vector<std::vector<Edge>> edges; ///< Br/CondBr: 1 or 2; Switch: default first
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> switchCases; ///< value -> edge index
  uint64_t ldsBytes = 0;
  unsigned waveSize = 64;

  static Expected<Program> decode(const llvm::Function &f, unsigned waveSize);
};

/// Runs `p` over the grid of `g` (Execute.cpp).
/// `op`'s instruction as text, for messages.
std::string describe(const Op &op);

/// Runs `p` over the grid of `g` with `args` as for Device::launch, the
/// workgroups in id order or (`orderSeed` != 0) in a random order.
Expected<RunStats> runProgram(const Program &p, const LaunchGeometry &g, void **args,
                              const GlobalMemory &memory, uint64_t orderSeed);

} // namespace mxfp4::amdsim

#endif // MXFP4_LIB_AMDSIM_PROGRAM_H
