/* Fieldline.Frames.send/1: writes one answer frame (a 4-byte big-endian length, then the bytes) to
 * the worker's answer pipe, fd 4, from the calling scheduler thread.
 * Why not Port.command on the {fd, 3, 4} port: the BEAM's fd driver hands every write to its async
 * thread and wakes it, and that thread wakes the scheduler again when done; in a VM each of those
 * wake-ups costs tens of µs, paid for every frame. A write into the pipe is a few µs; the pipe only
 * fills when a frame is larger than its buffer and the host is reading it (the host reads until the
 * frame is complete or kills the worker), so blocking here is bounded by the host's deadline. */
#include <erl_nif.h>
#include <errno.h>
#include <poll.h>
#include <sys/uio.h>

enum { answer_fd = 4 };

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

static ErlNifFunc functions[] = {{"send", 1, send_frame, 0}};

ERL_NIF_INIT(Elixir.Fieldline.Frames, functions, NULL, NULL, NULL, NULL)
