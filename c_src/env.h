/*
 * env.h - the `env:` option of HexagonTpu.Runtime.open/1 and Graph.alloc_io/2 (env.c): OS
 * environment variables set around one open or allocation, for the libraries that read them
 * then (docs/elixir.md, Environment of the backend libraries).
 */
#ifndef HTPU_NIF_ENV_H
#define HTPU_NIF_ENV_H

#include <stddef.h>

#include <erl_nif.h>

/* Applies [{name, value | nil}] with setenv/unsetenv, recording the previous values in `saved`
 * so env_restore can put them back (also after a failure: what was applied is recorded). Not
 * safe against concurrent getenv in other threads. 0, or -1 with `why` saying what was wrong:
 * more than `max` entries, a name empty or with '=' or NUL, a value with NUL, not a proper
 * list. */
typedef struct env_entry {
  char *name;
  char *old; /* NULL: was unset */
} env_entry;
#define MAX_ENV 16
int env_apply(ErlNifEnv *env, ERL_NIF_TERM list, env_entry *saved, unsigned max, unsigned *count,
              char *why, size_t why_len);
void env_restore(env_entry *saved, unsigned n);

/* Held by every runtime open and IO allocation from env_apply (or, without an env: list, from
 * before the call) to after env_restore: the libraries read their environment while they are
 * created, so an open without an env: list must not run while another open's variables are
 * set (it would take them: an async test's runtime once got another test's fault rules). */
void env_lock(void);
void env_unlock(void);

#endif
