#pragma once
// Sees every PUBACK this test process writes to a socket. libmosquitto 2.0 writes each MQTT packet
// with write(2) (`nm -D libmosquitto.so.1` lists write and read, no send); puback_spy.cpp defines
// `write`, which the executable exports and so interposes libc's for libmosquitto. It keeps only
// which thread wrote each PUBACK, once the kernel took it (from then on the broker can read it).
// This is how the tests tell, without timing, whether a PUBACK left before a handler returned.
#include <cstddef>
#include <thread>

namespace fl::testing::puback_spy {

// PUBACKs the given thread has handed to the kernel since the last reset() (any connection, any
// message id).
std::size_t sent_by(std::thread::id thread);
// Forgets what was seen: thread ids are reused, so a test starts with reset().
void reset();

}  // namespace fl::testing::puback_spy
