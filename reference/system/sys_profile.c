/*
 * sys_profile.c - QnnSystemProfile serialization for the reference system library (System
 * API 1.5 on): a file target and the events written to it, one line each, nested by indent.
 *
 * The format is the reference's own (Qualcomm's binary log format is not public):
 *   htpu-reference-profile-log 1 app=<name> version=<v> backend=<v>
 *   data method=<n> graph=<name> start_us=<t> stop_us=<t> events=<n>
 *     <type> <unit> <value> [ts=<t>] id=<identifier>      (two more spaces per level)
 * where an extended event of unit OBJECT (5) has, instead of <value>, its opaque object:
 *     object=<len> file=<file name> data=<the bytes in hex>
 * (the union holds the object for that unit, never a number: QnnProfile.h), so tests can check
 * every event reached the file through the slots the core calls.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_profile_abi.h"
#include "rs_internal.h"

#define ERR_INVALID_HANDLE 30000u /* QNN_SYSTEM_COMMON_ERROR_INVALID_HANDLE */
#define ERR_INVALID_ARGUMENT 30001u /* QNN_SYSTEM_COMMON_ERROR_INVALID_ARGUMENT */
#define MAX_DEPTH 32

typedef struct rs_target {
  struct rs_target *next;
  uintptr_t handle;
  FILE *f;
} rs_target;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static rs_target *g_targets;
static uintptr_t g_next = 0x5000;

qnn_error_t rs_profile_create_target(struct qnn_system_profile_target target,
                                     struct qnn_system_profile_target_config *cfg, uint32_t ncfg,
                                     void **out) {
  if (!out || (ncfg && !cfg)) return ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (target.type != QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_FILE || !target.u.file.file_name ||
      !target.u.file.file_name[0]) {
    rs_log("systemProfileCreateSerializationTarget: expected a file target with a name");
    return ERR_INVALID_ARGUMENT;
  }
  const char *dir = target.u.file.file_directory && target.u.file.file_directory[0]
                        ? target.u.file.file_directory
                        : ".";
  size_t n = strlen(dir) + strlen(target.u.file.file_name) + 2;
  char *path = malloc(n);
  if (!path) return QNN_COMMON_ERROR_MEM_ALLOC;
  snprintf(path, n, "%s/%s", dir, target.u.file.file_name);
  FILE *f = fopen(path, "w");
  if (!f) {
    rs_log("systemProfileCreateSerializationTarget: cannot open '%s': %s", path, strerror(errno));
    free(path);
    return ERR_INVALID_ARGUMENT;
  }
  free(path);
  const char *app = "", *ver = "", *be = "";
  for (uint32_t i = 0; i < ncfg; i++)
    if (cfg[i].type == QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_SERIALIZATION_HEADER) {
      const qnn_system_profile_file_header_t *h = &cfg[i].u.serialization_header;
      app = h->app_name ? h->app_name : "";
      ver = h->app_version ? h->app_version : "";
      be = h->backend_version ? h->backend_version : "";
    }
  fprintf(f, "htpu-reference-profile-log 1 app=%s version=%s backend=%s\n", app, ver, be);
  rs_target *t = calloc(1, sizeof *t);
  if (!t) {
    fclose(f);
    return QNN_COMMON_ERROR_MEM_ALLOC;
  }
  t->f = f;
  pthread_mutex_lock(&g_lock);
  t->handle = g_next++;
  t->next = g_targets;
  g_targets = t;
  *out = (void *)t->handle;
  pthread_mutex_unlock(&g_lock);
  return QNN_SUCCESS;
}

static rs_target *find(void *h) {
  for (rs_target *t = g_targets; t; t = t->next)
    if ((void *)t->handle == h) return t;
  return NULL;
}

/* An extended event of unit OBJECT: its object. A length without bytes is refused (-1); the
 * bytes are read, as Qualcomm's library would read them to serialize them. */
static int write_object(FILE *f, const qnn_profile_extended_event_data_v1_t *x) {
  const qnn_profile_backend_opaque_object_t *o = &x->u.backend_opaque_object;
  if (o->opaque_object.len && !o->opaque_object.data) {
    rs_log("systemProfileSerializeEventData: event type %u: an object of %llu bytes with no data",
           x->type, (unsigned long long)o->opaque_object.len);
    return -1;
  }
  fprintf(f, "%u %u object=%llu file=%s data=", x->type, x->unit,
          (unsigned long long)o->opaque_object.len, o->file_name ? o->file_name : "");
  const unsigned char *b = o->opaque_object.data;
  for (uint64_t k = 0; k < o->opaque_object.len; k++) fprintf(f, "%02x", b[k]);
  fprintf(f, " ts=%llu id=%s\n", (unsigned long long)x->timestamp,
          x->identifier ? x->identifier : "");
  return 0;
}

static int write_events(FILE *f, const qnn_system_profile_event_v1_t *ev, uint32_t n, int depth) {
  if (depth > MAX_DEPTH || (n && !ev)) return -1;
  for (uint32_t i = 0; i < n; i++) {
    const qnn_system_profile_event_v1_t *e = &ev[i];
    fprintf(f, "%*s", 2 * (depth + 1), "");
    if (e->type == QNN_SYSTEM_PROFILE_EXTENDED_EVENT_DATA &&
        e->u.extended_event_data.u.v1.unit == QNN_PROFILE_EVENTUNIT_OBJECT) {
      if (write_object(f, &e->u.extended_event_data.u.v1)) return -1;
    } else if (e->type == QNN_SYSTEM_PROFILE_EXTENDED_EVENT_DATA) {
      const qnn_profile_extended_event_data_v1_t *x = &e->u.extended_event_data.u.v1;
      fprintf(f, "%u %u %llu ts=%llu id=%s\n", x->type, x->unit,
              (unsigned long long)x->u.value.u.uint64_value, (unsigned long long)x->timestamp,
              x->identifier ? x->identifier : "");
    } else if (e->type == QNN_SYSTEM_PROFILE_EVENT_DATA) {
      const qnn_profile_event_data_t *d = &e->u.event_data;
      fprintf(f, "%u %u %llu id=%s\n", d->type, d->unit, (unsigned long long)d->value,
              d->identifier ? d->identifier : "");
    } else {
      return -1;
    }
    if (write_events(f, e->sub_events, e->num_sub_events, depth + 1)) return -1;
  }
  return 0;
}

qnn_error_t rs_profile_serialize(void *h, const struct qnn_system_profile_data **data,
                                 uint32_t n) {
  pthread_mutex_lock(&g_lock);
  rs_target *t = find(h);
  qnn_error_t rc = t ? QNN_SUCCESS : ERR_INVALID_HANDLE;
  if (rc == QNN_SUCCESS && n && !data) rc = ERR_INVALID_ARGUMENT;
  for (uint32_t i = 0; rc == QNN_SUCCESS && i < n; i++) {
    const qnn_system_profile_data_t *d = data[i];
    if (!d || d->version != QNN_SYSTEM_PROFILE_DATA_VERSION_1) {
      rc = ERR_INVALID_ARGUMENT;
      break;
    }
    const qnn_system_profile_data_v1_t *v = &d->u.v1;
    fprintf(t->f, "data method=%u graph=%s start_us=%llu stop_us=%llu events=%u\n",
            v->header.method_type, v->header.graph_name ? v->header.graph_name : "",
            (unsigned long long)v->header.start_time, (unsigned long long)v->header.stop_time,
            v->num_events);
    if (write_events(t->f, v->events, v->num_events, 0)) rc = ERR_INVALID_ARGUMENT;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

qnn_error_t rs_profile_free_target(void *h) {
  pthread_mutex_lock(&g_lock);
  qnn_error_t rc = ERR_INVALID_HANDLE;
  for (rs_target **pp = &g_targets; *pp; pp = &(*pp)->next)
    if ((void *)(*pp)->handle == h) {
      rs_target *t = *pp;
      *pp = t->next;
      rc = fclose(t->f) == 0 ? QNN_SUCCESS : QNN_COMMON_ERROR_SYSTEM;
      free(t);
      break;
    }
  pthread_mutex_unlock(&g_lock);
  return rc;
}
