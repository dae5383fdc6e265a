/* frame_input.c - camera frames from files, and into graph inputs (see frame_input.h). */
#include "frame_input.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_open.h"
#include "session.h"

/* A frame file is read whole; 1 GiB covers an 8K RGBA frame several times. */
#define FRAME_MAX_BYTES (1ull << 30)

static int read_file(const cli_command *cmd, const char *path, void **out, size_t *len) {
  char err[1024];
  uint64_t size = 0;
  int fd = file_open_regular(path, &size, err, sizeof err);
  if (fd < 0) return cli_fail(cmd, "frame: %s", err);
  int rc = CLI_EXIT_OK;
  if (size > FRAME_MAX_BYTES) {
    rc = cli_fail(cmd, "frame: '%s' has %llu bytes, more than the %llu a frame may have", path,
                  (unsigned long long)size, (unsigned long long)FRAME_MAX_BYTES);
  } else if (!size) {
    int r = file_read_unsized(fd, path, FRAME_MAX_BYTES, out, len, err, sizeof err);
    if (r) rc = cli_fail(cmd, "frame: %s", r < 0 ? err : "the file is larger than 1 GiB");
  } else if (!(*out = malloc((size_t)size))) {
    rc = cli_fail(cmd, "frame: out of memory (%llu bytes)", (unsigned long long)size);
  } else if (file_read_exact(fd, path, *out, (size_t)size, err, sizeof err)) {
    free(*out);
    *out = NULL;
    rc = cli_fail(cmd, "frame: %s", err);
  } else {
    *len = (size_t)size;
  }
  close(fd);
  return rc;
}

/* ---- PPM / PGM headers --------------------------------------------------------------------- */

/* The next decimal number after whitespace and # comments; -1 if there is none. */
static long ppm_number(const uint8_t *p, size_t len, size_t *at) {
  while (*at < len) {
    if (isspace(p[*at])) {
      (*at)++;
    } else if (p[*at] == '#') {
      while (*at < len && p[*at] != '\n') (*at)++;
    } else {
      break;
    }
  }
  long v = 0;
  size_t start = *at;
  while (*at < len && isdigit(p[*at]) && v < 1000000) v = v * 10 + (p[(*at)++] - '0');
  return *at > start ? v : -1;
}

static int parse_ppm(const cli_command *cmd, const char *path, cli_frame *f, size_t len) {
  const uint8_t *p = f->bytes;
  size_t at = 2;
  if (len < 2 || p[0] != 'P' || (p[1] != '6' && p[1] != '5'))
    return cli_fail(cmd, "--image %s: not a binary PPM (P6) or PGM (P5) image", path);
  long w = ppm_number(p, len, &at), h = ppm_number(p, len, &at), maxval = ppm_number(p, len, &at);
  if (w <= 0 || h <= 0 || maxval <= 0 || at >= len || !isspace(p[at]))
    return cli_fail(cmd, "--image %s: the header's width, height and maximum value must be "
                         "positive numbers",
                    path);
  if (maxval != 255 || w > 65535 || h > 65535)
    return cli_fail(cmd, "--image %s: %ldx%ld with maximum %ld: only 8-bit images (maximum 255) "
                         "of at most 65535 on a side are read",
                    path, w, h, maxval);
  at++; /* the one whitespace byte before the pixels */
  unsigned bpp = p[1] == '6' ? 3 : 1;
  size_t need = (size_t)w * (size_t)h * bpp;
  if (len - at < need)
    return cli_fail(cmd, "--image %s: a %ldx%ld P%c image has %zu bytes of pixels, got %zu", path,
                    w, h, p[1], need, len - at);
  f->frame.data = p + at;
  f->frame.size = need;
  f->frame.width = (uint32_t)w;
  f->frame.height = (uint32_t)h;
  f->frame.format = bpp == 3 ? HTPU_PIXEL_RGB24 : HTPU_PIXEL_GRAY8;
  return CLI_EXIT_OK;
}

/* ---- raw frames ------------------------------------------------------------------------------ */

/* One side of --size: decimal digits up to `stop`, 1..HTPU_VISION_MAX_SIDE (no sscanf: %u
 * wraps silently past 2^32). The character after it, or -1. */
static long size_side(const char **s, char stop) {
  unsigned long v = 0;
  const char *p = *s;
  if (!isdigit((unsigned char)*p)) return -1;
  while (isdigit((unsigned char)*p)) {
    v = v * 10 + (unsigned long)(*p++ - '0');
    if (v > HTPU_VISION_MAX_SIDE) v = HTPU_VISION_MAX_SIDE + 1ul; /* too large: stays so */
  }
  if (*p != stop || !v || v > HTPU_VISION_MAX_SIDE) return -1;
  *s = stop ? p + 1 : p;
  return (long)v;
}

static int raw_options(const cli_args *a, htpu_frame *fr) {
  const char *size = cli_get(a, "size"), *fmt = cli_get(a, "format");
  if (!size || !fmt)
    return cli_usage_error(a->cmd, "--frame needs --size WxH and --format FMT (rgb24, bgr24, "
                                   "rgba, bgra, gray8, yuyv, nv12)");
  const char *at = size;
  long w = size_side(&at, 'x'), h = w < 0 ? -1 : size_side(&at, '\0');
  if (w < 0 || h < 0)
    return cli_usage_error(a->cmd, "--size %s: expected WIDTHxHEIGHT, each 1 to %u (e.g. "
                                   "1920x1080)",
                           size, HTPU_VISION_MAX_SIDE);
  if (htpu_pixel_format_from_name(fmt, &fr->format))
    return cli_usage_error(a->cmd, "--format %s: %s", fmt, htpu_last_error());
  uint32_t stride, uv;
  int rc = cli_get_u32(a, "stride", 0, 0, UINT32_MAX, &stride);
  if (!rc) rc = cli_get_u32(a, "uv-offset", 0, 0, UINT32_MAX, &uv);
  if (rc) return rc;
  fr->width = (uint32_t)w, fr->height = (uint32_t)h, fr->stride = stride, fr->uv_offset = uv;
  return CLI_EXIT_OK;
}

/* One number of --crop: decimal digits up to `stop`, at most 2^32 - 1 (sscanf's %u takes "-1"
 * as 4294967295 and wraps past 2^32 silently). The character after it, or -1. */
static long long crop_number(const char **s, char stop) {
  unsigned long long v = 0;
  const char *p = *s;
  if (!isdigit((unsigned char)*p)) return -1;
  while (isdigit((unsigned char)*p)) {
    v = v * 10 + (unsigned long long)(*p++ - '0');
    if (v > UINT32_MAX) return -1;
  }
  if (*p != stop) return -1;
  *s = stop ? p + 1 : p;
  return (long long)v;
}

static int crop_option(const cli_args *a, htpu_frame *fr) {
  const char *c = cli_get(a, "crop"), *at = c;
  long long v[4] = {-1, -1, -1, -1};
  if (!c) return CLI_EXIT_OK;
  for (int i = 0; i < 4; i++)
    if ((v[i] = crop_number(&at, i < 3 ? ',' : '\0')) < 0) break;
  if (v[3] < 0 || !v[2] || !v[3])
    return cli_usage_error(a->cmd, "--crop %s: expected X,Y,WIDTH,HEIGHT in pixels (each 0 to "
                                   "4294967295, WIDTH and HEIGHT at least 1; e.g. 0,0,640,480)",
                           c);
  fr->crop = (htpu_rect){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3]};
  return CLI_EXIT_OK;
}

/* --size, --format, --stride and --uv-offset describe raw bytes: with --image alone (a PPM
 * has its own size and format) they would be ignored without a word. */
static int image_only_options(const cli_args *a) {
  static const char *const raw[] = {"size", "format", "stride", "uv-offset"};
  if (cli_count(a, "frame")) return CLI_EXIT_OK;
  for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++)
    if (cli_get(a, raw[i]))
      return cli_usage_error(a->cmd, "--%s describes a raw --frame; an --image (PPM or PGM) has "
                                     "its own size and format: drop --%s, or give the file as "
                                     "--frame",
                             raw[i], raw[i]);
  return CLI_EXIT_OK;
}

int cli_frame_read(const cli_args *a, const char *path, int image, cli_frame *out) {
  memset(out, 0, sizeof *out);
  out->path = path;
  int rc = image ? image_only_options(a) : raw_options(a, &out->frame);
  if (!rc) rc = crop_option(a, &out->frame);
  size_t len = 0;
  if (!rc) rc = read_file(a->cmd, path, &out->bytes, &len);
  if (!rc && image) rc = parse_ppm(a->cmd, path, out, len);
  if (!rc && !image) {
    out->frame.data = out->bytes;
    out->frame.size = len;
  }
  if (rc) cli_frame_free(out);
  return rc;
}

void cli_frame_free(cli_frame *f) {
  free(f->bytes);
  memset(f, 0, sizeof *f);
}

int cli_frame_preprocess_options(const cli_args *a, htpu_preprocess_options *o) {
  htpu_preprocess_options_init(o);
  const char *mode = cli_get(a, "resize"), *ch = cli_get(a, "channels");
  if (mode && htpu_resize_mode_from_name(mode, &o->resize))
    return cli_usage_error(a->cmd, "--resize %s: %s", mode, htpu_last_error());
  if (ch && strcmp(ch, "rgb") && strcmp(ch, "bgr"))
    return cli_usage_error(a->cmd, "--channels %s: expected rgb or bgr", ch);
  o->bgr = ch && !strcmp(ch, "bgr");
  return cli_get_u32(a, "pad", 114, 0, 255, &o->pad_value);
}

/* ---- htpu run: --image / --frame into inputs ------------------------------------------------- */

/* The input a --image/--frame value names: NAME=FILE, or a bare FILE for a graph of one input. */
static int frame_target(const cli_args *a, const htpu_graph_info *gi, const char *opt,
                        const char *spec, int *idx, const char **path) {
  for (const char *eq = strchr(spec, '='); eq; eq = strchr(eq + 1, '=')) {
    size_t n = (size_t)(eq - spec);
    for (uint32_t i = 0; i < gi->num_inputs; i++) {
      const char *name = gi->inputs[i].name;
      if (name && strlen(name) == n && !memcmp(name, spec, n)) {
        *idx = (int)i;
        *path = eq + 1;
        return CLI_EXIT_OK;
      }
    }
  }
  if (gi->num_inputs == 1 && (!strchr(spec, '=') || access(spec, F_OK) == 0)) {
    *idx = 0;
    *path = spec;
    return CLI_EXIT_OK;
  }
  return cli_usage_error(a->cmd, "--%s %s: name the input as --%s NAME=FILE (the graph's inputs "
                                 "are %u; the first is '%s')",
                         opt, spec, opt, (unsigned)gi->num_inputs,
                         gi->num_inputs ? gi->inputs[0].name : "");
}

/* Reads one frame and preprocesses it into the item's tensor, in its own type. */
static int frame_into(const cli_args *a, int image, const char *path,
                      const htpu_preprocess_options *o, cli_input *item) {
  cli_frame f;
  const htpu_tensor_info *t = item->tensor;
  int rc = cli_frame_read(a, path, image, &f);
  if (rc) return rc;
  void *buf = malloc(t->byte_size ? t->byte_size : 1);
  if (!buf) {
    cli_frame_free(&f);
    return cli_fail(a->cmd, "out of memory (%zu bytes for input '%s')", t->byte_size, t->name);
  }
  int e = htpu_preprocess(&f.frame, t, o, buf, t->byte_size, NULL);
  cli_frame_free(&f);
  if (e) {
    free(buf);
    char what[512];
    snprintf(what, sizeof what, "--%s %s into input '%s'", image ? "image" : "frame", path,
             t->name);
    return cli_fail_htpu(a->cmd, e, what);
  }
  item->path = path;
  item->data = buf;
  item->size = t->byte_size;
  item->dtype = t->dtype;
  item->source = CLI_INPUT_FRAME;
  return CLI_EXIT_OK;
}

static int bind_option(const cli_args *a, const htpu_graph_info *gi, const char *opt,
                       const htpu_preprocess_options *o, cli_inputs *in) {
  for (size_t k = 0; k < cli_count(a, opt); k++) {
    const char *spec = cli_nth(a, opt, k), *path = NULL;
    int idx = -1;
    int rc = frame_target(a, gi, opt, spec, &idx, &path);
    if (!rc && in->items[idx].path)
      rc = cli_usage_error(a->cmd, "input '%s' given twice (%s and %s)", gi->inputs[idx].name,
                           in->items[idx].path, path);
    if (!rc) rc = frame_into(a, !strcmp(opt, "image"), path, o, &in->items[idx]);
    if (rc) return rc;
  }
  return CLI_EXIT_OK;
}

int cli_frames_bind(const cli_args *a, const htpu_graph_info *gi, cli_inputs *in) {
  htpu_preprocess_options o;
  int rc = cli_frame_preprocess_options(a, &o);
  if (!rc) rc = bind_option(a, gi, "image", &o, in);
  if (!rc) rc = bind_option(a, gi, "frame", &o, in);
  return rc ? rc : cli_inputs_check_all(a, gi, in);
}
