//===- TileEnumConversion.h - mxtile enums <-> spec enums --------*- C++ -*-===//
//
// The mxtile dialect's enum attributes name the same things as the spec
// enums (Format/E8M0.h, Format/Layout.h, Kernels/KernelSpec.h), in the same
// order; the static_asserts below hold them to it. The builder converts one
// way (spec -> IR), the lowerings the other (IR -> spec).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_DIALECT_TILE_TILEENUMCONVERSION_H
#define MXFP4_DIALECT_TILE_TILEENUMCONVERSION_H

#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Kernels/KernelSpec.h"

namespace mxfp4::tile {

#define MXFP4_SAME_ENUM(A, B)                                                                      \
  static_assert(static_cast<int>(A) == static_cast<int>(B), #A " is " #B)
MXFP4_SAME_ENUM(ScaleRoundingKind::roundup, ScaleRounding::RoundUp);
MXFP4_SAME_ENUM(ScaleRoundingKind::even, ScaleRounding::Even);
MXFP4_SAME_ENUM(ScaleRoundingKind::floor, ScaleRounding::Floor);
MXFP4_SAME_ENUM(ScaleRoundingKind::nearest, ScaleRounding::Nearest);
MXFP4_SAME_ENUM(WeightLayoutKind::rowmajor, WeightLayout::RowMajor);
MXFP4_SAME_ENUM(WeightLayoutKind::gfx950_mfma16, WeightLayout::Gfx950Mfma16);
MXFP4_SAME_ENUM(WeightLayoutKind::sm90_mma16, WeightLayout::Sm90Mma16);
MXFP4_SAME_ENUM(ScaleLayoutKind::rowmajor, ScaleLayout::RowMajor);
MXFP4_SAME_ENUM(ScaleLayoutKind::gfx950_mfma16, ScaleLayout::Gfx950Mfma16);
MXFP4_SAME_ENUM(ScaleLayoutKind::gfx1250_wmma, ScaleLayout::Gfx1250Wmma);
MXFP4_SAME_ENUM(ScaleLayoutKind::sm90_mma16, ScaleLayout::Sm90Mma16);
MXFP4_SAME_ENUM(ActivationKind::none, Activation::None);
MXFP4_SAME_ENUM(ActivationKind::silu, Activation::Silu);
MXFP4_SAME_ENUM(ActivationKind::swiglu, Activation::Swiglu);
MXFP4_SAME_ENUM(ActivationKind::situv2, Activation::Situv2);
#undef MXFP4_SAME_ENUM

inline ScaleRoundingKind toTile(ScaleRounding r) { return ScaleRoundingKind(r); }
inline WeightLayoutKind toTile(WeightLayout l) { return WeightLayoutKind(l); }
inline ScaleLayoutKind toTile(ScaleLayout l) { return ScaleLayoutKind(l); }
inline ActivationKind toTile(Activation a) { return ActivationKind(a); }

inline ScaleRounding fromTile(ScaleRoundingKind r) { return ScaleRounding(r); }
inline WeightLayout fromTile(WeightLayoutKind l) { return WeightLayout(l); }
inline ScaleLayout fromTile(ScaleLayoutKind l) { return ScaleLayout(l); }
inline Activation fromTile(ActivationKind a) { return Activation(a); }

} // namespace mxfp4::tile

#endif // MXFP4_DIALECT_TILE_TILEENUMCONVERSION_H
