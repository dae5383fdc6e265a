/* lock_holder.c - who holds the NPU lock: the kernel's word (/proc/locks: the pid that took a
 * flock on the file's inode) and the holder's own (the note it writes into the file: its pid,
 * name and what it creates). Both are this machine's, never a root's: the lock is real. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/base.h"
#include "board.h"
#include "file_open.h"

#define NOTE_MAX 480

/* Splits the next blank-separated field off *p. */
static const char *field(char **p) {
  while (**p == ' ' || **p == '\t') (*p)++;
  if (!**p) return NULL;
  char *start = *p;
  while (**p && **p != ' ' && **p != '\t') (*p)++;
  if (**p) *(*p)++ = '\0';
  return start;
}

static int hex_u32(const char *s, unsigned *out) {
  unsigned v = 0;
  if (!*s) return -1;
  for (; *s; s++) {
    int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
    if (d < 0 || v > 0x0FFFFFFFu) return -1;
    v = v * 16 + (unsigned)d;
  }
  *out = v;
  return 0;
}

/* The pid of a FLOCK entry of /proc/locks on st's inode ("1: FLOCK ADVISORY WRITE 1234
 * 00:2d:5678 0 EOF"), 0 when none. Waiters ("1: -> FLOCK ...") are not holders. The device
 * must match too, unless only the inode does (btrfs reports another device to stat). */
long npu_lock_kernel_holder(const struct stat *st) {
  char *text = NULL;
  int cut = 0;
  if (board_read_text(NULL, "/proc/locks", 1u << 20, &text, &cut, NULL, 0) != HTPU_READING_OK)
    return 0;
  long by_inode = 0, by_both = 0;
  for (char *line = text; line && *line && !by_both;) {
    char *next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char *p = line;
    const char *id = field(&p), *kind = field(&p);
    const char *f[6];
    for (int i = 0; i < 6; i++) f[i] = field(&p);
    line = next;
    /* f: ADVISORY WRITE pid maj:min:inode start end */
    if (!id || !kind || strcmp(kind, "FLOCK") != 0 || !f[2] || !f[3]) continue;
    int64_t pid, ino;
    char dev[64];
    snprintf(dev, sizeof dev, "%s", f[3]);
    char *c1 = strchr(dev, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || board_parse_i64(f[2], &pid) != 0 || pid <= 0) continue;
    *c1 = *c2 = '\0';
    unsigned maj, min;
    if (board_parse_i64(c2 + 1, &ino) != 0 || (uint64_t)ino != (uint64_t)st->st_ino) continue;
    if (!by_inode) by_inode = (long)pid;
    if (hex_u32(dev, &maj) == 0 && hex_u32(c1 + 1, &min) == 0 && maj == major(st->st_dev) &&
        min == minor(st->st_dev))
      by_both = (long)pid;
  }
  free(text);
  return by_both ? by_both : by_inode;
}

/* The note in the file: its pid (0 when there is none) and the rest, one line. */
static long read_note(int fd, char *rest, size_t len) {
  char buf[NOTE_MAX + 1];
  rest[0] = '\0';
  ssize_t n = pread(fd, buf, NOTE_MAX, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *nl = strchr(buf, '\n');
  if (!nl) return 0;
  *nl = '\0';
  char *p = buf;
  const char *pid_s = field(&p), *comm = field(&p);
  int64_t pid;
  if (!pid_s || board_parse_i64(pid_s, &pid) != 0 || pid <= 0) return 0;
  char *what = nl + 1;
  what[strcspn(what, "\n")] = '\0';
  for (char *c = what; *c; c++)
    if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7F) *c = '?';
  snprintf(rest, len, "%.31s%s%s", comm ? comm : "", what[0] ? "\n" : "", what);
  return (long)pid;
}

void npu_lock_describe_holder(int fd, char *buf, size_t len) {
  struct stat st;
  long pid = fstat(fd, &st) == 0 ? npu_lock_kernel_holder(&st) : 0;
  char note[NOTE_MAX + 64];
  long note_pid = read_note(fd, note, sizeof note);
  char *what = strchr(note, '\n');
  if (what) *what++ = '\0';
  if (!pid) pid = note_pid; /* /proc/locks unreadable: the holder's own word */
  if (!pid) {
    snprintf(buf, len, "another process");
    return;
  }
  char comm[64] = "", path[64];
  snprintf(path, sizeof path, "/proc/%ld/comm", pid);
  if (board_read_line(NULL, path, comm, sizeof comm, NULL, 0) != HTPU_READING_OK && pid == note_pid)
    snprintf(comm, sizeof comm, "%.63s", note);
  int same = pid == note_pid && what && what[0];
  snprintf(buf, len, "pid %ld%s%s%s%s%s", pid, comm[0] ? " (" : "", comm, comm[0] ? ")" : "",
           same ? ", " : "", same ? what : "");
}

void npu_lock_write_note(int fd, const char *what) {
  char note[NOTE_MAX];
  int n = snprintf(note, sizeof note, "%ld %.31s\n%.400s\n", (long)getpid(),
                   program_invocation_short_name, what);
  if (n <= 0) return;
  if ((size_t)n >= sizeof note) n = (int)sizeof note - 1;
  for (int i = 0; i < n; i++)
    if (note[i] != '\n' && ((unsigned char)note[i] < 0x20 || (unsigned char)note[i] == 0x7F))
      note[i] = '?';
  /* best effort: a read-only descriptor (another user's file) leaves no note */
  if (ftruncate(fd, 0) == 0 && pwrite(fd, note, (size_t)n, 0) != n) {}
}
