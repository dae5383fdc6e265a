/*
 * loader/ - QNN's libraries as the core uses them: the backend and system libraries opened and
 * their providers' function tables copied (libs.h: loader.c, probe.c), the QNN log captured
 * and quoted in errors (qnn_log.h), QNN data types mapped to ours (dtype_map.h) and build ids
 * read as QAIRT releases (build_id.c). The ABI itself is declared in src/qnn/ (headers only,
 * checked against the SDK headers by `make check-abi`).
 *
 * The door: what the other rooms may use of loader/. loader/ uses base/ and qnn/ only.
 */
#ifndef HTPU_LOADER_H
#define HTPU_LOADER_H

#include "dtype_map.h"
#include "libs.h"
#include "qnn/qnn_abi.h"
#include "qnn_log.h"

#endif
