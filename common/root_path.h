/*
 * root_path.h - a board path ("/sys/class/thermal") read under a directory standing in for /.
 *
 * Tools and tests read a board's /sys, /proc and /dev from a copy of its tree, or from a fake
 * one, instead of this machine's. The path is resolved inside the root as after chroot(root):
 * one component at a time, an absolute symbolic link taken from the root (a copy of a board's
 * tree keeps /proc/device-tree -> /sys/firmware/devicetree/base and sysfs's relative class
 * links), `..` never climbs above it, at most ROOT_MAX_LINKS links (ELOOP beyond), so nothing
 * of this machine is read in the board's place. Root NULL or "" is / itself: the path is used
 * as it is, resolved by the kernel. The tree is taken as it is when read: this is for a copy
 * of a board's files, not a boundary against a tree changed meanwhile.
 *
 * Shared by the core's board readings (src/board/) and `htpu doctor` (its --root).
 */
#ifndef HTPU_ROOT_PATH_H
#define HTPU_ROOT_PATH_H

#include <stddef.h>

#define ROOT_MAX_LINKS 40

/* Where `path` (a board path, absolute) is read on this machine, in out. follow_last: whether
 * a link as the last component is resolved too (else it is left for lstat or readlink).
 * Returns 0, or -1 with errno (ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG, ...) and out naming the
 * path as far as it was resolved (for messages). */
int root_resolve(const char *root, const char *path, int follow_last, char *out, size_t len);

#endif
