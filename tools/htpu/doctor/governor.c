/* governor.c - the `cpu governor` step (HTP backend): each cpufreq policy's governor and
 * current frequency. Part of every call runs on the CPU while the NPU works; with the CPUs
 * otherwise idle an on-demand governor parks them at their lowest clock. */
#include <stdio.h>
#include <string.h>

#include "doctor.h"

/* The field measurement behind the warning (docs/board.md). */
#define GOVERNOR_REASON                                                                          \
  "measured on this board: under schedutil, with the CPUs idle while the NPU works, the cores "  \
  "sat at 691 MHz and throughput fell from 29 to 21 frames/s; performance restored it"

static void list_policies(step *s, const htpu_board *b, char *slow, size_t slow_len,
                          int *unread) {
  size_t pos = 0;
  for (uint32_t i = 0; i < b->num_policies; i++) {
    const htpu_cpu_policy *p = &b->policies[i];
    char mhz[48];
    if (p->cur_state == HTPU_READING_OK)
      snprintf(mhz, sizeof mhz, "%llu MHz (max %llu)", (unsigned long long)(p->cur_khz / 1000),
               (unsigned long long)(p->hw_max_khz / 1000));
    else
      snprintf(mhz, sizeof mhz, "frequency %s", htpu_reading_state_name(p->cur_state));
    const char *gov = p->governor[0] ? p->governor : htpu_reading_state_name(p->governor_state);
    report_row *row = step_row(s, "%s (cpus %s): %s, %s%s%s", p->policy, p->cpus, gov, mhz,
                               p->note[0] ? ": " : "", p->note);
    if (row) {
      row_str(row, "policy", p->policy);
      row_str(row, "cpus", p->cpus);
      row_str(row, "governor", p->governor);
      row_str(row, "cur_mhz", mhz);
    }
    if (p->governor_state != HTPU_READING_OK) (*unread)++;
    if (p->governor_state == HTPU_READING_OK && strcmp(p->governor, "performance") != 0 &&
        pos < slow_len) {
      int w = snprintf(slow + pos, slow_len - pos, "%s%s (%s)", pos ? ", " : "", p->policy,
                       p->governor);
      if (w > 0) pos += (size_t)w;
    }
  }
  step_rows(s, "policies", "policies");
}

static void judge(doctor *d, step *s) {
  htpu_board *b = NULL;
  if (htpu_board_read(d->root, &b) != 0) {
    step_set(s, ST_WARN, "cannot read the board: %s", htpu_last_error());
    return;
  }
  char slow[512] = "";
  int unread = 0;
  list_policies(s, b, slow, sizeof slow, &unread);
  if (b->num_policies == 0) {
    step_set(s, ST_WARN, "%s: the governor cannot be checked", b->cpufreq_note);
    step_hint(s, "without cpufreq the kernel runs the CPUs at a fixed clock; " GOVERNOR_REASON);
  } else if (slow[0]) {
    step_set(s, ST_WARN, "not the performance governor: %s", slow);
    step_hint(s, GOVERNOR_REASON ". As root: echo performance | tee "
                 "/sys/devices/system/cpu/cpufreq/policy*/scaling_governor (on Nerves, at boot)");
  } else if (unread) {
    step_set(s, ST_WARN, "%d polic%s without a readable governor", unread,
             unread == 1 ? "y" : "ies");
    step_hint(s, "each policy's note says why; " GOVERNOR_REASON);
  } else {
    step_set(s, ST_OK, "performance on all %u policies", (unsigned)b->num_policies);
  }
  htpu_board_free(b);
}

void check_governor(doctor *d) { doctor_board_step(d, "cpu_governor", "cpu governor", judge); }
