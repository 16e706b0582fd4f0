// jemalloc's settings for every binary linked with it (the server and the tests): compiled into
// each of them through the fieldline_allocator target (CMakeLists.txt).
//
// tcache_max: jemalloc keeps freed blocks up to 32 KiB in per-thread caches by default; a readings
// page (~34 KB of JSON) and a stream's 64 KiB pieces are larger, so each was allocated and freed
// through the shared arena. Caching blocks up to 128 KiB served pages 9% faster (`bench query`,
// docs/BENCHMARKS.md). It bounds what a thread keeps per size class, not what it may allocate.
#include <jemalloc/jemalloc.h>

// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): the name and type jemalloc reads
const char* malloc_conf = "tcache_max:131072";
