//===- MoeSortTest.cpp - The CPU reference of MoE sorting -----------------===//
//
// moeSortReference against hand-worked routings (AITER's semantics,
// reference/semantics.md 6.1): token order inside each expert, padding to
// block_m with the sentinel, expert ids per block, the valid length, the
// expert mask's local ids, dropped ids, and the shape checks.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/MoeSort.h"
#include "TestUtil/Expected.h"

#include "gtest/gtest.h"

using namespace mxfp4;

namespace {

int32_t id(int32_t slot, int32_t token) { return (slot << 24) | token; }

TEST(MoeSort, Sizes) {
  // T * topk + E * block_m - topk, in blocks rounded up.
  MoeSortSizes s = moeSortSizes(3, 2, 4, 4);
  EXPECT_EQ(s.paddedEntries, 3 * 2 + 4 * 4 - 2);
  EXPECT_EQ(s.blocks, 5);
  EXPECT_EQ(moeSortSizes(1, 16, 896, 16).paddedEntries, 16 + 896 * 16 - 16);
}

TEST(MoeSort, HandWorkedRouting) {
  // T = 3, topk = 2, E = 3, block_m = 2.
  //   token 0 -> experts 2, 0; token 1 -> 0, 1; token 2 -> 0, 2
  std::vector<int32_t> ids{2, 0, 0, 1, 0, 2};
  std::vector<float> w{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  auto r = moeSortReference({3, 2, 3, 2}, ids, w);
  ASSERT_OK(r);
  const int32_t pad = id(2, 3);
  // expert 0: (t0, s1), (t1, s0), (t2, s0) + 1 pad; expert 1: (t1, s1) + 1
  // pad; expert 2: (t0, s0), (t2, s1). Then the tail up to 3*2 + 3*2 - 2.
  std::vector<int32_t> want{id(1, 0), id(0, 1), id(0, 2), pad, id(1, 1),
                            pad,      id(0, 0), id(1, 2), pad, pad};
  EXPECT_EQ(r->sortedIds, want);
  std::vector<float> wantW{0.2f, 0.3f, 0.5f, 0, 0.4f, 0, 0.1f, 0.6f, 0, 0};
  EXPECT_EQ(r->sortedWeights, wantW);
  EXPECT_EQ(r->expertIds, (std::vector<int32_t>{0, 0, 1, 2, -1}));
  // Entry (t, s) = 2t + s went to: (0,0) 6, (0,1) 0, (1,0) 1, (1,1) 4, (2,0) 2, (2,1) 7.
  EXPECT_EQ(r->positions, (std::vector<int32_t>{6, 0, 1, 4, 2, 7}));
  EXPECT_EQ(r->numValid[0], 8);
  EXPECT_EQ(r->numValid[1], 3);
  EXPECT_EQ(r->dropped, 0);
}

TEST(MoeSort, ExpertsWithoutTokensGetNoBlock) {
  // T = 2, topk = 1, E = 4, block_m = 4: only expert 3 has tokens.
  auto r = moeSortReference({2, 1, 4, 4}, std::vector<int32_t>{3, 3}, std::vector<float>{1, 2});
  ASSERT_OK(r);
  EXPECT_EQ(r->numValid[0], 4);
  EXPECT_EQ(r->sortedIds[0], id(0, 0));
  EXPECT_EQ(r->sortedIds[1], id(0, 1));
  EXPECT_EQ(r->sortedIds[2], id(1, 2));
  EXPECT_EQ(r->expertIds[0], 3);
  for (size_t b = 1; b < r->expertIds.size(); ++b)
    EXPECT_EQ(r->expertIds[b], -1);
}

TEST(MoeSort, MaskSkipsExpertsAndRenumbers) {
  // E = 4, experts 0 and 2 local (local ids 0 and 1); block_m = 1. Expert
  // 0: (t0, s0), (t2, s1); expert 2: (t1, s0), (t2, s0).
  std::vector<int32_t> ids{0, 1, 2, 3, 2, 0};
  std::vector<float> w{1, 2, 3, 4, 5, 6};
  auto r = moeSortReference({3, 2, 4, 1}, ids, w, std::vector<int32_t>{1, 0, 1, 0});
  ASSERT_OK(r);
  EXPECT_EQ(r->numValid[0], 4);
  EXPECT_EQ(std::vector<int32_t>(r->sortedIds.begin(), r->sortedIds.begin() + 4),
            (std::vector<int32_t>{id(0, 0), id(1, 2), id(0, 1), id(0, 2)}));
  EXPECT_EQ(std::vector<int32_t>(r->expertIds.begin(), r->expertIds.begin() + 5),
            (std::vector<int32_t>{0, 0, 1, 1, -1}));
  EXPECT_EQ(r->dropped, 0);
  EXPECT_EQ(r->positions, (std::vector<int32_t>{0, -1, 2, -1, 3, 1}));
}

TEST(MoeSort, DropsIdsOutsideTheExperts) {
  // Token 0: -1 (dropped), 1; token 1: 7 (dropped), 0.
  std::vector<int32_t> ids{-1, 1, 7, 0};
  auto r = moeSortReference({2, 2, 2, 2}, ids, std::vector<float>{1, 2, 3, 4});
  ASSERT_OK(r);
  EXPECT_EQ(r->dropped, 2);
  EXPECT_EQ(r->numValid[0], 4);
  EXPECT_EQ(r->sortedIds[0], id(1, 1));
  EXPECT_EQ(r->sortedIds[2], id(1, 0));
  EXPECT_EQ(r->positions, (std::vector<int32_t>{-1, 2, -1, 0}));
}

TEST(MoeSort, RejectsBadShapes) {
  std::vector<int32_t> ids{0, 1};
  std::vector<float> w{1, 1};
  EXPECT_FALSE(moeSortReference({0, 2, 2, 2}, {}, {}));
  EXPECT_FALSE(moeSortReference({1, 0, 2, 2}, {}, {}));
  EXPECT_FALSE(moeSortReference({1, 256, 2, 2}, {}, {}));
  EXPECT_FALSE(moeSortReference({1, 2, 0, 2}, ids, w));
  EXPECT_FALSE(moeSortReference({1, 2, 2, 0}, ids, w));
  EXPECT_FALSE(moeSortReference({1, 2, 2, 257}, ids, w));
  EXPECT_FALSE(moeSortReference({2, 2, 2, 2}, ids, w)) << "too few ids";
  EXPECT_FALSE(moeSortReference({1, 2, 2, 2}, ids, w, std::vector<int32_t>{1}))
      << "mask of the wrong size";
  auto e = moeSortReference({1, 2, 2, 2}, ids, std::vector<float>{1});
  ASSERT_FALSE(e);
  EXPECT_NE(e.takeError().message().find("T * topk"), std::string::npos);
}

} // namespace
