/* nsp_temperature.c - the `nsp temperature` step (HTP backend): the NPU subsystem's thermal
 * zones (nspss0-thermal, nspss1-thermal on QCS6490) against their hot trip point. The NPU
 * throttles itself there, and Linux's cooling devices never show it. */
#include <stdio.h>

#include "doctor.h"

/* How close below the hot trip point counts as "near" it. */
#define NEAR_MC 5000

static void format_temp(int64_t mc, char *buf, size_t len) {
  if (mc == HTPU_BOARD_NO_TEMP)
    snprintf(buf, len, "?");
  else
    snprintf(buf, len, "%.1f C", (double)mc / 1000.0);
}

static void list_zones(step *s, const htpu_board *b) {
  for (uint32_t i = 0; i < b->num_zones; i++) {
    const htpu_thermal_zone *z = &b->zones[i];
    if (z->kind != HTPU_ZONE_NSP) continue;
    char temp[32], hot[32], crit[32];
    format_temp(z->temp_mc, temp, sizeof temp);
    format_temp(z->hot_mc, hot, sizeof hot);
    format_temp(z->critical_mc, crit, sizeof crit);
    char more[64] = "";
    if (z->trips_skipped)
      snprintf(more, sizeof more, " (%u trip points past the first %d not listed)",
               (unsigned)z->trips_skipped, HTPU_BOARD_MAX_TRIPS);
    report_row *row = step_row(s, "%s (%s): %s, hot trip %s, critical %s%s%s%s", z->type,
                               z->zone,
                               z->state == HTPU_READING_OK ? temp
                                                           : htpu_reading_state_name(z->state),
                               hot, crit, more, z->note[0] ? ": " : "", z->note);
    if (row) {
      row_str(row, "zone", z->zone);
      row_str(row, "type", z->type);
      row_str(row, "state", htpu_reading_state_name(z->state));
      row_str(row, "temp", temp);
    }
  }
  step_rows(s, "zones", "zones");
}

static void judge(doctor *d, step *s) {
  htpu_board *b = NULL;
  if (htpu_board_read(d->root, &b) != 0) {
    step_set(s, ST_WARN, "cannot read the board: %s", htpu_last_error());
    return;
  }
  list_zones(s, b);
  char temp[32], hot[32], cpu[32];
  format_temp(b->nsp_temp_mc, temp, sizeof temp);
  format_temp(b->nsp_hot_mc, hot, sizeof hot);
  format_temp(b->cpu_temp_mc, cpu, sizeof cpu);
  step_str(s, "hottest CPU zone", "cpu_temp", cpu);
  if (b->nsp_state == HTPU_READING_MISSING) {
    step_set(s, ST_WARN, "no NSP thermal zone (nspss0-thermal, nspss1-thermal)%s%s: the NPU's "
                         "temperature cannot be watched",
             b->thermal_note[0] ? ": " : "", b->thermal_note);
  } else if (b->nsp_state != HTPU_READING_OK) {
    step_set(s, ST_WARN, "the NSP zones cannot be read (%s): the NPU's temperature cannot be "
                         "watched", htpu_reading_state_name(b->nsp_state));
  } else if (b->nsp_hot) {
    step_set(s, ST_WARN, "the NSP is at %s (%s), at or above its hot trip point %s: the NPU is "
                         "throttling itself", temp, b->nsp_zone, hot);
    step_hint(s, "Linux's cooling devices stay at 0 while the DSP slows itself: in a field "
                 "measurement 15 minutes at 94-96.6 C cost 22%% of throughput, recovered below "
                 "~81 C. Cool the board (airflow, a heatsink, less video encoding beside it) "
                 "before benchmarking; HexagonTpu.Monitor warns when it happens in production");
  } else if (b->nsp_hot_mc != HTPU_BOARD_NO_TEMP && b->nsp_temp_mc + NEAR_MC >= b->nsp_hot_mc) {
    step_set(s, ST_WARN, "the NSP is at %s (%s), within 5 C of its hot trip point %s", temp,
             b->nsp_zone, hot);
    step_hint(s, "above the trip point the NPU throttles itself, unseen by Linux; a video "
                 "encoder alone has held this board's NSP near 95 C");
  } else if (b->nsp_hot_mc == HTPU_BOARD_NO_TEMP) {
    step_set(s, ST_OK, "the NSP is at %s (%s); no hot trip point read", temp, b->nsp_zone);
  } else {
    step_set(s, ST_OK, "the NSP is at %s (%s), below its hot trip point %s", temp, b->nsp_zone,
             hot);
  }
  htpu_board_free(b);
}

void check_nsp_temperature(doctor *d) {
  doctor_board_step(d, "nsp_temperature", "nsp temperature", judge);
}
