#pragma once

#include <pthread.h>

namespace fl {

// Names the calling thread (at most 15 characters show), so `top -H` and `perf report --sort comm`
// tell I/O, write, parse and sync threads apart.
inline void name_this_thread(const char* name) {
  pthread_setname_np(pthread_self(), name);
}

}  // namespace fl
