/* firmware.c - the `firmware` step: the board's SPI/UEFI boot firmware, which must be recent
 * enough to let QNN run in the unsigned protection domain (HTP backend only).
 *
 * Older boot firmware of the Dragon Q6A rejects unsigned PDs: every FastRPC session fails with
 * 0x80000600, which also means a cdsp.mbn / DSP shell mismatch, so the firmware version is
 * what tells the two apart (docs/board.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

#define FIRMWARE_FLOOR "6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1"
#define BIOS_VERSION_PATH "/sys/class/dmi/id/bios_version"

/* The comparable parts of "6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1": the three leading
 * numbers (the third is the build date, YYMMDD) and the build number after the first '-'. */
typedef struct fw_version {
  uint64_t part[4];
} fw_version;

static int parse_number(const char **p, uint64_t *out) {
  char *end;
  if (**p < '0' || **p > '9') return -1;
  errno = 0;
  unsigned long long v = strtoull(*p, &end, 10);
  if (errno) return -1;
  *out = v;
  *p = end;
  return 0;
}

static int parse_fw_version(const char *s, fw_version *v) {
  const char *p = s;
  for (int i = 0; i < 3; i++)
    if (parse_number(&p, &v->part[i]) != 0 || *p++ != '.') return -1;
  const char *dash = strchr(p, '-');
  if (!dash) return -1;
  p = dash + 1;
  return parse_number(&p, &v->part[3]);
}

static int fw_compare(const fw_version *a, const fw_version *b) {
  for (int i = 0; i < 4; i++)
    if (a->part[i] != b->part[i]) return a->part[i] < b->part[i] ? -1 : 1;
  return 0;
}

/* The first line of the BIOS version file, trimmed; non-zero with `why` when unreadable. */
static int read_bios_version(const doctor *d, char *out, size_t len, char *why, size_t why_len) {
  return doctor_read_line(d->root, BIOS_VERSION_PATH, out, len, why, why_len);
}

static void judge(doctor *d, step *s) {
  char bios[256], why[4700];
  if (read_bios_version(d, bios, sizeof(bios), why, sizeof(why)) != 0) {
    step_str(s, "BIOS version", "bios_version", NULL);
    step_str(s, "required", "required", FIRMWARE_FLOOR);
    step_set(s, ST_SKIP, "cannot read %s: %s", BIOS_VERSION_PATH, why);
    return;
  }
  step_str(s, "BIOS version", "bios_version", bios);
  step_str(s, "required", "required", FIRMWARE_FLOOR);
  fw_version have, floor;
  if (parse_fw_version(FIRMWARE_FLOOR, &floor) != 0) abort(); /* our own constant */
  if (parse_fw_version(bios, &have) != 0) {
    step_set(s, ST_SKIP, "'%s' is not of the form 6.0.YYMMDD.BOOT...-NNNNN-...: cannot compare "
                         "it with the floor",
             bios);
    return;
  }
  if (fw_compare(&have, &floor) >= 0) {
    step_set(s, ST_OK, "%s: runs unsigned protection domains", bios);
    return;
  }
  d->firmware_too_old = 1;
  step_set(s, ST_WARN, "%s is older than %s: it rejects unsigned protection domains", bios,
           FIRMWARE_FLOOR);
  step_hint(s, "update the board's SPI boot firmware (the SPI/UEFI image for the Dragon Q6A) to "
               FIRMWARE_FLOOR " or newer. Until then every QNN session fails with 0x80000600 in "
               "the log (QNN runs in the unsigned PD). The same code also means a cdsp.mbn that "
               "does not match the DSP shell (docs/board.md)");
}

void check_firmware(doctor *d) {
  step *s = report_begin(&d->rep, "firmware", "boot firmware");
  if (d->board) {
    judge(d, s);
  } else {
    step_set(s, ST_SKIP, "not applicable: %s is not the HTP backend (libQnnHtp.so)",
             doctor_base_name(d->ro.backend_lib));
  }
  report_end(&d->rep, s);
}
