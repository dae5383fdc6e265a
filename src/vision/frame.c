/*
 * frame.c - the pixel formats and the checks a frame passes before a byte of it is read: the
 * frame comes from outside (a camera, a file, an Elixir binary), so every row it claims must
 * lie inside the bytes it has.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "vision.h"

static const char *const format_names[HTPU_PIXEL_FORMAT_COUNT] = {
    NULL, "rgb24", "bgr24", "rgba", "bgra", "gray8", "yuyv", "nv12"};

const char *htpu_pixel_format_name(htpu_pixel_format f) {
  return (unsigned)f < HTPU_PIXEL_FORMAT_COUNT ? format_names[f] : NULL;
}

int htpu_pixel_format_from_name(const char *name, htpu_pixel_format *out) {
  for (unsigned i = 1; name && i < HTPU_PIXEL_FORMAT_COUNT; i++) {
    if (strcmp(name, format_names[i]) == 0) {
      if (out) *out = (htpu_pixel_format)i;
      return 0;
    }
  }
  return htpu_set_error(HTPU_EINVAL, 0,
                        "unknown pixel format '%s': expected rgb24, bgr24, rgba, bgra, gray8, "
                        "yuyv or nv12",
                        name ? name : "(null)");
}

unsigned vis_format_bytes(htpu_pixel_format f) {
  switch (f) {
    case HTPU_PIXEL_RGB24:
    case HTPU_PIXEL_BGR24:
      return 3;
    case HTPU_PIXEL_RGBA:
    case HTPU_PIXEL_BGRA:
      return 4;
    case HTPU_PIXEL_YUYV:
      return 2;
    case HTPU_PIXEL_GRAY8:
    case HTPU_PIXEL_NV12:
      return 1;
    default:
      return 0;
  }
}

/* The bytes a plane of `rows` rows of `row_bytes` each, `stride` apart, needs from its start
 * (the last row unpadded). A stride below 2^32 and at most HTPU_VISION_MAX_SIDE rows (checked
 * first) keep this below 2^49. */
static uint64_t plane_bytes(uint64_t stride, uint64_t rows, uint64_t row_bytes) {
  return rows ? stride * (rows - 1) + row_bytes : 0;
}

static int check_sizes(const htpu_frame *f, const char *fmt, uint64_t row_bytes) {
  if (!f->width || !f->height)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: %ux%u has no pixels: expected a width and height of at least 1",
                          f->width, f->height);
  if (f->width > HTPU_VISION_MAX_SIDE || f->height > HTPU_VISION_MAX_SIDE)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: %ux%u is larger than %u pixels on a side (the largest frame "
                          "taken)",
                          f->width, f->height, HTPU_VISION_MAX_SIDE);
  if (f->format == HTPU_PIXEL_YUYV && f->width % 2)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: yuyv needs an even width (two pixels share U and V), got %u",
                          f->width);
  if (f->format == HTPU_PIXEL_NV12 && (f->width % 2 || f->height % 2))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: nv12 needs an even width and height (each 2x2 block shares "
                          "U and V), got %ux%u",
                          f->width, f->height);
  if (f->stride && f->stride < row_bytes)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: stride %u is smaller than a row of %u %s pixels (%llu bytes): "
                          "expected 0 (rows packed) or at least %llu",
                          f->stride, f->width, fmt, (unsigned long long)row_bytes,
                          (unsigned long long)row_bytes);
  return HTPU_OK;
}

/* The Y (or only) plane and, for NV12, the UV plane must lie inside size. */
static int check_extent(const htpu_frame *f, const char *fmt, uint64_t stride, uint64_t row_bytes,
                        vis_frame *out) {
  uint64_t need = plane_bytes(stride, f->height, row_bytes);
  if (need > f->size)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: %ux%u %s with a stride of %llu needs %llu bytes, got %zu",
                          f->width, f->height, fmt, (unsigned long long)stride,
                          (unsigned long long)need, f->size);
  if (f->format != HTPU_PIXEL_NV12) return HTPU_OK;
  uint64_t uv_off = f->uv_offset ? f->uv_offset : stride * f->height;
  if (f->uv_offset && f->uv_offset < need)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: the nv12 UV plane at offset %zu overlaps the Y plane, which "
                          "ends at %llu: expected 0 (right after the Y plane) or at least %llu",
                          f->uv_offset, (unsigned long long)need, (unsigned long long)need);
  uint64_t uv_need = plane_bytes(stride, f->height / 2, row_bytes);
  /* uv_offset comes from the caller whole (up to SIZE_MAX): compared before it is added to */
  if (uv_off > f->size)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: the nv12 UV plane offset %llu is past the frame's %zu bytes "
                          "(the UV plane needs %llu bytes from its offset)",
                          (unsigned long long)uv_off, f->size, (unsigned long long)uv_need);
  if (uv_need > f->size - uv_off)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: %ux%u nv12 with a stride of %llu needs %llu bytes (Y plane, then "
                          "the UV plane at %llu), got %zu",
                          f->width, f->height, (unsigned long long)stride,
                          (unsigned long long)(uv_off + uv_need), (unsigned long long)uv_off,
                          f->size);
  out->uv = (const uint8_t *)f->data + uv_off;
  return HTPU_OK;
}

static int check_crop(const htpu_frame *f, vis_frame *out) {
  htpu_rect c = f->crop;
  if (!c.width || !c.height) {
    if (c.x || c.y || c.width || c.height)
      return htpu_set_error(HTPU_EINVAL, 0,
                            "frame: crop %ux%u at (%u, %u) is empty: give a width and a height "
                            "(or all zero for the whole frame)",
                            c.width, c.height, c.x, c.y);
    c = (htpu_rect){0, 0, f->width, f->height};
  }
  if ((uint64_t)c.x + c.width > f->width || (uint64_t)c.y + c.height > f->height)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: crop %ux%u at (%u, %u) is outside the %ux%u frame: expected x + "
                          "width <= %u and y + height <= %u",
                          c.width, c.height, c.x, c.y, f->width, f->height, f->width, f->height);
  out->crop = c;
  return HTPU_OK;
}

int vis_frame_check(const htpu_frame *f, vis_frame *out) {
  if (!f) return htpu_set_error(HTPU_EINVAL, 0, "frame: NULL");
  memset(out, 0, sizeof *out);
  const char *fmt = htpu_pixel_format_name(f->format);
  if (!fmt)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "frame: pixel format %d is not one of rgb24, bgr24, rgba, bgra, gray8, "
                          "yuyv, nv12",
                          (int)f->format);
  uint64_t row_bytes = (uint64_t)f->width * vis_format_bytes(f->format);
  int rc = check_sizes(f, fmt, row_bytes);
  if (rc) return rc;
  if (!f->data) return htpu_set_error(HTPU_EINVAL, 0, "frame: data is NULL");
  uint64_t stride = f->stride ? f->stride : row_bytes;
  if ((rc = check_extent(f, fmt, stride, row_bytes, out)) || (rc = check_crop(f, out))) return rc;
  out->data = f->data;
  out->end = (const uint8_t *)f->data + f->size;
  out->stride = (size_t)stride;
  out->width = f->width;
  out->height = f->height;
  out->format = f->format;
  return HTPU_OK;
}
