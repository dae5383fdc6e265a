/*
 * profile_write.c - an htpu_profile as a Chrome trace (JSON) or as one self-contained HTML page.
 *
 * Both place the call on one clock: the host's spans from the core's own CLOCK_MONOTONIC
 * readings, relative to the call's start, and the accelerator's ops on their own track, laid
 * from the start of graphExecute. With extended events an op starts where its timestamp says,
 * relative to the execute event's; without, the ops follow one another. An op's length is its
 * microseconds, or, where the backend gave only cycles, its share of the accelerator time.
 * Where and how the files are written (a temporary file renamed over a regular file, a device
 * or FIFO written directly, every error reported): report_file.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "hexagon_tpu.h"

/* FILE-order wrappers over the report file's writers. */
static void out_puts(const char *s, report_file *f) { report_puts(f, s); }
static void out_putc(int c, report_file *f) { report_putc(f, (char)c); }

/* A JSON (and HTML-safe) string body: quotes, backslashes, controls and <>& escaped. */
static void put_str(report_file *f, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') report_printf(f, "\\%c", c);
    else if (c < 0x20 || c == '<' || c == '>' || c == '&') report_printf(f, "\\u%04x", c);
    else out_putc(c, f);
  }
}

/* HTML text. */
static void put_html(report_file *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '<': out_puts("&lt;", f); break;
      case '>': out_puts("&gt;", f); break;
      case '&': out_puts("&amp;", f); break;
      case '"': out_puts("&quot;", f); break;
      default: out_putc(*s, f);
    }
  }
}

/* The execute (or load) event: its timestamp anchors the ops. */
static const htpu_profile_event *top_event(const htpu_profile *p) {
  return p->num_events ? &p->events[0] : NULL;
}

/* Where and how long op k runs, in microseconds from the call's start. */
static void op_span(const htpu_profile *p, uint32_t k, double *at, double *len, double *cursor) {
  const htpu_profile_op *o = &p->ops[k];
  double exec0 = (double)(p->execute_start_ns - p->start_ns) / 1000.0;
  if (o->us) *len = (double)o->us;
  else if (p->accel_cycles && p->accel_us) *len = (double)o->cycles * p->accel_us / p->accel_cycles;
  else *len = 0;
  const htpu_profile_event *top = top_event(p);
  if (p->extended && top && top->has_timestamp && o->start >= top->timestamp)
    *at = exec0 + (double)(o->start - top->timestamp);
  else
    *at = *cursor;
  *cursor = *at + *len;
}

/* Whether the ops are weighed by their cycles (every op has them read), else by their time. */
static int by_cycles(const htpu_profile *p) {
  return p->accel_cycles && p->num_ops && p->ops_with_cycles >= p->num_ops;
}

/* The ops' total in the unit shares are of (cycles where every op has them read, else time);
 * 0 when no share is given: the event cap cut the tree (the ops read are only the first ones)
 * or some op lacks both figures. */
static uint64_t shares_total(const htpu_profile *p, int *cyc) {
  *cyc = by_cycles(p);
  if (p->dropped_events || (!*cyc && p->ops_with_us < p->num_ops)) return 0;
  uint64_t total = 0;
  for (uint32_t i = 0; i < p->num_ops; i++) total += *cyc ? p->ops[i].cycles : p->ops[i].us;
  return total;
}

/* Op k's share in percent, < 0 for none. */
static double share(const htpu_profile *p, uint32_t k, uint64_t total, int cyc) {
  if (!total) return -1;
  return 100.0 * (double)(cyc ? p->ops[k].cycles : p->ops[k].us) / (double)total;
}

static void span(report_file *f, int *first, const char *name, const char *cat, int tid, double at,
                 double len) {
  report_printf(f, "%s\n{\"name\":\"", *first ? "" : ",");
  put_str(f, name);
  report_printf(f, "\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", cat,
          tid, at, len);
  *first = 0;
}

int htpu_profile_write_trace(const htpu_profile *p, const char *path) {
  htpu_clear_error();
  if (!p || !path) return htpu_set_error(HTPU_EINVAL, 0, "htpu_profile_write_trace: %s is NULL",
                                         !p ? "the profile" : "the path");
  report_file *f = malloc(sizeof *f);
  if (!f) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  int rc = report_open(f, path);
  if (rc) {
    free(f);
    return rc;
  }
  int first = 1;
  int load = !p->graph[0];
  out_puts("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
  report_printf(f, "\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"hexagon_tpu "
             "%s\"}},", load ? "load" : "execute");
  out_puts("\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"host\"}},", f);
  out_puts("\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"NPU "
        "(accelerator)\"}}", f);
  first = 0;
  double exec0 = (double)(p->execute_start_ns - p->start_ns) / 1000.0;
  double exec_us = (double)p->execute_ns / 1000.0;
  double q_us = (double)p->quantize_ns / 1000.0;
  if (p->quantize_ns) {
    span(f, &first, "convert inputs", "host", 1, 0, q_us);
    out_puts("}", f);
  }
  /* The profiler's own work, so the host track accounts for the whole call: the handle made
   * and configured before graphExecute, the events read back (and the handle freed) after. */
  if (exec0 > q_us) {
    span(f, &first, "profile setup", "host", 1, q_us, exec0 - q_us);
    out_puts(",\"args\":{\"what\":\"the profile handle made and configured\"}}", f);
  }
  double tail0 = exec0 + exec_us + (double)p->dequantize_ns / 1000.0;
  double end = (double)p->total_ns / 1000.0;
  span(f, &first, load ? "contextCreateFromBinary" : "graphExecute", "host", 1, exec0, exec_us);
  report_printf(f, ",\"args\":{\"graph\":\"");
  put_str(f, p->graph);
  report_printf(f, "\",\"level\":\"%s\",\"host_rpc_us\":%llu,\"htp_rpc_us\":%llu}}",
          htpu_profile_level_name(p->level), (unsigned long long)p->host_rpc_us,
          (unsigned long long)p->htp_rpc_us);
  if (p->dequantize_ns) {
    span(f, &first, "convert outputs", "host", 1, exec0 + exec_us, (double)p->dequantize_ns / 1000.0);
    out_puts("}", f);
  }
  if (end > tail0) {
    span(f, &first, "profile read", "host", 1, tail0, end - tail0);
    report_printf(f, ",\"args\":{\"what\":\"the events read back and converted, the handle "
                     "freed\",\"read_us\":%.3f}}",
                  (double)p->read_ns / 1000.0);
  }
  if (p->accel_us) {
    span(f, &first, "accelerator", "npu", 2, exec0, (double)p->accel_us);
    report_printf(f, ",\"args\":{\"cycles\":%llu}}", (unsigned long long)p->accel_cycles);
  }
  double cursor = exec0;
  int cyc;
  uint64_t total = shares_total(p, &cyc);
  for (uint32_t k = 0; k < p->num_ops; k++) {
    double at, len;
    op_span(p, k, &at, &len, &cursor);
    span(f, &first, p->ops[k].name, "op", 2, at, len);
    report_printf(f, ",\"args\":{\"index\":%u,\"cycles\":%llu,\"us\":%llu", k,
                  (unsigned long long)p->ops[k].cycles, (unsigned long long)p->ops[k].us);
    if (total) report_printf(f, ",\"share_pct\":%.2f", share(p, k, total, cyc));
    out_puts("}}", f);
  }
  out_puts("\n],\"otherData\":{\"note\":\"", f);
  put_str(f, p->note);
  out_puts("\"}}\n", f);
  rc = report_close(f);
  free(f);
  return rc;
}

/* ---- the page ---------------------------------------------------------------------------- */

/* An op and its weight (cycles, else microseconds), for sorting without a global. */
typedef struct weighed {
  uint64_t w;
  uint32_t k;
} weighed;

static int heaviest_first(const void *a, const void *b) {
  const weighed *x = a, *y = b;
  return x->w < y->w ? 1 : x->w > y->w ? -1 : (x->k > y->k) - (x->k < y->k);
}

static const char k_css[] =
    "body{font:14px system-ui,sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:20px;margin:0 0 8px}table{border-collapse:collapse;margin:8px 0 16px}"
    "td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}.note{color:#a33}"
    "svg text{font:11px system-ui,sans-serif;fill:#222}rect.bar{fill:#3b7dd8}"
    "rect.host{fill:#999}rect.prof{fill:#ccc}rect.npu{fill:#e08a2c}rect.op{fill:#3b7dd8;stroke:#fff;stroke-width:.5}";

/* The page's head and its table of figures. */
static void html_head(report_file *f, const htpu_profile *p, const char *title) {
  out_puts("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>", f);
  put_html(f, title);
  report_printf(f, " - hexagon_tpu profile</title>\n<style>%s</style></head>\n<body>\n<h1>", k_css);
  put_html(f, title);
  out_puts("</h1>\n<table>", f);
  report_printf(f, "<tr><th>level</th><td>%s</td></tr>", htpu_profile_level_name(p->level));
  if (p->accel_cycles) /* 0: not reported at this level (HTP gives cycles at detailed) */
    report_printf(f, "<tr><th>accelerator</th><td class=\"n\">%llu us, %llu cycles</td></tr>",
                  (unsigned long long)p->accel_us, (unsigned long long)p->accel_cycles);
  else
    report_printf(f, "<tr><th>accelerator</th><td class=\"n\">%llu us (cycles not reported at "
                     "this level)</td></tr>",
                  (unsigned long long)p->accel_us);
  report_printf(f, "<tr><th>RPC (host / HTP)</th><td class=\"n\">%llu us / %llu us</td></tr>",
          (unsigned long long)p->host_rpc_us, (unsigned long long)p->htp_rpc_us);
  report_printf(f, "<tr><th>host: convert in, execute, convert out</th><td class=\"n\">%.1f / %.1f / "
             "%.1f us</td></tr>",
          p->quantize_ns / 1000.0, p->execute_ns / 1000.0, p->dequantize_ns / 1000.0);
  report_printf(f, "<tr><th>events</th><td class=\"n\">%u</td></tr></table>\n", p->total_events);
  if (p->note[0]) {
    out_puts("<p class=\"note\">", f);
    put_html(f, p->note);
    out_puts("</p>\n", f);
  }
}

#define HTML_W 900
#define HTML_LABEL 220
#define HTML_ROW 16

/* The bars: one per op, heaviest first (order). */
static void html_bars(report_file *f, const htpu_profile *p, const weighed *order) {
  int cyc;
  uint64_t total = shares_total(p, &cyc);
  uint64_t max_w = 1;
  for (uint32_t k = 0; k < p->num_ops; k++) {
    uint64_t w = by_cycles(p) ? p->ops[k].cycles : p->ops[k].us;
    if (w > max_w) max_w = w;
  }
  report_printf(f, "<h2>Ops by %s%s</h2>\n<svg id=\"bars\" width=\"%d\" height=\"%u\" "
                   "role=\"img\">\n",
                by_cycles(p) ? "accelerator cycles" : "time",
                p->dropped_events ? " (PARTIAL: the events were cut at the cap, see the note)" : "",
                HTML_W, p->num_ops * HTML_ROW + 4);
  for (uint32_t r = 0; r < p->num_ops; r++) {
    uint32_t k = order[r].k;
    uint64_t w = by_cycles(p) ? p->ops[k].cycles : p->ops[k].us;
    double bw = (double)(HTML_W - HTML_LABEL - 150) * (double)w / (double)max_w;
    report_printf(f, "<text x=\"0\" y=\"%u\">", r * HTML_ROW + 12);
    put_html(f, p->ops[k].name);
    report_printf(f, "</text><rect class=\"bar\" x=\"%d\" y=\"%u\" width=\"%.1f\" height=\"%d\"><title>",
            HTML_LABEL, r * HTML_ROW + 2, bw > 0.5 ? bw : 0.5, HTML_ROW - 4);
    put_html(f, p->ops[k].name);
    char pct[32] = "";
    if (total) snprintf(pct, sizeof pct, "%.1f%%", share(p, k, total, cyc));
    report_printf(f, ": %llu cycles, %llu us%s%s</title></rect><text x=\"%.1f\" y=\"%u\">%s"
                     "</text>\n",
                  (unsigned long long)p->ops[k].cycles, (unsigned long long)p->ops[k].us,
                  total ? ", " : "", pct, HTML_LABEL + bw + 6, r * HTML_ROW + 12, pct);
  }
  out_puts("</svg>\n", f);
}

/* One span of the timeline's host row (us from the start, sx px per us). */
static void host_span(report_file *f, const char *cls, double at, double len, double sx,
                      const char *what) {
  report_printf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"4\" width=\"%.2f\" height=\"16\"><title>%s "
                   "%.1f us</title></rect>\n",
                cls, 100 + at * sx, len * sx, what, len);
}

/* The timeline: host row (conversions, the execute, the profile's own setup and read),
 * accelerator row, ops row. */
static void html_timeline(report_file *f, const htpu_profile *p) {
  double end = (double)p->total_ns / 1000.0, cursor = (double)(p->execute_start_ns - p->start_ns) / 1000.0;
  if (end <= 0) end = 1;
  double sx = (HTML_W - 100) / end, exec0 = cursor, q = p->quantize_ns / 1000.0;
  report_printf(f, "<h2>Timeline (%.1f us)</h2>\n<svg id=\"timeline\" width=\"%d\" height=\"90\">\n"
             "<text x=\"0\" y=\"16\">host</text><text x=\"0\" y=\"46\">NPU</text>"
             "<text x=\"0\" y=\"76\">ops</text>\n",
          end, HTML_W);
  if (p->quantize_ns) host_span(f, "host", 0, q, sx, "convert inputs");
  host_span(f, "host", exec0, p->execute_ns / 1000.0, sx, p->graph[0] ? "graphExecute" : "load");
  if (exec0 > q) host_span(f, "prof", q, exec0 - q, sx, "profile setup");
  double tail0 = exec0 + (p->execute_ns + p->dequantize_ns) / 1000.0;
  if (end > tail0) host_span(f, "prof", tail0, end - tail0, sx, "profile read");
  if (p->dequantize_ns)
    host_span(f, "host", exec0 + p->execute_ns / 1000.0, p->dequantize_ns / 1000.0, sx,
              "convert outputs");
  if (p->accel_us)
    report_printf(f, "<rect class=\"npu\" x=\"%.2f\" y=\"34\" width=\"%.2f\" height=\"16\"><title>"
               "accelerator %llu us</title></rect>\n",
            100 + exec0 * sx, (double)p->accel_us * sx, (unsigned long long)p->accel_us);
  for (uint32_t k = 0; k < p->num_ops; k++) {
    double at, len;
    op_span(p, k, &at, &len, &cursor);
    report_printf(f, "<rect class=\"op\" x=\"%.2f\" y=\"64\" width=\"%.2f\" height=\"16\"><title>",
            100 + at * sx, len * sx > 0.3 ? len * sx : 0.3);
    put_html(f, p->ops[k].name);
    report_printf(f, " %.1f us</title></rect>\n", len);
  }
  out_puts("</svg>\n", f);
}

int htpu_profile_write_html(const htpu_profile *p, const char *title, const char *path) {
  htpu_clear_error();
  if (!p || !path) return htpu_set_error(HTPU_EINVAL, 0, "htpu_profile_write_html: %s is NULL",
                                         !p ? "the profile" : "the path");
  if (!title) title = p->graph[0] ? p->graph : "load";
  weighed *order = malloc(((size_t)p->num_ops + 1) * sizeof *order);
  if (!order) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  for (uint32_t k = 0; k < p->num_ops; k++) {
    order[k].k = k;
    order[k].w = by_cycles(p) ? p->ops[k].cycles : p->ops[k].us;
  }
  qsort(order, p->num_ops, sizeof *order, heaviest_first);
  report_file *f = malloc(sizeof *f);
  int rc = f ? report_open(f, path) : htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if (rc) {
    free(f);
    free(order);
    return rc;
  }
  html_head(f, p, title);
  html_bars(f, p, order);
  html_timeline(f, p);
  /* Marks the page as drawn once the browser has it (the headless check reads this). */
  report_printf(f, "<script>document.body.setAttribute('data-rendered', "
             "document.querySelectorAll('#bars rect.bar').length + ' bars, ' + "
             "document.querySelectorAll('#timeline rect.op').length + ' ops');</script>\n"
             "</body></html>\n");
  free(order);
  rc = report_close(f);
  free(f);
  return rc;
}
