//===- LaneLayout.h - Which lane holds which matrix element ------*- C++ -*-===//
//
// The register layouts of the scaled matrix instructions the AMD lowerings
// emit, as plain functions (semantics.md 4.1, 4.2). The lowerings build their
// index arithmetic from the same constants, and unit tests check the functions
// against the documented lane tables and against the preshuffled layouts in
// Format/Layout.h, so a wrong lane mapping fails on a machine without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_LANELAYOUT_H
#define MXFP4_CONVERSION_LANELAYOUT_H

#include <cstdint>

namespace mxfp4 {

/// The scaled MMA instructions, named after IREE's scheme (_B32: 32 K-elements
/// share a scale).
enum class MmaIntrinsic : uint8_t {
  MFMA_SCALE_F32_16x16x128_B32, ///< gfx950, wave64: v_mfma_scale_f32_16x16x128_f8f6f4
  WMMA_SCALE_F32_16x16x128_B32, ///< gfx1250, wave32: v_wmma_scale_f32_16x16x128_f8f6f4
};

/// Static shape facts of one intrinsic with FP4 operands.
struct MmaShape {
  MmaIntrinsic intrinsic;
  int waveSize;
  int m, n, k;
  int fp4PerLane; ///< A (and B) E2M1 elements each lane holds
  int accPerLane; ///< f32 accumulator registers per lane
  const char *mnemonic;
};

inline constexpr MmaShape kMmaShapes[] = {
    {MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32, 64, 16, 16, 128, 32, 4,
     "v_mfma_scale_f32_16x16x128_f8f6f4"},
    {MmaIntrinsic::WMMA_SCALE_F32_16x16x128_B32, 32, 16, 16, 128, 64, 8,
     "v_wmma_scale_f32_16x16x128_f8f6f4"},
};

constexpr const MmaShape &mmaShape(MmaIntrinsic i) { return kMmaShapes[static_cast<int>(i)]; }

// Every lane holds the same number of operand elements and accumulators.
static_assert(kMmaShapes[0].waveSize * kMmaShapes[0].fp4PerLane ==
              kMmaShapes[0].m * kMmaShapes[0].k);
static_assert(kMmaShapes[0].waveSize * kMmaShapes[0].accPerLane ==
              kMmaShapes[0].m * kMmaShapes[0].n);
static_assert(kMmaShapes[1].waveSize * kMmaShapes[1].fp4PerLane ==
              kMmaShapes[1].m * kMmaShapes[1].k);
static_assert(kMmaShapes[1].waveSize * kMmaShapes[1].accPerLane ==
              kMmaShapes[1].m * kMmaShapes[1].n);

/// A (row or column, K) coordinate inside one MMA tile.
struct RowK {
  int row;
  int k;
  bool operator==(const RowK &o) const { return row == o.row && k == o.k; }
};

/// A (row, column) coordinate of the accumulator tile.
struct RowCol {
  int row;
  int col;
  bool operator==(const RowCol &o) const { return row == o.row && col == o.col; }
};

/// Which element of the A operand (row of A, K) lane `lane` holds in its
/// element slot `e` (0 .. fp4PerLane-1; slot e is nibble e%8 of dword e/8).
/// B is the same with "row" meaning the column of the output.
///  - gfx950: row lane%16, K 32*(lane/16) + e.
///  - gfx1250: row lane%16, two 32-element chunks: K 32*(lane/16) + e for
///    e < 32, and 64 + 32*(lane/16) + (e-32) after.
constexpr RowK operandElement(MmaIntrinsic i, int lane, int e) {
  const int row = lane % 16, group = lane / 16;
  if (i == MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32)
    return {row, 32 * group + e};
  return {row, (e < 32 ? 0 : 64) + 32 * group + e % 32};
}

/// Which accumulator element lane `lane` holds in register `reg`.
///  - gfx950: C[4*(lane/16) + reg][lane%16].
///  - gfx1250: C[8*(lane/16) + reg][lane%16].
constexpr RowCol accumulatorElement(MmaIntrinsic i, int lane, int reg) {
  const int perGroup = mmaShape(i).accPerLane;
  return {perGroup * (lane / 16) + reg, lane % 16};
}

/// The (row, K-block) whose E8M0 scale lane `lane` supplies for an operand.
///  - gfx950: one scale per lane: row lane%16, K-block lane/16 of the 128-K
///    step; the byte inside the lane's dword is chosen by opsel.
///  - gfx1250: lanes 0-15 supply row lane%16, byte b = K-block b (lanes
///    16-31 are not read with first_scale_lane = 0).
constexpr RowK scaleOfLane(MmaIntrinsic i, int lane, int byte) {
  if (i == MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32)
    return {lane % 16, lane / 16};
  return {lane % 16, byte};
}

/// gfx950 scale-dword packing (semantics.md 3.2): byte `opsel` of the dword of
/// a 32-row x 8-K-block tile holds row 16*(opsel%2) + r, K-step opsel/2.
constexpr int gfx950ScaleOpsel(int rowIn32, int kStepIn2) { return 2 * kStepIn2 + rowIn32 / 16; }

} // namespace mxfp4

#endif // MXFP4_CONVERSION_LANELAYOUT_H
