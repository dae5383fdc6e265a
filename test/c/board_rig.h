/*
 * board_rig.h - fake board trees for the tests of src/board/: a directory standing in for /,
 * with the thermal zones, cpufreq policies and /proc entries a test puts there. Never this
 * machine's /sys or /proc.
 */
#ifndef HTPU_TEST_BOARD_RIG_H
#define HTPU_TEST_BOARD_RIG_H

/* A fresh empty root under the runner's temporary directory (a static buffer per call, ring of
 * 8, as test_tmp_path). */
const char *rig_root(const char *name);
/* mkdir -p of root + rel. 0, or -1. */
int rig_mkdirs(const char *root, const char *rel);
/* Writes text to root + rel, making its directories. 0, or -1. */
int rig_put(const char *root, const char *rel, const char *text);
/* A symbolic link root + rel -> target (as given), making rel's directories. 0, or -1. */
int rig_link(const char *root, const char *rel, const char *target);
/* A FIFO at root + rel. 0, or -1. */
int rig_fifo(const char *root, const char *rel);
/* thermal_zone<n> of `type` at `temp` ("45000", or any text; NULL: no temp file) with trips
 * given as "hot:90000,critical:110000" (NULL: none). 0, or -1. */
int rig_zone(const char *root, int n, const char *type, const char *temp, const char *trips);
/* cpufreq policy<n>: governor (NULL: no file), current kHz text (NULL: no file), cpus. */
int rig_policy(const char *root, int n, const char *governor, const char *cur_khz,
               const char *cpus);

#endif
