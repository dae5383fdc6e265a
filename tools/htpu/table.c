/* table.c - aligned text columns for the human-readable reports. */
#include <stdlib.h>
#include <string.h>

#include "util.h"

void cli_table_init(cli_table *t, size_t num_cols) {
  memset(t, 0, sizeof(*t));
  t->num_cols = num_cols;
}

static char *sanitized_copy(const char *s) {
  if (!s) s = "";
  char *c = strdup(s);
  if (!c) return NULL;
  for (char *p = c; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7F) *p = '?';
  return c;
}

void cli_table_add(cli_table *t, const char *const *cells) {
  if (t->failed) return;
  if (t->num_rows == t->cap_rows) {
    size_t cap = t->cap_rows ? t->cap_rows * 2 : 16;
    char **grown = realloc(t->cells, cap * t->num_cols * sizeof(*grown));
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->cells = grown;
    t->cap_rows = cap;
  }
  char **row = t->cells + t->num_rows * t->num_cols;
  for (size_t c = 0; c < t->num_cols; c++) {
    row[c] = sanitized_copy(cells[c]);
    if (!row[c]) {
      for (size_t k = 0; k < c; k++) free(row[k]);
      t->failed = 1;
      return;
    }
  }
  t->num_rows++;
}

int cli_table_print(const cli_table *t, FILE *f, int indent) {
  if (t->failed) {
    fprintf(f, "%*s(out of memory while formatting the table)\n", indent, "");
    return -1;
  }
  size_t *width = calloc(t->num_cols ? t->num_cols : 1, sizeof(*width));
  if (!width) return -1;
  for (size_t r = 0; r < t->num_rows; r++)
    for (size_t c = 0; c < t->num_cols; c++) {
      size_t w = strlen(t->cells[r * t->num_cols + c]);
      if (w > width[c]) width[c] = w;
    }
  for (size_t r = 0; r < t->num_rows; r++) {
    fprintf(f, "%*s", indent, "");
    for (size_t c = 0; c < t->num_cols; c++) {
      const char *cell = t->cells[r * t->num_cols + c];
      if (c + 1 == t->num_cols)
        fprintf(f, "%s\n", cell);
      else
        fprintf(f, "%-*s  ", (int)width[c], cell);
    }
  }
  free(width);
  return 0;
}

void cli_table_free(cli_table *t) {
  for (size_t i = 0; i < t->num_rows * t->num_cols; i++) free(t->cells[i]);
  free(t->cells);
  memset(t, 0, sizeof(*t));
}
