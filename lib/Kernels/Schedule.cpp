//===- Schedule.cpp - Every scheduling choice of a kernel -----------------===//

#include "mxfp4/Kernels/Schedule.h"

namespace mxfp4 {

bool Schedule::operator==(const Schedule &o) const {
  for (const ScheduleField &f : kScheduleFields)
    if (f.get(*this) != f.get(o))
      return false;
  return true;
}

const ScheduleField *findScheduleField(std::string_view param) {
  for (const ScheduleField &f : kScheduleFields)
    if (f.param == param)
      return &f;
  return nullptr;
}

std::string toJson(const Schedule &s) {
  std::string out = "{";
  for (const ScheduleField &f : kScheduleFields) {
    if (out.size() > 1)
      out += ", ";
    out += strCat("\"", f.param, "\": ");
    out += f.boolean ? (f.get(s) ? "true" : "false") : std::to_string(f.get(s));
  }
  return out + "}";
}

Error verifyScheduleFields(const Schedule &s) {
  if (s.bm <= 0 || s.bn <= 0 || s.bk <= 0)
    return makeError("the tile must be positive, got BM ", s.bm, ", BN ", s.bn, ", BK ", s.bk);
  if (s.splitK < 1)
    return makeError("split-K (_ks<N>) takes at least one split, got ", s.splitK);
  if (s.stages < 0)
    return makeError("the stage count (_st<N>) must be 0 (the tile's default) or more, got ",
                     s.stages);
  if (s.decodeGroups != 1 && !s.decode)
    return makeError("warpgroups splitting K (_dec<G>) are a decode variant; got ", s.decodeGroups,
                     " without it");
  if (s.decodeGroups < 1)
    return makeError("the decode variant takes at least one warpgroup (_dec<G>), got ",
                     s.decodeGroups);
  if (s.warpSplitK < 0 || s.imageStream < 0)
    return makeError("the warp-split (_wk<W>) and streamed-image (_is<N>) counts must not be "
                     "negative, got ",
                     s.warpSplitK, " and ", s.imageStream);
  if (s.persistent && s.streamK)
    return makeError("a persistent grid (_ps) and stream-K (_sk) exclude each other");
  return Error::success();
}

} // namespace mxfp4
