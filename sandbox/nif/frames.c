/* Fieldline.Frames: the worker's two pipes, driven from the calling scheduler thread.
 * send/1 writes one answer frame (a 4-byte big-endian length, then the bytes) to fd 4.
 * take/1 reads one request frame from fd 3, watching for it for up to the given µs first, and
 * wait_readable/0 (a dirty I/O NIF) blocks until fd 3 has bytes or is closed.
 * Why not a port on fd 3: a request arriving at an idle worker wakes the BEAM's poll thread, which
 * wakes a scheduler, which reads the port and messages the loop: two thread wake-ups per request,
 * tens of µs each in a VM. The host sends the next request a few tens of µs after the last answer,
 * so a scheduler that watches fd 3 for a little while reads it with no wake-up at all.
 * The watch spins (poll, sched_yield) for its first spin_us only, then sleeps in ppoll for the rest:
 * under load the host commits between calls (a group-commit round, a millisecond or more) and
 * every watch ends idle, and a worker is in a session of its own, so with the kernel's autogroup
 * (Debian's default) its spin ran with a whole autogroup's share, taken from the server: ~15% of
 * the worker's CPU per packet under `bench ingest`, while back-to-back calls (`bench parse`,
 * unbatched) still arrive within the spin (docs/BENCHMARKS.md, 2026-11-28).
 * For send/1:
 * Why not Port.command on the {fd, 3, 4} port: the BEAM's fd driver hands every write to its async
 * thread and wakes it, and that thread wakes the scheduler again when done; in a VM each of those
 * wake-ups costs tens of µs, paid for every frame. A write into the pipe is a few µs; the pipe only
 * fills when a frame is larger than its buffer and the host is reading it (the host reads until the
 * frame is complete or kills the worker), so blocking here is bounded by the host's deadline. */
#include <erl_nif.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { request_fd = 3, answer_fd = 4 };
/* The host's own bound on a frame; a larger length is a broken pipe, not a request. */
static const uint32_t max_request_bytes = 256u << 20;
/* How long take/1 busy-waits before it sleeps for the rest of its watch (see above). */
static const long spin_us = 50;

static ERL_NIF_TERM error(ErlNifEnv* env, int err) {
  return enif_make_tuple2(env, enif_make_atom(env, "error"), enif_make_int(env, err));
}

static ERL_NIF_TERM send_frame(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifBinary bytes;
  if (!enif_inspect_binary(env, argv[0], &bytes) || bytes.size > 0xFFFFFFFFu) return enif_make_badarg(env);
  unsigned char header[4] = {(unsigned char)(bytes.size >> 24), (unsigned char)(bytes.size >> 16),
                             (unsigned char)(bytes.size >> 8), (unsigned char)bytes.size};
  struct iovec parts[2] = {{header, sizeof header}, {bytes.data, bytes.size}};
  struct iovec* next = parts;
  int left = 2;
  while (left > 0) {
    const ssize_t n = writev(answer_fd, next, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) { /* the fd driver made the pipe non-blocking: wait until it drains */
        struct pollfd writable = {answer_fd, POLLOUT, 0};
        (void)poll(&writable, 1, -1);
        continue;
      }
      return error(env, errno);
    }
    size_t written = (size_t)n;
    while (left > 0 && written >= next->iov_len) {
      written -= next->iov_len;
      ++next;
      --left;
    }
    if (left > 0) {
      next->iov_base = (unsigned char*)next->iov_base + written;
      next->iov_len -= written;
    }
  }
  return enif_make_atom(env, "ok");
}

static int64_t now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Reads exactly `n` bytes from fd 3, waiting while the host is still writing them: 0 when done,
 * 1 at end of file, -1 with errno on an error. */
static int read_exactly(unsigned char* into, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = read(request_fd, into + done, n - done);
    if (got > 0) {
      done += (size_t)got;
    } else if (got == 0) {
      return 1;
    } else if (errno == EAGAIN) {
      struct pollfd readable = {request_fd, POLLIN, 0};
      (void)poll(&readable, 1, -1);
    } else if (errno != EINTR) {
      return -1;
    }
  }
  return 0;
}

/* take(watch_us): {:ok, request} | :idle (nothing came while watching) | :eof | {:error, errno} */
static ERL_NIF_TERM take_frame(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  long watch_us;
  if (!enif_get_long(env, argv[0], &watch_us) || watch_us < 0 || watch_us > 1000) return enif_make_badarg(env);
  const int64_t start = now_us();
  const int64_t until = start + watch_us;
  const int64_t spin_until = start + (watch_us < spin_us ? watch_us : spin_us);
  struct pollfd readable = {request_fd, POLLIN, 0};
  int ready;
  while ((ready = poll(&readable, 1, 0)) == 0 && now_us() < spin_until) sched_yield();
  /* A request that came during the spin is read at once; otherwise sleep out the watch. */
  while (ready <= 0) {
    if (ready < 0 && errno != EINTR) return error(env, errno);
    const int64_t left = until - now_us();
    if (ready == 0 && left <= 0) return enif_make_atom(env, "idle");
    const struct timespec wait = {0, left > 0 ? left * 1000 : 0};
    ready = ppoll(&readable, 1, &wait, NULL);
  }
  unsigned char header[4];
  int status = read_exactly(header, sizeof header);
  if (status == 1) return enif_make_atom(env, "eof");
  if (status < 0) return error(env, errno);
  const uint32_t n = ((uint32_t)header[0] << 24) | ((uint32_t)header[1] << 16) | ((uint32_t)header[2] << 8) | header[3];
  if (n > max_request_bytes) return error(env, EMSGSIZE);
  ErlNifBinary bytes;
  if (!enif_alloc_binary(n, &bytes)) return error(env, ENOMEM);
  status = read_exactly(bytes.data, n);
  if (status != 0) {
    const int err = errno;
    enif_release_binary(&bytes);
    return status == 1 ? enif_make_atom(env, "eof") : error(env, err);
  }
  return enif_make_tuple2(env, enif_make_atom(env, "ok"), enif_make_binary(env, &bytes));
}

/* wait_readable(): :ok once fd 3 has bytes or is closed (take/1 then tells which). */
static ERL_NIF_TERM wait_readable(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  struct pollfd readable = {request_fd, POLLIN, 0};
  while (poll(&readable, 1, -1) < 0) {
    if (errno != EINTR) return error(env, errno);
  }
  return enif_make_atom(env, "ok");
}

static ErlNifFunc functions[] = {{"send", 1, send_frame, 0},
                                 {"take", 1, take_frame, 0},
                                 {"wait_readable", 0, wait_readable, ERL_NIF_DIRTY_JOB_IO_BOUND}};

ERL_NIF_INIT(Elixir.Fieldline.Frames, functions, NULL, NULL, NULL, NULL)
