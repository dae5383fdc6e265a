/* binary_source.c - a context binary mapped, copied or lent (binary_source.h has the rule). */
#include "binary_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/base.h"
#include "binary_file.h"
#include "hexagon_tpu.h"
#include "printable.h"

/* File systems the kernel cannot write to at all (statfs f_type), and some writable ones by
 * name for the note. */
static const struct {
  unsigned long magic;
  const char *name;
  int read_only;
} k_fs[] = {
    {0x73717368ul, "squashfs", 1}, {0xE0F5E1E2ul, "erofs", 1}, {0x28cd3d45ul, "cramfs", 1},
    {0x453dcd28ul, "cramfs", 1},   {0x7275ul, "romfs", 1},     {0x9660ul, "iso9660", 1},
    {0xEF53ul, "ext4", 0},         {0xF2F52010ul, "f2fs", 0},  {0x01021994ul, "tmpfs", 0},
    {0x794c7630ul, "overlayfs", 0}, {0x9123683Eul, "btrfs", 0}, {0x58465342ul, "xfs", 0},
    {0x4d44ul, "vfat", 0},         {0x6969ul, "nfs", 0},       {0x65735546ul, "fuse", 0},
    {0x24051905ul, "ubifs", 0},    {0x72b6ul, "jffs2", 0},
};

/* Whether fd's content cannot change while mapped; `why` says either way. */
static int mappable(int fd, char *why, size_t len) {
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SHRINK)) {
    snprintf(why, len, "mapped: a memfd sealed against writing and shrinking");
    return 1;
  }
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) {
    snprintf(why, len, "copied: its file system could not be told (fstatfs: %s)",
             strerror(errno));
    return 0;
  }
  unsigned long magic = (unsigned long)fs.f_type & 0xFFFFFFFFul;
  for (size_t i = 0; i < sizeof k_fs / sizeof k_fs[0]; i++) {
    if (k_fs[i].magic != magic) continue;
    if (k_fs[i].read_only)
      snprintf(why, len, "mapped: %s has no write support, so the file cannot change",
               k_fs[i].name);
    else
      snprintf(why, len, "copied: on %s the file can be truncated or rewritten while loaded "
               "(a mapping would then fault)", k_fs[i].name);
    return k_fs[i].read_only;
  }
  snprintf(why, len, "copied: on this file system (type 0x%lx) the file may change while "
           "loaded (a mapping would then fault)", magic);
  return 0;
}

/* Maps fd's `size` bytes. Private and writable, although nothing here writes: QNN's
 * getBinaryInfo takes a non-const pointer, and a write through it lands in a private page,
 * never in the file, never in a fault. */
static int map_file(int fd, const char *path, uint64_t size, model_binary *out) {
  void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED)
    return htpu_set_error(HTPU_EIO, 0, "cannot map '%s' (%llu bytes): %s",
                          printable_str(path, (char[1024]){0}, 1024), (unsigned long long)size,
                          strerror(errno));
  out->data = out->base = p;
  out->len = out->base_len = (size_t)size;
  out->kind = BINARY_MAPPED;
  return 0;
}

int binary_open_fd(int fd, const char *path, uint64_t size, int allow_map, model_binary *out) {
  memset(out, 0, sizeof *out);
  int rc = 0;
  /* A size of 0 (a /proc-like file) is never mapped: its content is made on read. */
  int map = allow_map && size > 0 && mappable(fd, out->note, sizeof out->note);
  if (!allow_map) snprintf(out->note, sizeof out->note, "copied: the load asked for a copy");
  if (map) rc = binary_file_check_size(path, size);
  if (map && !rc) rc = map_file(fd, path, size, out);
  if (!map) {
    void *buf = NULL;
    size_t len = 0;
    rc = binary_file_read_fd(fd, path, size, &buf, &len);
    out->data = out->base = buf;
    out->len = out->base_len = len;
    out->kind = BINARY_COPIED;
    if (size == 0 && allow_map)
      snprintf(out->note, sizeof out->note, "copied: its size is not known before it is read");
  }
  if (rc) memset(out, 0, sizeof *out);
  return rc;
}

int binary_open_file(const char *path, int allow_map, model_binary *out) {
  memset(out, 0, sizeof *out);
  uint64_t size = 0;
  int fd = binary_file_open(path, &size);
  if (fd < 0) return fd;
  int rc = binary_open_fd(fd, path, size, allow_map, out);
  close(fd); /* a mapping stays valid without the descriptor */
  return rc;
}

int binary_from_buffer(const void *buf, size_t len, void (*release)(void *), void *arg,
                       model_binary *out) {
  memset(out, 0, sizeof *out);
  out->len = len;
  if (release) {
    out->data = buf;
    out->kind = BINARY_LENT;
    out->release = release;
    out->release_arg = arg;
    snprintf(out->note, sizeof out->note, "lent: the caller's buffer, referenced until the "
             "context is freed");
    return 0;
  }
  void *copy = malloc(len);
  if (!copy) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", len);
  memcpy(copy, buf, len);
  out->data = out->base = copy;
  out->base_len = len;
  out->kind = BINARY_COPIED;
  snprintf(out->note, sizeof out->note, "copied: the caller's buffer");
  return 0;
}

size_t binary_held_bytes(const model_binary *b) {
  return b->kind == BINARY_LENT ? 0 : b->base_len;
}

void binary_release(model_binary *b) {
  if (b->kind == BINARY_MAPPED && b->base) munmap(b->base, b->base_len);
  else if (b->kind == BINARY_COPIED) free(b->base);
  else if (b->kind == BINARY_LENT && b->release) b->release(b->release_arg);
  memset(b, 0, sizeof *b);
}

const char *binary_kind_name(binary_kind k) {
  return k == BINARY_MAPPED ? "mapped" : k == BINARY_LENT ? "lent" : "copied";
}
