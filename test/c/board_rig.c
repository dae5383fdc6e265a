/* board_rig.c - fake board trees (see board_rig.h). */
#include "board_rig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

const char *rig_root(const char *name) {
  static char ring[8][512];
  static unsigned next;
  char *buf = ring[next++ % 8];
  snprintf(buf, sizeof ring[0], "%s", test_tmp_path(name));
  mkdir(buf, 0755);
  return buf;
}

int rig_mkdirs(const char *root, const char *rel) {
  char path[1024];
  int n = snprintf(path, sizeof path, "%s/%s", root, rel);
  if (n < 0 || (size_t)n >= sizeof path) return -1;
  for (char *p = path + strlen(root) + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* mkdir -p of rel's directory. */
static int parent_dirs(const char *root, const char *rel) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s", rel);
  char *slash = strrchr(dir, '/');
  if (!slash) return 0;
  *slash = '\0';
  return rig_mkdirs(root, dir);
}

int rig_put(const char *root, const char *rel, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  if (parent_dirs(root, rel) != 0) return -1;
  return test_write_file(path, text, strlen(text));
}

int rig_link(const char *root, const char *rel, const char *target) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  if (parent_dirs(root, rel) != 0) return -1;
  unlink(path);
  return symlink(target, path);
}

int rig_fifo(const char *root, const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  if (parent_dirs(root, rel) != 0) return -1;
  return mkfifo(path, 0644);
}

int rig_zone(const char *root, int n, const char *type, const char *temp, const char *trips) {
  char rel[256], text[64];
  snprintf(rel, sizeof rel, "sys/class/thermal/thermal_zone%d/type", n);
  snprintf(text, sizeof text, "%s\n", type);
  if (rig_put(root, rel, text) != 0) return -1;
  if (temp) {
    snprintf(rel, sizeof rel, "sys/class/thermal/thermal_zone%d/temp", n);
    snprintf(text, sizeof text, "%s\n", temp);
    if (rig_put(root, rel, text) != 0) return -1;
  }
  int i = 0;
  for (const char *p = trips; p && *p; i++) {
    const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
    if (!colon) return -1;
    size_t vlen = comma ? (size_t)(comma - colon - 1) : strlen(colon + 1);
    snprintf(rel, sizeof rel, "sys/class/thermal/thermal_zone%d/trip_point_%d_type", n, i);
    snprintf(text, sizeof text, "%.*s\n", (int)(colon - p), p);
    if (rig_put(root, rel, text) != 0) return -1;
    snprintf(rel, sizeof rel, "sys/class/thermal/thermal_zone%d/trip_point_%d_temp", n, i);
    snprintf(text, sizeof text, "%.*s\n", (int)vlen, colon + 1);
    if (rig_put(root, rel, text) != 0) return -1;
    p = comma ? comma + 1 : NULL;
  }
  return 0;
}

int rig_policy(const char *root, int n, const char *governor, const char *cur_khz,
               const char *cpus) {
  char rel[256], text[128];
  snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpufreq/policy%d/related_cpus", n);
  snprintf(text, sizeof text, "%s\n", cpus);
  if (rig_put(root, rel, text) != 0) return -1;
  if (governor) {
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpufreq/policy%d/scaling_governor", n);
    snprintf(text, sizeof text, "%s\n", governor);
    if (rig_put(root, rel, text) != 0) return -1;
  }
  if (cur_khz) {
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpufreq/policy%d/scaling_cur_freq", n);
    snprintf(text, sizeof text, "%s\n", cur_khz);
    if (rig_put(root, rel, text) != 0) return -1;
  }
  const char *limits[][2] = {{"scaling_min_freq", "300000"}, {"scaling_max_freq", "2400000"},
                             {"cpuinfo_min_freq", "300000"}, {"cpuinfo_max_freq", "2400000"}};
  for (size_t i = 0; i < 4; i++) {
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpufreq/policy%d/%s", n, limits[i][0]);
    snprintf(text, sizeof text, "%s\n", limits[i][1]);
    if (rig_put(root, rel, text) != 0) return -1;
  }
  return 0;
}
