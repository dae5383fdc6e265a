/*
 * qnn/ - QNN as the core sees it: the subset of its C ABI declared in our own words (qnn_*.h,
 * checked against the SDK headers by `make check-abi`), the backend and system libraries
 * opened and their providers' function tables copied (loader.h, probe.c), the QNN log
 * captured and quoted in errors (qnn_log.h), QNN data types mapped to ours (dtype_map.h) and
 * build ids read as QAIRT releases (build_id.c).
 *
 * The door: what the other rooms may use of qnn/. qnn/ uses base/ only.
 */
#ifndef HTPU_QNN_H
#define HTPU_QNN_H

#include "dtype_map.h"
#include "loader.h"
#include "qnn_abi.h"
#include "qnn_log.h"

#endif
