/* info_source.c - see info_source.h. */
#include "info_source.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/* Metadata values and class lists are shown up to this many bytes in the text report (the
 * JSON has them whole). */
#define SHOWN_BYTES 96
#define SHOWN_CLASSES 8

static void clip(const char *s, char *buf, size_t len) {
  size_t n = strlen(s);
  if (n < SHOWN_BYTES && n < len) {
    snprintf(buf, len, "%s", s);
    return;
  }
  /* cut on a UTF-8 boundary */
  size_t cut = SHOWN_BYTES < len - 4 ? SHOWN_BYTES : len - 4;
  while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80) cut--;
  snprintf(buf, len, "%.*s...", (int)cut, s);
}

static void class_list(const htpu_model_source *s, char *buf, size_t len) {
  size_t pos = (size_t)snprintf(buf, len, "%" PRIu32 ":", s->num_class_names);
  for (uint32_t i = 0; i < s->num_class_names && i < SHOWN_CLASSES && pos < len; i++)
    pos += (size_t)snprintf(buf + pos, len - pos, "%s %s", i ? "," : "", s->class_names[i]);
  if (s->num_class_names > SHOWN_CLASSES && pos < len) snprintf(buf + pos, len - pos, ", ...");
}

static int print_nodes(const htpu_model_source *s) {
  cli_table t;
  cli_table_init(&t, 10);
  const char *header[] = {"node", "main", "embed", "binary", "bytes", "context",
                          "partition", "ep_sdk_version", "source", "max_size"};
  cli_table_add(&t, header);
  for (uint32_t i = 0; i < s->num_nodes; i++) {
    const htpu_epcontext_node *n = &s->nodes[i];
    char bytes[32], ctx[16], max[32];
    snprintf(bytes, sizeof bytes, "%" PRIu64, n->cache_bytes);
    snprintf(ctx, sizeof ctx, n->context < 0 ? "-" : "%" PRId32, n->context);
    snprintf(max, sizeof max, "%" PRId64, n->max_size);
    const char *row[] = {n->name[0] ? n->name : "(unnamed)",
                         n->main_context ? "1" : "0",
                         n->embed_mode ? "1" : "0",
                         !n->main_context ? "-" : n->embed_mode ? "(embedded)" : n->cache_file,
                         bytes, ctx,
                         n->partition_name[0] ? n->partition_name : "-",
                         n->ep_sdk_version[0] ? n->ep_sdk_version : "-",
                         n->source[0] ? n->source : "-",
                         n->max_size ? max : "-"};
    cli_table_add(&t, row);
  }
  printf("\nEPContext nodes:\n");
  int rc = cli_table_print(&t, stdout, 2);
  cli_table_free(&t);
  return rc;
}

/* A key given again later: its value is the later one's (the rule of the library's class names,
 * JSON readers and Elixir's :metadata map), so this entry is not shown. */
static int superseded(const htpu_model_source *s, uint32_t i) {
  for (uint32_t k = i + 1; k < s->num_props; k++)
    if (strcmp(s->props[k].key, s->props[i].key) == 0) return 1;
  return 0;
}

int info_source_print(const htpu_model_source *s) {
  char format[160], contexts[4400], classes[1024];
  snprintf(format, sizeof format, "%s (IR %" PRId64 ", opset %" PRId64 ")", s->format,
           s->ir_version, s->opset);
  snprintf(contexts, sizeof contexts, "%" PRIu32 " (this report: context %" PRIu32 ", %s)",
           s->num_contexts, s->context, s->origin);
  char producer[600];
  snprintf(producer, sizeof producer, "%s%s%s", s->producer_name[0] ? s->producer_name : "(none)",
           s->producer_version[0] ? " " : "", s->producer_version);
  class_list(s, classes, sizeof classes);
  cli_table head;
  cli_table_init(&head, 2);
  const char *rows[][2] = {{"ONNX model", format},
                           {"producer", producer},
                           {"contexts", contexts},
                           {"class names", s->num_class_names ? classes : "(none)"}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) cli_table_add(&head, rows[i]);
  printf("\n");
  int rc = cli_table_print(&head, stdout, 0);
  cli_table_free(&head);
  if (s->num_props) {
    cli_table props;
    cli_table_init(&props, 2);
    for (uint32_t i = 0; i < s->num_props; i++) {
      if (superseded(s, i)) continue;
      char value[SHOWN_BYTES + 8];
      clip(s->props[i].value, value, sizeof value);
      const char *row[] = {s->props[i].key, value};
      cli_table_add(&props, row);
    }
    printf("\nmetadata_props:\n");
    if (cli_table_print(&props, stdout, 2) != 0) rc = -1;
    cli_table_free(&props);
  }
  if (print_nodes(s) != 0) rc = -1;
  return rc;
}

void info_source_json(cli_json *j, const htpu_model_source *s) {
  cli_json_object_begin(j, "source");
  cli_json_string(j, "format", s->format);
  cli_json_int(j, "ir_version", s->ir_version);
  cli_json_int(j, "opset", s->opset);
  cli_json_string(j, "producer_name", s->producer_name);
  cli_json_string(j, "producer_version", s->producer_version);
  cli_json_uint(j, "num_contexts", s->num_contexts);
  cli_json_uint(j, "context", s->context);
  cli_json_string(j, "origin", s->origin);
  cli_json_object_begin(j, "metadata");
  for (uint32_t i = 0; i < s->num_props; i++)
    if (!superseded(s, i)) cli_json_string(j, s->props[i].key, s->props[i].value);
  cli_json_object_end(j);
  if (s->class_names) {
    cli_json_array_begin(j, "class_names", 0);
    for (uint32_t i = 0; i < s->num_class_names; i++) cli_json_string(j, NULL, s->class_names[i]);
    cli_json_array_end(j);
  } else {
    cli_json_null(j, "class_names");
  }
  cli_json_array_begin(j, "nodes", 0);
  for (uint32_t i = 0; i < s->num_nodes; i++) {
    const htpu_epcontext_node *n = &s->nodes[i];
    cli_json_object_begin(j, NULL);
    cli_json_string(j, "name", n->name);
    cli_json_bool(j, "main_context", n->main_context);
    cli_json_bool(j, "embed_mode", n->embed_mode);
    if (n->cache_file[0]) cli_json_string(j, "cache_file", n->cache_file);
    else cli_json_null(j, "cache_file");
    cli_json_uint(j, "cache_bytes", n->cache_bytes);
    cli_json_string(j, "partition_name", n->partition_name);
    cli_json_string(j, "ep_sdk_version", n->ep_sdk_version);
    cli_json_string(j, "source", n->source);
    cli_json_int(j, "max_size", n->max_size);
    if (n->context < 0) cli_json_null(j, "context");
    else cli_json_int(j, "context", n->context);
    cli_json_object_end(j);
  }
  cli_json_array_end(j);
  cli_json_object_end(j);
}
