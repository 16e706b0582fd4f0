#pragma once
// What the domain services answer: a value, or a closed error code of the service (an enum the
// caller switches on) with the store's own error when the code says the store failed.
#include <boost/system/result.hpp>
#include <utility>

#include "storage/error.hpp"

namespace fl::pipeline {

template <class Code>
struct service_error {
  Code code{};
  storage::error cause;  // set when `code` is the service's storage failure

  service_error() = default;
  service_error(Code c) : code(c) {}  // NOLINT(google-explicit-constructor): `return errc::x;`
  service_error(Code c, storage::error e) : code(c), cause(std::move(e)) {}
};

template <class T, class Code>
using service_result = boost::system::result<T, service_error<Code>>;

}  // namespace fl::pipeline
