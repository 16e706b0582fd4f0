/* Fieldline.Lockdown.lock/0: run by each worker once it has booted, before it serves any request.
 * Boot needs things parsing never does (beam starts erl_child_setup and inet_gethost), so the
 * launcher's filter must allow fork and exec. Afterwards this adds, from the inside, a second seccomp
 * filter on every thread (TSYNC) refusing exec, fork, new sockets, ptrace and session changes.
 * Filters only ever add restrictions; the launcher's filter stays in force underneath.
 * (RLIMIT_FSIZE cannot drop to 0 here either: the JIT creates further code memfds lazily, on the
 * first compile, and sizes them with ftruncate, which the limit caps.) */
#define _GNU_SOURCE /* CLONE_THREAD */  // NOLINT(bugprone-reserved-identifier): glibc reads this name
#include <erl_nif.h>
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>

static ERL_NIF_TERM error(ErlNifEnv* env, const char* what, int err) {
  return enif_make_tuple3(env, enif_make_atom(env, "error"), enif_make_atom(env, what), enif_make_int(env, err));
}

static ERL_NIF_TERM lock(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return error(env, "seccomp_init", 0);
  int rc = 0;
  const int denied[] = {SCMP_SYS(execve), SCMP_SYS(execveat),   SCMP_SYS(fork),    SCMP_SYS(vfork),
                        SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind),
                        SCMP_SYS(listen), SCMP_SYS(ptrace),     SCMP_SYS(setsid),  SCMP_SYS(setpgid)};
  /* kill and tgkill stay: the BEAM signals its own threads with them. */
  for (unsigned i = 0; rc == 0 && i < sizeof denied / sizeof denied[0]; ++i)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), denied[i], 0);
  /* Threads may still be created (CLONE_THREAD); new processes may not. */
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return error(env, "seccomp", -rc);
  return enif_make_atom(env, "ok");
}

static ErlNifFunc functions[] = {{"lock_nif", 0, lock, 0}};

ERL_NIF_INIT(Elixir.Fieldline.Lockdown, functions, NULL, NULL, NULL, NULL)
