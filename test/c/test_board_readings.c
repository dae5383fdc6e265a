/* test_board_readings.c - htpu_board_read against fake trees: two NSP zones, missing zones,
 * unreadable files (a FIFO, a directory, a link loop), absurd values, cpufreq policies, sysfs's
 * links, and the NPU's load between two readings. Never this machine's /sys. */
#include <stdio.h>
#include <string.h>

#include "board_rig.h"
#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

static const htpu_thermal_zone *zone_of(const htpu_board *b, const char *type) {
  for (uint32_t i = 0; i < b->num_zones; i++)
    if (strcmp(b->zones[i].type, type) == 0) return &b->zones[i];
  return NULL;
}

TEST(board_two_nsp_zones_the_hottest_and_the_lowest_hot_trip) {
  const char *root = rig_root("two_nsp");
  CHECK(rig_zone(root, 0, "cpu0-thermal", "52300", "passive:95000,critical:115000") == 0);
  CHECK(rig_zone(root, 10, "nspss1-thermal", "93500", "hot:92000,critical:110000") == 0);
  CHECK(rig_zone(root, 2, "nspss0-thermal", "91200", "passive:85000,hot:90000,critical:110000") == 0);
  CHECK(rig_zone(root, 3, "cpuss0-thermal", "61000", NULL) == 0);
  CHECK(rig_zone(root, 4, "video-thermal", "40000", NULL) == 0);
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  /* zone number order, not readdir's nor the text's (thermal_zone10 last) */
  CHECK_EQ(b->num_zones, 5);
  CHECK(strcmp(b->zones[0].zone, "thermal_zone0") == 0);
  CHECK(strcmp(b->zones[1].zone, "thermal_zone2") == 0);
  CHECK(strcmp(b->zones[4].zone, "thermal_zone10") == 0);
  const htpu_thermal_zone *n0 = zone_of(b, "nspss0-thermal"), *n1 = zone_of(b, "nspss1-thermal");
  CHECK(n0 && n1);
  CHECK_EQ(n0->kind, HTPU_ZONE_NSP);
  CHECK_EQ(n0->state, HTPU_READING_OK);
  CHECK_EQ(n0->temp_mc, 91200);
  CHECK_EQ(n0->num_trips, 3);
  CHECK(strcmp(n0->trips[1].type, "hot") == 0);
  CHECK_EQ(n0->trips[1].temp_mc, 90000);
  /* "hot" wins over a lower "passive" */
  CHECK_EQ(n0->hot_mc, 90000);
  CHECK_EQ(n0->critical_mc, 110000);
  CHECK_EQ(n1->hot_mc, 92000);
  CHECK_EQ(zone_of(b, "cpu0-thermal")->kind, HTPU_ZONE_CPU);
  CHECK_EQ(zone_of(b, "cpu0-thermal")->hot_mc, 95000); /* no "hot": the passive trip */
  CHECK_EQ(zone_of(b, "video-thermal")->kind, HTPU_ZONE_OTHER);
  CHECK_EQ(zone_of(b, "video-thermal")->hot_mc, HTPU_BOARD_NO_TEMP);
  /* the summary: the hottest NSP zone, the lowest hot trip of the NSP zones */
  CHECK_EQ(b->nsp_state, HTPU_READING_OK);
  CHECK_EQ(b->nsp_temp_mc, 93500);
  CHECK(strcmp(b->nsp_zone, "nspss1-thermal") == 0);
  CHECK_EQ(b->nsp_hot_mc, 90000);
  CHECK_EQ(b->nsp_hot, 1);
  CHECK_EQ(b->cpu_state, HTPU_READING_OK);
  CHECK_EQ(b->cpu_temp_mc, 61000);
  CHECK(b->thermal_note[0] == '\0');
  htpu_board_free(b);
}

TEST(board_cool_nsp_is_not_hot) {
  const char *root = rig_root("cool_nsp");
  CHECK(rig_zone(root, 0, "nspss0-thermal", "61000", "hot:90000,critical:110000") == 0);
  CHECK(rig_zone(root, 1, "nspss1-thermal", "89999", "hot:90000") == 0);
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  CHECK_EQ(b->nsp_temp_mc, 89999);
  CHECK_EQ(b->nsp_hot, 0);
  htpu_board_free(b);
}

/* More trip points than a zone lists: the rest counted, and a hot or critical one among them
 * still makes the zone's hot and critical temperatures (and the NSP's hot state). */
TEST(board_trip_points_past_the_listed_ones_are_counted_and_used) {
  const char *root = rig_root("many_trips");
  char trips[1024] = "";
  for (int i = 0; i < HTPU_BOARD_MAX_TRIPS; i++) {
    char one[32];
    snprintf(one, sizeof one, "%spassive:%d", i ? "," : "", 95000 + i * 100);
    strcat(trips, one);
  }
  strcat(trips, ",hot:88000,critical:105000,active:40000");
  CHECK(rig_zone(root, 12, "nspss0-thermal", "88500", trips) == 0);
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  const htpu_thermal_zone *z = zone_of(b, "nspss0-thermal");
  CHECK(z);
  CHECK_EQ(z->num_trips, HTPU_BOARD_MAX_TRIPS);
  CHECK_EQ(z->trips_skipped, 3);
  CHECK_EQ(z->trips[HTPU_BOARD_MAX_TRIPS - 1].temp_mc, 95000 + (HTPU_BOARD_MAX_TRIPS - 1) * 100);
  CHECK_EQ(z->hot_mc, 88000); /* the 13th trip point: "hot" wins over every "passive" */
  CHECK_EQ(z->critical_mc, 105000);
  CHECK_EQ(b->nsp_hot_mc, 88000);
  CHECK_EQ(b->nsp_hot, 1);
  htpu_board_free(b);

  /* exactly as many as listed: nothing skipped */
  root = rig_root("twelve_trips");
  trips[0] = '\0';
  for (int i = 0; i < HTPU_BOARD_MAX_TRIPS; i++) strcat(trips, i ? ",hot:90000" : "hot:90000");
  CHECK(rig_zone(root, 0, "nspss0-thermal", "50000", trips) == 0);
  CHECK_EQ(htpu_board_read(root, &b), 0);
  CHECK_EQ(b->zones[0].num_trips, HTPU_BOARD_MAX_TRIPS);
  CHECK_EQ(b->zones[0].trips_skipped, 0);
  htpu_board_free(b);
}

TEST(board_missing_zones_and_files) {
  const char *root = rig_root("missing");
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  CHECK_EQ(b->num_zones, 0);
  CHECK_STR_CONTAINS(b->thermal_note, "no thermal zones");
  CHECK_STR_CONTAINS(b->thermal_note, "/sys/class/thermal");
  CHECK_EQ(b->nsp_state, HTPU_READING_MISSING);
  CHECK_EQ(b->nsp_temp_mc, HTPU_BOARD_NO_TEMP);
  CHECK_EQ(b->nsp_hot, 0);
  CHECK_EQ(b->cpu_state, HTPU_READING_MISSING);
  CHECK_EQ(b->num_policies, 0);
  CHECK_STR_CONTAINS(b->cpufreq_note, "no cpufreq policies");
  htpu_board_free(b);

  /* a zone without its temp file; a board without NSP zones */
  CHECK(rig_zone(root, 0, "cpu0-thermal", NULL, NULL) == 0);
  CHECK_EQ(htpu_board_read(root, &b), 0);
  CHECK_EQ(b->num_zones, 1);
  CHECK_EQ(b->zones[0].state, HTPU_READING_MISSING);
  CHECK_STR_CONTAINS(b->zones[0].note, "thermal_zone0/temp");
  CHECK_EQ(b->cpu_state, HTPU_READING_MISSING);
  CHECK_EQ(b->nsp_state, HTPU_READING_MISSING);
  htpu_board_free(b);

  /* a root that is not a directory is the caller's mistake */
  const char *file = test_tmp_path("not_a_root");
  CHECK(test_write_file(file, "x", 1) == 0);
  CHECK_EQ(htpu_board_read(file, &b), HTPU_EINVAL);
  CHECK(b == NULL);
  CHECK_STR_CONTAINS(htpu_last_error(), "is a regular file; expected a directory");
  CHECK_EQ(htpu_board_read(test_tmp_path("no_such_root"), &b), HTPU_EINVAL);
  CHECK_EQ(htpu_board_read(root, NULL), HTPU_EINVAL);
}

/* A FIFO would block a plain open forever; it is refused at once, as are a directory and a
 * link loop in a file's place. */
TEST(board_unreadable_files_never_block) {
  const char *root = rig_root("unreadable");
  CHECK(rig_zone(root, 0, "nspss0-thermal", NULL, "hot:90000") == 0);
  CHECK(rig_fifo(root, "sys/class/thermal/thermal_zone0/temp") == 0);
  CHECK(rig_zone(root, 1, "nspss1-thermal", NULL, NULL) == 0);
  CHECK(rig_mkdirs(root, "sys/class/thermal/thermal_zone1/temp") == 0);
  CHECK(rig_zone(root, 2, "cpu0-thermal", NULL, NULL) == 0);
  CHECK(rig_link(root, "sys/class/thermal/thermal_zone2/temp", "temp") == 0); /* itself */
  CHECK(rig_policy(root, 0, NULL, "1804800", "0 1 2 3") == 0);
  CHECK(rig_fifo(root, "sys/devices/system/cpu/cpufreq/policy0/scaling_governor") == 0);
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  CHECK_EQ(b->zones[0].state, HTPU_READING_UNREADABLE);
  CHECK_STR_CONTAINS(b->zones[0].note, "is a FIFO (named pipe); expected a regular file");
  CHECK_EQ(b->zones[0].temp_mc, HTPU_BOARD_NO_TEMP);
  CHECK_EQ(b->zones[1].state, HTPU_READING_UNREADABLE);
  CHECK_STR_CONTAINS(b->zones[1].note, "is a directory");
  CHECK_EQ(b->zones[2].state, HTPU_READING_UNREADABLE);
  CHECK_STR_CONTAINS(b->zones[2].note, "Too many levels of symbolic links");
  /* no NSP zone could be read: the summary says so instead of a number */
  CHECK_EQ(b->nsp_state, HTPU_READING_UNREADABLE);
  CHECK_EQ(b->nsp_temp_mc, HTPU_BOARD_NO_TEMP);
  CHECK_EQ(b->nsp_hot, 0);
  CHECK_EQ(b->policies[0].governor_state, HTPU_READING_UNREADABLE);
  CHECK(b->policies[0].governor[0] == '\0');
  CHECK_STR_CONTAINS(b->policies[0].note, "FIFO");
  CHECK_EQ(b->policies[0].cur_state, HTPU_READING_OK);
  CHECK_EQ(b->policies[0].cur_khz, 1804800);
  htpu_board_free(b);
}

TEST(board_absurd_values_are_not_trusted) {
  const char *root = rig_root("absurd");
  const char *temps[] = {"-273000", "2147483647", "abc", "", "45000x", "99999999999999999999"};
  for (int i = 0; i < 6; i++) CHECK(rig_zone(root, i, "nspss0-thermal", temps[i], NULL) == 0);
  CHECK(rig_zone(root, 6, "nspss1-thermal", "88000", "hot:-999999999,critical:bogus") == 0);
  CHECK(rig_policy(root, 0, "sched util!", "0", "0") == 0);
  CHECK(rig_policy(root, 4, "performance", "999999999999", "4 5 6") == 0);
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  for (int i = 0; i < 6; i++) {
    CHECK_MSG(b->zones[i].state == HTPU_READING_ABSURD, "zone %d ('%s'): state %d", i, temps[i],
              b->zones[i].state);
    CHECK_EQ(b->zones[i].temp_mc, HTPU_BOARD_NO_TEMP);
  }
  CHECK_STR_CONTAINS(b->zones[0].note, "-273000 millidegrees: outside -40..150 C");
  CHECK_STR_CONTAINS(b->zones[2].note, "reads 'abc': not a temperature");
  /* the only trustworthy NSP zone; its absurd trips are kept, flagged, and not used */
  CHECK_EQ(b->nsp_state, HTPU_READING_OK);
  CHECK_EQ(b->nsp_temp_mc, 88000);
  CHECK_EQ(b->zones[6].num_trips, 2);
  CHECK_EQ(b->zones[6].trips[0].state, HTPU_READING_ABSURD);
  CHECK_EQ(b->zones[6].trips[1].state, HTPU_READING_ABSURD);
  CHECK_EQ(b->zones[6].hot_mc, HTPU_BOARD_NO_TEMP);
  CHECK_EQ(b->nsp_hot_mc, HTPU_BOARD_NO_TEMP);
  CHECK_EQ(b->nsp_hot, 0);
  CHECK_EQ(b->num_policies, 2);
  CHECK_EQ(b->policies[0].governor_state, HTPU_READING_ABSURD);
  CHECK_EQ(b->policies[0].cur_state, HTPU_READING_ABSURD);
  CHECK_EQ(b->policies[0].cur_khz, 0);
  CHECK_STR_CONTAINS(b->policies[0].note, "not a governor name");
  CHECK_STR_CONTAINS(b->policies[0].note, "not a frequency in kHz");
  CHECK_EQ(b->policies[1].governor_state, HTPU_READING_OK);
  CHECK_EQ(b->policies[1].cur_state, HTPU_READING_ABSURD);
  htpu_board_free(b);
}

TEST(board_cpufreq_policies) {
  const char *root = rig_root("cpufreq");
  CHECK(rig_policy(root, 7, "performance", "2400000", "7") == 0);
  CHECK(rig_policy(root, 0, "schedutil", "691200", "0 1 2 3") == 0);
  CHECK(rig_policy(root, 4, "schedutil", "1804800", "4 5 6") == 0);
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  CHECK_EQ(b->num_policies, 3);
  CHECK(strcmp(b->policies[0].policy, "policy0") == 0);
  CHECK(strcmp(b->policies[2].policy, "policy7") == 0);
  CHECK(strcmp(b->policies[0].governor, "schedutil") == 0);
  CHECK_EQ(b->policies[0].cur_khz, 691200);
  CHECK(strcmp(b->policies[0].cpus, "0 1 2 3") == 0);
  CHECK_EQ(b->policies[0].hw_max_khz, 2400000);
  CHECK_EQ(b->policies[0].min_khz, 300000);
  CHECK(strcmp(b->policies[2].governor, "performance") == 0);
  CHECK(b->policies[2].note[0] == '\0');
  CHECK(b->cpufreq_note[0] == '\0');
  htpu_board_free(b);
}

/* sysfs's class entries are links into /sys/devices; a copied tree keeps them, and absolute
 * ones are taken from the root, never from this machine. */
TEST(board_zone_links_resolve_inside_the_root) {
  const char *root = rig_root("links");
  CHECK(rig_put(root, "sys/devices/virtual/thermal/thermal_zone0/type", "nspss0-thermal\n") == 0);
  CHECK(rig_put(root, "sys/devices/virtual/thermal/thermal_zone0/temp", "77000\n") == 0);
  CHECK(rig_link(root, "sys/class/thermal/thermal_zone0",
                 "../../devices/virtual/thermal/thermal_zone0") == 0);
  CHECK(rig_put(root, "sys/devices/virtual/thermal/thermal_zone1/type", "cpu1-thermal\n") == 0);
  CHECK(rig_put(root, "sys/devices/virtual/thermal/thermal_zone1/temp", "66000\n") == 0);
  CHECK(rig_link(root, "sys/class/thermal/thermal_zone1",
                 "/sys/devices/virtual/thermal/thermal_zone1") == 0);
  htpu_board *b = NULL;
  CHECK_EQ(htpu_board_read(root, &b), 0);
  CHECK_EQ(b->num_zones, 2);
  CHECK_EQ(b->zones[0].temp_mc, 77000);
  CHECK_EQ(b->zones[1].temp_mc, 66000);
  CHECK_STR_CONTAINS(htpu_reading_state_name(b->zones[1].state), "ok");
  htpu_board_free(b);
  CHECK(htpu_reading_state_name(HTPU_READING_ABSURD) &&
        strcmp(htpu_reading_state_name(HTPU_READING_ABSURD), "absurd") == 0);
  CHECK(htpu_reading_state_name(99) == NULL);
}

/* The busy share comes from the library's own execute counters between two readings. */
TEST(board_load_between_two_readings) {
  const char *root = rig_root("load");
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "board_load.bin", 1), 0);
  htpu_board *a = NULL, *b = NULL;
  CHECK_EQ(htpu_board_read(root, &a), 0);
  float y[4];
  for (int i = 0; i < 5; i++) CHECK_EQ(fx_add(r.g, (float)i, NULL, NULL, y), 0);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(htpu_board_read(root, &b), 0);
  htpu_board_load l;
  CHECK_EQ(htpu_board_load_between(a, b, &l), 0);
  CHECK_EQ(l.executes, 5);
  CHECK_EQ(l.execute_ns, b->execute_ns_total - a->execute_ns_total);
  CHECK(l.interval_ns == b->at_ns - a->at_ns && l.interval_ns > 0);
  CHECK(l.busy > 0.0 && l.busy <= 1.0);
  CHECK(l.busy == (double)l.execute_ns / (double)l.interval_ns);
  CHECK(l.executes_per_s == 5.0 * 1e9 / (double)l.interval_ns);
  CHECK_EQ(b->executes, s.executes);
  /* the wrong order, and NULLs, are refused */
  CHECK_EQ(htpu_board_load_between(b, a, &l), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "is not after the earlier one");
  CHECK_EQ(htpu_board_load_between(a, NULL, &l), HTPU_EINVAL);
  /* summed executes that overlap can pass the wall time: the share stops at 1 */
  htpu_board fake_a = *a, fake_b = *a;
  fake_b.at_ns = fake_a.at_ns + 1000;
  fake_b.execute_ns_total = fake_a.execute_ns_total + 5000;
  CHECK_EQ(htpu_board_load_between(&fake_a, &fake_b, &l), 0);
  CHECK(l.busy == 1.0);
  htpu_board_free(a);
  htpu_board_free(b);
  fx_rig_close(&r);
}
