/* load_report.c - a model's load, said (load_report.h). */
#include "load_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

/* msg with every `from` in it said as `to`, in buf (len bytes); msg itself when it names none.
 * The library's messages name its C options; htpu's name its own. */
static const char *rename_all(const char *msg, const char *from, const char *to, char *buf,
                              size_t len) {
  if (!msg || !len || !strstr(msg, from)) return msg;
  size_t pos = 0, n = strlen(from);
  buf[0] = '\0';
  for (const char *at; (at = strstr(msg, from)) != NULL; msg = at + n)
    pos += (size_t)snprintf(buf + pos, pos < len ? len - pos : 0, "%.*s%s", (int)(at - msg), msg,
                            to);
  if (pos < len) snprintf(buf + pos, len - pos, "%s", msg);
  return buf;
}

const char *cli_spill_fill_note(const char *note, char *buf, size_t len) {
  return rename_all(note, "htpu_runtime_options.spill_fill_sharing", "--share-spill-fill", buf,
                    len);
}

const char *cli_graph_option_note(const char *msg, char *buf, size_t len) {
  return rename_all(msg, "the graph option", "--graph", buf, len);
}

void cli_load_info_print(const htpu_context_load_info *li, const char *indent) {
  char t[32], note[512];
  cli_format_ns((double)li->load_ns, t, sizeof t);
  /* the note starts with the word in li->binary: "mapped: squashfs has no write support..." */
  printf("%sbinary: %" PRIu64 " bytes, %s%s\n", indent, li->binary_bytes, li->binary_note,
         li->persistent_binary ? "; QNN told it persists" : "");
  printf("%sgraphs: %" PRIu32 " loaded%s\n", indent, li->graphs_enabled,
         li->enable_graphs_passed ? " (only those deserialized: ENABLE_GRAPHS)" : "");
  if (li->memory_limit_mb)
    printf("%smemory limit hint: %" PRIu64 " MB (%s)\n", indent, li->memory_limit_mb,
           li->memory_limit_passed ? "given to QNN" : "not announced by the backend");
  printf("%sspill-fill: %" PRIu64 " bytes", indent, li->spill_fill_bytes);
  if (li->spill_fill_group)
    printf(", shared: group %" PRIu64 " of %" PRIu64 " bytes\n", li->spill_fill_group,
           li->spill_fill_group_bytes);
  else
    printf(", its own (%s)\n", cli_spill_fill_note(li->spill_fill_note, note, sizeof note));
  printf("%sload: %s%s\n", indent, t, li->list_loaded ? ", in one list call with others" : "");
}

void cli_load_info_json(cli_json *j, const char *key, const htpu_context_load_info *li) {
  cli_json_object_begin(j, key);
  cli_json_string(j, "binary", li->binary);
  cli_json_string(j, "binary_note", li->binary_note);
  cli_json_uint(j, "binary_bytes", li->binary_bytes);
  cli_json_uint(j, "binary_copy_bytes", li->binary_copy_bytes);
  cli_json_bool(j, "persistent_binary", li->persistent_binary);
  cli_json_uint(j, "graphs_enabled", li->graphs_enabled);
  cli_json_bool(j, "enable_graphs_passed", li->enable_graphs_passed);
  cli_json_uint(j, "memory_limit_mb", li->memory_limit_mb);
  cli_json_bool(j, "memory_limit_passed", li->memory_limit_passed);
  cli_json_uint(j, "spill_fill_bytes", li->spill_fill_bytes);
  if (li->spill_fill_group)
    cli_json_uint(j, "spill_fill_group", li->spill_fill_group);
  else
    cli_json_null(j, "spill_fill_group");
  cli_json_uint(j, "spill_fill_group_bytes", li->spill_fill_group_bytes);
  char note[512];
  cli_json_string(j, "spill_fill_note",
                  li->spill_fill_note[0]
                      ? cli_spill_fill_note(li->spill_fill_note, note, sizeof note)
                      : NULL);
  cli_json_bool(j, "list_loaded", li->list_loaded);
  cli_json_uint(j, "load_ns", li->load_ns);
  cli_json_object_end(j);
}
