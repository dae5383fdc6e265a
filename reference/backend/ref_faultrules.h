/*
 * ref_faultrules.h - the fault-injection rule language shared by the reference backend and the
 * reference system library (header-only: the two libraries are linked from separate source
 * directories and each keeps its own state).
 *
 *   rules   := rule ("," rule)*   rule  := api ":" nth ":" code [":" count] [":" "ssr"]
 *   latency := entry ("," entry)*        entry   := api ":" usec [":" from]
 *
 * nth is 1-based and counts calls of that API since the rule set was armed; "*" fails every
 * call. count (default 1) extends the failure to the following count-1 calls. code is the QNN
 * error code to return (1..65535). The "ssr" flag makes the failure a DSP subsystem restart:
 * what that means is up to the library that matches the rule (the backend makes its contexts
 * stale; the system library ignores the flag). A latency with `from` applies from the from-th
 * call of that API on (1-based, counted like nth): a call that becomes slow.
 */
#ifndef HTPU_REF_FAULTRULES_H
#define HTPU_REF_FAULTRULES_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fr_api {
  FR_GET_PROVIDERS,
  FR_LOG_CREATE,
  FR_BACKEND_CREATE,
  FR_DEVICE_CREATE,
  FR_CONTEXT_CREATE_FROM_BINARY,
  FR_CONTEXT_FREE,
  FR_GRAPH_RETRIEVE,
  FR_GRAPH_EXECUTE,
  FR_SYSTEM_CONTEXT_CREATE,
  FR_SYSTEM_CONTEXT_GET_BINARY_INFO,
  FR_SYSTEM_CONTEXT_GET_METADATA,
  FR_MEM_REGISTER,
  FR_CONTEXT_VALIDATE_BINARY,
  FR_CREATE_POWER_CONFIG_ID,
  FR_SET_POWER_CONFIG,
  FR_GRAPH_OP, /* each op a graphExecute runs: latency makes a slow graph, a rule fails it there */
  FR_PROFILE_GET_EVENTS, /* reading a profile back (a read that fails after a good execute) */
  FR_API_COUNT
};

#define FR_MAX_RULES 32u
#define FR_EVERY 0u /* nth value of a "*" rule */
#define FR_FLAG_SSR 1u /* the failure is a DSP subsystem restart */

typedef struct fr_rule {
  uint32_t api;
  uint32_t nth;
  uint32_t code;
  uint32_t count;
  uint32_t flags; /* FR_FLAG_* */
} fr_rule;

/* A set of rules and the call counters they are matched against. Callers lock around use. */
typedef struct fr_set {
  uint32_t num_rules;
  fr_rule rules[FR_MAX_RULES];
  uint32_t calls[FR_API_COUNT];
  uint32_t latency_us[FR_API_COUNT];
  uint32_t latency_from[FR_API_COUNT]; /* 0: every call */
} fr_set;

/* The QNN function names, as written in rules. */
static inline const char *fr_api_name(uint32_t api) {
  switch (api) {
    case FR_GET_PROVIDERS: return "getProviders";
    case FR_LOG_CREATE: return "logCreate";
    case FR_BACKEND_CREATE: return "backendCreate";
    case FR_DEVICE_CREATE: return "deviceCreate";
    case FR_CONTEXT_CREATE_FROM_BINARY: return "contextCreateFromBinary";
    case FR_CONTEXT_FREE: return "contextFree";
    case FR_GRAPH_RETRIEVE: return "graphRetrieve";
    case FR_GRAPH_EXECUTE: return "graphExecute";
    case FR_SYSTEM_CONTEXT_CREATE: return "systemContextCreate";
    case FR_SYSTEM_CONTEXT_GET_BINARY_INFO: return "systemContextGetBinaryInfo";
    case FR_SYSTEM_CONTEXT_GET_METADATA: return "systemContextGetMetaData";
    case FR_MEM_REGISTER: return "memRegister";
    case FR_CONTEXT_VALIDATE_BINARY: return "contextValidateBinary";
    case FR_CREATE_POWER_CONFIG_ID: return "createPowerConfigId";
    case FR_SET_POWER_CONFIG: return "setPowerConfig";
    case FR_GRAPH_OP: return "graphOp";
    case FR_PROFILE_GET_EVENTS: return "profileGetEvents";
    default: return "?";
  }
}

/* API index for the name s[0..n), or -1. */
static inline int fr_api_lookup(const char *s, size_t n) {
  for (uint32_t a = 0; a < FR_API_COUNT; a++) {
    const char *name = fr_api_name(a);
    if (strlen(name) == n && memcmp(name, s, n) == 0) return (int)a;
  }
  return -1;
}

/* Parses a decimal u32 in [lo, hi] from s[0..n). */
static inline int fr_parse_u32(const char *s, size_t n, uint32_t lo, uint32_t hi, uint32_t *out) {
  char buf[16];
  if (n == 0 || n >= sizeof(buf)) return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (buf[i] < '0' || buf[i] > '9') return -1;
  errno = 0;
  unsigned long v = strtoul(buf, NULL, 10);
  if (errno || v < lo || v > hi) return -1;
  *out = (uint32_t)v;
  return 0;
}

/* Splits s[0..n) at ':' into at most max fields; returns the field count or -1. */
static inline int fr_split(const char *s, size_t n, const char **f, size_t *len, int max) {
  int k = 0;
  const char *start = s;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || s[i] == ':') {
      if (k == max) return -1;
      f[k] = start;
      len[k] = (size_t)(s + i - start);
      k++;
      start = s + i + 1;
    }
  }
  return k;
}

/* Parses a rule list into out. NULL or "" gives zero rules. Returns 0, or -1 with a message. */
static inline int fr_parse_rules(const char *spec, fr_rule *out, uint32_t *num, char *err,
                                 size_t errlen) {
  *num = 0;
  if (!spec) return 0;
  const char *p = spec;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    const char *f[5];
    size_t len[5];
    int k = fr_split(p, n, f, len, 5);
    fr_rule r = {0, 0, 0, 1, 0};
    /* a trailing "ssr" field is the flag, with or without a count before it */
    if (k >= 4 && len[k - 1] == 3 && memcmp(f[k - 1], "ssr", 3) == 0) {
      r.flags |= FR_FLAG_SSR;
      k--;
    }
    int api = k >= 3 && k <= 4 ? fr_api_lookup(f[0], len[0]) : -1;
    int ok = api >= 0;
    if (ok) {
      r.api = (uint32_t)api;
      if (len[1] == 1 && f[1][0] == '*')
        r.nth = FR_EVERY;
      else
        ok = fr_parse_u32(f[1], len[1], 1, UINT32_MAX, &r.nth) == 0;
    }
    if (ok) ok = fr_parse_u32(f[2], len[2], 1, 0xFFFF, &r.code) == 0;
    if (ok && k == 4) ok = fr_parse_u32(f[3], len[3], 1, UINT32_MAX, &r.count) == 0;
    if (ok && *num == FR_MAX_RULES) ok = 0;
    if (!ok) {
      snprintf(err, errlen, "bad fault rule '%.*s' (expected api:nth|*:code[:count][:ssr], api "
               "one of the QNN names, at most %u rules)", (int)n, p, FR_MAX_RULES);
      *num = 0;
      return -1;
    }
    out[(*num)++] = r;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* Parses a latency list into s->latency_us/latency_from (entries not named keep their
 * value). */
static inline int fr_parse_latency(const char *spec, fr_set *s, char *err, size_t errlen) {
  if (!spec) return 0;
  const char *p = spec;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    const char *f[3];
    size_t len[3];
    uint32_t us = 0, from = 0;
    int k = fr_split(p, n, f, len, 3);
    int api = (k == 2 || k == 3) ? fr_api_lookup(f[0], len[0]) : -1;
    if (api < 0 || fr_parse_u32(f[1], len[1], 0, 60u * 1000u * 1000u, &us) != 0 ||
        (k == 3 && fr_parse_u32(f[2], len[2], 1, UINT32_MAX, &from) != 0)) {
      snprintf(err, errlen, "bad latency entry '%.*s' (expected api:usec or api:usec:from)",
               (int)n, p);
      return -1;
    }
    s->latency_us[api] = us;
    s->latency_from[api] = from;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* The latency of the call of api just counted (fr_next_rule / fr_next counts it). */
static inline uint32_t fr_latency(const fr_set *s, uint32_t api) {
  return s->calls[api] >= s->latency_from[api] ? s->latency_us[api] : 0;
}

/* Counts one call of api and returns the first rule that fails it, or NULL. */
static inline const fr_rule *fr_next_rule(fr_set *s, uint32_t api) {
  uint32_t call = ++s->calls[api];
  for (uint32_t i = 0; i < s->num_rules; i++) {
    const fr_rule *r = &s->rules[i];
    if (r->api != api) continue;
    if (r->nth == FR_EVERY) return r;
    if (call >= r->nth && call - r->nth < r->count) return r;
  }
  return NULL;
}

/* Counts one call of api and returns the code of the first rule that fails it, or 0. */
static inline uint32_t fr_next(fr_set *s, uint32_t api) {
  const fr_rule *r = fr_next_rule(s, api);
  return r ? r->code : 0;
}

#endif /* HTPU_REF_FAULTRULES_H */
