/*
 * doctor.h - what the checks of `htpu doctor` share: the options, the facts one check learns
 * for the next, and the list of checks.
 *
 * Each check is one file with one entry point `void check_NAME(doctor *d)` that reports its
 * step(s) through report.h. A new check is a new file and one line in the list in
 * tools/htpu/doctor.c; the checks run in that order.
 */
#ifndef HTPU_DOCTOR_H
#define HTPU_DOCTOR_H

#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>

#include "hexagon_tpu.h"
#include "report.h"
#include "root_path.h"

/* QCS6490 is HTP v68: its skel/stub pair. */
#define BOARD_SKEL "libQnnHtpV68Skel.so"
#define BOARD_STUB "libQnnHtpV68Stub.so"

typedef struct doctor {
  report rep;
  /* ---- from the command line ---- */
  htpu_runtime_options ro; /* libraries resolved; what the runtime check opens */
  const char *dsp_opt;     /* --dsp-library-path, NULL when not given */
  int fastrpc_given;       /* --fastrpc-lib was given */
  int board;               /* the backend is the board's libQnnHtp.so: board checks apply */
  const char *root;        /* --root: the directory standing in for /, "" for / itself */
  int force;               /* --force: create a session even beside another NPU user */
  /* ---- learned by the checks, in list order ---- */
  int backend_loads, system_loads;
  htpu_backend_facts facts;   /* the provider check's (zeroed when it could not read them) */
  char qairt[32];             /* "2.25.0" when the build id names a QAIRT release, else "" */
  char qairt_clause[64];      /* " The loaded library is QAIRT 2.25.0.", else "": hints
                                 never claim a release they do not know */
  char skel_path[4200];       /* dsp_libraries: the skel fastrpc will load, "" when none */
  char stub_path[4200];       /* dsp_libraries: the stub next to the backend, "" when none */
  int firmware_too_old;       /* the boot firmware rejects unsigned protection domains */
  uint32_t npu_other_users;   /* npu_users: other processes holding /dev/fastrpc-cdsp */
  /* the runtime check: an open runtime (closed by the command after the last check) */
  htpu_runtime *rt;
  int rt_skip_device;         /* opened only with skip_device, after device creation failed */
  int have_info;              /* ri was read */
  htpu_runtime_info ri;       /* valid while rt is open */
  int first_rc;               /* the first open's failure, when rt_skip_device */
  uint32_t first_qnn;
  char first_msg[8192];
} doctor;

/* The checks, in the order the command runs them. */
void check_environment(doctor *d);
void check_backend_library(doctor *d);
void check_provider(doctor *d);
void check_system_library(doctor *d);
void check_remoteproc(doctor *d);
void check_device_tree(doctor *d);
void check_fastrpc(doctor *d);
void check_npu_users(doctor *d);
void check_dsp_libraries(doctor *d);
void check_dsp_release(doctor *d);
void check_qnn_sets(doctor *d);
void check_library_path(doctor *d);
void check_firmware(doctor *d);
void check_governor(doctor *d);
void check_nsp_temperature(doctor *d);
void check_runtime(doctor *d);
void check_device(doctor *d);
void check_shared_memory(doctor *d);

/* ---- board.c: what the board checks share ---- */

/* Whether `backend` is the board's HTP backend (its file name is libQnnHtp.so). */
int doctor_is_board_backend(const char *backend);
/* A step that only a board can answer: `judge` fills it on the board, elsewhere it is skipped
 * saying why (the reference backend is not the HTP backend). */
void doctor_board_step(doctor *d, const char *key, const char *title,
                       void (*judge)(doctor *d, step *s));
/* The file name part of a path. */
const char *doctor_base_name(const char *path);

/* ---- board paths ----
 *
 * Every file the board checks read is named by its board path ("/sys/class/remoteproc") and a
 * root: d->root for the board's own files (/sys, /proc, /dev, /etc), DOCTOR_HOST for what this
 * process loads (the backend's directory, the DSP search path, LD_LIBRARY_PATH). Under --root
 * the path is resolved inside the root as after chroot(root) (common/root_path.h: links taken
 * from the root, `..` never above it, at most DOCTOR_MAX_LINKS links), so nothing of this
 * machine is read in the board's place. Without --root (root "") the path is used as it is. */
#define DOCTOR_HOST ""
#define DOCTOR_MAX_LINKS ROOT_MAX_LINKS
struct stat;
/* Where `path` (a board path) is read on this machine, in out. follow_last: whether a link as
 * the last component is resolved too (else it is left for lstat). Returns 0, or -1 with errno
 * (ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG, ...) and out naming the path as far as it was
 * resolved (for messages). */
int doctor_resolve(const char *root, const char *path, int follow_last, char *out, size_t len);
/* stat, lstat, opendir and access of a board path, through doctor_resolve. */
int doctor_stat(const char *root, const char *path, struct stat *st);
int doctor_lstat(const char *root, const char *path, struct stat *st);
DIR *doctor_opendir(const char *root, const char *path);
int doctor_access(const char *root, const char *path, int mode);
int doctor_is_dir(const char *root, const char *path);
/* Whether dir/name is a regular file (symbolic links followed: libraries often are links). */
int doctor_file_exists(const char *root, const char *dir, const char *name);
/* What dir/name is when it exists but is not a regular file ("a directory", "a FIFO (named
 * pipe)", ...), in buf; NULL when it is a regular file or is not there. */
const char *doctor_kind(const char *root, const char *dir, const char *name, char *buf,
                        size_t len);
/* Opens a board file for reading without ever blocking on it (a FIFO in a tree given with
 * --root would wait forever for a writer): O_NONBLOCK, then anything but a regular file is
 * refused (sysfs, procfs and device-tree files are regular). NULL with `why` (may be NULL) set
 * to one line naming the path read and the cause, and *there (may be NULL) whether something is
 * there (refused, a link loop) rather than nothing. */
FILE *doctor_fopen(const char *root, const char *path, char *why, size_t why_len, int *there);
/* The first line of a small text file (a sysfs attribute), without its line end and trailing
 * blanks, read through doctor_fopen. Returns 0; -1 when the path does not exist; -2 when it
 * exists but cannot be read as a regular file; `why` (may be NULL) says why. */
int doctor_read_line(const char *root, const char *path, char *out, size_t len, char *why,
                     size_t why_len);
/* Whether a process with this comm name runs (scans /proc under d->root). */
int doctor_process_running(const doctor *d, const char *comm_name);

/* ---- hints.c ---- */

/* Sets qairt and qairt_clause from the backend's build id. */
void doctor_set_qairt(doctor *d, const char *build_id);
/* The hint for a failed htpu_runtime_open (rc, the QNN code and the library's message). */
void doctor_runtime_hint(const doctor *d, step *s, int rc, uint32_t qnn, const char *message);

#endif /* HTPU_DOCTOR_H */
