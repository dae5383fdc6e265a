/*
 * context_many.c - htpu_context_open_many: several models brought up in one call.
 *
 * Every model is prepared as a single load would be (its binary mapped or copied, its
 * metadata read, its options checked: load.h), on the caller's thread. Where the backend
 * announces contextCreateFromBinaryListAsync (runtime list_load) and two or more models are
 * ready, they are created by one list call (model/create_list.c) inside one exclusive hold of
 * the execute gate; elsewhere each goes through load_run, one after another. Either way each
 * model ends with what a load of it alone would give: its context or its own error.
 *
 * In the list: a model past its own deadline before the call is refused (nothing asked of
 * QNN); the call carries a timeout signal to the latest deadline (when every model has one);
 * a model whose context came after its own deadline is freed and gets HTPU_ETIMEDOUT. A model
 * that starts a new spill-fill group is created first on its own, its load profile read back
 * (the others name its handle: it must be good before they do); a model the list failed goes
 * on with the single load's fallbacks after a first create (load_create: one more create after
 * a DSP restart, its group's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "load.h"
#include "loader/loader.h"
#include "model/model.h"
#include "printable.h"
#include "qnnset/qnnset.h"

typedef struct many_item {
  htpu_load_request *r;
  context_obj *c;
  char origin[LOAD_ORIGIN_LEN];
  uint64_t deadline; /* 0: none */
  profile_call prof;
  htpu_profile *lp;
  int done;          /* created on its own before the list (or failed) */
  int prof_read;     /* its load profile was read back already (prof, lp) */
  int first_tried;   /* tried as the first of the list's spill-fill group */
} many_item;

/* The request failed with rc (the thread's last error says why): its code and message. The
 * context, if any, is discarded after the gate (many_finish). */
static int note_fail(many_item *m, int rc) {
  m->r->rc = rc;
  m->r->qnn_code = htpu_last_qnn_code();
  if (m->r->error && m->r->error_len)
    htpu_copy_message(htpu_last_error(), m->r->error, m->r->error_len);
  return rc;
}

/* What is wrong with a request's source (one of a path and a buffer), or NULL. */
static const char *source_problem(const htpu_load_request *r) {
  if (r->path && r->buf) return "names both a path and a buffer; expected one of them";
  if (r->path || (r->buf && r->len)) return NULL;
  if (r->buf) return "has an empty buffer (len 0); expected a QNN context binary";
  if (r->len) return "has a NULL buffer of len > 0; expected a QNN context binary";
  return "has neither a path nor a buffer; expected one of them";
}

/* Its binary and metadata, as htpu_context_open_*_ex would take them. */
static int prepare(htpu_runtime *h, many_item *m, uint64_t t0) {
  htpu_load_request *r = m->r;
  const htpu_load_options *lo = r->opts;
  model_binary bin;
  int rc;
  const char *bad = source_problem(r);
  if (bad) {
    /* a lent buffer is released exactly once, also when the request is refused */
    if (r->buf && lo && lo->buffer_release) lo->buffer_release(lo->buffer_release_arg);
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_many: the request %s", bad);
  }
  if (r->path) {
    snprintf(m->origin, sizeof m->origin, "file '%s'",
             printable_str(r->path, (char[1024]){0}, 1024));
    rc = binary_open_file(r->path, !(lo && lo->copy_binary), &bin);
  } else {
    snprintf(m->origin, sizeof m->origin, "a %zu-byte buffer", r->len);
    rc = binary_from_buffer(r->buf, r->len, lo ? lo->buffer_release : NULL,
                            lo ? lo->buffer_release_arg : NULL, &bin);
  }
  if (rc) return rc;
  if (lo && lo->profile_level && !lo->profile) {
    binary_release(&bin);
    return htpu_set_error(HTPU_EINVAL, 0, "loading %s: profile_level is set but profile (where "
                          "to store the events) is NULL", m->origin);
  }
  m->deadline = lo && lo->timeout_ns ? t0 + lo->timeout_ns : 0;
  return load_prepare(h, &bin, r->path, m->origin, sizeof m->origin, lo, t0, &m->c);
}

/* One after another, each as a single load. */
static void run_each(many_item *items, size_t n, uint64_t t0) {
  for (size_t i = 0; i < n; i++) {
    many_item *m = &items[i];
    if (!m->c) continue;
    int rc = load_run(m->c, m->origin, m->r->opts, t0);
    if (rc) note_fail(m, rc);
  }
}

/* The latest deadline of the models still in (0 when one has none). */
static uint64_t list_deadline(many_item *items, size_t n) {
  uint64_t latest = 0;
  for (size_t i = 0; i < n; i++) {
    if (!items[i].c) continue;
    if (!items[i].deadline) return 0;
    if (items[i].deadline > latest) latest = items[i].deadline;
  }
  return latest;
}

static int timed_out(many_item *m, const char *when) {
  return htpu_set_error(HTPU_ETIMEDOUT, 0, "loading %s: the load passed its %llu ms deadline "
                        "(timeout_ns) %s; nothing was created", m->origin,
                        (unsigned long long)(m->r->opts->timeout_ns / 1000000u), when);
}

/* A group's first model, created alone: its load profile read back now, before any other
 * model names its handle, so that a failed read (which fails the model, as it fails a single
 * load) frees a context no one else depends on (spill_group.c: the first context stays while
 * its group has members). */
static int read_first_profile(many_item *m) {
  context_obj *c = m->c;
  runtime_obj *rt = c->rt;
  m->prof_read = 1;
  int rc = profile_call_end(rt, &m->prof, 1, "", &m->lp);
  if (rc) {
    rt->backend_lib.context_free(c->qnn, NULL);
    c->qnn = NULL;
    if (rt->sf_anchor == c) rt->sf_anchor = NULL; /* no one joins it */
  }
  return rc;
}

/* Inside the gate, before the list, for one model: what can fail alone (its deadline, its
 * compatibility) and its spill-fill group (a model starting a new group is created here, on
 * its own: the others will name its handle). */
static void before_one(many_item *m, uint64_t bytes, uint64_t mark) {
  context_obj *c = m->c;
  int rc = m->deadline && htpu_now_ns() >= m->deadline ? timed_out(m, "before the list load")
           : compat_check(c->rt, c->info, c->graph_on, c->bin.data, c->bin.len);
  if (!rc) sf_choose(c, bytes);
  if (!rc && c->sf_anchor == c) {
    m->done = 1;
    rc = load_create(c, m->origin, m->r->opts, m->deadline, m->prof.handle, NULL, mark);
    if (!rc) rc = read_first_profile(m);
  }
  if (rc == HTPU_EINCOMPATIBLE) {
    htpu_append_error(" (%s)", m->origin);
    /* made by a newer release: which other installed set can load it */
    if (compat_too_new(c->rt, c->info, c->graph_on)) qnnset_hint(&c->info->pub, rc);
  }
  if (rc) note_fail(m, rc);
}

/* The models still good (a profile that could not be made failed one already). */
static int still_good(const many_item *m) { return m->c && !m->r->rc; }

/* The next model to try as the group's first: the good one with the smallest binary among
 * those reporting a spill-fill size and not tried yet (n when none is left); *bytes, the
 * largest spill-fill of the good ones (the group's buffer). */
static size_t next_first(many_item *items, size_t n, uint64_t *bytes) {
  size_t first = n;
  *bytes = 0;
  for (size_t i = 0; i < n; i++) {
    const context_obj *c = items[i].c;
    if (!still_good(&items[i])) continue;
    if (c->spill_fill > *bytes) *bytes = c->spill_fill;
    if (items[i].first_tried || !c->spill_fill) continue;
    if (first == n || c->bin.len < items[first].c->bin.len) first = i;
  }
  if (first < n) items[first].first_tried = 1;
  return first;
}

/* before_one for every good model, the group's buffer sized by the largest spill-fill among
 * them. The model with the smallest binary goes first: if it starts a group, its load alone
 * is the list's head start, and the quickest one (a load's time grows with its binary). When
 * it fails, the next smallest is tried: a group's first is always a model that loaded. */
static void before_list(many_item *items, size_t n, uint64_t mark) {
  uint64_t bytes;
  size_t first;
  while ((first = next_first(items, n, &bytes)) < n) {
    before_one(&items[first], bytes, mark);
    if (still_good(&items[first])) break; /* it started the group, or joined the current one */
  }
  for (size_t i = 0; i < n; i++)
    if (i != first && still_good(&items[i])) before_one(&items[i], bytes, mark);
}

/* What the list said of one model: its context, or its failure, which goes on through the
 * fallbacks a single load of it has after its first create failed (one more create after a
 * DSP restart, its spill-fill group's: load_create). Inside the gate. */
static void after_list(many_item *m, const create_item *it, uint64_t mark) {
  context_obj *c = m->c;
  uint32_t code = QNN_ERROR_CODE(it->status);
  int rc = 0;
  if (it->status == QNN_SUCCESS && it->qnn) {
    c->qnn = it->qnn;
    c->list_loaded = 1;
    if (m->deadline && it->notified_ns > m->deadline) {
      c->rt->backend_lib.context_free(c->qnn, NULL); /* it came too late: freed again */
      c->qnn = NULL;
      rc = timed_out(m, "while the list loaded");
    } else {
      sf_loaded(c);
    }
  } else if (code == QNN_CONTEXT_ERROR_TIMED_OUT || code == QNN_CONTEXT_ERROR_ABORTED) {
    rc = timed_out(m, "while the list loaded");
  } else {
    rc = load_create(c, m->origin, m->r->opts, m->deadline, m->prof.handle, &it->status, mark);
  }
  if (rc) note_fail(m, rc);
}

/* The models still in, by one list call. Inside the gate. */
static void run_list(runtime_obj *rt, many_item *items, size_t n, uint64_t deadline,
                     uint64_t mark) {
  create_item *list = calloc(n, sizeof *list);
  size_t *at = calloc(n, sizeof *at), k = 0;
  for (size_t i = 0; list && at && i < n; i++) {
    if (!items[i].c || items[i].done || items[i].r->rc) continue;
    list[k] = (create_item){.c = items[i].c, .profile = items[i].prof.handle,
                            .use_group = items[i].c->sf_anchor != NULL};
    at[k++] = i;
  }
  if (!list || !at) {
    int rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    for (size_t i = 0; i < n; i++)
      if (items[i].c && !items[i].done && !items[i].r->rc) note_fail(&items[i], rc);
  } else if (k) {
    create_list(rt, list, k, deadline);
    for (size_t j = 0; j < k; j++) after_list(&items[at[j]], &list[j], mark);
  }
  free(list);
  free(at);
}

/* Every model's profile handle, before the gate (a model whose profile cannot be made fails
 * here alone). */
static void begin_profiles(runtime_obj *rt, many_item *items, size_t n) {
  for (size_t i = 0; i < n; i++) {
    many_item *m = &items[i];
    if (!m->c) continue;
    const htpu_load_options *lo = m->r->opts;
    int rc = profile_call_begin(rt, lo ? lo->profile_level : 0, lo ? lo->profile_max_events : 0,
                                &m->prof);
    if (rc) note_fail(m, rc);
  }
}

/* Whether other models of the list joined m's context's spill-fill group (m is its first). */
static int has_members(const many_item *items, size_t n, const many_item *m) {
  for (size_t j = 0; j < n; j++)
    if (&items[j] != m && items[j].c && items[j].c->sf_anchor == m->c && items[j].c->qnn)
      return 1;
  return 0;
}

/* Inside the gate, after the creates: profiles read back (a failed read fails the model that
 * asked for it), contexts listed in the runtime, failures' QNN contexts freed; save a group's
 * first that others joined (its group's first profile was read before they did, so only running
 * out of memory gets here): it stays until its last member goes (context_destroy frees it). */
static void end_profiles(runtime_obj *rt, many_item *items, size_t n) {
  for (size_t i = 0; i < n; i++) {
    many_item *m = &items[i];
    if (!m->c) continue;
    int ok = m->r->rc == 0 && m->c->qnn;
    int rc = m->r->rc || m->prof_read ? 0 : profile_call_end(rt, &m->prof, ok, "", &m->lp);
    if (!rc && ok && runtime_add_context(rt, m->c) != 0)
      rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    if (rc) note_fail(m, rc);
    if (m->r->rc) {
      if (m->r->rc != rc && !m->prof_read) profile_call_end(rt, &m->prof, 0, "", &m->lp);
      htpu_profile_free(m->lp);
      m->lp = NULL;
      if (m->c->qnn && !has_members(items, n, m)) {
        rt->backend_lib.context_free(m->c->qnn, NULL);
        m->c->qnn = NULL;
      }
      if (rt->sf_anchor == m->c) rt->sf_anchor = NULL;
    }
  }
}

/* Every model still in fails with rc (the thread's error, or a timeout `when`). */
static void fail_all(many_item *items, size_t n, int rc, const char *when) {
  char msg[1024];
  htpu_copy_message(htpu_last_error(), msg, sizeof msg);
  for (size_t i = 0; i < n; i++)
    if (items[i].c && !items[i].r->rc) {
      if (when) timed_out(&items[i], when);
      else htpu_set_error(rc, 0, "loading %s: %s", items[i].origin, msg);
      note_fail(&items[i], rc);
    }
}

/* The list load: one hold of the NPU lock (another process's creations: src/board/) and of
 * the gate for all of them. */
static void many_list(runtime_obj *rt, many_item *items, size_t n) {
  begin_profiles(rt, items, n);
  uint64_t deadline = list_deadline(items, n), mark = qnn_log_mark();
  char what[64];
  snprintf(what, sizeof what, "loading %zu models in one list call", n);
  npu_lock_hold hold;
  int rc = npu_lock_enter(&rt->npu_lock, deadline, NULL, what, &hold);
  int gated = !rc && gate_enter_exclusive(&htpu_exec_gate, NULL, deadline);
  if (rc)
    fail_all(items, n, rc, NULL);
  else if (!gated)
    fail_all(items, n, HTPU_ETIMEDOUT,
             "while it waited for the executes in flight to end (the execute gate)");
  if (gated) {
    before_list(items, n, mark);
    run_list(rt, items, n, list_deadline(items, n), mark);
  }
  end_profiles(rt, items, n);
  if (gated) gate_leave_exclusive(&htpu_exec_gate);
  npu_lock_leave(&hold);
}

/* After the loads, off the gate: profiles handed out, contexts published or discarded. */
static void many_finish(many_item *items, size_t n, uint64_t t0) {
  for (size_t i = 0; i < n; i++) {
    many_item *m = &items[i];
    if (!m->c) continue;
    load_drop_anchor(m->c);
    if (m->lp) {
      m->lp->start_ns = m->lp->execute_start_ns = t0;
      m->lp->execute_ns = m->lp->total_ns = htpu_now_ns() - t0;
      *m->r->opts->profile = m->lp;
    }
    int rc = m->r->rc ? m->r->rc : load_publish(m->c, t0, &m->r->ctx);
    if (rc && !m->r->rc) note_fail(m, rc);
    if (rc) load_discard(m->c);
    m->c = NULL;
  }
}

int htpu_context_open_many(htpu_runtime *h, htpu_load_request *reqs, size_t n) {
  htpu_clear_error();
  if (!reqs || n == 0)
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_many: %s",
                          !reqs ? "reqs is NULL" : "no request (n is 0)");
  many_item *items = calloc(n, sizeof *items);
  if (!items) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  uint64_t t0 = htpu_now_ns();
  size_t ready = 0;
  for (size_t i = 0; i < n; i++) {
    items[i].r = &reqs[i];
    reqs[i].ctx = NULL;
    reqs[i].rc = 0;
    reqs[i].qnn_code = 0;
    if (reqs[i].opts && reqs[i].opts->profile) *reqs[i].opts->profile = NULL;
    int rc = prepare(h, &items[i], t0);
    if (rc) note_fail(&items[i], rc);
    else ready++;
  }
  runtime_obj *rt = NULL; /* each prepared model holds a reference on it */
  for (size_t i = 0; !rt && i < n; i++)
    if (items[i].c) rt = items[i].c->rt;
  if (rt && rt->list_load && ready > 1) many_list(rt, items, n);
  else run_each(items, n, t0);
  many_finish(items, n, t0);
  int first = 0;
  for (size_t i = 0; i < n && !first; i++) first = reqs[i].rc;
  free(items);
  if (first) htpu_set_error(first, 0, "htpu_context_open_many: not every model loaded; each "
                            "request's rc and error say why");
  return first;
}
