/* detect_report.c - `htpu detect`'s reports: a table (with the geometry and the times) or the
 * JSON array of detections (docs/htpu.md). */
#include <stdio.h>

#include "detect.h"
#include "json.h"
#include "stats.h"
#include "util.h"

static void fmt(char *buf, size_t len, double v) { snprintf(buf, len, "%.1f", v); }

const char *cli_detect_label(const cli_detect *d, uint32_t cls) {
  return cls < d->num_labels ? d->labels[cls] : NULL;
}

static int header(const cli_detect *d) {
  const htpu_geometry *g = &d->geometry;
  const htpu_frame *f = &d->frame.frame;
  char frame[512], into[256], times[256], pre[32], exec[32], dec[32], found[128], labels[4200];
  snprintf(frame, sizeof frame, "%s (%ux%u %s)", d->frame.path, f->width, f->height,
           htpu_pixel_format_name(f->format));
  snprintf(into, sizeof into, "%ux%u at (%u, %u) in %ux%u, region %ux%u at (%u, %u)",
           g->resized_width, g->resized_height, g->pad_left, g->pad_top, g->input_width,
           g->input_height, g->region.width, g->region.height, g->region.x, g->region.y);
  cli_format_ns((double)d->preprocess_ns, pre, sizeof pre);
  cli_format_ns((double)d->st.execute_ns, exec, sizeof exec);
  cli_format_ns((double)d->decode_ns, dec, sizeof dec);
  snprintf(times, sizeof times, "preprocess %s, execute %s, decode %s", pre, exec, dec);
  snprintf(found, sizeof found, "%u detection%s (%u candidate%s above the threshold)",
           d->info.count, d->info.count == 1 ? "" : "s", d->info.candidates,
           d->info.candidates == 1 ? "" : "s");
  if (d->labels_from)
    snprintf(labels, sizeof labels, "%zu from %s", d->num_labels, d->labels_from);
  else
    snprintf(labels, sizeof labels, "none (--labels FILE names the classes)");
  cli_table t;
  cli_table_init(&t, 2);
  const char *rows[][2] = {{"model", d->s.model}, {"graph", d->s.info->name},
                           {"frame", frame},      {"into", into},
                           {"names", labels},     {"time", times},
                           {"found", found}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) cli_table_add(&t, rows[i]);
  int rc = cli_table_print(&t, stdout, 0);
  cli_table_free(&t);
  return rc;
}

int cli_detect_table(const cli_args *a, const cli_detect *d) {
  (void)a;
  int rc = header(d);
  if (!d->info.count) return rc;
  printf("\n");
  cli_table t;
  cli_table_init(&t, 9);
  const char *head[] = {"#", "class", "label", "score", "x1", "y1", "x2", "y2", "keypoints"};
  cli_table_add(&t, head);
  for (uint32_t i = 0; i < d->info.count; i++) {
    const htpu_detection *x = &d->dets[i];
    char n[16], cls[16], score[16], b[4][32], kp[16];
    snprintf(n, sizeof n, "%u", i + 1);
    snprintf(cls, sizeof cls, "%u", x->class_id);
    snprintf(score, sizeof score, "%.3f", x->score);
    for (int k = 0; k < 4; k++) fmt(b[k], sizeof b[k], x->box[k]);
    snprintf(kp, sizeof kp, "%u", d->info.num_keypoints);
    const char *label = cli_detect_label(d, x->class_id);
    const char *row[] = {n, cls, label ? label : "-", score, b[0], b[1], b[2], b[3],
                         d->info.num_keypoints ? kp : "-"};
    cli_table_add(&t, row);
  }
  if (cli_table_print(&t, stdout, 2) != 0) rc = -1;
  cli_table_free(&t);
  return rc;
}

int cli_detect_json(const cli_detect *d) {
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_array_begin(&j, NULL, 0);
  uint32_t K = d->info.num_keypoints, kd = d->info.keypoint_dims;
  for (uint32_t i = 0; i < d->info.count; i++) {
    const htpu_detection *x = &d->dets[i];
    cli_json_object_begin(&j, NULL);
    cli_json_uint(&j, "class", x->class_id);
    cli_json_string(&j, "label", cli_detect_label(d, x->class_id));
    cli_json_double(&j, "score", x->score);
    cli_json_array_begin(&j, "box", 1);
    for (int k = 0; k < 4; k++) cli_json_double(&j, NULL, x->box[k]);
    cli_json_array_end(&j);
    if (!K) {
      cli_json_null(&j, "keypoints");
    } else {
      cli_json_array_begin(&j, "keypoints", 0);
      for (uint32_t k = 0; k < K; k++) {
        cli_json_array_begin(&j, NULL, 1);
        for (uint32_t v = 0; v < kd; v++) cli_json_double(&j, NULL, d->kp[((size_t)i * K + k) * kd + v]);
        cli_json_array_end(&j);
      }
      cli_json_array_end(&j);
    }
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  return cli_json_finish(&j);
}
