//===- Error.h - Errors and fallible results of the public API ---*- C++ -*-===//
//
// What every fallible mxfp4-jit call returns. The API an engine links is
// free of LLVM types, so the runtime-only library carries no LLVM at all
// (the compiler inside uses llvm::Error and converts at its boundary,
// mxfp4/Support/LLVMError.h). Messages are meant for the user: they say
// what was wrong and, where it helps, what to do.
//
//   if (Error e = dev.synchronize()) return e;       // propagate
//   Expected<Arch> a = targetArch(dev);
//   if (!a) std::cerr << a.takeError().message();     // report
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_ERROR_H
#define MXFP4_SUPPORT_ERROR_H

#include "mxfp4/Support/StrCat.h"

#include <cassert>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace mxfp4 {

/// Success, or a failure with a message. Converts to true on failure.
class [[nodiscard]] Error {
public:
  static Error success() { return Error(); }
  explicit Error(std::string message) : msg(std::make_unique<std::string>(std::move(message))) {}

  /// True when this holds a failure.
  explicit operator bool() const { return msg != nullptr; }
  /// The failure's message ("" on success).
  const std::string &message() const {
    static const std::string kNone;
    return msg ? *msg : kNone;
  }

private:
  Error() = default;
  std::unique_ptr<std::string> msg;
};

/// A failure whose message is `parts` (strings, characters, integers)
/// concatenated: makeError("N = ", n, " is not a multiple of ", bn).
template <typename... Parts> Error makeError(const Parts &...parts) {
  return Error(strCat(parts...));
}

/// A failure whose message is printf-formatted.
Error errorf(const char *format, ...) __attribute__((format(printf, 1, 2)));

/// `text` as it may appear in a message: bytes outside printable ASCII as
/// \xNN, so input echoed back (a name, a line of a file) cannot carry
/// terminal control sequences; at most `limit` bytes of it, then "...".
std::string printable(std::string_view text, size_t limit = 160);

/// A T, or the Error that prevented it. Converts to true when it holds a T.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(Error e) : state(std::in_place_index<1>, std::move(e)) {
    assert(std::get<1>(state) && "an Expected built from Error::success()");
  }
  template <typename U, std::enable_if_t<std::is_convertible_v<U &&, T>, int> = 0>
  Expected(U &&value) : state(std::in_place_index<0>, std::forward<U>(value)) {}

  explicit operator bool() const { return state.index() == 0; }
  T &get() { return std::get<0>(state); }
  const T &get() const { return std::get<0>(state); }
  T &operator*() { return get(); }
  const T &operator*() const { return get(); }
  T *operator->() { return &get(); }
  const T *operator->() const { return &get(); }

  /// The failure (moved out), or success when this holds a T.
  Error takeError() { return *this ? Error::success() : std::move(std::get<1>(state)); }

private:
  std::variant<T, Error> state;
};

} // namespace mxfp4

#endif // MXFP4_SUPPORT_ERROR_H
