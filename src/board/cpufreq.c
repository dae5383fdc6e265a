/* cpufreq.c - /sys/devices/system/cpu/cpufreq: each policy's governor and frequencies (see
 * board.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"

#define CPUFREQ_DIR "/sys/devices/system/cpu/cpufreq"
/* kHz: a CPU clock of 0 or above 100 GHz is a driver's error, not a frequency */
#define KHZ_MAX UINT64_C(100000000)

typedef struct policy_name {
  long number;
  char name[32];
} policy_name;

static int by_number(const void *a, const void *b) {
  long x = ((const policy_name *)a)->number, y = ((const policy_name *)b)->number;
  return (x > y) - (x < y);
}

/* A frequency attribute: its state, *khz set when OK. */
static int read_khz(const char *root, const char *dir, const char *attr, uint64_t *khz,
                    char *note, size_t note_len) {
  char path[160], text[64];
  *khz = 0;
  snprintf(path, sizeof path, "%s/%s", dir, attr);
  int state = board_read_line(root, path, text, sizeof text, note, note_len);
  if (state != HTPU_READING_OK) return state;
  int64_t v;
  if (board_parse_i64(text, &v) != 0 || v <= 0 || (uint64_t)v > KHZ_MAX) {
    snprintf(note, note_len, "'%.150s' reads '%.40s': not a frequency in kHz (1..%llu)", path, text,
             (unsigned long long)KHZ_MAX);
    return HTPU_READING_ABSURD;
  }
  *khz = (uint64_t)v;
  return HTPU_READING_OK;
}

/* A governor is a sysfs word: lowercase letters, digits, '_' and '-'. */
static int plausible_governor(const char *g) {
  if (!g[0]) return 0;
  for (const char *p = g; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
      return 0;
  return 1;
}

static void read_policy(const char *root, const policy_name *n, htpu_cpu_policy *p) {
  char dir[96], path[160], note[256] = "", cur_note[256] = "";
  snprintf(p->policy, sizeof p->policy, "%s", n->name);
  snprintf(dir, sizeof dir, CPUFREQ_DIR "/%s", n->name);
  snprintf(path, sizeof path, "%s/related_cpus", dir);
  if (board_read_line(root, path, p->cpus, sizeof p->cpus, NULL, 0) != HTPU_READING_OK)
    p->cpus[0] = '\0';
  snprintf(path, sizeof path, "%s/scaling_governor", dir);
  p->governor_state = board_read_line(root, path, p->governor, sizeof p->governor, note,
                                      sizeof note);
  if (p->governor_state == HTPU_READING_OK && !plausible_governor(p->governor)) {
    snprintf(note, sizeof note, "'%.150s' reads '%.40s': not a governor name", path, p->governor);
    p->governor_state = HTPU_READING_ABSURD;
  }
  if (p->governor_state != HTPU_READING_OK) p->governor[0] = '\0';
  p->cur_state = read_khz(root, dir, "scaling_cur_freq", &p->cur_khz, cur_note, sizeof cur_note);
  char ignored[256];
  read_khz(root, dir, "scaling_min_freq", &p->min_khz, ignored, sizeof ignored);
  read_khz(root, dir, "scaling_max_freq", &p->max_khz, ignored, sizeof ignored);
  read_khz(root, dir, "cpuinfo_min_freq", &p->hw_min_khz, ignored, sizeof ignored);
  read_khz(root, dir, "cpuinfo_max_freq", &p->hw_max_khz, ignored, sizeof ignored);
  /* the governor's story first, then the frequency's */
  snprintf(p->note, sizeof p->note, "%.126s%s%.126s", note,
           note[0] && p->cur_state != HTPU_READING_OK ? "; " : "",
           p->cur_state != HTPU_READING_OK ? cur_note : "");
}

int board_read_cpufreq(const char *root, htpu_board *b) {
  DIR *dir = board_opendir(root, CPUFREQ_DIR);
  if (!dir) {
    snprintf(b->cpufreq_note, sizeof b->cpufreq_note,
             "no cpufreq policies: '%s%s' cannot be opened: %s", root ? root : "", CPUFREQ_DIR,
             strerror(errno));
    return 0;
  }
  policy_name *names = calloc(HTPU_BOARD_MAX_POLICIES, sizeof *names);
  if (!names) {
    closedir(dir);
    return HTPU_ENOMEM;
  }
  uint32_t count = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    long n = board_name_number(e->d_name, "policy");
    if (n < 0 || strlen(e->d_name) >= sizeof names[0].name) continue;
    if (count == HTPU_BOARD_MAX_POLICIES) {
      b->policies_skipped++;
      continue;
    }
    names[count].number = n;
    snprintf(names[count].name, sizeof names[0].name, "%.31s", e->d_name);
    count++;
  }
  closedir(dir);
  qsort(names, count, sizeof *names, by_number);
  if (count == 0)
    snprintf(b->cpufreq_note, sizeof b->cpufreq_note, "no cpufreq policies in '%s'",
             CPUFREQ_DIR);
  b->policies = count ? calloc(count, sizeof *b->policies) : NULL;
  if (count && !b->policies) {
    free(names);
    return HTPU_ENOMEM;
  }
  for (uint32_t i = 0; i < count; i++) read_policy(root, &names[i], &b->policies[i]);
  b->num_policies = count;
  free(names);
  return 0;
}
