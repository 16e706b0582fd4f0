#include "drivers/packet_spy.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

namespace fl::testing::packet_spy {
namespace {

struct written {
  std::thread::id writer;
  unsigned char first_byte;  // MQTT fixed header: packet type and flags
};

std::mutex& mutex() {
  static std::mutex m;
  return m;
}
std::vector<written>& log() {
  static std::vector<written> v;
  return v;
}

bool is_socket(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

std::size_t pubacks_by(std::thread::id writer) {
  std::lock_guard lock(mutex());
  std::size_t n = 0;
  for (const auto& w : log()) n += w.writer == writer && w.first_byte == 0x40 ? 1 : 0;
  return n;
}

std::size_t qos1_publishes() {
  std::lock_guard lock(mutex());
  std::size_t n = 0;
  for (const auto& w : log()) n += (w.first_byte & 0xF6) == 0x32 ? 1 : 0;  // PUBLISH, QoS 1, any DUP/RETAIN
  return n;
}

void reset() {
  std::lock_guard lock(mutex());
  log().clear();
}

// Called by the interposer below with what the kernel took whole. libmosquitto writes one packet per
// call; the 1-byte writes to its wake-up socketpair are not packets.
void note_write(int fd, const void* buf, std::size_t len) {
  if (len < 2 || !is_socket(fd)) return;
  std::lock_guard lock(mutex());
  log().push_back({std::this_thread::get_id(), *static_cast<const unsigned char*>(buf)});
}

}  // namespace fl::testing::packet_spy

extern "C" ssize_t write(int fd, const void* buf, size_t len) {
  using write_fn = ssize_t (*)(int, const void*, size_t);
  static const write_fn real = [] {
    write_fn f = nullptr;
    void* sym = dlsym(RTLD_NEXT, "write");
    std::memcpy(&f, &sym, sizeof f);
    return f;
  }();
  const ssize_t n = real(fd, buf, len);
  if (n == static_cast<ssize_t>(len)) fl::testing::packet_spy::note_write(fd, buf, len);
  return n;
}
