/* thermal.c - /sys/class/thermal: each zone's type, temperature and trip points, and the NSP
 * and CPU summaries of htpu_board (see board.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"

#define THERMAL_DIR "/sys/class/thermal"
/* A SoC sensor reads within these (millidegrees C); outside, the value is a driver's error code
 * or a unit mistake, not a temperature. Trip points may sit higher (critical ones at 115-125 C). */
#define TEMP_MIN_MC (-40000)
#define TEMP_MAX_MC 150000
#define TRIP_MAX_MC 200000

typedef struct zone_name {
  long number;
  char name[32];
} zone_name;

static int by_number(const void *a, const void *b) {
  long x = ((const zone_name *)a)->number, y = ((const zone_name *)b)->number;
  return (x > y) - (x < y);
}

/* The thermal_zoneN entries, sorted by N, at most HTPU_BOARD_MAX_ZONES (the rest counted). */
static int list_zones(const char *root, zone_name **out, uint32_t *count, uint32_t *skipped,
                      char *note, size_t note_len) {
  *out = NULL;
  *count = *skipped = 0;
  DIR *dir = board_opendir(root, THERMAL_DIR);
  if (!dir) {
    snprintf(note, note_len, "no thermal zones: '%s%s' cannot be opened: %s", root ? root : "",
             THERMAL_DIR, strerror(errno));
    return 0;
  }
  zone_name *names = calloc(HTPU_BOARD_MAX_ZONES, sizeof *names);
  if (!names) {
    closedir(dir);
    return HTPU_ENOMEM;
  }
  struct dirent *e;
  while ((e = readdir(dir))) {
    long n = board_name_number(e->d_name, "thermal_zone");
    if (n < 0 || strlen(e->d_name) >= sizeof names[0].name) continue;
    if (*count == HTPU_BOARD_MAX_ZONES) {
      (*skipped)++;
      continue;
    }
    names[*count].number = n;
    snprintf(names[*count].name, sizeof names[0].name, "%.31s", e->d_name);
    (*count)++;
  }
  closedir(dir);
  qsort(names, *count, sizeof *names, by_number);
  if (*count == 0) snprintf(note, note_len, "no thermal zones in '%s'", THERMAL_DIR);
  *out = names;
  return 0;
}

/* A millidegree value read from `path`: its state, *mc set when OK. */
static int read_temp(const char *root, const char *path, int64_t max_mc, int64_t *mc,
                     char *note, size_t note_len) {
  char text[64];
  *mc = HTPU_BOARD_NO_TEMP;
  int state = board_read_line(root, path, text, sizeof text, note, note_len);
  if (state != HTPU_READING_OK) return state;
  int64_t v;
  if (board_parse_i64(text, &v) != 0) {
    snprintf(note, note_len, "'%s' reads '%s': not a temperature in millidegrees", path, text);
    return HTPU_READING_ABSURD;
  }
  if (v < TEMP_MIN_MC || v > max_mc) {
    snprintf(note, note_len, "'%s' reads %lld millidegrees: outside %d..%lld C, not trusted",
             path, (long long)v, TEMP_MIN_MC / 1000, (long long)(max_mc / 1000));
    return HTPU_READING_ABSURD;
  }
  *mc = v;
  return HTPU_READING_OK;
}

static int zone_kind(const char *type) {
  if (strncmp(type, "nsp", 3) == 0) return HTPU_ZONE_NSP;
  if (strncmp(type, "cpu", 3) == 0) return HTPU_ZONE_CPU;
  return HTPU_ZONE_OTHER;
}

static void lowest(int64_t *slot, int64_t v) {
  if (*slot == HTPU_BOARD_NO_TEMP || v < *slot) *slot = v;
}

/* trip_point_N_{temp,type} for N = 0.. until one is missing, however many there are (the kernel
 * numbers them without gaps): the first HTPU_BOARD_MAX_TRIPS listed, the rest counted in
 * trips_skipped; every one counts for hot_mc and critical_mc, so none is silently lost. */
static void read_trips(const char *root, const char *dir, htpu_thermal_zone *z) {
  int64_t hot = HTPU_BOARD_NO_TEMP, passive = HTPU_BOARD_NO_TEMP;
  for (uint32_t i = 0; i < UINT32_MAX; i++) {
    char path[160], note[256];
    htpu_trip_point past, *t = i < HTPU_BOARD_MAX_TRIPS ? &z->trips[i] : &past;
    memset(&past, 0, sizeof past);
    snprintf(path, sizeof path, "%s/trip_point_%u_temp", dir, i);
    t->state = read_temp(root, path, TRIP_MAX_MC, &t->temp_mc, note, sizeof note);
    if (t->state == HTPU_READING_MISSING) break;
    snprintf(path, sizeof path, "%s/trip_point_%u_type", dir, i);
    if (board_read_line(root, path, t->type, sizeof t->type, NULL, 0) != HTPU_READING_OK)
      t->type[0] = '\0';
    if (t == &past)
      z->trips_skipped++;
    else
      z->num_trips = i + 1;
    if (t->state != HTPU_READING_OK) continue;
    if (strcmp(t->type, "hot") == 0) lowest(&hot, t->temp_mc);
    if (strcmp(t->type, "passive") == 0) lowest(&passive, t->temp_mc);
    if (strcmp(t->type, "critical") == 0) lowest(&z->critical_mc, t->temp_mc);
  }
  z->hot_mc = hot != HTPU_BOARD_NO_TEMP ? hot : passive;
}

static void read_zone(const char *root, const zone_name *n, htpu_thermal_zone *z) {
  char dir[96], path[160];
  snprintf(z->zone, sizeof z->zone, "%s", n->name);
  snprintf(dir, sizeof dir, THERMAL_DIR "/%s", n->name);
  z->hot_mc = z->critical_mc = HTPU_BOARD_NO_TEMP;
  snprintf(path, sizeof path, "%s/type", dir);
  if (board_read_line(root, path, z->type, sizeof z->type, NULL, 0) != HTPU_READING_OK)
    z->type[0] = '\0';
  z->kind = zone_kind(z->type);
  snprintf(path, sizeof path, "%s/temp", dir);
  z->state = read_temp(root, path, TEMP_MAX_MC, &z->temp_mc, z->note, sizeof z->note);
  if (z->state == HTPU_READING_OK) z->note[0] = '\0';
  read_trips(root, dir, z);
}

/* The hottest trustworthy zone of a kind, and the state the summary reports. */
static int summarize(const htpu_board *b, int kind, int64_t *temp, const htpu_thermal_zone **at) {
  int state = HTPU_READING_MISSING, seen = 0;
  *temp = HTPU_BOARD_NO_TEMP;
  *at = NULL;
  for (uint32_t i = 0; i < b->num_zones; i++) {
    const htpu_thermal_zone *z = &b->zones[i];
    if (z->kind != kind) continue;
    if (!seen++) state = z->state;
    if (z->state != HTPU_READING_OK) continue;
    state = HTPU_READING_OK;
    if (*temp == HTPU_BOARD_NO_TEMP || z->temp_mc > *temp) {
      *temp = z->temp_mc;
      *at = z;
    }
  }
  return state;
}

int board_read_thermal(const char *root, htpu_board *b) {
  zone_name *names = NULL;
  uint32_t count = 0;
  int rc = list_zones(root, &names, &count, &b->zones_skipped, b->thermal_note,
                      sizeof b->thermal_note);
  if (rc) return rc;
  b->zones = count ? calloc(count, sizeof *b->zones) : NULL;
  if (count && !b->zones) {
    free(names);
    return HTPU_ENOMEM;
  }
  for (uint32_t i = 0; i < count; i++) read_zone(root, &names[i], &b->zones[i]);
  b->num_zones = count;
  free(names);

  const htpu_thermal_zone *hottest;
  b->nsp_state = summarize(b, HTPU_ZONE_NSP, &b->nsp_temp_mc, &hottest);
  if (hottest) snprintf(b->nsp_zone, sizeof b->nsp_zone, "%s", hottest->type);
  b->nsp_hot_mc = HTPU_BOARD_NO_TEMP;
  for (uint32_t i = 0; i < b->num_zones; i++)
    if (b->zones[i].kind == HTPU_ZONE_NSP && b->zones[i].hot_mc != HTPU_BOARD_NO_TEMP)
      lowest(&b->nsp_hot_mc, b->zones[i].hot_mc);
  b->nsp_hot = b->nsp_temp_mc != HTPU_BOARD_NO_TEMP && b->nsp_hot_mc != HTPU_BOARD_NO_TEMP &&
               b->nsp_temp_mc >= b->nsp_hot_mc;
  b->cpu_state = summarize(b, HTPU_ZONE_CPU, &b->cpu_temp_mc, &hottest);
  return 0;
}
