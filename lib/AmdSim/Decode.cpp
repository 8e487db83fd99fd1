//===- Decode.cpp - LLVM IR to the simulator's register machine -----------===//

#include "Program.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;

namespace mxfp4::amdsim {

std::string describe(const Op &op) {
  if (!op.inst)
    return "<no instruction>";
  std::string text;
  raw_string_ostream os(text);
  op.inst->print(os);
  return printable(StringRef(text).trim().str(), 200);
}

namespace {

std::string printed(const Value &v) {
  std::string text;
  raw_string_ostream os(text);
  v.print(os);
  return printable(StringRef(text).trim().str(), 200);
}

/// The simulator's name for an intrinsic, by its LLVM name.
struct KnownIntrinsic {
  const char *prefix;
  Intr intr;
  bool sync;
};

constexpr KnownIntrinsic kIntrinsics[] = {
    {"llvm.amdgcn.readfirstlane", Intr::ReadFirstLane, true},
    {"llvm.amdgcn.mbcnt.lo", Intr::MbcntLo, false},
    {"llvm.amdgcn.mbcnt.hi", Intr::MbcntHi, false},
    {"llvm.amdgcn.ds.swizzle", Intr::DsSwizzle, true},
    {"llvm.amdgcn.ds.bpermute", Intr::DsBpermute, true},
    {"llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4", Intr::MfmaScale16x16x128, true},
    {"llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4", Intr::MfmaScale32x32x64, true},
    {"llvm.amdgcn.wmma.scale.f32.16x16x128.f8f6f4", Intr::WmmaScale16x16x128, true},
    {"llvm.amdgcn.cvt.scalef32.pk.fp4.bf16", Intr::CvtScalePkFp4Bf16, false},
    {"llvm.amdgcn.cvt.scalef32.pk.fp4.f32", Intr::CvtScalePkFp4F32, false},
    {"llvm.amdgcn.cvt.scalef32.pk8.fp4.bf16", Intr::CvtScalePk8Fp4Bf16, false},
    {"llvm.amdgcn.cvt.scalef32.pk8.fp4.f32", Intr::CvtScalePk8Fp4F32, false},
    {"llvm.fabs.", Intr::FAbs, false},
    {"llvm.umin.", Intr::UMin, false},
    {"llvm.umax.", Intr::UMax, false},
    {"llvm.smin.", Intr::SMin, false},
    {"llvm.smax.", Intr::SMax, false},
    {"llvm.uadd.sat.", Intr::UAddSat, false},
    {"llvm.usub.sat.", Intr::USubSat, false},
    {"llvm.sadd.sat.", Intr::SAddSat, false},
    {"llvm.ssub.sat.", Intr::SSubSat, false},
    {"llvm.abs.", Intr::Abs, false},
    {"llvm.minnum.", Intr::MinNum, false},
    {"llvm.maxnum.", Intr::MaxNum, false},
    {"llvm.fma.", Intr::Fma, false},
    {"llvm.fmuladd.", Intr::Fma, false},
    {"llvm.vector.reduce.umax.", Intr::ReduceUMax, false},
    {"llvm.vector.reduce.umin.", Intr::ReduceUMin, false},
    {"llvm.vector.reduce.smax.", Intr::ReduceSMax, false},
    {"llvm.vector.reduce.smin.", Intr::ReduceSMin, false},
    {"llvm.vector.reduce.add.", Intr::ReduceAdd, false},
    {"llvm.vector.reduce.or.", Intr::ReduceOr, false},
    {"llvm.vector.reduce.and.", Intr::ReduceAnd, false},
    {"llvm.vector.reduce.xor.", Intr::ReduceXor, false},
    {"llvm.bitreverse.", Intr::BitReverse, false},
    {"llvm.ctpop.", Intr::CtPop, false},
    {"llvm.ctlz.", Intr::Ctlz, false},
    {"llvm.cttz.", Intr::Cttz, false},
};

/// Calls with no effect on the values computed.
bool isNoOpCall(StringRef name) {
  return name.starts_with("llvm.assume") || name.starts_with("llvm.lifetime.") ||
         name.starts_with("llvm.dbg.") || name.starts_with("llvm.experimental.noalias.scope.decl");
}

bool emitsOp(const Instruction &i) {
  if (isa<PHINode>(i) || isa<FenceInst>(i))
    return false;
  if (auto *call = dyn_cast<CallInst>(&i))
    if (Function *f = call->getCalledFunction())
      return !isNoOpCall(f->getName());
  return true;
}

class Decoder {
public:
  Decoder(const Function &f, unsigned waveSize) : f(f), dl(f.getParent()->getDataLayout()) {
    p.waveSize = waveSize;
  }

  Expected<Program> run();

private:
  Expected<ElemType> elemType(Type *t) const;
  Expected<uint32_t> countOf(Type *t) const;
  uint32_t allocate(uint32_t words);
  Expected<uint32_t> operand(const Value *v);
  Error constantWords(const Constant *c, std::vector<uint64_t> &out);
  Error layoutLds();
  Error decode(const Instruction &i, Op &op);
  Error decodeCall(const CallInst &call, Op &op);
  Expected<uint32_t> edge(const BasicBlock *from, const BasicBlock *to);

  template <typename... Parts> Error failAt(const Instruction &i, const Parts &...parts) {
    return makeError("amdgpu-sim: ", parts..., " in `", printed(i), "`");
  }

  const Function &f;
  const DataLayout &dl;
  Program p;
  std::map<const Value *, uint32_t> slots;
  std::map<const BasicBlock *, uint32_t> blockStart;
  std::map<const GlobalVariable *, uint64_t> ldsOffset;
  uint64_t dynamicLdsOffset = 0;
};

Expected<ElemType> Decoder::elemType(Type *t) const {
  if (auto *v = dyn_cast<FixedVectorType>(t))
    t = v->getElementType();
  if (auto *it = dyn_cast<IntegerType>(t)) {
    if (it->getBitWidth() > 64)
      return makeError("amdgpu-sim: integers wider than 64 bits are not modelled");
    return ElemType{Ty::Int, uint16_t(it->getBitWidth()), 0};
  }
  if (t->isBFloatTy())
    return ElemType{Ty::BF16, 16, 0};
  if (t->isHalfTy())
    return ElemType{Ty::F16, 16, 0};
  if (t->isFloatTy())
    return ElemType{Ty::F32, 32, 0};
  if (t->isDoubleTy())
    return ElemType{Ty::F64, 64, 0};
  if (auto *pt = dyn_cast<PointerType>(t)) {
    unsigned as = pt->getAddressSpace();
    return ElemType{Ty::Ptr, uint16_t(dl.getPointerSizeInBits(as)), uint8_t(as)};
  }
  std::string text;
  raw_string_ostream os(text);
  t->print(os);
  return makeError("amdgpu-sim: values of type ", text, " are not modelled");
}

Expected<uint32_t> Decoder::countOf(Type *t) const {
  if (t->isVoidTy())
    return 0;
  if (auto *v = dyn_cast<FixedVectorType>(t))
    return uint32_t(v->getNumElements());
  if (isa<VectorType>(t) || t->isAggregateType())
    return makeError("amdgpu-sim: scalable vectors and aggregates are not modelled");
  return 1;
}

uint32_t Decoder::allocate(uint32_t words) {
  uint32_t slot = p.frameWords;
  p.frameWords += std::max(words, 1u);
  p.initialFrame.resize(p.frameWords, 0);
  return slot;
}

Error Decoder::constantWords(const Constant *c, std::vector<uint64_t> &out) {
  if (auto *ci = dyn_cast<ConstantInt>(c)) {
    if (ci->getBitWidth() > 64)
      return makeError("amdgpu-sim: constants wider than 64 bits are not modelled");
    out.push_back(ci->getZExtValue());
    return Error::success();
  }
  if (auto *cf = dyn_cast<ConstantFP>(c)) {
    out.push_back(cf->getValueAPF().bitcastToAPInt().getZExtValue());
    return Error::success();
  }
  if (isa<ConstantPointerNull>(c) || isa<UndefValue>(c) || isa<ConstantAggregateZero>(c)) {
    Expected<uint32_t> n = countOf(c->getType());
    if (!n)
      return n.takeError();
    out.insert(out.end(), *n, 0);
    return Error::success();
  }
  if (auto *seq = dyn_cast<ConstantDataSequential>(c)) {
    for (unsigned i = 0; i < seq->getNumElements(); ++i)
      if (Error e = constantWords(seq->getElementAsConstant(i), out))
        return e;
    return Error::success();
  }
  if (auto *vec = dyn_cast<ConstantVector>(c)) {
    for (const Use &u : vec->operands())
      if (Error e = constantWords(cast<Constant>(u.get()), out))
        return e;
    return Error::success();
  }
  if (auto *gv = dyn_cast<GlobalVariable>(c)) {
    auto it = ldsOffset.find(gv);
    if (it == ldsOffset.end())
      return makeError("amdgpu-sim: global `", printable(gv->getName().str()),
                       "` in address space ", gv->getAddressSpace(),
                       " is not modelled (only LDS globals are)");
    out.push_back(it->second);
    return Error::success();
  }
  if (auto *ce = dyn_cast<ConstantExpr>(c)) {
    if (auto *gep = dyn_cast<GEPOperator>(ce)) {
      APInt offset(dl.getIndexSizeInBits(gep->getPointerAddressSpace()), 0);
      if (!gep->accumulateConstantOffset(dl, offset))
        return makeError("amdgpu-sim: a constant GEP with no constant offset");
      std::vector<uint64_t> base;
      if (Error e = constantWords(cast<Constant>(gep->getPointerOperand()), base))
        return e;
      out.push_back(base.at(0) + offset.getSExtValue());
      return Error::success();
    }
    if (ce->isCast()) {
      std::vector<uint64_t> src;
      if (Error e = constantWords(ce->getOperand(0), src))
        return e;
      if (src.size() != 1 || ce->getOpcode() == Instruction::AddrSpaceCast)
        return makeError("amdgpu-sim: constant cast `", printed(*ce), "` is not modelled");
      unsigned bits = dl.getTypeSizeInBits(ce->getType());
      out.push_back(bits >= 64 ? src[0] : src[0] & ((uint64_t(1) << bits) - 1));
      return Error::success();
    }
  }
  return makeError("amdgpu-sim: constant `", printed(*c), "` is not modelled");
}

Expected<uint32_t> Decoder::operand(const Value *v) {
  auto it = slots.find(v);
  if (it != slots.end())
    return it->second;
  auto *c = dyn_cast<Constant>(v);
  if (!c)
    return makeError("amdgpu-sim: operand `", printed(*v), "` has no value");
  std::vector<uint64_t> words;
  if (Error e = constantWords(c, words))
    return e;
  uint32_t slot = allocate(uint32_t(words.size()));
  std::copy(words.begin(), words.end(), p.initialFrame.begin() + slot);
  slots[v] = slot;
  return slot;
}

Error Decoder::layoutLds() {
  const Module &m = *f.getParent();
  uint64_t offset = 0;
  std::vector<const GlobalVariable *> dynamic;
  for (const GlobalVariable &gv : m.globals()) {
    if (gv.getAddressSpace() != 3)
      continue;
    uint64_t bytes = dl.getTypeAllocSize(gv.getValueType());
    uint64_t align = std::max<uint64_t>(gv.getAlign().valueOrOne().value(), 16);
    offset = (offset + align - 1) / align * align;
    if (bytes == 0) {
      dynamic.push_back(&gv);
      continue;
    }
    ldsOffset[&gv] = offset;
    offset += bytes;
  }
  dynamicLdsOffset = (offset + 15) / 16 * 16;
  for (const GlobalVariable *gv : dynamic)
    ldsOffset[gv] = dynamicLdsOffset;
  p.ldsBytes = dynamicLdsOffset;
  return Error::success();
}

Expected<uint32_t> Decoder::edge(const BasicBlock *from, const BasicBlock *to) {
  Edge e;
  e.target = blockStart.at(to);
  for (const PHINode &phi : to->phis()) {
    const Value *in = phi.getIncomingValueForBlock(from);
    Expected<uint32_t> src = operand(in);
    if (!src)
      return src.takeError();
    Expected<uint32_t> n = countOf(phi.getType());
    if (!n)
      return n.takeError();
    e.moves.push_back({slots.at(&phi), *src, *n});
  }
  p.edges.back().push_back(std::move(e));
  return uint32_t(p.edges.back().size() - 1);
}

Error Decoder::decodeCall(const CallInst &call, Op &op) {
  const Function *callee = call.getCalledFunction();
  if (!callee || !callee->isIntrinsic())
    return failAt(call, "calls other than intrinsics are not modelled");
  StringRef name = callee->getName();
  op.code = Code::Intrinsic;
  if (name.starts_with("llvm.amdgcn.workitem.id.") ||
      name.starts_with("llvm.amdgcn.workgroup.id.")) {
    op.intr = name.starts_with("llvm.amdgcn.workitem") ? Intr::WorkitemId : Intr::WorkgroupId;
    op.imm = name.back() - 'x';
    return Error::success();
  }
  if (name == "llvm.amdgcn.s.barrier") {
    op.intr = Intr::Barrier;
    op.sync = true;
    return Error::success();
  }
  for (const KnownIntrinsic &k : kIntrinsics) {
    if (!name.starts_with(k.prefix))
      continue;
    // The block-16 scale variants share a prefix; they are not modelled.
    if (k.intr == Intr::WmmaScale16x16x128 && name.starts_with("llvm.amdgcn.wmma.scale16"))
      break;
    op.intr = k.intr;
    op.sync = k.sync;
    for (const Use &u : call.args()) {
      Expected<uint32_t> s = operand(u.get());
      if (!s)
        return s.takeError();
      Expected<ElemType> t = elemType(u->getType());
      if (!t)
        return t.takeError();
      Expected<uint32_t> n = countOf(u->getType());
      if (!n)
        return n.takeError();
      op.args.push_back(*s);
      op.argTypes.push_back(*t);
      op.argCounts.push_back(*n);
    }
    return Error::success();
  }
  return failAt(call, "intrinsic `", name.str(), "` is not modelled");
}

Error Decoder::decode(const Instruction &i, Op &op) {
  op.inst = &i;
  if (!i.getType()->isVoidTy()) {
    Expected<ElemType> t = elemType(i.getType());
    if (!t)
      return t.takeError();
    Expected<uint32_t> n = countOf(i.getType());
    if (!n)
      return n.takeError();
    op.rt = *t;
    op.n = *n;
    op.dst = slots.at(&i);
  }
  auto use = [&](unsigned index, uint32_t &slot) -> Error {
    Expected<uint32_t> s = operand(i.getOperand(index));
    if (!s)
      return s.takeError();
    slot = *s;
    if (index == 0) {
      Expected<ElemType> t = elemType(i.getOperand(0)->getType());
      if (!t)
        return t.takeError();
      Expected<uint32_t> n = countOf(i.getOperand(0)->getType());
      if (!n)
        return n.takeError();
      op.at = *t;
      op.an = *n;
    }
    return Error::success();
  };

  if (auto *bo = dyn_cast<BinaryOperator>(&i)) {
    static const std::map<unsigned, Code> kBinary = {
        {Instruction::Add, Code::Add},   {Instruction::Sub, Code::Sub},
        {Instruction::Mul, Code::Mul},   {Instruction::UDiv, Code::UDiv},
        {Instruction::SDiv, Code::SDiv}, {Instruction::URem, Code::URem},
        {Instruction::SRem, Code::SRem}, {Instruction::Shl, Code::Shl},
        {Instruction::LShr, Code::LShr}, {Instruction::AShr, Code::AShr},
        {Instruction::And, Code::And},   {Instruction::Or, Code::Or},
        {Instruction::Xor, Code::Xor},   {Instruction::FAdd, Code::FAdd},
        {Instruction::FSub, Code::FSub}, {Instruction::FMul, Code::FMul},
        {Instruction::FDiv, Code::FDiv}};
    auto it = kBinary.find(bo->getOpcode());
    if (it == kBinary.end())
      return failAt(i, "this operation is not modelled");
    op.code = it->second;
    if (Error e = use(0, op.a))
      return e;
    return use(1, op.b);
  }
  if (isa<UnaryOperator>(&i) && i.getOpcode() == Instruction::FNeg) {
    op.code = Code::FNeg;
    return use(0, op.a);
  }
  if (auto *cmp = dyn_cast<CmpInst>(&i)) {
    op.code = isa<ICmpInst>(cmp) ? Code::ICmp : Code::FCmp;
    op.imm = cmp->getPredicate();
    if (Error e = use(0, op.a))
      return e;
    return use(1, op.b);
  }
  if (isa<SelectInst>(&i)) {
    op.code = Code::Select;
    if (Error e = use(0, op.a))
      return e;
    if (Error e = use(1, op.b))
      return e;
    return use(2, op.c);
  }
  if (auto *cast = dyn_cast<CastInst>(&i)) {
    switch (cast->getOpcode()) {
    case Instruction::ZExt:
    case Instruction::PtrToInt:
    case Instruction::IntToPtr:
      op.code = Code::ZExt; // resizes: zero-extends or truncates
      break;
    case Instruction::SExt:
      op.code = Code::SExt;
      break;
    case Instruction::Trunc:
      op.code = Code::Trunc;
      break;
    case Instruction::BitCast:
      op.code = Code::BitCast;
      break;
    case Instruction::FPTrunc:
      op.code = Code::FPTrunc;
      break;
    case Instruction::FPExt:
      op.code = Code::FPExt;
      break;
    case Instruction::FPToUI:
      op.code = Code::FPToUI;
      break;
    case Instruction::FPToSI:
      op.code = Code::FPToSI;
      break;
    case Instruction::UIToFP:
      op.code = Code::UIToFP;
      break;
    case Instruction::SIToFP:
      op.code = Code::SIToFP;
      break;
    default:
      return failAt(i, "this cast is not modelled");
    }
    return use(0, op.a);
  }
  if (isa<FreezeInst>(&i)) {
    op.code = Code::Copy;
    return use(0, op.a);
  }
  if (isa<ExtractElementInst>(&i)) {
    op.code = Code::ExtractElement;
    if (Error e = use(0, op.a))
      return e;
    return use(1, op.b);
  }
  if (isa<InsertElementInst>(&i)) {
    op.code = Code::InsertElement;
    if (Error e = use(0, op.a))
      return e;
    if (Error e = use(1, op.b))
      return e;
    return use(2, op.c);
  }
  if (auto *sv = dyn_cast<ShuffleVectorInst>(&i)) {
    op.code = Code::ShuffleVector;
    if (Error e = use(0, op.a))
      return e;
    if (Error e = use(1, op.b))
      return e;
    op.aux = uint32_t(p.shuffleMasks.size());
    p.shuffleMasks.emplace_back(sv->getShuffleMask().begin(), sv->getShuffleMask().end());
    return Error::success();
  }
  if (auto *gep = dyn_cast<GetElementPtrInst>(&i)) {
    if (gep->getType()->isVectorTy())
      return failAt(i, "vector GEPs are not modelled");
    op.code = Code::Gep;
    if (Error e = use(0, op.a))
      return e;
    op.aux = uint32_t(p.gepIndices.size());
    std::vector<GepIndex> indices;
    int64_t offset = 0;
    unsigned operandIndex = 1;
    for (gep_type_iterator it = gep_type_begin(gep), end = gep_type_end(gep); it != end;
         ++it, ++operandIndex) {
      const Value *index = it.getOperand();
      if (StructType *st = it.getStructTypeOrNull()) {
        unsigned field = unsigned(cast<ConstantInt>(index)->getZExtValue());
        offset += dl.getStructLayout(st)->getElementOffset(field);
        continue;
      }
      int64_t scale = int64_t(it.getSequentialElementStride(dl));
      if (auto *ci = dyn_cast<ConstantInt>(index)) {
        offset += ci->getSExtValue() * scale;
        continue;
      }
      Expected<uint32_t> s = operand(index);
      if (!s)
        return s.takeError();
      indices.push_back({*s, uint16_t(index->getType()->getIntegerBitWidth()), scale});
    }
    op.imm = offset;
    p.gepIndices.push_back(std::move(indices));
    return Error::success();
  }
  if (auto *load = dyn_cast<LoadInst>(&i)) {
    op.code = Code::Load;
    if (Error e = use(0, op.a))
      return e;
    if (op.rt.bits % 8 != 0 && op.n != 1)
      return failAt(i, "loads of sub-byte vector elements are not modelled");
    op.imm = int64_t(dl.getTypeStoreSize(load->getType()));
    op.sync = load->getPointerAddressSpace() == 3;
    return Error::success();
  }
  if (auto *store = dyn_cast<StoreInst>(&i)) {
    op.code = Code::Store;
    // a: the pointer; b: the value (its type in rt, n).
    Expected<uint32_t> ptr = operand(store->getPointerOperand());
    if (!ptr)
      return ptr.takeError();
    op.a = *ptr;
    Expected<uint32_t> value = operand(store->getValueOperand());
    if (!value)
      return value.takeError();
    op.b = *value;
    Expected<ElemType> t = elemType(store->getValueOperand()->getType());
    if (!t)
      return t.takeError();
    Expected<uint32_t> n = countOf(store->getValueOperand()->getType());
    if (!n)
      return n.takeError();
    op.rt = *t;
    op.n = *n;
    if (op.rt.bits % 8 != 0 && op.n != 1)
      return failAt(i, "stores of sub-byte vector elements are not modelled");
    op.imm = int64_t(dl.getTypeStoreSize(store->getValueOperand()->getType()));
    op.at.addressSpace = uint8_t(store->getPointerAddressSpace());
    op.sync = store->getPointerAddressSpace() == 3;
    return Error::success();
  }
  if (auto *rmw = dyn_cast<AtomicRMWInst>(&i)) {
    // Lanes and workgroups run one at a time: every atomic is atomic here.
    op.code = Code::AtomicRmw;
    op.imm = int64_t(rmw->getOperation());
    if (Error e = use(0, op.a))
      return e;
    Expected<uint32_t> value = operand(rmw->getValOperand());
    if (!value)
      return value.takeError();
    op.b = *value;
    if (op.n != 1 || op.rt.bits % 8 != 0)
      return failAt(i, "atomics on vectors or sub-byte values are not modelled");
    switch (rmw->getOperation()) {
    case AtomicRMWInst::Xchg:
    case AtomicRMWInst::Add:
    case AtomicRMWInst::Sub:
    case AtomicRMWInst::And:
    case AtomicRMWInst::Or:
    case AtomicRMWInst::Xor:
    case AtomicRMWInst::Max:
    case AtomicRMWInst::Min:
    case AtomicRMWInst::UMax:
    case AtomicRMWInst::UMin:
      if (op.rt.ty != Ty::Int)
        return failAt(i, "this atomic on a non-integer is not modelled");
      break;
    case AtomicRMWInst::FAdd:
      if (op.rt.ty != Ty::F32)
        return failAt(i, "atomic fadd is modelled on f32 only");
      break;
    default:
      return failAt(i, "this atomic operation is not modelled");
    }
    return Error::success();
  }
  if (auto *br = dyn_cast<BranchInst>(&i)) {
    op.aux = uint32_t(p.edges.size());
    p.edges.emplace_back();
    if (br->isConditional()) {
      op.code = Code::CondBr;
      if (Error e = use(0, op.a))
        return e;
    } else {
      op.code = Code::Br;
    }
    for (unsigned s = 0; s < br->getNumSuccessors(); ++s)
      if (Expected<uint32_t> e = edge(br->getParent(), br->getSuccessor(s)); !e)
        return e.takeError();
    return Error::success();
  }
  if (auto *sw = dyn_cast<SwitchInst>(&i)) {
    op.code = Code::Switch;
    if (Error e = use(0, op.a))
      return e;
    op.aux = uint32_t(p.edges.size());
    p.edges.emplace_back();
    if (Expected<uint32_t> e = edge(sw->getParent(), sw->getDefaultDest()); !e)
      return e.takeError();
    op.imm = int64_t(p.switchCases.size());
    p.switchCases.emplace_back();
    for (const auto &c : sw->cases()) {
      Expected<uint32_t> e = edge(sw->getParent(), c.getCaseSuccessor());
      if (!e)
        return e.takeError();
      p.switchCases.back().push_back({c.getCaseValue()->getZExtValue(), *e});
    }
    return Error::success();
  }
  if (isa<ReturnInst>(&i)) {
    op.code = Code::Ret;
    return Error::success();
  }
  if (auto *call = dyn_cast<CallInst>(&i))
    return decodeCall(*call, op);
  return failAt(i, "this instruction is not modelled");
}

Expected<Program> Decoder::run() {
  if (f.isDeclaration())
    return makeError("amdgpu-sim: `", printable(f.getName().str()), "` has no body");
  if (Error e = layoutLds())
    return e;
  for (const llvm::Argument &a : f.args()) {
    Expected<ElemType> t = elemType(a.getType());
    if (!t)
      return t.takeError();
    uint32_t slot = allocate(1);
    slots[&a] = slot;
    p.arguments.push_back(amdsim::Argument{slot, *t});
  }
  // Slots for every value and the first operation of every block.
  uint32_t ops = 0;
  for (const BasicBlock &bb : f) {
    bool started = false;
    for (const Instruction &i : bb) {
      if (!i.getType()->isVoidTy()) {
        Expected<uint32_t> n = countOf(i.getType());
        if (!n)
          return n.takeError();
        slots[&i] = allocate(*n);
      }
      if (!emitsOp(i))
        continue;
      if (!started)
        blockStart[&bb] = ops;
      started = true;
      ++ops;
    }
  }
  p.ops.reserve(ops);
  for (const BasicBlock &bb : f)
    for (const Instruction &i : bb) {
      if (!emitsOp(i))
        continue;
      Op op;
      op.code = Code::Ret;
      if (Error e = decode(i, op))
        return e;
      p.ops.push_back(std::move(op));
    }
  p.entry = blockStart.at(&f.getEntryBlock());
  return std::move(p);
}

} // namespace

Expected<Program> Program::decode(const Function &f, unsigned waveSize) {
  return Decoder(f, waveSize).run();
}

} // namespace mxfp4::amdsim
