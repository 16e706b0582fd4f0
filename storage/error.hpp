#pragma once
// Storage failures as values. RocksDB statuses are mapped to these at the module boundary, so no
// caller ever sees a rocksdb:: type.
#include <boost/system/result.hpp>
#include <string>
#include <utility>

namespace fl::storage {

enum class errc {
  io,          // the disk or the OS failed; retrying may help
  corruption,  // stored bytes are not what we wrote
  busy,        // a lock or write stall; retry later
  invalid,     // a caller broke an invariant of the store (a bug, not user input)
  locked,      // opening: another process (or another open in this one) holds the directory's lock
};

struct error {
  errc code = errc::io;
  std::string message;

  error() = default;
  error(errc c, std::string m) : code(c), message(std::move(m)) {}
};

template <class T>
using result = boost::system::result<T, error>;

}  // namespace fl::storage
