/* names.c - display names of QNN codes, and how versions and VTCM sizes are shown. The tool
 * keeps its own small tables (the values are the public QNN ABI, docs/abi.md) because the
 * library's public API does not export them. */
#include <inttypes.h>
#include <stdio.h>

#include "util.h"

const char *cli_backend_name(uint32_t id) {
  switch (id) {
  case 0: return "NULL";
  case 1: return "REFERENCE";
  case 2: return "SAVER";
  case 3: return "CPU";
  case 4: return "GPU";
  case 5: return "DSP";
  case 6: return "HTP";
  case 9: return "IR";
  case 10: return "GPGPU";
  case 12: return "LPAI";
  default: return "unknown";
  }
}

const char *cli_qnn_type_name(uint32_t t) {
  switch (t) {
  case 0x0008: return "INT_8";
  case 0x0016: return "INT_16";
  case 0x0032: return "INT_32";
  case 0x0064: return "INT_64";
  case 0x0108: return "UINT_8";
  case 0x0116: return "UINT_16";
  case 0x0132: return "UINT_32";
  case 0x0164: return "UINT_64";
  case 0x0216: return "FLOAT_16";
  case 0x0226: return "BFLOAT_16";
  case 0x0232: return "FLOAT_32";
  case 0x0264: return "FLOAT_64";
  case 0x0304: return "SFIXED_POINT_4";
  case 0x0308: return "SFIXED_POINT_8";
  case 0x0316: return "SFIXED_POINT_16";
  case 0x0332: return "SFIXED_POINT_32";
  case 0x0404: return "UFIXED_POINT_4";
  case 0x0408: return "UFIXED_POINT_8";
  case 0x0416: return "UFIXED_POINT_16";
  case 0x0432: return "UFIXED_POINT_32";
  case 0x0508: return "BOOL_8";
  case 0x0608: return "STRING";
  case 0x7FFFFFFF: return "UNDEFINED";
  default: return "UNKNOWN";
  }
}

void cli_format_version(htpu_version3 v, char *buf, size_t len) {
  snprintf(buf, len, "%u.%u.%u", (unsigned)v.major, (unsigned)v.minor, (unsigned)v.patch);
}

void cli_format_vtcm(uint64_t bytes, char *buf, size_t len) {
  if (bytes % 1048576u == 0)
    snprintf(buf, len, "%" PRIu64 " MB", bytes / 1048576u);
  else
    snprintf(buf, len, "%" PRIu64 " bytes", bytes);
}
