#ifndef MEDIAHOST_CPICTURES_H
#define MEDIAHOST_CPICTURES_H

#include <stddef.h>

/* Pictures for the terminal: images decoded by gdk-pixbuf (JPEG, PNG, GIF, WebP with its loader,
   EXIF orientation applied) and drawn by libchafa as kitty graphics, sixels, iTerm2 inline images
   or Unicode blocks. Both are loaded at first use (dlopen), so the binary runs where they are not
   installed and says so when asked for a picture. */

typedef struct mh_picture mh_picture;

enum { MH_PICTURE_BLOCKS = 0, MH_PICTURE_SIXELS = 1, MH_PICTURE_KITTY = 2, MH_PICTURE_ITERM = 3 };
enum { MH_COLORS_TRUE = 0, MH_COLORS_256 = 1, MH_COLORS_16 = 2 };

/* 0 when libchafa, gdk-pixbuf and GLib are there; else -1 with what is missing in `error`. */
int mh_pictures_load(char *error, size_t error_size);

/* Reads the image at `path`: its header first (a format no loader knows, or more pixels than
   `max_pixels` for a JPEG, a quarter of that for other formats, which decode at full size, is
   refused before decoding), then the pixels scaled down (never up) to fit `max_width` x
   `max_height`, turned as its EXIF orientation says. NULL with the reason in `error`. */
mh_picture *mh_picture_open(const char *path, int max_width, int max_height, long long max_pixels, char *error,
                            size_t error_size);

/* The decoded size in pixels, and the image's own before scaling. */
void mh_picture_size(const mh_picture *picture, int *width, int *height, int *original_width, int *original_height);

/* The escape text that draws the picture in at most `columns` x `rows` cells of `cell_width` x
   `cell_height` pixels, its aspect ratio kept: `mode` one of MH_PICTURE_*, `colors` one of
   MH_COLORS_* (for blocks). The cells it takes in `used_columns` and `used_rows`; the text is
   malloc'd (free with mh_pictures_free), NULL when it could not be made. */
char *mh_picture_draw(const mh_picture *picture, int mode, int colors, int columns, int rows, int cell_width,
                      int cell_height, int *used_columns, int *used_rows, size_t *length);

/* The picture as a PNG file's bytes (malloc'd), NULL with the reason in `error`. */
unsigned char *mh_picture_png(const mh_picture *picture, size_t *length, char *error, size_t error_size);

void mh_picture_close(mh_picture *picture);
void mh_pictures_free(void *pointer);

#endif
