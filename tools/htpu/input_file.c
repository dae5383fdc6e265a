/* input_file.c - reading one input from a raw or .npy file (see inputs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "file_open.h" /* common/: the never-blocking open, linked from libhexagon_tpu.a */
#include "inputs.h"
#include "npy.h"
#include "session.h"

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "16 bytes (4 f32 values) or 4 bytes (4 u8 values)": what a raw file for t may hold. */
static void raw_expectation(const htpu_tensor_info *t, char *buf, size_t len) {
  size_t f32_size = t->num_elements * sizeof(float);
  if (t->dtype == HTPU_F32)
    snprintf(buf, len, "%zu bytes (%zu f32 values)", f32_size, t->num_elements);
  else
    snprintf(buf, len, "%zu bytes (%zu f32 values) or %zu bytes (%zu %s values)", f32_size,
             t->num_elements, t->byte_size, t->num_elements, htpu_dtype_name(t->dtype));
}

/* Decides a raw file's type from its size (in->dtype), or says why the size fits neither. */
static int raw_size_check(const cli_command *cmd, cli_input *in, size_t file_size) {
  const htpu_tensor_info *t = in->tensor;
  char shape[160], want[160];
  cli_shape_string(t, shape, sizeof(shape));
  /* The size decides the type: f32 first, so a quantized i32/u32 tensor (same size either way)
   * reads f32 - the common case of a dequantized tensor dump. The note says so. */
  if (file_size == t->num_elements * sizeof(float)) {
    in->dtype = HTPU_F32;
    if (t->dtype != HTPU_F32 && htpu_dtype_size(t->dtype) == sizeof(float))
      fprintf(stderr,
              "htpu %s: note: input '%s': %s has the size of both f32 and %s data; read as f32 "
              "(use a .npy file to pass %s values)\n",
              cmd->name, t->name, in->path, htpu_dtype_name(t->dtype), htpu_dtype_name(t->dtype));
  } else if (file_size == t->byte_size) {
    in->dtype = t->dtype;
  } else {
    raw_expectation(t, want, sizeof(want));
    return cli_fail(cmd, "input '%s' (%s %s): %s has %zu bytes; a raw file must have %s",
                    t->name, htpu_dtype_name(t->dtype), shape, in->path, file_size, want);
  }
  return CLI_EXIT_OK;
}

/* Checks a parsed .npy header against the tensor; words the mismatch. */
static int check_npy(const cli_command *cmd, const cli_input *in, const npy_header *h,
                     size_t file_size) {
  const htpu_tensor_info *t = in->tensor;
  const char *native = npy_descr(t->dtype);
  char want_types[64];
  if (t->dtype == HTPU_F32 || !native)
    snprintf(want_types, sizeof(want_types), "'<f4'");
  else
    snprintf(want_types, sizeof(want_types), "'<f4' or '%s' (its native %s)", native,
             htpu_dtype_name(t->dtype));
  if (h->dtype == HTPU_DTYPE_INVALID)
    return cli_fail(cmd, "input '%s': %s has dtype '%s', which htpu does not read; the input "
                         "takes %s",
                    t->name, in->path, h->descr, want_types);
  if (h->dtype != HTPU_F32 && h->dtype != t->dtype)
    return cli_fail(cmd, "input '%s': %s has dtype '%s'; the input takes %s", t->name, in->path,
                    h->descr, want_types);
  if (h->fortran_order)
    return cli_fail(cmd, "input '%s': %s is in Fortran order; only C order is read (save "
                         "np.ascontiguousarray(x))",
                    t->name, in->path);
  int same = h->rank == t->rank;
  for (uint32_t d = 0; same && d < h->rank; d++) same = h->dims[d] == t->dims[d];
  if (!same) {
    char got[256], want[160];
    npy_format_shape64(h->dims, h->rank, got, sizeof(got));
    npy_format_shape32(t->dims, t->rank, want, sizeof(want));
    return cli_fail(cmd, "input '%s': %s has shape %s; the tensor's shape is %s", t->name,
                    in->path, got, want);
  }
  size_t data = file_size - h->data_offset;
  size_t need = t->num_elements * htpu_dtype_size(h->dtype);
  if (data != need) {
    char shape[256];
    npy_format_shape64(h->dims, h->rank, shape, sizeof(shape));
    return cli_fail(cmd, "input '%s': %s holds %zu data bytes after its header; shape %s of "
                         "'%s' needs %zu",
                    t->name, in->path, data, shape, h->descr, need);
  }
  return CLI_EXIT_OK;
}

/* The most data a .npy file of the tensor can hold: f32 or native, whichever is larger. */
static size_t npy_max_data(const htpu_tensor_info *t) {
  size_t f32_size = t->num_elements * sizeof(float);
  return f32_size > t->byte_size ? f32_size : t->byte_size;
}

/* The file can hold at most a maximal header and the larger of the f32 and native data, so a
 * huge or hostile file is refused before anything is allocated for it. */
static int npy_size_check(const cli_command *cmd, const cli_input *in, size_t file_size) {
  const htpu_tensor_info *t = in->tensor;
  size_t max_data = npy_max_data(t);
  if (file_size > NPY_PREAMBLE_MAX + NPY_MAX_HEADER + max_data)
    return cli_fail(cmd, "input '%s': %s has %zu bytes, more than a .npy file of this tensor can "
                         "hold (%zu data bytes at most)",
                    t->name, in->path, file_size, max_data);
  return CLI_EXIT_OK;
}

/* Parses the .npy file in buf; on success in->data takes buf (the data moved to its start). */
static int take_npy(const cli_command *cmd, cli_input *in, unsigned char *buf, size_t file_size) {
  const htpu_tensor_info *t = in->tensor;
  npy_header h;
  char err[256];
  if (npy_parse(buf, file_size, &h, err, sizeof(err)) != 0)
    return cli_fail(cmd, "input '%s': %s: %s", t->name, in->path, err);
  int rc = check_npy(cmd, in, &h, file_size);
  if (rc != CLI_EXIT_OK) return rc;
  /* Move the data to the start of the (malloc-aligned) block: a hand-made header need not keep
   * the data aligned for float access. */
  size_t size = file_size - h.data_offset;
  memmove(buf, buf + h.data_offset, size);
  in->data = buf;
  in->size = size;
  in->dtype = h.dtype;
  in->source = CLI_INPUT_NPY;
  return CLI_EXIT_OK;
}

/* .npy by name (so a corrupt .npy is reported as such, not read as raw bytes), or by its magic
 * whatever the name. */
static int looks_npy(const char *path, const unsigned char *head, size_t head_len) {
  return ends_with(path, ".npy") || (head_len >= 6 && memcmp(head, "\x93NUMPY", 6) == 0);
}

/* A file whose size fstat reports (any file on disk): the size is checked first, so a wrong
 * file is refused before anything is allocated, then exactly that many bytes are read. */
static int read_sized(const cli_command *cmd, cli_input *in, int fd, uint64_t size64,
                      unsigned char **buf, size_t *size, int *is_npy) {
  const htpu_tensor_info *t = in->tensor;
  if (size64 > SIZE_MAX) return cli_fail(cmd, "input '%s': %s is too large", t->name, in->path);
  *size = (size_t)size64;
  unsigned char magic[6] = {0};
  ssize_t got = pread(fd, magic, sizeof(magic), 0);
  *is_npy = looks_npy(in->path, magic, got > 0 ? (size_t)got : 0);
  int rc = *is_npy ? npy_size_check(cmd, in, *size) : raw_size_check(cmd, in, *size);
  if (rc != CLI_EXIT_OK) return rc;
  *buf = malloc(*size ? *size : 1);
  if (!*buf) return cli_fail(cmd, "out of memory reading %s (%zu bytes)", in->path, *size);
  char err[1024];
  if (file_read_exact(fd, in->path, *buf, *size, err, sizeof(err)) != 0)
    return cli_fail(cmd, "input '%s': %s", t->name, err);
  return CLI_EXIT_OK;
}

/* A file whose size fstat reports as 0, which says nothing for /proc and sysfs files: read to
 * its end, at most as many bytes as any raw or .npy file of the tensor can have (one more
 * means it is too large, whatever its kind). An empty file is then reported as having 0 bytes,
 * as before. */
static int read_unsized(const cli_command *cmd, cli_input *in, int fd, unsigned char **buf,
                        size_t *size, int *is_npy) {
  const htpu_tensor_info *t = in->tensor;
  size_t bound = NPY_PREAMBLE_MAX + NPY_MAX_HEADER + npy_max_data(t);
  char err[1024];
  void *data = NULL;
  int r = file_read_unsized(fd, in->path, bound, &data, size, err, sizeof(err));
  if (r < 0) return cli_fail(cmd, "input '%s': %s", t->name, err);
  if (r > 0)
    return cli_fail(cmd, "input '%s': %s has more than %zu bytes, more than a raw or .npy file "
                         "of this tensor can hold (read to its end: its size is reported as 0, "
                         "as for /proc files)",
                    t->name, in->path, bound);
  *buf = data;
  *is_npy = looks_npy(in->path, *buf, *size);
  return *is_npy ? npy_size_check(cmd, in, *size) : raw_size_check(cmd, in, *size);
}

int cli_input_read_file(const cli_command *cmd, cli_input *in) {
  char err[1024];
  uint64_t size64 = 0;
  /* never blocks: a FIFO or device is refused (saying what it is) before anything is read */
  int fd = file_open_regular(in->path, &size64, err, sizeof(err));
  if (fd < 0) return cli_fail(cmd, "input '%s': %s", in->tensor->name, err);
  unsigned char *buf = NULL;
  size_t size = 0;
  int is_npy = 0;
  int rc = size64 ? read_sized(cmd, in, fd, size64, &buf, &size, &is_npy)
                  : read_unsized(cmd, in, fd, &buf, &size, &is_npy);
  close(fd);
  if (rc == CLI_EXIT_OK && is_npy) {
    rc = take_npy(cmd, in, buf, size);
    if (rc == CLI_EXIT_OK) buf = NULL; /* in->data has it */
  } else if (rc == CLI_EXIT_OK) {
    in->data = buf;
    in->size = size;
    in->source = CLI_INPUT_RAW;
    buf = NULL;
  }
  free(buf);
  if (rc != CLI_EXIT_OK) {
    free(in->data);
    in->data = NULL;
    in->size = 0;
  }
  return rc;
}
