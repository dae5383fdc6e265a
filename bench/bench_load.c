/*
 * bench_load.c - many models resident, small and quick to come up (issue 31), on the reference
 * backend: the anonymous memory a load adds beyond the binary's file pages (a 50 MiB binary
 * mapped from a sealed memfd, as from the Nerves root file system; copied, as from /data; and
 * copied without PERSISTENT_BINARY, which is what every load did before: the library's copy
 * and the backend's), the spill-fill memory the backend accounts for 4 contexts of 20 MiB each
 * (one shared buffer vs one each), the wall time of loading 4 models with 500 ms injected into
 * each creation (one list call, with and without a spill-fill group to start, and one after
 * another), the graphs deserialized when one of 4 is asked for, and what the group costs two
 * models executing at once (its contexts run one at a time: why spill_fill_sharing, which every
 * row here sets explicitly, is off by default).
 *
 * The models are built with the build's htpu-refbuild into DIR/bench-models/. The reference
 * backend's control API (htpu_ref_control.h) is reached through dlopen of the same library the
 * runtime loads, so the counts are the ones its contexts made.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "htpu_ref_control.h"

#define MIB (1024.0 * 1024.0)

typedef struct ref_api {
  void *lib;
  htpu_ref_get_stats_fn stats;
  int (*latency)(const char *api, unsigned usec);
} ref_api;

static int ref_open(const bench_config *cfg, ref_api *r) {
  char be[1024];
  bench_lib_path(be, sizeof be, cfg, "libhtpu_refbackend.so");
  memset(r, 0, sizeof *r);
  r->lib = dlopen(be, RTLD_NOW);
  if (r->lib) {
    r->stats = (htpu_ref_get_stats_fn)dlsym(r->lib, "htpu_ref_get_stats");
    *(void **)&r->latency = dlsym(r->lib, "htpu_ref_set_latency");
  }
  if (r->stats && r->latency) return 0;
  printf("  loading: %s: %s\n", be, dlerror());
  if (r->lib) dlclose(r->lib);
  return -1;
}

static htpu_ref_stats ref_stats(const ref_api *r) {
  htpu_ref_stats s;
  r->stats(&s);
  return s;
}

/* A runtime on the reference libraries; caps: HTPU_REF_CAPS while it opens (the core asks the
 * capabilities then and keeps the answers; the backend asks at every call, so the variable is
 * gone before any load), NULL for the defaults. */
static htpu_runtime *runtime(const bench_config *cfg, int sharing, const char *caps) {
  char be[1024], sys[1024];
  bench_lib_path(be, sizeof be, cfg, "libhtpu_refbackend.so");
  bench_lib_path(sys, sizeof sys, cfg, "libhtpu_refsystem.so");
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.backend_lib = be;
  o.system_lib = sys;
  o.spill_fill_sharing = sharing;
  o.npu_lock_path = ""; /* a bench, not a board: no other program to keep out */
  if (caps) setenv("HTPU_REF_CAPS", caps, 1);
  htpu_runtime *rt = NULL;
  int rc = htpu_runtime_open(&o, &rt);
  unsetenv("HTPU_REF_CAPS");
  if (rc) printf("  loading: runtime: %s: %s\n", htpu_err_name(rc), htpu_last_error());
  return rt;
}

/* DIR/bench-models/NAME built from the text write_text(f, arg) writes (once per build). */
static int build(const bench_config *cfg, const char *name, void (*write_text)(FILE *, long),
                 long arg, char *path, size_t len) {
  snprintf(path, len, "%s/bench-models/%s", cfg->build_dir, name);
  struct stat st;
  if (stat(path, &st) == 0) return 0;
  char dir[1024], cmd[3200];
  snprintf(dir, sizeof dir, "%s/bench-models", cfg->build_dir);
  mkdir(dir, 0755);
  snprintf(cmd, sizeof cmd, "'%s/htpu-refbuild' - '%s'", cfg->build_dir, path);
  FILE *f = popen(cmd, "w");
  if (!f) return -1;
  write_text(f, arg);
  int rc = pclose(f);
  if (rc != 0) printf("  loading: htpu-refbuild %s failed\n", name);
  return rc == 0 ? 0 : -1;
}

/* 50 MiB of f32 weights behind one FullyConnected: the binary is nearly all static data. */
static void big_text(FILE *f, long unused) {
  (void)unused;
  fprintf(f, "graph big\n  input x f32 [1,3200]\n  output y f32 [1,4096]\n"
             "  static w f32 [4096,3200] data=[");
  for (long i = 0; i < 4096L * 3200L; i++) fputs(i ? ",0" : "0", f);
  fprintf(f, "]\n  op FullyConnected x w -> y\n");
}

/* One intermediate of `floats` f32 values: the graph's spill-fill size. */
static void spill_text(FILE *f, long floats) {
  fprintf(f, "graph spill\n  input x f32 [1,%ld]\n  native t f32 [1,%ld]\n"
             "  output y f32 [1,%ld]\n  op Relu x -> t\n  op Relu t -> y\n",
          floats, floats, floats);
}

static void four_text(FILE *f, long unused) {
  (void)unused;
  for (int g = 0; g < 4; g++)
    fprintf(f, "graph g%d\n  input x f32 [1,4]\n  static k f32 [1] data=[%d]\n"
               "  output y f32 [1,4]\n  op ElementWiseMultiply x k -> y\n", g, g + 1);
}

static long rss_anon_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "RssAnon: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

/* The file at `path` in a memfd sealed against writing and shrinking, named by a path the
 * library opens (/proc/self/fd/N): a binary that cannot change, as on a read-only file
 * system. Returns the descriptor, or -1. */
static int sealed_copy(const char *path, char *fdpath, size_t len) {
  int in = open(path, O_RDONLY), fd = memfd_create("bench_big", MFD_ALLOW_SEALING);
  char buf[1 << 16];
  ssize_t n;
  while (in >= 0 && fd >= 0 && (n = read(in, buf, sizeof buf)) > 0)
    if (write(fd, buf, (size_t)n) != n) n = -1;
  if (in >= 0) close(in);
  if (fd >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
    close(fd);
    fd = -1;
  }
  snprintf(fdpath, len, "/proc/self/fd/%d", fd);
  return fd;
}

/* RssAnon added by one load of path (KiB), the context closed after; -1 when it failed. */
static double anon_added(htpu_runtime *rt, const char *path, int copy) {
  htpu_load_options lo = {0};
  lo.copy_binary = copy;
  htpu_context *ctx = NULL;
  long before = rss_anon_kb();
  int rc = htpu_context_open_file_ex(rt, path, &lo, &ctx);
  long after = rss_anon_kb();
  if (rc) printf("  loading: %s: %s\n", htpu_err_name(rc), htpu_last_error());
  htpu_context_close(&ctx);
  return rc ? -1 : (double)(after - before);
}

/* Row 1: the percentage of the binary a load adds as anonymous memory, three ways. */
static void bench_resident(const bench_config *cfg, bench_results *res) {
  char big[1024], fdpath[64];
  if (build(cfg, "big50.bin", big_text, 0, big, sizeof big) != 0) return;
  int fd = sealed_copy(big, fdpath, sizeof fdpath);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return;
  htpu_runtime *rt = runtime(cfg, 1, NULL), *old = runtime(cfg, 1, "208=1000");
  enum { REPS = 5 };
  double mapped[REPS], copied[REPS], before[REPS];
  int reps = cfg->quick ? 1 : REPS, ok = rt && old;
  for (int r = 0; r < reps && ok; r++) {
    double kb = (double)st.st_size / 1024.0;
    mapped[r] = anon_added(rt, fdpath, 0) * 100.0 / kb;
    copied[r] = anon_added(rt, fdpath, 1) * 100.0 / kb;
    before[r] = anon_added(old, fdpath, 1) * 100.0 / kb;
    ok = mapped[r] >= 0 && copied[r] >= 0 && before[r] >= 0;
  }
  htpu_runtime_close(&rt);
  htpu_runtime_close(&old);
  close(fd);
  if (!ok) return;
  res->load_binary_mib = (double)st.st_size / MIB;
  res->load_anon_mapped_pct = bench_stat_of(mapped, reps);
  res->load_anon_copied_pct = bench_stat_of(copied, reps);
  res->load_anon_before_pct = bench_stat_of(before, reps);
  printf("  a %.1f MiB binary adds %.2f%% of itself mapped, %.1f%% copied, %.1f%% copied "
         "without PERSISTENT_BINARY (before)\n", res->load_binary_mib,
         res->load_anon_mapped_pct.med, res->load_anon_copied_pct.med,
         res->load_anon_before_pct.med);
}

/* n copies of path in one htpu_context_open_many call; returns its wall time (ms) or -1, the
 * contexts in ctx[0, n). */
static double load_many(htpu_runtime *rt, const char *path, int n, htpu_context **ctx) {
  htpu_load_request req[8];
  memset(req, 0, sizeof req);
  for (int i = 0; i < n; i++) req[i].path = path;
  double t0 = bench_now_ns();
  int rc = htpu_context_open_many(rt, req, (size_t)n);
  double ms = (bench_now_ns() - t0) / 1e6;
  for (int i = 0; i < n; i++) ctx[i] = req[i].ctx;
  if (rc) printf("  loading: %s: %s\n", htpu_err_name(rc), htpu_last_error());
  return rc ? -1 : ms;
}

static void close_all(htpu_context **ctx, int n) {
  for (int i = 0; i < n; i++) htpu_context_close(&ctx[i]);
}

/* Row 2: the backend's spill-fill bytes with 4 contexts of 20 MiB, shared and not. */
static void bench_spill(const bench_config *cfg, const ref_api *ref, const char *spill20,
                        bench_results *res) {
  for (int sharing = 0; sharing < 2; sharing++) {
    htpu_runtime *rt = runtime(cfg, sharing, NULL);
    htpu_context *ctx[4] = {0};
    if (rt && load_many(rt, spill20, 4, ctx) >= 0) {
      double mib = (double)ref_stats(ref).spill_fill_bytes / MIB;
      if (sharing) res->load_sf_shared_mib = mib;
      else res->load_sf_own_mib = mib;
    }
    close_all(ctx, 4);
    htpu_runtime_close(&rt);
  }
  printf("  4 contexts of 20 MiB spill-fill: %.0f MiB shared, %.0f MiB each its own\n",
         res->load_sf_shared_mib, res->load_sf_own_mib);
}

/* The wall time (ms) of loading 4 models at once on a runtime opened with sharing and caps;
 * warm: a 5th context of the same group is up first, so the list starts no group. */
static double four_loads(const bench_config *cfg, const char *path, int sharing,
                         const char *caps, int warm) {
  htpu_runtime *rt = runtime(cfg, sharing, caps);
  htpu_context *ctx[5] = {0};
  double ms = -1;
  if (rt && (!warm || load_many(rt, path, 1, &ctx[4]) >= 0)) ms = load_many(rt, path, 4, ctx);
  close_all(ctx, 5);
  htpu_runtime_close(&rt);
  return ms;
}

/* Row 3: 4 loads of 500 ms each, as one list call and one after another. */
static void bench_parallel(const bench_config *cfg, const ref_api *ref, const char *spill,
                           bench_results *res) {
  enum { REPS = 3 };
  double list[REPS], shared[REPS], warm[REPS], seq[REPS];
  int reps = cfg->quick ? 1 : REPS, ok = 1;
  ref->latency("contextCreateFromBinary", 500000);
  for (int r = 0; r < reps && ok; r++) {
    list[r] = four_loads(cfg, spill, 0, NULL, 0);
    shared[r] = four_loads(cfg, spill, 1, NULL, 0);
    warm[r] = four_loads(cfg, spill, 1, NULL, 1);
    seq[r] = four_loads(cfg, spill, 0, "212=1000", 0);
    ok = list[r] > 0 && shared[r] > 0 && warm[r] > 0 && seq[r] > 0;
  }
  ref->latency("contextCreateFromBinary", 0);
  if (!ok) return;
  res->load4_list_ms = bench_stat_of(list, reps);
  res->load4_shared_ms = bench_stat_of(shared, reps);
  res->load4_warm_ms = bench_stat_of(warm, reps);
  res->load4_seq_ms = bench_stat_of(seq, reps);
  printf("  4 loads of 500 ms: %.0f ms in one list call (%.0f ms starting a spill-fill group, "
         "%.0f ms joining one), %.0f ms one after another\n", res->load4_list_ms.med,
         res->load4_shared_ms.med, res->load4_warm_ms.med, res->load4_seq_ms.med);
}

/* Row 4: graphs deserialized by a load of a 4-graph binary asking for one, and all. */
static void bench_graphs(const bench_config *cfg, const ref_api *ref, bench_results *res) {
  char four[1024];
  if (build(cfg, "four_graphs.bin", four_text, 0, four, sizeof four) != 0) return;
  htpu_runtime *rt = runtime(cfg, 1, NULL);
  const char *one[] = {"g1"};
  for (int asked = 0; rt && asked < 2; asked++) {
    htpu_load_options lo = {0};
    if (asked) {
      lo.graphs = one;
      lo.num_graphs = 1;
    }
    uint64_t before = ref_stats(ref).graphs_deserialized;
    htpu_context *ctx = NULL;
    if (htpu_context_open_file_ex(rt, four, &lo, &ctx) == 0) {
      uint64_t n = ref_stats(ref).graphs_deserialized - before;
      if (asked) res->load_graphs_one = n;
      else res->load_graphs_all = n;
    }
    htpu_context_close(&ctx);
  }
  htpu_runtime_close(&rt);
  printf("  a 4-graph binary: %llu graphs deserialized when one is asked for, %llu otherwise\n",
         (unsigned long long)res->load_graphs_one, (unsigned long long)res->load_graphs_all);
}

typedef struct exec_thread {
  htpu_graph *g;
  int calls, rc;
} exec_thread;

static void *exec_loop(void *arg) {
  exec_thread *t = arg;
  bench_f32_io io;
  t->rc = bench_f32_io_make(t->g, &io);
  for (int i = 0; i < t->calls && !t->rc; i++)
    t->rc = htpu_graph_execute(t->g, &io.in, 1, &io.out, 1, NULL);
  if (!t->rc) bench_f32_io_free(&io);
  return NULL;
}

/* Calls/s of two models executing at once from two threads (1 ms each, injected). */
static double two_models(const bench_config *cfg, const char *path, int sharing, int calls) {
  htpu_runtime *rt = runtime(cfg, sharing, NULL);
  htpu_context *ctx[2] = {0};
  exec_thread t[2] = {{0}};
  pthread_t th[2];
  double per_s = -1;
  if (rt && load_many(rt, path, 2, ctx) >= 0 && htpu_graph_open(ctx[0], NULL, &t[0].g) == 0 &&
      htpu_graph_open(ctx[1], NULL, &t[1].g) == 0) {
    double t0 = bench_now_ns();
    for (int i = 0; i < 2; i++) {
      t[i].calls = calls;
      pthread_create(&th[i], NULL, exec_loop, &t[i]);
    }
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    if (!t[0].rc && !t[1].rc) per_s = 2.0 * calls / ((bench_now_ns() - t0) / 1e9);
  }
  for (int i = 0; i < 2; i++) htpu_graph_close(&t[i].g);
  close_all(ctx, 2);
  htpu_runtime_close(&rt);
  return per_s;
}

/* Row 5: what sharing costs two models executing at once: calls/s shared / each its own. */
static void bench_group_cost(const bench_config *cfg, const ref_api *ref, const char *spill,
                             bench_results *res) {
  enum { REPS = 3 };
  double ratio[REPS];
  int reps = cfg->quick ? 1 : REPS, calls = cfg->quick ? 50 : 200, ok = 1;
  ref->latency("graphExecute", 1000);
  for (int r = 0; r < reps && ok; r++) {
    double own = two_models(cfg, spill, 0, calls), shared = two_models(cfg, spill, 1, calls);
    ok = own > 0 && shared > 0;
    if (ok) ratio[r] = shared / own;
  }
  ref->latency("graphExecute", 0);
  if (!ok) return;
  res->load_group_exec = bench_stat_of(ratio, reps);
  printf("  two models executing at once (1 ms each): a shared spill-fill buffer gives %.2fx "
         "the calls/s of one each (sharing is off by default)\n", res->load_group_exec.med);
}

void bench_load(const bench_config *cfg, bench_results *res) {
  printf("\n== loading: mapped binaries, a shared spill-fill buffer, the graphs asked for, "
         "loads at once ==\n");
  ref_api ref;
  char spill20[1024], spill4k[1024];
  if (build(cfg, "spill20.bin", spill_text, 5L * 1024 * 1024, spill20, sizeof spill20) != 0 ||
      build(cfg, "spill4k.bin", spill_text, 1024, spill4k, sizeof spill4k) != 0)
    return;
  htpu_runtime *keep = runtime(cfg, 1, NULL); /* loads the backend for ref_open */
  if (!keep || ref_open(cfg, &ref) != 0) {
    htpu_runtime_close(&keep);
    return;
  }
  bench_resident(cfg, res);
  bench_spill(cfg, &ref, spill20, res);
  bench_parallel(cfg, &ref, spill4k, res);
  bench_graphs(cfg, &ref, res);
  bench_group_cost(cfg, &ref, spill4k, res);
  dlclose(ref.lib);
  htpu_runtime_close(&keep);
}

static void line(const char *what, const char *val, const char *done, const char *goal,
                 int ok) {
  printf("| %-52s | %-21s | %-11s | %-11s | %-9s |\n", what, val, done, goal,
         ok < 0 ? "-" : ok ? "goal" : "BELOW");
}

/* A measured median (min) row; measured 0: "not measured" (a figure of 0 can be measured). */
static void stat_row(const char *what, bench_stat v, int measured, const char *unit,
                     const char *goal, int ok) {
  char val[40];
  if (!measured) snprintf(val, sizeof val, "not measured");
  else snprintf(val, sizeof val, "%.2f%s (min %.2f%s)", v.med, unit, v.min, unit);
  line(what, val, goal, goal, measured ? ok : -1);
}

static void stat_line(const char *what, bench_stat v, const char *unit, const char *goal,
                      int ok) {
  stat_row(what, v, v.med > 0, unit, goal, ok);
}

void bench_load_summary(const bench_results *r) {
  printf("\n== loading: issue 31's table, measured in this run ==\n\n");
  printf("| %-52s | %-21s | %-11s | %-11s | %-9s |\n", "what", "median (min)", "done when",
         "goal", "status");
  static const char dashes[] = "------------------------------------------------------";
  printf("|%.54s|%.23s|%.13s|%.13s|%.11s|\n", dashes, dashes, dashes, dashes, dashes);
  char what[80], val[40];
  snprintf(what, sizeof what, "anon memory a load adds, %.0f MiB binary, mapped",
           r->load_binary_mib);
  stat_row(what, r->load_anon_mapped_pct, r->load_binary_mib > 0, "%", "<= 1%",
           r->load_anon_mapped_pct.med <= 1.0);
  stat_line("  the same copied (a writable file system)", r->load_anon_copied_pct, "%", "-", -1);
  stat_line("  the same before (copied, no PERSISTENT_BINARY)", r->load_anon_before_pct, "%",
            "-", -1);
  snprintf(val, sizeof val, "%.0f MiB (own: %.0f)", r->load_sf_shared_mib, r->load_sf_own_mib);
  line("spill-fill, 4 contexts x 20 MiB, shared", r->load_sf_shared_mib > 0 ? val : "not measured",
       "<= 20 MiB", "<= 20 MiB", r->load_sf_shared_mib > 0 ? r->load_sf_shared_mib <= 20.5 : -1);
  stat_line("4 loads of 500 ms, one list call (ms)", r->load4_list_ms, "", "<= 700",
            r->load4_list_ms.med <= 700);
  stat_line("  the same starting a spill-fill group (ms)", r->load4_shared_ms, "", "-", -1);
  stat_line("  the same joining the runtime's group (ms)", r->load4_warm_ms, "", "<= 700",
            r->load4_warm_ms.med <= 700);
  stat_line("  one after another, no list call (ms)", r->load4_seq_ms, "", "-", -1);
  snprintf(val, sizeof val, "%llu (all: %llu)", (unsigned long long)r->load_graphs_one,
           (unsigned long long)r->load_graphs_all);
  line("graphs deserialized, 1 of 4 asked for", r->load_graphs_one ? val : "not measured", "1",
       "1", r->load_graphs_one ? r->load_graphs_one == 1 : -1);
  stat_line("two models at once, shared spill-fill: calls/s ratio", r->load_group_exec, "x", "-",
            -1);
}
