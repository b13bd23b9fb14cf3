// HARK_CHECK and hark::Error (defined in the public include/hark/error.hpp, so the exception a
// caller catches is the same type the numeric core throws), and the one way errors get their code
// at a subsystem's edge (classified).
#pragma once
#include <string>
#include <utility>

#include "hark/error.hpp"

namespace hark {

// HARK_CHECK(cond, message-expression): throws hark::Error with the message when cond is false.
// The message is only built on failure, so checks cost nothing on the hot path beyond the branch.
// Its code is InvalidArgument, the code of most checks (the caller's input).
#define HARK_CHECK(cond, msg)                              \
  do {                                                     \
    if (!(cond)) throw ::hark::Error(std::string() + msg); \
  } while (0)

// The same with a code and the field (option, argument, file) the check is about.
#define HARK_CHECK_AS(code, field, cond, msg)                                              \
  do {                                                                                     \
    if (!(cond)) throw ::hark::Error(::hark::ErrorCode::code, std::string() + msg, field); \
  } while (0)

// Runs f. A hark::Error that leaves it without a code of its own (InvalidArgument with no field,
// what a plain HARK_CHECK throws) leaves with `code` and `field` instead, same message: a
// subsystem says once, at its edge, what its failures mean (every check of a model file's bytes
// is CorruptData; every failure inside a graph's compute is Internal), so no check deep inside
// has to know who called it. Errors that already carry a code pass unchanged.
template <typename F>
auto classified(ErrorCode code, const std::string& field, F&& f) -> decltype(f()) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::InvalidArgument || !e.field().empty()) throw;
    throw Error(code, e.what(), field.empty() ? e.field() : field);
  }
}

}  // namespace hark
