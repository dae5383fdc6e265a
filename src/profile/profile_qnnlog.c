/*
 * profile_qnnlog.c - an htpu_profile written through the system library's QnnSystemProfile
 * serialization (System API 1.5 on), in the log format of the library (on the board:
 * Qualcomm's, which qnn-profile-viewer reads). The tree is rebuilt as the library's event
 * structs, extended ones (with timestamps) where the profile has them; an event of unit OBJECT
 * passes its opaque object (bytes and file name) as read, never a number. The library writes the
 * file it is given: a temporary file beside the target, renamed when the library is done, or
 * the path itself when it is a device or FIFO (report_file.h).
 */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "loader/loader.h"
#include "base/base.h"

typedef struct builder {
  qnn_system_profile_event_v1_t *all; /* every event, children side by side as in p */
  uint32_t n;
} builder;

static void fill(builder *b, const htpu_profile *p, const htpu_profile_event *e,
                 qnn_system_profile_event_v1_t *o) {
  memset(o, 0, sizeof *o);
  if (p->extended) {
    o->type = QNN_SYSTEM_PROFILE_EXTENDED_EVENT_DATA;
    qnn_profile_extended_event_data_t *x = &o->u.extended_event_data;
    x->version = QNN_PROFILE_DATA_VERSION_1;
    x->u.v1.type = e->type;
    x->u.v1.unit = e->unit;
    if (e->unit == QNN_PROFILE_EVENTUNIT_OBJECT) {
      /* The union holds an object for this unit (QnnProfile.h), never a number: its bytes as
       * read (NULL/0, QNN's empty object, for one the profile could not copy). */
      qnn_profile_backend_opaque_object_t *ob = &x->u.v1.u.backend_opaque_object;
      ob->opaque_object.data = (void *)e->object;
      ob->opaque_object.len = e->object ? e->object_size : 0;
      ob->file_name = e->object_file && e->object_file[0] ? e->object_file : NULL;
    } else {
      x->u.v1.u.value.data_type = QNN_DATATYPE_UINT_64;
      x->u.v1.u.value.u.uint64_value = e->value;
    }
    x->u.v1.timestamp = e->timestamp;
    x->u.v1.identifier = e->identifier;
  } else {
    o->type = QNN_SYSTEM_PROFILE_EVENT_DATA;
    o->u.event_data.type = e->type;
    o->u.event_data.unit = e->unit;
    o->u.event_data.value = e->value;
    o->u.event_data.identifier = e->identifier;
  }
  if (e->num_children) {
    /* the profile's events are one array: a child's index there is its index here */
    o->sub_events = b->all + (e->children - p->events);
    o->num_sub_events = e->num_children;
  }
}

/* The events through the library's serialization slots into the file `name` (report_file's
 * temporary or the target itself); errors name `path`, the caller's. */
static int serialize(const qnn_system_interface_table_t *t, const htpu_profile *p,
                     const builder *b, const char *name, const char *path, const char *build_id) {
  char *dir_copy = strdup(name), *base_copy = strdup(name);
  int rc = 0;
  if (!dir_copy || !base_copy) {
    rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    goto out;
  }
  qnn_system_profile_data_t data;
  memset(&data, 0, sizeof data);
  data.version = QNN_SYSTEM_PROFILE_DATA_VERSION_1;
  qnn_system_profile_data_v1_t *d = &data.u.v1;
  d->header.start_time = p->execute_start_ns / 1000u;
  d->header.stop_time = (p->execute_start_ns + p->execute_ns) / 1000u;
  d->header.method_type = p->graph[0] ? QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_EXECUTE
                                      : QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_CREATE_FROM_BINARY;
  d->header.visibility = QNN_SYSTEM_PROFILE_VISIBILITY_PUBLIC;
  d->header.graph_name = p->graph;
  d->events = b->all;
  d->num_events = p->num_events;
  qnn_system_profile_target_t target;
  memset(&target, 0, sizeof target);
  target.type = QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_FILE;
  target.u.file.file_name = basename(base_copy);
  target.u.file.file_directory = dirname(dir_copy);
  qnn_system_profile_target_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.type = QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_SERIALIZATION_HEADER;
  cfg.u.serialization_header.app_name = "hexagon_tpu";
  cfg.u.serialization_header.app_version = HTPU_VERSION_STRING;
  cfg.u.serialization_header.backend_version = build_id ? build_id : "";
  void *target_h = NULL;
  uint64_t mark = qnn_log_mark();
  qnn_error_t e = t->system_profile_create_serialization_target(target, &cfg, 1, &target_h);
  if (e != QNN_SUCCESS || !target_h) {
    rc = qnn_fail(e, mark, "writing a QNN profile log to '%s': creating the target failed", path);
    if (rc == 0) rc = htpu_set_error(HTPU_EIO, 0, "cannot write '%s'", path);
    goto out;
  }
  const qnn_system_profile_data_t *list[1] = {&data};
  e = t->system_profile_serialize_event_data(target_h, list, 1);
  qnn_error_t e2 = t->system_profile_free_serialization_target(target_h);
  if (e == QNN_SUCCESS) e = e2;
  if (e != QNN_SUCCESS) {
    rc = qnn_fail(e, mark, "writing a QNN profile log to '%s' failed", path);
    if (rc == 0) rc = htpu_set_error(HTPU_EIO, 0, "cannot write '%s'", path);
  }
out:
  free(dir_copy);
  free(base_copy);
  return rc;
}

int htpu_profile_write_qnn_log(htpu_runtime *h, const htpu_profile *p, const char *path) {
  htpu_clear_error();
  if (!p || !path)
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_profile_write_qnn_log: %s is NULL",
                          !p ? "the profile" : "the path");
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_profile_write_qnn_log: runtime is closed");
  const qnn_system_lib *s = &rt->system_lib;
  int rc = 0;
  if (QNN_SYSTEM_INTERFACE_SLOT(system_profile_free_serialization_target) >= s->slots) {
    rc = htpu_set_error(HTPU_EUNSUPPORTED, 0,
                        "writing a QNN profile log: the system library %s (System API %u.%u.%u) "
                        "has no QnnSystemProfile serialization (it came with System API 1.5)",
                        s->path, s->api.major, s->api.minor, s->api.patch);
    obj_release(&rt->base);
    return rc;
  }
  builder b = {calloc(p->total_events + 1, sizeof *b.all), p->total_events};
  report_file *rf = malloc(sizeof *rf);
  const char *name = NULL;
  int reserved = 0;
  if (!b.all || !rf) {
    rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    goto out;
  }
  rc = report_reserve(rf, path, &name);
  if (rc) goto out;
  reserved = 1;
  for (uint32_t i = 0; i < p->total_events; i++) fill(&b, p, &p->events[i], &b.all[i]);
  rc = serialize(&s->provider->table, p, &b, name, path, rt->build_id);
out:
  if (reserved && rc == 0) rc = report_commit(rf);
  else if (reserved) report_abandon(rf);
  free(rf);
  free(b.all);
  obj_release(&rt->base);
  return rc;
}
