/* device_tree.c - the `device_tree` step: the CDSP's FastRPC node in /proc/device-tree, its
 * compute context banks and its memory region (remote heap) (HTP backend only).
 *
 * The kernel's fastrpc driver makes /dev/fastrpc-cdsp from a node with compatible
 * "qcom,fastrpc" and label "cdsp" (under the CDSP remoteproc's glink-edge), one session per
 * "qcom,fastrpc-compute-cb" child. A node without `memory-region` has no remote heap: reported
 * on the Dragon Q6A as why QNN does not run while the CDSP does (radxa-pkg/radxa-overlays#522,
 * not confirmed by the vendor), so it is a warning, not a failure. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doctor.h"
#include "file_open.h"

#define DT_BASE "/proc/device-tree"
#define MAX_DEPTH 8

typedef struct prop {
  char v[512];
  size_t n; /* bytes read; 0 when the property is absent */
} prop;

/* The first property file that is there but not a regular file (a FIFO, a directory named like
 * a property, a link loop ...), with why: a device tree has none, so the step fails naming it.
 * Properties are read through doctor_fopen, which never waits on a FIFO. Nodes and properties
 * are board paths ("/proc/device-tree/soc@0"), read under the root. */
static char g_refused[4800];

static void read_prop(const char *root, const char *node, const char *name, prop *p) {
  char path[4400], why[4700];
  snprintf(path, sizeof(path), "%s/%s", node, name);
  p->n = 0;
  p->v[0] = '\0';
  int there = 0;
  FILE *f = doctor_fopen(root, path, why, sizeof(why), &there);
  if (!f) {
    if (!g_refused[0] && there) snprintf(g_refused, sizeof(g_refused), "%s", why);
    return;
  }
  p->n = fread(p->v, 1, sizeof(p->v) - 1, f);
  p->v[p->n] = '\0';
  fclose(f);
}

/* Whether `path` is a directory itself, not a symbolic link to one: the walk never follows
 * links (the kernel's device tree has none to directories; a tree given with --root with a
 * link loop would make the depth-limited walk exponential). */
static int is_real_dir(const char *root, const char *path) {
  struct stat st;
  return doctor_lstat(root, path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether a string-list property (NUL-separated) holds `s` as one of its strings. */
static int prop_has(const prop *p, const char *s) {
  for (size_t i = 0; i < p->n; i += strlen(p->v + i) + 1)
    if (strcmp(p->v + i, s) == 0) return 1;
  return 0;
}

static int is_disabled(const char *root, const char *node) {
  prop st;
  read_prop(root, node, "status", &st);
  return st.n && strcmp(st.v, "okay") != 0 && strcmp(st.v, "ok") != 0;
}

/* Depth-first search for the CDSP FastRPC node; its path into out. Returns 1 when found. */
static int find_cdsp_fastrpc(const char *root, const char *dir, int depth, char *out,
                             size_t len) {
  prop compat, label;
  read_prop(root, dir, "compatible", &compat);
  if (prop_has(&compat, "qcom,fastrpc")) {
    read_prop(root, dir, "label", &label);
    if (label.n && strcmp(label.v, "cdsp") == 0) {
      snprintf(out, len, "%s", dir);
      return 1;
    }
    return 0; /* another DSP's node: its children are its context banks */
  }
  if (depth >= MAX_DEPTH) return 0;
  DIR *d = doctor_opendir(root, dir);
  if (!d) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char child[4400];
    int w = snprintf(child, sizeof(child), "%s/%s", dir, e->d_name);
    if (w <= 0 || (size_t)w >= sizeof(child) || !is_real_dir(root, child)) continue;
    found = find_cdsp_fastrpc(root, child, depth + 1, out, len);
  }
  closedir(d);
  return found;
}

/* The enabled compute context banks under the node, and the first one's memory-region. */
static int count_compute_cbs(const char *root, const char *node, char *cb_with_region,
                             size_t len) {
  DIR *d = doctor_opendir(root, node);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char child[4400];
    int w = snprintf(child, sizeof(child), "%s/%s", node, e->d_name);
    if (w <= 0 || (size_t)w >= sizeof(child) || !is_real_dir(root, child)) continue;
    prop compat, region;
    read_prop(root, child, "compatible", &compat);
    if (!prop_has(&compat, "qcom,fastrpc-compute-cb") || is_disabled(root, child)) continue;
    n++;
    read_prop(root, child, "memory-region", &region);
    if (region.n > 0 && !cb_with_region[0]) snprintf(cb_with_region, len, "%s", child);
  }
  closedir(d);
  return n;
}

/* The reserved-memory node whose phandle is the first one of `region`, or "" when none. */
static void resolve_region(const doctor *d, const prop *region, char *out, size_t len) {
  out[0] = '\0';
  if (region->n < 4 || region->n % 4 != 0) return;
  const unsigned char *b = (const unsigned char *)region->v;
  uint32_t want = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
  const char *rm = DT_BASE "/reserved-memory";
  DIR *dir = doctor_opendir(d->root, rm);
  if (!dir) return;
  struct dirent *e;
  while (!out[0] && (e = readdir(dir))) {
    if (e->d_name[0] == '.') continue;
    char node[4400];
    snprintf(node, sizeof(node), "%s/%s", rm, e->d_name);
    prop ph;
    read_prop(d->root, node, "phandle", &ph);
    const unsigned char *p = (const unsigned char *)ph.v;
    if (ph.n == 4 &&
        ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]) == want)
      snprintf(out, len, "%s", e->d_name);
  }
  closedir(dir);
}

/* A property file that is not a regular file: the tree is not a device tree. */
static int refused(step *s) {
  if (!g_refused[0]) return 0;
  step_set(s, ST_FAIL, "not a device tree: %s", g_refused);
  step_hint(s, "every property in " DT_BASE " is a regular file: with --root, give a copy of "
               "the board's tree (e.g. cp -r of /proc/device-tree), not a made-up one");
  return 1;
}

/* Whether the device tree's root is a directory that can be read; if not, the step says why
 * (not there: skipped; a link loop, a file: failed). */
static int tree_readable(const doctor *d, step *s) {
  struct stat st;
  if (doctor_stat(d->root, DT_BASE, &st) != 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) {
      step_set(s, ST_SKIP, "%s is not there: cannot read the device tree", DT_BASE);
      return 0;
    }
    /* a link loop (ELOOP), ...: something is there, but no tree can be read through it */
    step_set(s, ST_FAIL, "cannot read %s: %s", DT_BASE, strerror(e));
    step_hint(s, "on a board " DT_BASE " is a link to /sys/firmware/devicetree/base: with "
                 "--root, give a copy of the board's tree in which it resolves");
    return 0;
  }
  if (!S_ISDIR(st.st_mode)) {
    step_set(s, ST_FAIL, "%s is %s, not the device tree", DT_BASE,
             file_kind_name((unsigned)st.st_mode));
    step_hint(s, "on a board " DT_BASE " is a directory (through a link to "
                 "/sys/firmware/devicetree/base): with --root, give a copy of the board's tree");
    return 0;
  }
  return 1;
}

/* The CDSP's remote heap as its memory-region says. */
typedef struct heap_facts {
  size_t n;       /* the property's bytes; 0: absent */
  int malformed;  /* not a list of 4-byte phandles */
  char heap[256]; /* the reserved-memory node it points at; "" when none */
} heap_facts;

/* The node's memory-region (else its first compute bank's, cb_region) into *h, shown as the
 * step's row. */

static void read_heap(const doctor *d, step *s, const char *node, const char *cb_region,
                      heap_facts *h) {
  prop region;
  read_prop(d->root, node, "memory-region", &region);
  if (region.n == 0 && cb_region[0]) read_prop(d->root, cb_region, "memory-region", &region);
  h->n = region.n;
  /* a list of 4-byte phandles: anything else is malformed, not absent */
  h->malformed = region.n > 0 && region.n % 4 != 0;
  char bad[96];
  resolve_region(d, &region, h->heap, sizeof(h->heap));
  snprintf(bad, sizeof(bad), "(malformed: %zu bytes)", region.n);
  step_str_shown(s, "memory region", "memory_region",
                 region.n == 0 || h->malformed ? NULL
                 : h->heap[0]                  ? h->heap
                                               : "",
                 region.n == 0  ? "(none)"
                 : h->malformed ? bad
                 : h->heap[0]   ? h->heap
                                : "(points at no reserved-memory node)");
}

/* The step's verdict on a CDSP FastRPC node that was found. */
static void verdict(step *s, int disabled, int cbs, const heap_facts *h) {
  if (disabled) {
    step_set(s, ST_FAIL, "the CDSP FastRPC node is disabled (status not \"okay\")");
    step_hint(s, "enable it in the board's device tree or with its overlay: without it there is "
                 "no /dev/fastrpc-cdsp");
  } else if (cbs == 0) {
    step_set(s, ST_FAIL, "the CDSP FastRPC node has no enabled compute context banks");
    step_hint(s, "each qcom,fastrpc-compute-cb child is one FastRPC session; without any, "
                 "every session fails: use the board's own device tree for this kernel");
  } else if (h->malformed) {
    step_set(s, ST_WARN, "the CDSP FastRPC node's memory-region is malformed: %zu bytes, not a "
                         "list of 4-byte phandles", h->n);
    step_hint(s, "the kernel cannot use it, so there is no remote heap: the device-tree overlay "
                 "that set it is broken; use the one made for this board and kernel");
  } else if (h->n == 0) {
    step_set(s, ST_WARN, "the CDSP FastRPC node has no memory-region (remote heap)");
    step_hint(s, "if FastRPC sessions still fail while the CDSP runs, this is the cause "
                 "reported for the Dragon Q6A (radxa-pkg/radxa-overlays#522): a device-tree "
                 "overlay that gives the node a memory-region, a reserved-memory remote heap");
  } else if (!h->heap[0]) {
    step_set(s, ST_WARN, "the CDSP FastRPC node's memory-region points at no reserved-memory "
                         "node");
    step_hint(s, "the overlay that added the memory-region does not match this device tree: "
                 "use the one made for this kernel");
  } else {
    step_set(s, ST_OK, "CDSP FastRPC node with %d compute bank%s, memory region %s", cbs,
             cbs == 1 ? "" : "s", h->heap);
  }
}

static void judge(doctor *d, step *s) {
  const char *base = DT_BASE;
  char node[4400] = "", cb_region[4400] = "";
  g_refused[0] = '\0';
  if (!tree_readable(d, s)) return;
  int found = find_cdsp_fastrpc(d->root, base, 0, node, sizeof(node));
  if (!found && refused(s)) return;
  if (!found) {
    step_str(s, "FastRPC node", "fastrpc_node", NULL);
    step_set(s, ST_FAIL, "no CDSP FastRPC node in the device tree");
    step_hint(s, "the kernel makes /dev/fastrpc-cdsp from a node with compatible "
                 "\"qcom,fastrpc\" and label \"cdsp\" under the CDSP remoteproc's glink-edge: use "
                 "the board's own device tree (and overlays) for this kernel");
    return;
  }
  /* shown relative to the device tree, as on the board */
  const char *shown = node + strlen(base);
  step_str(s, "FastRPC node", "fastrpc_node", shown[0] ? shown : "/");
  int cbs = count_compute_cbs(d->root, node, cb_region, sizeof(cb_region));
  char cbs_shown[32];
  snprintf(cbs_shown, sizeof(cbs_shown), "%d", cbs);
  step_uint(s, "compute banks", "compute_cbs", (uint64_t)cbs, cbs_shown);
  heap_facts h;
  read_heap(d, s, node, cb_region, &h);
  int disabled = is_disabled(d->root, node);
  if (refused(s)) return;
  verdict(s, disabled, cbs, &h);
}

void check_device_tree(doctor *d) {
  doctor_board_step(d, "device_tree", "device tree", judge);
}
