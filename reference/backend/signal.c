/*
 * signal.c - QnnSignal: abort and timeout signals, and a call taking and releasing its own.
 *
 * QnnSignal.h's rules: a signal is an abort or a timeout signal, not both; it is in use from
 * the start of the one call it was passed to until that call returns (an async execute: until
 * its notification), and then idle and reusable with its configuration; setConfig, free and a
 * second call refuse a signal in use; trigger of an idle signal fails; trigger of an abort
 * signal blocks until the call it aborts is ready to return. Timeouts run from the call's
 * start, queue wait included.
 *
 * What a call does with the signal it took (waits that end at an abort or a deadline) is
 * sched.c's, below the object files; this file is the signal objects and their API.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rb_internal.h"

int rb_signal_acquire(rb_backend *b, const void *h, const char *user, uint64_t start_ns,
                      rb_watch *w) {
  w->sig = NULL;
  w->gen = 0;
  w->start_ns = start_ns;
  w->deadline_ns = 0;
  if (!h) return 0;
  rb_signal *s = rb_find_signal(h);
  if (!s || s->backend != b) return -1;
  int rc = 0;
  pthread_mutex_lock(&g_sched.lock);
  if (s->in_use) {
    rc = -2;
  } else {
    s->in_use = true;
    s->user = user;
    w->sig = s;
    w->gen = ++s->generation;
    if (s->kind == RB_SIG_TIMEOUT) w->deadline_ns = start_ns + s->timeout_us * 1000u;
  }
  pthread_mutex_unlock(&g_sched.lock);
  return rc;
}

void rb_signal_release(rb_watch *w) {
  if (!w->sig) return;
  pthread_mutex_lock(&g_sched.lock);
  w->sig->in_use = false;
  pthread_cond_broadcast(&g_sched.cond);
  pthread_mutex_unlock(&g_sched.lock);
  w->sig = NULL;
}

/* ---- the QnnSignal API -------------------------------------------------------------------- */

static rb_log *log_of(rb_backend *b) { return b ? b->log : NULL; }

/* Reads a config array into kind/timeout (NULL: nothing configured). */
static qnn_error_t read_configs(rb_log *log, const char *api, const qnn_signal_config_t **cfg,
                                rb_sig_kind *kind, uint64_t *timeout_us) {
  bool abort_seen = false, timeout_seen = false;
  *kind = RB_SIG_NONE;
  *timeout_us = 0;
  for (uint32_t i = 0; cfg && cfg[i]; i++) {
    const qnn_signal_config_t *c = cfg[i];
    if (c->option == QNN_SIGNAL_CONFIG_OPTION_ABORT) {
      if (rb_cap(QNN_PROPERTY_SIGNAL_SUPPORT_ABORT) != QNN_SUCCESS) {
        rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: abort signals are not supported "
                "(capability 1202 off)", api, i);
        return QNN_COMMON_ERROR_NOT_SUPPORTED;
      }
      abort_seen = true;
    } else if (c->option == QNN_SIGNAL_CONFIG_OPTION_TIMEOUT) {
      if (rb_cap(QNN_PROPERTY_SIGNAL_SUPPORT_TIMEOUT) != QNN_SUCCESS) {
        rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: timeout signals are not supported "
                "(capability 1203 off)", api, i);
        return QNN_COMMON_ERROR_NOT_SUPPORTED;
      }
      if (c->u.timeout_duration_us == 0 || c->u.timeout_duration_us > UINT64_MAX / 2000u) {
        rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: timeout of %llu us (expected 1 .. "
                "%llu microseconds)", api, i, (unsigned long long)c->u.timeout_duration_us,
                (unsigned long long)(UINT64_MAX / 2000u));
        return QNN_SIGNAL_ERROR_INVALID_ARGUMENT;
      }
      timeout_seen = true;
      *timeout_us = c->u.timeout_duration_us; /* repeated: the last one wins */
    } else {
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: option %u (expected ABORT (1) or "
              "TIMEOUT (2); this backend has no custom signal configs)", api, i, c->option);
      return QNN_SIGNAL_ERROR_INVALID_ARGUMENT;
    }
  }
  if (abort_seen && timeout_seen) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: ABORT and TIMEOUT in one signal: the two are "
            "mutually exclusive (use one signal per purpose)", api);
    return QNN_SIGNAL_ERROR_INVALID_ARGUMENT;
  }
  *kind = abort_seen ? RB_SIG_ABORT : timeout_seen ? RB_SIG_TIMEOUT : RB_SIG_NONE;
  return QNN_SUCCESS;
}

static qnn_error_t api_off(rb_log *log, const char *api) {
  if (rb_cap(QNN_PROPERTY_GROUP_SIGNAL) == QNN_SUCCESS) return QNN_SUCCESS;
  rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: the QnnSignal API is not supported (capability 1201 "
          "off)", api);
  return QNN_COMMON_ERROR_NOT_SUPPORTED;
}

qnn_error_t rb_signal_create(qnn_backend_handle_t bh, const qnn_signal_config_t **cfg,
                             qnn_signal_handle_t *out) {
  pthread_mutex_lock(&g_rb.lock);
  rb_backend *b = rb_find_backend(bh);
  rb_log *log = log_of(b);
  pthread_mutex_unlock(&g_rb.lock);
  qnn_error_t rc = api_off(log, "signalCreate");
  if (rc != QNN_SUCCESS) return rc;
  if (!b) return QNN_SIGNAL_ERROR_INVALID_HANDLE;
  if (!out) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "signalCreate: the signal out-pointer is NULL");
    return QNN_SIGNAL_ERROR_INVALID_ARGUMENT;
  }
  rb_signal *s = calloc(1, sizeof(*s));
  if (!s) return QNN_COMMON_ERROR_MEM_ALLOC;
  rc = read_configs(log, "signalCreate", cfg, &s->kind, &s->timeout_us);
  if (rc != QNN_SUCCESS) {
    free(s);
    return rc;
  }
  pthread_mutex_lock(&g_rb.lock);
  if (rb_find_backend(bh) != b) { /* freed meanwhile */
    pthread_mutex_unlock(&g_rb.lock);
    free(s);
    return QNN_SIGNAL_ERROR_INVALID_HANDLE;
  }
  s->backend = b;
  s->handle = rb_new_handle();
  s->next = g_rb.signals;
  g_rb.signals = s;
  *out = (qnn_signal_handle_t)s->handle;
  pthread_mutex_unlock(&g_rb.lock);
  return QNN_SUCCESS;
}

qnn_error_t rb_signal_set_config(qnn_signal_handle_t h, const qnn_signal_config_t **cfg) {
  pthread_mutex_lock(&g_rb.lock);
  rb_signal *s = rb_find_signal(h);
  rb_log *log = s ? log_of(s->backend) : NULL;
  pthread_mutex_unlock(&g_rb.lock);
  qnn_error_t rc = api_off(log, "signalSetConfig");
  if (rc != QNN_SUCCESS) return rc;
  if (!s) return QNN_SIGNAL_ERROR_INVALID_HANDLE;
  rb_sig_kind kind;
  uint64_t timeout_us;
  rc = read_configs(log, "signalSetConfig", cfg, &kind, &timeout_us);
  if (rc != QNN_SUCCESS) return rc;
  pthread_mutex_lock(&g_rb.lock);
  if (rb_find_signal(h) != s) {
    rc = QNN_SIGNAL_ERROR_INVALID_HANDLE;
  } else {
    pthread_mutex_lock(&g_sched.lock);
    if (s->in_use) {
      rc = QNN_SIGNAL_ERROR_SIGNAL_IN_USE;
    } else {
      s->kind = kind;
      s->timeout_us = timeout_us;
    }
    pthread_mutex_unlock(&g_sched.lock);
  }
  pthread_mutex_unlock(&g_rb.lock);
  if (rc == QNN_SIGNAL_ERROR_SIGNAL_IN_USE)
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "signalSetConfig: signal 0x%lx is in use by a call",
            (unsigned long)(uintptr_t)h);
  return rc;
}

qnn_error_t rb_signal_trigger(qnn_signal_handle_t h) {
  pthread_mutex_lock(&g_rb.lock);
  rb_signal *s = rb_find_signal(h);
  rb_log *log = s ? log_of(s->backend) : NULL;
  qnn_error_t rc = api_off(log, "signalTrigger");
  if (rc != QNN_SUCCESS || !s) {
    pthread_mutex_unlock(&g_rb.lock);
    return rc != QNN_SUCCESS ? rc : QNN_SIGNAL_ERROR_INVALID_HANDLE;
  }
  /* The signal cannot be freed while in use, and while idle nothing is waited for: checking
   * and marking under g_sched.lock (taken before g_rb.lock is let go) is enough. */
  pthread_mutex_lock(&g_sched.lock);
  pthread_mutex_unlock(&g_rb.lock);
  const char *user = s->user;
  rb_sig_kind kind = s->kind;
  if (!s->in_use) {
    rc = QNN_SIGNAL_ERROR_SIGNAL_IDLE;
  } else if (kind != RB_SIG_ABORT) {
    rc = QNN_SIGNAL_ERROR_INCOMPATIBLE_SIGNAL_TYPE;
  } else {
    uint64_t gen = s->generation;
    s->aborted_gen = gen;
    pthread_cond_broadcast(&g_sched.cond);
    /* QnnSignal.h: block until the call has released its resources and is ready to return */
    while (s->in_use && s->generation == gen) pthread_cond_wait(&g_sched.cond, &g_sched.lock);
  }
  pthread_mutex_unlock(&g_sched.lock);
  if (rc == QNN_SIGNAL_ERROR_SIGNAL_IDLE)
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "signalTrigger: signal 0x%lx is idle (no call is using "
            "it)", (unsigned long)(uintptr_t)h);
  else if (rc != QNN_SUCCESS)
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "signalTrigger: signal 0x%lx (in use by %s) is a %s "
            "signal; only abort signals can be triggered", (unsigned long)(uintptr_t)h,
            user ? user : "a call", kind == RB_SIG_TIMEOUT ? "timeout" : "unconfigured");
  return rc;
}

qnn_error_t rb_signal_free(qnn_signal_handle_t h) {
  pthread_mutex_lock(&g_rb.lock);
  rb_signal *s = rb_find_signal(h);
  rb_log *log = s ? log_of(s->backend) : NULL;
  qnn_error_t rc = api_off(log, "signalFree");
  if (rc == QNN_SUCCESS && !s) rc = QNN_SIGNAL_ERROR_INVALID_HANDLE;
  if (rc == QNN_SUCCESS) {
    pthread_mutex_lock(&g_sched.lock);
    bool busy = s->in_use;
    pthread_mutex_unlock(&g_sched.lock);
    if (busy) {
      rc = QNN_SIGNAL_ERROR_SIGNAL_IN_USE;
    } else {
      for (rb_signal **pp = &g_rb.signals; *pp; pp = &(*pp)->next)
        if (*pp == s) {
          *pp = s->next;
          break;
        }
      free(s);
    }
  }
  pthread_mutex_unlock(&g_rb.lock);
  if (rc == QNN_SIGNAL_ERROR_SIGNAL_IN_USE)
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "signalFree: signal 0x%lx is in use by a call",
            (unsigned long)(uintptr_t)h);
  return rc;
}

void rb_signal_release_all(rb_backend *b) {
  for (rb_signal **pp = &g_rb.signals; *pp;) {
    rb_signal *s = *pp;
    if (s->backend != b) {
      pp = &s->next;
      continue;
    }
    rb_violation(b->log, "backendFree: signal 0x%lx was not freed (leaked; freeing it now)",
                 (unsigned long)s->handle);
    rb_count_leak();
    *pp = s->next;
    free(s);
  }
}

uint32_t rb_signal_live_count(void) {
  uint32_t n = 0;
  for (rb_signal *s = g_rb.signals; s; s = s->next) n++;
  return n;
}
