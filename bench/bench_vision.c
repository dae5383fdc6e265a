/*
 * bench_vision.c - `make bench`'s vision rows (issue 33, docs/performance.md): a 1920x1080
 * camera frame into a [1,640,640,3] input (letterbox: RGB24 and NV12 into u8, RGB24 into u16
 * and f32), the common smaller camera sizes, 1280x720 (a 2x resize) and 640x480 (none), RGB24
 * and NV12 into u8, and the decode + NMS of a [1,84,8400] u8 head with 20 objects, each timed here
 * interleaved with memcpy of as many bytes as it reads and writes (the limit), next to OpenCV
 * and NumPy doing the same in the same run (bench/cv2_peer.py, one thread), and
 * HexagonTpu.Vision.detect/3's time over its own C section (bench/vision_bench.exs).
 *
 * The head is u8 with one scale, 1/255, for its boxes and its scores: the boxes read as
 * normalised coordinates (IoU does not depend on the unit), the scores as they are. Its file
 * (build/plain/bench-models/head640.u8) is what the peer and the Elixir model read too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define FW 1920
#define FH 1080
#define IN 640
#define HC 84
#define HA 8400
#define OBJECTS 20
#define PER_OBJECT 20 /* anchors above the threshold per object: 400 candidates */

enum { V_RGB_U8, V_NV12_U8, V_RGB_U16, V_RGB_F32, V_RGB_720, V_NV12_720, V_RGB_480, V_NV12_480,
       V_DECODE, V_ROWS };

/* Each row: what it does, its frame, its peer in cv2_peer.py and the goal (times faster). */
typedef struct vrow {
  const char *name, *peer_key, *peer_name;
  int fw, fh, nv12;
  htpu_dtype dt;
  double goal;
} vrow;

static const vrow g_rows[V_ROWS] = {
    {"1920x1080 RGB24 -> [1,640,640,3] u8 letterbox", "letterbox", "cv2 resize + copyMakeBorder",
     FW, FH, 0, HTPU_U8, 1.5},
    {"1920x1080 NV12 -> [1,640,640,3] u8 RGB", "nv12", "cv2 cvtColor NV12->RGB + resize + border",
     FW, FH, 1, HTPU_U8, 4},
    {"1920x1080 RGB24 -> u16 (A16W8)", "u16", "the cv2 chain + astype(uint16) * 257", FW, FH, 0,
     HTPU_U16, 2},
    {"1920x1080 RGB24 -> f32 /255", "f32", "the cv2 chain + astype(float32) / 255", FW, FH, 0,
     HTPU_F32, 2},
    {"1280x720 RGB24 -> u8 letterbox (2x)", "letterbox720", "cv2 resize + copyMakeBorder", 1280,
     720, 0, HTPU_U8, 1},
    {"1280x720 NV12 -> u8 RGB letterbox (2x)", "nv12_720", "cv2 cvtColor + resize + border", 1280,
     720, 1, HTPU_U8, 1},
    {"640x480 RGB24 -> u8 letterbox (1:1)", "letterbox480", "cv2 copyMakeBorder (no resize)", 640,
     480, 0, HTPU_U8, 1},
    {"640x480 NV12 -> u8 RGB letterbox (1:1)", "nv12_480", "cv2 cvtColor + copyMakeBorder", 640,
     480, 1, HTPU_U8, 1},
    {"decode + NMS, [1,84,8400] u8 head, 20 objects", "decode", "NumPy decode + cv2.dnn.NMSBoxes",
     0, 0, 0, HTPU_U8, 20}};

typedef struct vision_results {
  bench_stat ns[V_ROWS], limit_ns[V_ROWS], peer_ns[V_ROWS];
  double bytes[V_ROWS]; /* read + written */
  bench_stat ex_over_us, ex_c_us, ex_predict_us;
  uint32_t found;
  const char *peer_note, *ex_note;
} vision_results;

static vision_results g_v;
static char g_peer_note[512], g_ex_note[3000];

static void fill_frame(uint8_t *p, size_t n) {
  /* a smooth picture with noise, so nothing is constant */
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)((i / 7 % 200) + (bench_rnd01() * 40));
}

/* The head: 20 objects, 20 jittered anchors each above 0.25, the rest below. */
static void fill_head(uint8_t *h) {
  for (size_t i = 0; i < (size_t)HC * HA; i++) h[i] = (uint8_t)(bench_rnd01() * 60);
  for (int o = 0; o < OBJECTS; o++) {
    double cx = 0.1 + 0.8 * bench_rnd01(), cy = 0.1 + 0.8 * bench_rnd01();
    double w = 0.05 + 0.1 * bench_rnd01(), hh = 0.05 + 0.1 * bench_rnd01();
    int cls = (int)(bench_rnd01() * 80);
    for (int k = 0; k < PER_OBJECT; k++) {
      int a = o * (HA / OBJECTS) + k * 7;
      double v[4] = {cx + 0.01 * (bench_rnd01() - 0.5), cy + 0.01 * (bench_rnd01() - 0.5),
                     w * (0.95 + 0.1 * bench_rnd01()), hh * (0.95 + 0.1 * bench_rnd01())};
      for (int c = 0; c < 4; c++) h[(size_t)c * HA + a] = (uint8_t)(v[c] * 255 + 0.5);
      h[(size_t)(4 + cls) * HA + a] = (uint8_t)(150 + bench_rnd01() * 100);
    }
  }
}

static htpu_tensor_info input_info(htpu_dtype dt) {
  htpu_tensor_info t;
  memset(&t, 0, sizeof t);
  t.name = "images";
  t.dtype = dt;
  t.rank = 4;
  t.dims[0] = 1, t.dims[1] = IN, t.dims[2] = IN, t.dims[3] = 3;
  t.num_elements = (size_t)IN * IN * 3;
  t.byte_size = t.num_elements * htpu_dtype_size(dt);
  if (dt == HTPU_U16) t.quant = (htpu_quant){.kind = HTPU_QUANT_PER_TENSOR, .scale = 1.0f / 65535};
  return t;
}

static htpu_tensor_info head_info(void) {
  htpu_tensor_info t;
  memset(&t, 0, sizeof t);
  t.name = "output0";
  t.dtype = HTPU_U8;
  t.rank = 3;
  t.dims[0] = 1, t.dims[1] = HC, t.dims[2] = HA;
  t.num_elements = (size_t)HC * HA;
  t.byte_size = t.num_elements;
  t.quant = (htpu_quant){.kind = HTPU_QUANT_PER_TENSOR, .scale = 1.0f / 255};
  return t;
}

typedef struct vctx {
  uint8_t *rgb, *nv12, *head, *dst, *scratch_a, *scratch_b;
  htpu_geometry geo;
  htpu_detection dets[300];
  uint32_t found;
} vctx;

/* The frame of a row: the 1920x1080 frame's first bytes, as a smaller frame's rows. */
static htpu_frame row_frame(const vctx *c, const vrow *r) {
  size_t px = (size_t)r->fw * r->fh;
  if (r->nv12)
    return (htpu_frame){c->nv12, px * 3 / 2, (uint32_t)r->fw, (uint32_t)r->fh, 0,
                        HTPU_PIXEL_NV12, 0, {0, 0, 0, 0}};
  return (htpu_frame){c->rgb, px * 3, (uint32_t)r->fw, (uint32_t)r->fh, 0, HTPU_PIXEL_RGB24, 0,
                      {0, 0, 0, 0}};
}

static int run_row(vctx *c, int row) {
  htpu_frame f = row_frame(c, &g_rows[row]);
  if (row == V_DECODE) {
    htpu_tensor_info h = head_info();
    const void *data[1] = {c->head};
    htpu_decode_info info;
    int rc = htpu_decode(&h, data, 1, NULL, &c->geo, c->dets, 300, NULL, 0, &info);
    c->found = info.count;
    return rc;
  }
  htpu_tensor_info t = input_info(g_rows[row].dt);
  return htpu_preprocess(&f, &t, NULL, c->dst, t.byte_size, &c->geo);
}

static double row_bytes(int row) {
  const vrow *r = &g_rows[row];
  double px = (double)r->fw * r->fh;
  if (row == V_DECODE) return (double)HC * HA; /* the head read; the detections are a few hundred bytes */
  return (r->nv12 ? px * 1.5 : px * 3) + (double)IN * IN * 3 * htpu_dtype_size(r->dt);
}

/* The row's repeats back to back, as the peer times its own, then as many of memcpy of half its
 * bytes (memcpy reads and writes them): a memcpy between two repeats would evict a small
 * frame (640x480 is 0.9 MB) from the caches the peer's repeats keep it in. */
static int time_row(const bench_config *cfg, vctx *c, int row) {
  int reps = cfg->quick ? 5 : cfg->reps < 51 ? 51 : cfg->reps;
  double *t = malloc(sizeof *t * (size_t)reps), *m = malloc(sizeof *m * (size_t)reps);
  size_t half = (size_t)(row_bytes(row) / 2);
  int rc = t && m ? run_row(c, row) : -1; /* warm-up */
  for (int r = 0; r < reps && rc == 0; r++) {
    double a = bench_now_ns();
    rc = run_row(c, row);
    t[r] = bench_now_ns() - a;
  }
  for (int r = 0; r < reps && rc == 0; r++) {
    double a = bench_now_ns();
    memcpy(c->scratch_b, c->scratch_a, half);
    bench_consume(c->scratch_b, half);
    m[r] = bench_now_ns() - a;
  }
  if (rc == 0) {
    g_v.ns[row] = bench_stat_of(t, reps);
    g_v.limit_ns[row] = bench_stat_of(m, reps);
    g_v.bytes[row] = row_bytes(row);
    printf("  %-48s %8.1f µs (min %.1f); memcpy of its %.1f MB %7.1f µs\n", g_rows[row].name,
           g_v.ns[row].med / 1e3, g_v.ns[row].min / 1e3, row_bytes(row) / 1e6,
           g_v.limit_ns[row].med / 1e3);
  } else {
    printf("  %s: %s\n", g_rows[row].name, htpu_last_error());
  }
  free(t);
  free(m);
  return rc;
}

static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(p, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

static int peer_line(void *arg, const char *line) {
  (void)arg;
  char key[32];
  double mn, md;
  if (strncmp(line, "cv2-absent", 10) == 0) {
    snprintf(g_peer_note, sizeof g_peer_note, "OpenCV absent:%.400s", line + 10);
    g_peer_note[strcspn(g_peer_note, "\n")] = 0;
    g_v.peer_note = g_peer_note;
    return 1;
  }
  if (sscanf(line, "peer %31s %lf %lf", key, &mn, &md) != 3) return 0;
  for (int r = 0; r < V_ROWS; r++)
    if (strcmp(key, g_rows[r].peer_key) == 0) {
      g_v.peer_ns[r] = (bench_stat){mn, md};
      printf("  %-48s %8.1f µs (min %.1f)\n", g_rows[r].peer_name, md / 1e3, mn / 1e3);
    }
  if (strcmp(key, "memcpy") == 0)
    printf("  %-48s %8.1f µs (min %.1f)\n", "numpy copy of the RGB24 frame", md / 1e3, mn / 1e3);
  return 1;
}

static void run_peer(const bench_config *cfg, const char *head_path) {
  if (!cfg->cv2_python) {
    g_v.peer_note = "no python3 with cv2 found (Debian: apt-get install python3-opencv)";
    printf("  %s\n", g_v.peer_note);
    return;
  }
  char cmd[2400];
  snprintf(cmd, sizeof cmd, "%s bench/cv2_peer.py %d %s", cfg->cv2_python,
           cfg->quick ? 5 : cfg->reps < 51 ? 51 : cfg->reps, head_path);
  printf("\n== OpenCV %s, one thread, the same work ==\n", cfg->cv2_python);
  if (bench_child_lines(cmd, peer_line, NULL) != 0 && !g_v.peer_note)
    g_v.peer_note = "bench/cv2_peer.py failed";
}

static int ex_line(void *arg, const char *line) {
  (void)arg;
  double mn, md;
  if (sscanf(line, "detect_over_us %lf %lf", &mn, &md) == 2) {
    g_v.ex_over_us = (bench_stat){mn, md};
    printf("  detect/3 over its C section (wall - total_ns): %.2f µs (min %.2f)\n", md, mn);
    return 1;
  }
  if (sscanf(line, "predict_over_us %lf %lf", &mn, &md) == 2) {
    g_v.ex_predict_us = (bench_stat){mn, md};
    printf("  predict/3 of the same model, interleaved (wall - total_ns): %.2f µs (min %.2f)\n",
           md, mn);
    return 1;
  }
  if (sscanf(line, "detect_c_us %lf %lf", &mn, &md) == 2) {
    g_v.ex_c_us = (bench_stat){mn, md};
    printf("  its C section without graphExecute (total_ns - execute_ns): %.1f µs (min %.1f)\n",
           md, mn);
    return 1;
  }
  return 0;
}

/* The model Elixir runs: the frame's input, the head as a static tensor the one op copies. */
static void run_elixir(const bench_config *cfg, const char *dir) {
  char txt[1200], bin[1200], cmd[2800];
  snprintf(txt, sizeof txt, "%s/detect640.txt", dir);
  snprintf(bin, sizeof bin, "%s/detect640.bin", dir);
  FILE *f = fopen(txt, "w");
  if (!f) return;
  fprintf(f, "# bench/bench_vision.c: a [1,640,640,3] input and a [1,84,8400] u8 head\n"
             "graph detect640\n  input images u8 [1,640,640,3] scale=0.003921569 zero_point=0\n"
             "  static head u8 [1,84,8400] scale=0.003921569 zero_point=0 data_file=head640.u8\n"
             "  output output0 u8 [1,84,8400] scale=0.003921569 zero_point=0\n"
             "  op Reshape head -> output0\n");
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s/htpu-refbuild %s %s", cfg->build_dir, txt, bin);
  if (!cfg->elixir_cmd || system(cmd) != 0) {
    g_v.ex_note = cfg->elixir_cmd ? "could not build the detect640 model" : "not run";
    return;
  }
  snprintf(cmd, sizeof cmd, "%s bench/vision_bench.exs %s %d", cfg->elixir_cmd, bin,
           cfg->quick ? 20 : 200);
  printf("\n== Elixir: HexagonTpu.Vision.detect/3, 1920x1080 RGB24, head as above ==\n");
  if (bench_child_lines(cmd, ex_line, NULL) != 0) {
    snprintf(g_ex_note, sizeof g_ex_note, "the Elixir run failed (%s)", cmd);
    g_v.ex_note = g_ex_note;
    printf("  %s\n", g_ex_note);
  }
}

void bench_vision(const bench_config *cfg) {
  vctx c;
  memset(&c, 0, sizeof c);
  size_t frame = (size_t)FW * FH * 3;
  c.rgb = malloc(frame), c.nv12 = malloc(frame / 2), c.head = malloc((size_t)HC * HA);
  c.dst = malloc((size_t)IN * IN * 3 * 4);
  c.scratch_a = malloc(frame + (size_t)IN * IN * 12), c.scratch_b = malloc(frame + (size_t)IN * IN * 12);
  char dir[1100], head[1200], cmd[1300];
  snprintf(dir, sizeof dir, "%s/bench-models", cfg->build_dir);
  snprintf(head, sizeof head, "%s/head640.u8", dir);
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  if (!c.rgb || !c.nv12 || !c.head || !c.dst || !c.scratch_a || !c.scratch_b ||
      system(cmd) != 0)
    goto out;
  fill_frame(c.rgb, frame);
  fill_frame(c.nv12, frame / 2);
  memset(c.scratch_a, 1, frame + (size_t)IN * IN * 12);
  memcpy(c.scratch_b, c.scratch_a, frame + (size_t)IN * IN * 12); /* its pages, before timing */
  fill_head(c.head);
  if (write_file(head, c.head, (size_t)HC * HA) != 0) goto out;
  printf("\n== vision: 1920x1080 frames, one thread, medians; memcpy of the bytes each reads "
         "and writes ==\n");
  for (int r = 0; r < V_ROWS; r++) time_row(cfg, &c, r);
  g_v.found = c.found;
  printf("  (the head decodes to %u detections)\n", c.found);
  run_peer(cfg, head);
  run_elixir(cfg, dir);
out:
  free(c.rgb), free(c.nv12), free(c.head), free(c.dst), free(c.scratch_a), free(c.scratch_b);
}

static void line(const char *what, double v, const char *unit, const char *goal, int ok) {
  char val[32];
  snprintf(val, sizeof val, "%.2f%s", v, unit);
  /* a row without a goal (a ratio to the limit, a peer's figure) is information: no status */
  printf("| %-52s | %-21s | %-11s | %-9s |\n", what, v > 0 ? val : "not measured", goal,
         v > 0 && strcmp(goal, "-") ? (ok ? "goal" : "BELOW") : "-");
}

void bench_vision_summary(void) {
  printf("\n== summary: issue 33's table (vision), measured in this run ==\n");
  printf("times faster: the peer's median / ours; of the limit: memcpy of the bytes read and "
         "written / ours (1.00 = as fast as copying them)\n\n");
  printf("| %-52s | %-21s | %-11s | %-9s |\n", "what", "median", "goal", "status");
  printf("|------------------------------------------------------|-----------------------|"
         "-------------|-----------|\n");
  char what[96], g[24];
  for (int r = 0; r < V_ROWS; r++) {
    double ours = g_v.ns[r].med, peer = g_v.peer_ns[r].med;
    double x = ours > 0 && peer > 0 ? peer / ours : 0;
    snprintf(g, sizeof g, ">= %.1fx", g_rows[r].goal);
    snprintf(what, sizeof what, "%s vs %s", g_rows[r].name, g_rows[r].peer_key);
    line(what, x, "x", g, x >= g_rows[r].goal);
    snprintf(what, sizeof what, "  of the limit (%.1f MB through memcpy)", g_v.bytes[r] / 1e6);
    line(what, ours > 0 ? g_v.limit_ns[r].med / ours : 0, "", "-", 1);
    if (r == V_DECODE) line("  decode + NMS time (us)", ours / 1e3, "", "<= 100", ours <= 100e3);
  }
  if (g_v.peer_note) printf("|   OpenCV: %-104s |\n", g_v.peer_note);
  line("detect/3 host time over the C section (us)", g_v.ex_over_us.med, "", "<= +10",
       g_v.ex_over_us.med <= 10);
  /* the peer: the same model's predict/3 pays the same dirty-call return to the BEAM */
  line("  predict/3, same model, over its C section (us)", g_v.ex_predict_us.med, "", "-", 1);
  if (g_v.ex_note) printf("|   Elixir: %-104s |\n", g_v.ex_note);
}
