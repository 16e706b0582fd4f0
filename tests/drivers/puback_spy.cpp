#include "drivers/puback_spy.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

namespace fl::testing::puback_spy {
namespace {

std::mutex& mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::thread::id>& writers() {
  static std::vector<std::thread::id> v;
  return v;
}

bool is_socket(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

std::size_t sent_by(std::thread::id thread) {
  std::lock_guard lock(mutex());
  std::size_t n = 0;
  for (auto t : writers()) n += t == thread ? 1 : 0;
  return n;
}

void reset() {
  std::lock_guard lock(mutex());
  writers().clear();
}

// Called by the interposer below.
void note_write(int fd, const void* buf, std::size_t len) {
  // A PUBACK (MQTT 3.1.1) is 4 bytes: 0x40, remaining length 2, the message id.
  const auto* b = static_cast<const unsigned char*>(buf);
  if (len != 4 || b[0] != 0x40 || b[1] != 0x02 || !is_socket(fd)) return;
  std::lock_guard lock(mutex());
  writers().push_back(std::this_thread::get_id());
}

}  // namespace fl::testing::puback_spy

extern "C" ssize_t write(int fd, const void* buf, size_t len) {
  using write_fn = ssize_t (*)(int, const void*, size_t);
  static const write_fn real = [] {
    write_fn f = nullptr;
    void* sym = dlsym(RTLD_NEXT, "write");
    std::memcpy(&f, &sym, sizeof f);
    return f;
  }();
  const ssize_t written = real(fd, buf, len);
  if (written == static_cast<ssize_t>(len)) fl::testing::puback_spy::note_write(fd, buf, len);
  return written;
}
