/* board_record.c - the board around a bench run (see board_record.h). */
#include <stdio.h>
#include <string.h>

#include "board_record.h"
#include "util.h"

static void read_into(cli_board_record *r, const char *root, htpu_board **slot) {
  if (htpu_board_read(root, slot) != 0 && !r->error[0])
    snprintf(r->error, sizeof r->error, "%s", htpu_last_error());
}

void cli_board_record_start(cli_board_record *r, const char *root) {
  memset(r, 0, sizeof *r);
  read_into(r, root, &r->start);
}

void cli_board_record_end(cli_board_record *r, const char *root) { read_into(r, root, &r->end); }

int cli_board_record_hot(const cli_board_record *r) {
  return (r->start && r->start->nsp_hot) || (r->end && r->end->nsp_hot);
}

void cli_board_record_free(cli_board_record *r) {
  htpu_board_free(r->start);
  htpu_board_free(r->end);
  r->start = r->end = NULL;
}

static void format_temp(int64_t mc, char *buf, size_t len) {
  if (mc == HTPU_BOARD_NO_TEMP)
    snprintf(buf, len, "?");
  else
    snprintf(buf, len, "%.1f C", (double)mc / 1000.0);
}

/* "NSP 61.0 C (nspss1-thermal, hot trip 90.0 C), CPU 52.3 C; performance 1804 MHz (policy0),
 * ..." for one reading. */
static void describe(const htpu_board *b, char *buf, size_t len) {
  char nsp[32], hot[32], cpu[32];
  format_temp(b->nsp_temp_mc, nsp, sizeof nsp);
  format_temp(b->nsp_hot_mc, hot, sizeof hot);
  format_temp(b->cpu_temp_mc, cpu, sizeof cpu);
  size_t pos = 0;
  int w;
  if (b->nsp_state == HTPU_READING_OK)
    w = snprintf(buf, len, "NSP %s (%s, hot trip %s)%s, CPU %s", nsp, b->nsp_zone, hot,
                 b->nsp_hot ? " HOT" : "", cpu);
  else
    w = snprintf(buf, len, "NSP temperature %s, CPU %s", htpu_reading_state_name(b->nsp_state),
                 cpu);
  for (uint32_t i = 0; w >= 0 && (pos += (size_t)w) < len && i < b->num_policies; i++) {
    const htpu_cpu_policy *p = &b->policies[i];
    char mhz[32];
    if (p->cur_state == HTPU_READING_OK)
      snprintf(mhz, sizeof mhz, "%llu MHz", (unsigned long long)(p->cur_khz / 1000));
    else
      snprintf(mhz, sizeof mhz, "frequency %s", htpu_reading_state_name(p->cur_state));
    w = snprintf(buf + pos, len - pos, "%s%s %s %s", i ? ", " : "; ", p->policy,
                 p->governor[0] ? p->governor : htpu_reading_state_name(p->governor_state), mhz);
  }
  if (b->num_policies == 0 && pos < len) snprintf(buf + pos, len - pos, "; no cpufreq policies");
}

void cli_board_record_rows(const cli_board_record *r, struct cli_table *t) {
  char start[1024] = "", end[1024] = "", load[160] = "";
  if (r->start) describe(r->start, start, sizeof start);
  if (r->end) describe(r->end, end, sizeof end);
  htpu_board_load l;
  if (r->start && r->end && htpu_board_load_between(r->start, r->end, &l) == 0)
    snprintf(load, sizeof load, "NPU busy %.2f (this run's graphExecute time over its wall "
             "time), %.1f executes/s", l.busy, l.executes_per_s);
  const char *rows[][2] = {{"board start", r->start ? start : r->error},
                           {"board end", r->end ? end : r->error},
                           {"NPU load", load[0] ? load : "unknown"}};
  for (size_t i = 0; i < 3; i++) cli_table_add(t, rows[i]);
}

void cli_board_record_warn(const cli_board_record *r, const char *cmd_name) {
  if (!cli_board_record_hot(r)) return;
  const htpu_board *b = r->end && r->end->nsp_hot ? r->end : r->start;
  char nsp[32], hot[32];
  format_temp(b->nsp_temp_mc, nsp, sizeof nsp);
  format_temp(b->nsp_hot_mc, hot, sizeof hot);
  fprintf(stderr, "htpu %s: the run was hot: the NSP (%s) reached %s, at or above its hot trip "
                  "point %s, where the NPU throttles itself unseen by Linux (a field "
                  "measurement lost 22%% of throughput at 94-96 C): let the board cool below "
                  "it and run again before trusting these numbers\n",
          cmd_name, b->nsp_zone, nsp, hot);
}

static void json_temp(cli_json *j, const char *key, int64_t mc) {
  if (mc == HTPU_BOARD_NO_TEMP)
    cli_json_null(j, key);
  else
    cli_json_double(j, key, (double)mc / 1000.0);
}

static void json_reading(cli_json *j, const char *key, const htpu_board *b) {
  if (!b) {
    cli_json_null(j, key);
    return;
  }
  cli_json_object_begin(j, key);
  cli_json_string(j, "nsp_state", htpu_reading_state_name(b->nsp_state));
  json_temp(j, "nsp_temp_c", b->nsp_temp_mc);
  json_temp(j, "nsp_hot_c", b->nsp_hot_mc);
  cli_json_string(j, "nsp_zone", b->nsp_zone[0] ? b->nsp_zone : NULL);
  cli_json_bool(j, "nsp_hot", b->nsp_hot);
  json_temp(j, "cpu_temp_c", b->cpu_temp_mc);
  cli_json_array_begin(j, "cpufreq", 0);
  for (uint32_t i = 0; i < b->num_policies; i++) {
    const htpu_cpu_policy *p = &b->policies[i];
    cli_json_object_begin(j, NULL);
    cli_json_string(j, "policy", p->policy);
    cli_json_string(j, "cpus", p->cpus);
    cli_json_string(j, "governor", p->governor[0] ? p->governor : NULL);
    if (p->cur_state == HTPU_READING_OK)
      cli_json_uint(j, "cur_khz", p->cur_khz);
    else
      cli_json_null(j, "cur_khz");
    cli_json_object_end(j);
  }
  cli_json_array_end(j);
  cli_json_object_end(j);
}

void cli_board_record_json(const cli_board_record *r, cli_json *j) {
  cli_json_object_begin(j, "board");
  json_reading(j, "start", r->start);
  json_reading(j, "end", r->end);
  cli_json_bool(j, "hot", cli_board_record_hot(r));
  htpu_board_load l;
  if (r->start && r->end && htpu_board_load_between(r->start, r->end, &l) == 0) {
    cli_json_double(j, "npu_busy", l.busy);
    cli_json_double(j, "executes_per_s", l.executes_per_s);
  } else {
    cli_json_null(j, "npu_busy");
    cli_json_null(j, "executes_per_s");
  }
  cli_json_string(j, "error", r->error[0] ? r->error : NULL);
  cli_json_object_end(j);
}
