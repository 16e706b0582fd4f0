#pragma once
// Sees every MQTT packet this test process writes to a socket. libmosquitto 2.0 writes each packet
// with write(2) (`nm -D libmosquitto.so.1` lists write and read, no send); packet_spy.cpp defines
// `write`, which the executable exports and so interposes libc's for libmosquitto. A packet counts
// once the kernel took all of it: from then on the broker can read it. This is how the tests tell,
// without timing, whether a PUBACK left before a handler returned.
#include <cstddef>
#include <thread>

namespace fl::testing::packet_spy {

// PUBACKs the given thread has written since the last reset() (any connection, any message id).
std::size_t pubacks_by(std::thread::id writer);
// QoS 1 PUBLISH packets any thread has written since the last reset().
std::size_t qos1_publishes();
// Forgets what was seen: thread ids are reused, so a test starts with reset().
void reset();

}  // namespace fl::testing::packet_spy
