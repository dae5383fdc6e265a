/*
 * build_id_scan.h - the QAIRT build id a library file carries as text.
 *
 * QAIRT links its build id into every library as a string, the same one backendGetBuildId
 * returns ("v2.25.0.240728104910_97711", docs/abi.md), so a file's release can be read without
 * loading it: the skel is Hexagon code, and a stub only answers through the DSP. Shared by the
 * core (QNN sets, src/qnnset/) and the htpu command (doctor's dsp_release step).
 */
#ifndef HTPU_BUILD_ID_SCAN_H
#define HTPU_BUILD_ID_SCAN_H

#include <stddef.h>
#include <stdio.h>

#define BUILD_ID_SCAN_MAX 64 /* longer than any real build id */

/* The first build id in the stream: 'v', three numbers joined by '.', '.', the build's date and
 * time (at least 6 digits), '_', a build number. Returns 1 (found, in out), 0 (none). Reads in
 * chunks, so an id across two chunks is found; reads the stream to its end at most. */
int build_id_scan(FILE *f, char *out, size_t len);

#endif
