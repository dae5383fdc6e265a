/* convert.c - C values <-> Erlang terms: errors, dtypes, tensor/graph/model/runtime info,
 * execute options and stats (terms.h). Calls nothing of c_src/ but the atoms. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "atoms.h"
#include "terms.h"

nif_atoms ATOMS;

/* HTPU error codes are 0..-N, contiguous (HTPU_ERRORS in the header); indexed by -code. */
#define MAX_ERRORS 64
static ERL_NIF_TERM error_atoms[MAX_ERRORS];

#define MAX_DTYPES 16
static ERL_NIF_TERM dtype_atoms[MAX_DTYPES];

/* The reason atom of an HTPU_E* name: "HTPU_EMISMATCH" -> mismatch. Four names read badly
 * when shortened mechanically, so they get the spelled-out atoms the docs use. */
static ERL_NIF_TERM make_error_atom(ErlNifEnv *env, const char *name) {
  static const char *const overrides[][2] = {
      {"HTPU_OK", "ok"},
      {"HTPU_EINVAL", "invalid_argument"},
      {"HTPU_ENOMEM", "no_memory"},
      {"HTPU_EQNN", "qnn_error"},
      {"HTPU_ETIMEDOUT", "timeout"},
  };
  for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++)
    if (strcmp(name, overrides[i][0]) == 0) return enif_make_atom(env, overrides[i][1]);
  char buf[64];
  const char *s = strncmp(name, "HTPU_E", 6) == 0 ? name + 6 : name;
  size_t n = 0;
  for (; s[n] && n + 1 < sizeof buf; n++) buf[n] = (char)tolower((unsigned char)s[n]);
  buf[n] = '\0';
  return enif_make_atom(env, buf);
}

void nif_atoms_make(ErlNifEnv *env) {
#define HTPU_NIF_ATOM_MAKE_(c_name, str) ATOMS.c_name = enif_make_atom(env, str);
  HTPU_NIF_ATOMS(HTPU_NIF_ATOM_MAKE_)
#undef HTPU_NIF_ATOM_MAKE_
  for (int i = 0; i < MAX_ERRORS; i++) error_atoms[i] = ATOMS.unknown;
#define HTPU_NIF_ERR_ATOM_(name, value, msg) \
  if (-(value) >= 0 && -(value) < MAX_ERRORS) error_atoms[-(value)] = make_error_atom(env, #name);
  HTPU_ERRORS(HTPU_NIF_ERR_ATOM_)
#undef HTPU_NIF_ERR_ATOM_
  for (int t = 0; t < MAX_DTYPES; t++) {
    const char *name = htpu_dtype_name((htpu_dtype)t);
    dtype_atoms[t] = enif_make_atom(env, strcmp(name, "invalid") == 0 ? "invalid" : name);
  }
}

ERL_NIF_TERM nif_make_string(ErlNifEnv *env, const char *s) {
  if (!s) s = "";
  size_t len = strlen(s);
  ERL_NIF_TERM term;
  unsigned char *p = enif_make_new_binary(env, len, &term);
  if (p && len) memcpy(p, s, len);
  return term;
}

ERL_NIF_TERM nif_make_spill_fill_note(ErlNifEnv *env, const char *note) {
  static const char c_name[] = "htpu_runtime_options.spill_fill_sharing";
  static const char ex_name[] = "the runtime option `spill_fill_sharing: true`";
  if (!note || !note[0]) return ATOMS.nil;
  const char *at = strstr(note, c_name);
  if (!at) return nif_make_string(env, note);
  size_t head = (size_t)(at - note), tail = strlen(at + sizeof c_name - 1);
  ERL_NIF_TERM term;
  unsigned char *p = enif_make_new_binary(env, head + sizeof ex_name - 1 + tail, &term);
  if (!p) return nif_make_string(env, note);
  memcpy(p, note, head);
  memcpy(p + head, ex_name, sizeof ex_name - 1);
  memcpy(p + head + sizeof ex_name - 1, at + sizeof c_name - 1, tail);
  return term;
}

static ERL_NIF_TERM error_term(ErlNifEnv *env, int code, const char *message, uint32_t qnn) {
  ERL_NIF_TERM reason = (code <= 0 && -code < MAX_ERRORS) ? error_atoms[-code] : ATOMS.unknown;
  ERL_NIF_TERM qnn_name = qnn ? nif_make_string(env, htpu_qnn_error_name(qnn)) : ATOMS.nil;
  return enif_make_tuple2(env, ATOMS.error,
                          enif_make_tuple4(env, reason, nif_make_string(env, message),
                                           enif_make_uint(env, qnn), qnn_name));
}

ERL_NIF_TERM nif_make_error(ErlNifEnv *env, int code) {
  const char *msg = htpu_last_error();
  return error_term(env, code, msg[0] ? msg : htpu_strerror(code), htpu_last_qnn_code());
}

ERL_NIF_TERM nif_make_error_qnn(ErlNifEnv *env, int code, uint32_t qnn, const char *msg) {
  return error_term(env, code, msg, qnn);
}

ERL_NIF_TERM nif_make_error_msg(ErlNifEnv *env, int code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return error_term(env, code, msg, 0);
}

ERL_NIF_TERM nif_closed_error(ErlNifEnv *env, const char *what) {
  return nif_make_error_msg(env, HTPU_ECLOSED, "the %s is closed", what);
}

ERL_NIF_TERM nif_dtype_atom(htpu_dtype t) {
  return ((int)t >= 0 && (int)t < MAX_DTYPES) ? dtype_atoms[t] : ATOMS.unknown;
}

int nif_get_dtype(ErlNifEnv *env, ERL_NIF_TERM term, htpu_dtype *out) {
  (void)env;
  for (int t = HTPU_F32; t < MAX_DTYPES && htpu_dtype_size((htpu_dtype)t); t++) {
    if (enif_is_identical(term, dtype_atoms[t])) {
      *out = (htpu_dtype)t;
      return 0;
    }
  }
  return -1;
}

int nif_get_cstring_or_nil(ErlNifEnv *env, ERL_NIF_TERM term, char **out) {
  *out = NULL;
  if (enif_is_identical(term, ATOMS.nil)) return 0;
  ErlNifBinary bin;
  if (!enif_inspect_binary(env, term, &bin)) return -1;
  if (memchr(bin.data, '\0', bin.size)) return -1; /* would silently truncate the path */
  char *s = enif_alloc(bin.size + 1);
  if (!s) return -1;
  memcpy(s, bin.data, bin.size);
  s[bin.size] = '\0';
  *out = s;
  return 0;
}

ERL_NIF_TERM nif_make_version(ErlNifEnv *env, htpu_version3 v) {
  return enif_make_tuple3(env, enif_make_uint(env, v.major), enif_make_uint(env, v.minor),
                          enif_make_uint(env, v.patch));
}

ERL_NIF_TERM nif_make_map(ErlNifEnv *env, ERL_NIF_TERM *keys, ERL_NIF_TERM *vals, size_t n) {
  ERL_NIF_TERM map;
  if (!enif_make_map_from_arrays(env, keys, vals, n, &map)) return enif_make_badarg(env);
  return map;
}

static ERL_NIF_TERM make_quant(ErlNifEnv *env, const htpu_quant *q) {
  switch (q->kind) {
    case HTPU_QUANT_PER_TENSOR: {
      ERL_NIF_TERM k[] = {ATOMS.scale, ATOMS.zero_point};
      ERL_NIF_TERM v[] = {enif_make_double(env, (double)q->scale),
                          enif_make_int(env, q->zero_point)};
      return nif_make_map(env, k, v, 2);
    }
    case HTPU_QUANT_PER_AXIS: {
      ERL_NIF_TERM scales = enif_make_list(env, 0), zps = enif_make_list(env, 0);
      for (uint32_t i = q->num_channels; i-- > 0;) {
        scales = enif_make_list_cell(env, enif_make_double(env, (double)q->scales[i]), scales);
        zps = enif_make_list_cell(env, enif_make_int(env, q->zero_points[i]), zps);
      }
      ERL_NIF_TERM k[] = {ATOMS.axis, ATOMS.scales, ATOMS.zero_points};
      ERL_NIF_TERM v[] = {enif_make_int(env, q->axis), scales, zps};
      return nif_make_map(env, k, v, 3);
    }
    case HTPU_QUANT_NONE:
      break;
  }
  return ATOMS.nil;
}

ERL_NIF_TERM nif_make_tensor_info(ErlNifEnv *env, const htpu_tensor_info *t) {
  ERL_NIF_TERM dims[HTPU_MAX_RANK];
  uint32_t rank = t->rank <= HTPU_MAX_RANK ? t->rank : HTPU_MAX_RANK;
  for (uint32_t i = 0; i < rank; i++) dims[i] = enif_make_uint(env, t->dims[i]);
  /* the axes whose shape entry is a maximum, set per execute (outputs) */
  ERL_NIF_TERM dynamic = enif_make_list(env, 0);
  for (uint32_t i = rank; i-- > 0;)
    if ((t->dynamic_dims >> i) & 1u)
      dynamic = enif_make_list_cell(env, enif_make_uint(env, i), dynamic);
  ERL_NIF_TERM k[] = {ATOMS.name,         ATOMS.id,          ATOMS.dtype,
                      ATOMS.qnn_data_type, ATOMS.tensor_version, ATOMS.shape,
                      ATOMS.num_elements, ATOMS.byte_size,   ATOMS.quantization,
                      ATOMS.dynamic_dims};
  ERL_NIF_TERM v[] = {nif_make_string(env, t->name),
                      enif_make_uint(env, t->id),
                      nif_dtype_atom(t->dtype),
                      enif_make_uint(env, t->qnn_data_type),
                      enif_make_uint(env, t->tensor_version),
                      enif_make_tuple_from_array(env, dims, rank),
                      enif_make_uint64(env, t->num_elements),
                      enif_make_uint64(env, t->byte_size),
                      make_quant(env, &t->quant),
                      dynamic};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}

static ERL_NIF_TERM tensor_list(ErlNifEnv *env, const htpu_tensor_info *ts, uint32_t n) {
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (uint32_t i = n; i-- > 0;) list = enif_make_list_cell(env, nif_make_tensor_info(env, &ts[i]), list);
  return list;
}

ERL_NIF_TERM nif_make_graph_info(ErlNifEnv *env, const htpu_graph_info *g) {
  ERL_NIF_TERM k[] = {ATOMS.name, ATOMS.graph_info_version, ATOMS.inputs, ATOMS.outputs,
                      ATOMS.vtcm_bytes};
  ERL_NIF_TERM v[] = {nif_make_string(env, g->name), enif_make_uint(env, g->graph_info_version),
                      tensor_list(env, g->inputs, g->num_inputs),
                      tensor_list(env, g->outputs, g->num_outputs),
                      enif_make_uint64(env, g->vtcm_bytes)};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}


static ERL_NIF_TERM perf_profile_atom(ErlNifEnv *env, htpu_perf_profile p) {
  const char *name = htpu_perf_profile_name(p);
  return name ? enif_make_atom(env, name) : ATOMS.unknown;
}

ERL_NIF_TERM nif_make_runtime_info(ErlNifEnv *env, const htpu_runtime_info *ri) {
  ERL_NIF_TERM k[] = {ATOMS.backend_lib,          ATOMS.system_lib,         ATOMS.provider_name,
                      ATOMS.backend_id,           ATOMS.core_api_version,   ATOMS.backend_api_version,
                      ATOMS.build_id,             ATOMS.system_provider_name,
                      ATOMS.system_api_version,   ATOMS.has_device,         ATOMS.dsp_library_path,
                      ATOMS.device_arch,          ATOMS.device_soc_model,   ATOMS.device_vtcm_bytes,
                      ATOMS.perf_profile,         ATOMS.has_perf_infrastructure,
                      ATOMS.has_shared_memory,    ATOMS.shared_memory_note, ATOMS.startup_attempts,
                      ATOMS.log_note};
  ERL_NIF_TERM v[] = {nif_make_string(env, ri->backend_lib),
                      nif_make_string(env, ri->system_lib),
                      nif_make_string(env, ri->provider_name),
                      enif_make_uint(env, ri->backend_id),
                      nif_make_version(env, ri->core_api_version),
                      nif_make_version(env, ri->backend_api_version),
                      nif_make_string(env, ri->build_id),
                      nif_make_string(env, ri->system_provider_name),
                      nif_make_version(env, ri->system_api_version),
                      ri->has_device ? ATOMS.true_ : ATOMS.false_,
                      nif_make_string(env, ri->dsp_library_path),
                      enif_make_uint(env, ri->device_arch),
                      enif_make_uint(env, ri->device_soc_model),
                      enif_make_uint64(env, ri->device_vtcm_bytes),
                      perf_profile_atom(env, ri->perf_profile),
                      ri->has_perf_infrastructure ? ATOMS.true_ : ATOMS.false_,
                      ri->has_shared_memory ? ATOMS.true_ : ATOMS.false_,
                      (ri->shared_memory_note && ri->shared_memory_note[0])
                          ? nif_make_string(env, ri->shared_memory_note)
                          : ATOMS.nil,
                      enif_make_uint(env, ri->startup_attempts),
                      (ri->log_note && ri->log_note[0]) ? nif_make_string(env, ri->log_note)
                                                        : ATOMS.nil};
  ERL_NIF_TERM map = nif_make_map(env, k, v, sizeof k / sizeof k[0]);
  /* What bounds and orders calls on this backend (docs/elixir.md, "Deadlines"). */
  const struct {
    const char *name;
    int on;
  } caps[] = {{"execute_signals", ri->execute_signals},
              {"load_signals", ri->load_signals},
              {"priority_control", ri->priority_control},
              {"execute_async", ri->execute_async},
              /* loading (docs/elixir.md, "Loading") */
              {"persistent_binary", ri->persistent_binary},
              {"enable_graphs", ri->enable_graphs},
              {"memory_limit_hint", ri->memory_limit_hint},
              {"list_load", ri->list_load},
              {"spill_fill_sharing", ri->spill_fill_sharing}};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
    enif_make_map_put(env, map, enif_make_atom(env, caps[i].name),
                      caps[i].on ? ATOMS.true_ : ATOMS.false_, &map);
  enif_make_map_put(env, map, enif_make_atom(env, "spill_fill_note"),
                    nif_make_spill_fill_note(env, ri->spill_fill_note), &map);
  return map;
}

int nif_get_perf_profile(ErlNifEnv *env, ERL_NIF_TERM term, htpu_perf_profile *out) {
  char name[64];
  if (enif_is_identical(term, ATOMS.nil)) {
    *out = HTPU_PERF_DEFAULT;
    return 0;
  }
  if (enif_get_atom(env, term, name, sizeof name, ERL_NIF_LATIN1) <= 0) return -1;
  return htpu_perf_profile_from_name(name, out) == 0 ? 0 : -1;
}

/* The core asks this on the thread running the execute NIF, which is what
 * enif_is_current_process_alive requires (a NIF-calling thread with the call's own env; dirty
 * schedulers included, OTP 25 and 28 alike). A process killed while its dirty NIF runs is
 * marked exiting at once (its monitors fire while the NIF still runs and its result goes
 * nowhere): that flag is what this reads, without a lookup or a lock. */
static int caller_gone(void *env) { return !enif_is_current_process_alive(env); }

int nif_exec_options(ErlNifEnv *env, ERL_NIF_TERM profile, htpu_exec_options *xo) {
  memset(xo, 0, sizeof *xo);
  xo->cancelled = caller_gone;
  xo->cancel_arg = env;
  return nif_get_perf_profile(env, profile, &xo->perf_profile);
}

ERL_NIF_TERM nif_make_exec_stats(ErlNifEnv *env, const htpu_exec_stats *st, ErlNifTime t0,
                                 ERL_NIF_TERM scheduler) {
  ERL_NIF_TERM k[] = {ATOMS.execute_ns, ATOMS.quantize_ns, ATOMS.dequantize_ns, ATOMS.total_ns,
                      ATOMS.nif_ns, ATOMS.scheduler, ATOMS.executes, ATOMS.execute_start_ns};
  ERL_NIF_TERM v[] = {enif_make_uint64(env, st->execute_ns),
                      enif_make_uint64(env, st->quantize_ns),
                      enif_make_uint64(env, st->dequantize_ns),
                      enif_make_uint64(env, st->total_ns),
                      enif_make_int64(env, enif_monotonic_time(ERL_NIF_NSEC) - t0),
                      scheduler,
                      enif_make_uint(env, st->executes),
                      enif_make_uint64(env, st->execute_start_ns)};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}
