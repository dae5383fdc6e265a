/* The vision room's vector kernels (src/vision/simd_*.c) against its scalar code: YUV -> RGB
 * over every Y, U, V; NV12 and YUYV rows from every start parity and of every length around
 * the 16-pixel step; the 2x box against (a + b + c + d + 2) >> 2 worked out here. Buffers are
 * exactly as long as the pixels they hold, so a read or write past them is an ASan report. On a
 * CPU without the kernels both runs are the scalar code and the tests still check the rows
 * against each other. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vision/vision.h"

static uint32_t g_rnd = 12345;
static uint8_t rnd8(void) {
  g_rnd = g_rnd * 1103515245u + 12345u;
  return (uint8_t)(g_rnd >> 16);
}

/* Whether this CPU has the YUV kernels (else both runs below are the scalar code). */
static int have_yuv_kernels(void) {
#if defined(__aarch64__)
  return 1;
#elif defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return 0;
#endif
}

TEST(vision_simd_kernels_run_where_the_cpu_has_them) {
  uint8_t y[32] = {0}, uv[32] = {0}, rgb[96];
  int selected = vis_simd_select("auto");
  CHECK(!have_yuv_kernels() || selected == 0);
  CHECK_EQ(vis_simd_nv12_row(y, uv, 32, rgb), have_yuv_kernels() ? 32 : 0);
  CHECK_EQ(vis_simd_select("none"), 0);
  CHECK_EQ(vis_simd_nv12_row(y, uv, 32, rgb), 0);
  vis_simd_select("auto");
}

TEST(vision_simd_yuv_every_value) {
  vis_yuv_tab t;
  vis_yuv_tables(&t);
  size_t n = 65536;
  uint8_t *y = malloc(n), *u = malloc(n), *v = malloc(n);
  uint8_t *a = malloc(3 * n), *b = malloc(3 * n);
  CHECK(y && u && v && a && b);
  int bad = 0;
  for (unsigned U = 0; U < 256 && !bad; U++) {
    for (size_t i = 0; i < n; i++) y[i] = (uint8_t)i, v[i] = (uint8_t)(i >> 8), u[i] = (uint8_t)U;
    vis_simd_select("auto");
    vis_yuv_pixels(&t, y, u, v, (uint32_t)n, a);
    vis_simd_select("none");
    vis_yuv_pixels(&t, y, u, v, (uint32_t)n, b);
    bad = memcmp(a, b, 3 * n) != 0;
    for (size_t i = 0; bad && i < 3 * n; i++)
      if (a[i] != b[i]) {
        test_fail(__FILE__, __LINE__, "Y %u U %u V %u channel %zu: %u, the tables give %u",
                  y[i / 3], U, v[i / 3], i % 3, a[i], b[i]);
        break;
      }
  }
  vis_simd_select("auto");
  free(y), free(u), free(v), free(a), free(b);
}

/* n pixels of random rows from x0, with and without the kernels. */
TEST(vision_simd_yuv_rows) {
  vis_yuv_tab t;
  vis_yuv_tables(&t);
  for (uint32_t x0 = 0; x0 < 4; x0++)
    for (uint32_t n = 0; n < 70; n++) {
      uint32_t w = x0 + n + (x0 + n) % 2; /* an even row width holding them */
      uint8_t *yr = malloc(w + 1), *uvr = malloc(w + 1), *yuyv = malloc(2 * w + 1);
      uint8_t *a = malloc(3 * n + 1), *b = malloc(3 * n + 1);
      CHECK(yr && uvr && yuyv && a && b);
      for (uint32_t i = 0; i < w; i++) yr[i] = rnd8(), uvr[i] = rnd8();
      for (uint32_t i = 0; i < 2 * w; i++) yuyv[i] = rnd8();
      int same = 1;
      for (int k = 0; k < 2; k++) {
        vis_simd_select("auto");
        if (k) vis_yuyv_row(&t, yuyv, x0, n, a);
        else vis_nv12_row(&t, yr, uvr, x0, n, a);
        vis_simd_select("none");
        if (k) vis_yuyv_row(&t, yuyv, x0, n, b);
        else vis_nv12_row(&t, yr, uvr, x0, n, b);
        same = same && memcmp(a, b, 3 * n) == 0;
      }
      vis_simd_select("auto");
      free(yr), free(uvr), free(yuyv), free(a), free(b);
      CHECK_MSG(same, "x0 %u, %u pixels: the rows differ", x0, n);
    }
}

TEST(vision_simd_half_box) {
  for (unsigned bpp = 3; bpp <= 4; bpp++)
    for (uint32_t n = 0; n < 40; n++) {
      size_t bytes = 2 * (size_t)n * bpp;
      uint8_t *r0 = malloc(bytes + 1), *r1 = malloc(bytes + 1), *o = malloc(3 * n + 1);
      CHECK(r0 && r1 && o);
      for (size_t i = 0; i < bytes; i++) r0[i] = rnd8(), r1[i] = rnd8();
      if (n == 39) memset(r0, 255, bytes), memset(r1, 255, bytes); /* the largest sums */
      uint32_t done = vis_simd_half_packed(r0, r1, bpp, n, o);
      int ok = done <= n;
      for (uint32_t d = 0; ok && d < done; d++)
        for (unsigned c = 0; c < 3; c++) {
          const uint8_t *p = r0 + 2 * (size_t)d * bpp, *q = r1 + 2 * (size_t)d * bpp;
          unsigned want = (p[c] + p[bpp + c] + q[c] + q[bpp + c] + 2) >> 2;
          ok = ok && o[3 * d + c] == want;
        }
      free(r0), free(r1), free(o);
      CHECK_MSG(ok, "%u bytes a pixel, %u pixels (%u by the kernel): a value differs", bpp, n,
                done);
    }
}
