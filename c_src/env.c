/*
 * env.c - the `env:` option: OS environment variables set around one runtime open or shared
 * buffer allocation, then restored.
 *
 * A user feature, not only a test hook: libraries loaded and initialized in C (the QNN backend,
 * FastRPC) read their settings with getenv(3) when they are created, and the VM keeps its own
 * copy of the environment, so System.put_env/2 never reaches them (docs/elixir.md, Environment
 * of the backend libraries). The reference backend reads its test rules (HTPU_REF_*) the same
 * way, which is how the tests arm faults. setenv is not safe against a concurrent getenv on
 * another thread: the option is for startup, documented so; opens and allocations of this
 * library exclude each other around it (env_lock).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "terms.h"

static pthread_mutex_t g_env_lock = PTHREAD_MUTEX_INITIALIZER;

void env_lock(void) { pthread_mutex_lock(&g_env_lock); }
void env_unlock(void) { pthread_mutex_unlock(&g_env_lock); }

void env_restore(env_entry *saved, unsigned n) {
  for (unsigned i = n; i-- > 0;) {
    if (saved[i].old)
      setenv(saved[i].name, saved[i].old, 1);
    else
      unsetenv(saved[i].name);
    enif_free(saved[i].name);
    if (saved[i].old) enif_free(saved[i].old);
  }
}

static char *dup_cstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = enif_alloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

int env_apply(ErlNifEnv *env, ERL_NIF_TERM list, env_entry *saved, unsigned max,
              unsigned *count, char *why, size_t why_len) {
  *count = 0;
  ERL_NIF_TERM head, tail = list;
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    const ERL_NIF_TERM *kv;
    int arity;
    char *name = NULL, *value = NULL;
    if (*count >= max) {
      snprintf(why, why_len, "more than %u entries", max);
      return -1;
    }
    if (!enif_get_tuple(env, head, &arity, &kv) || arity != 2 ||
        nif_get_cstring_or_nil(env, kv[0], &name) || !name || !name[0] || strchr(name, '=')) {
      if (name) enif_free(name);
      snprintf(why, why_len,
               "an entry is not {name, value | nil} with a non-empty name without '=' or NUL");
      return -1;
    }
    if (nif_get_cstring_or_nil(env, kv[1], &value)) {
      enif_free(name);
      snprintf(why, why_len, "the value of an entry is neither nil nor a string without NUL");
      return -1;
    }
    const char *old = getenv(name);
    saved[*count].name = name;
    saved[*count].old = old ? dup_cstr(old) : NULL;
    (*count)++;
    int rc = value ? setenv(name, value, 1) : unsetenv(name);
    if (value) enif_free(value);
    if (rc != 0) {
      snprintf(why, why_len, "setting '%s' failed: %s", name, strerror(errno));
      return -1;
    }
  }
  if (!enif_is_empty_list(env, tail)) {
    snprintf(why, why_len, "not a proper list");
    return -1;
  }
  return 0;
}
