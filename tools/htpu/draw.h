/* draw.h - boxes, labels and keypoints on an RGB image, for `htpu detect --draw` (draw.c). */
#ifndef HTPU_DRAW_H
#define HTPU_DRAW_H

#include <stdint.h>

typedef struct cli_image {
  uint8_t *rgb; /* width * height * 3, rows packed */
  uint32_t width, height;
} cli_image;

/* A color for a class id (a palette of distinct hues). */
const uint8_t *cli_class_color(uint32_t class_id);
/* The rectangle box (x1, y1, x2, y2) outlined `thick` pixels wide; clipped to the image. */
void cli_draw_box(cli_image *im, const float *box, const uint8_t *color, int thick);
/* Text in the 5x7 font at (x, y) (its top left), each font pixel `scale` x `scale`, over a
 * filled background when bg is not NULL. */
void cli_draw_text(cli_image *im, int x, int y, const char *text, const uint8_t *fg,
                   const uint8_t *bg, int scale);
/* The width of text in pixels at `scale`. */
int cli_text_width(const char *text, int scale);
/* A filled disc. */
void cli_draw_dot(cli_image *im, float x, float y, int radius, const uint8_t *color);

#endif
