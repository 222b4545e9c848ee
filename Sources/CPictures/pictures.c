#include "mh_pictures.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parts of GLib's, gdk-pixbuf's (2.32+) and libchafa's (1.12+) ABI used here, declared so no
   -dev package is needed to build. */
typedef int gboolean;
typedef struct {
    unsigned int domain;
    int code;
    char *message;
} GError;
typedef struct {
    char *str;
    size_t len;
    size_t allocated_len;
} GString;
typedef struct GdkPixbuf GdkPixbuf;
typedef struct GdkPixbufFormat GdkPixbufFormat;
typedef struct ChafaCanvasConfig ChafaCanvasConfig;
typedef struct ChafaCanvas ChafaCanvas;
typedef struct ChafaTermDb ChafaTermDb;
typedef struct ChafaTermInfo ChafaTermInfo;

enum { CHAFA_PIXEL_RGBA8_UNASSOCIATED = 4, CHAFA_PIXEL_RGB8 = 8 };
enum { CHAFA_CANVAS_MODE_TRUECOLOR = 0, CHAFA_CANVAS_MODE_INDEXED_256 = 1, CHAFA_CANVAS_MODE_INDEXED_16 = 3 };
enum { CHAFA_PIXEL_MODE_SYMBOLS = 0, CHAFA_PIXEL_MODE_SIXELS = 1, CHAFA_PIXEL_MODE_KITTY = 2, CHAFA_PIXEL_MODE_ITERM2 = 3 };

static struct {
    int loaded;
    char error[256];
    void (*g_free)(void *);
    void (*g_error_free)(GError *);
    char *(*g_string_free)(GString *, gboolean);
    void (*g_object_unref)(void *);
    GdkPixbufFormat *(*get_file_info)(const char *, int *, int *);
    char *(*format_get_name)(GdkPixbufFormat *);
    GdkPixbuf *(*new_from_file_at_scale)(const char *, int, int, gboolean, GError **);
    GdkPixbuf *(*apply_embedded_orientation)(GdkPixbuf *);
    int (*get_width)(const GdkPixbuf *);
    int (*get_height)(const GdkPixbuf *);
    int (*get_rowstride)(const GdkPixbuf *);
    gboolean (*get_has_alpha)(const GdkPixbuf *);
    const unsigned char *(*read_pixels)(const GdkPixbuf *);
    gboolean (*save_to_buffer)(GdkPixbuf *, char **, size_t *, const char *, GError **, ...);
    ChafaCanvasConfig *(*config_new)(void);
    void (*config_unref)(ChafaCanvasConfig *);
    void (*config_set_geometry)(ChafaCanvasConfig *, int, int);
    void (*config_set_cell_geometry)(ChafaCanvasConfig *, int, int);
    void (*config_set_pixel_mode)(ChafaCanvasConfig *, int);
    void (*config_set_canvas_mode)(ChafaCanvasConfig *, int);
    ChafaCanvas *(*canvas_new)(const ChafaCanvasConfig *);
    void (*canvas_unref)(ChafaCanvas *);
    void (*canvas_draw_all_pixels)(ChafaCanvas *, int, const unsigned char *, int, int, int);
    GString *(*canvas_print)(ChafaCanvas *, ChafaTermInfo *);
    ChafaTermDb *(*term_db_get_default)(void);
    ChafaTermInfo *(*term_db_get_fallback_info)(ChafaTermDb *);
    void (*term_info_unref)(ChafaTermInfo *);
} P;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

struct mh_picture {
    GdkPixbuf *pixbuf;
    int original_width, original_height;
};

int mh_pictures_load(char *error, size_t size) {
    pthread_mutex_lock(&load_lock);
    if (!P.loaded) {
        void *glib = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_GLOBAL);
        void *gobject = glib ? dlopen("libgobject-2.0.so.0", RTLD_NOW | RTLD_GLOBAL) : NULL;
        void *pixbuf = gobject ? dlopen("libgdk_pixbuf-2.0.so.0", RTLD_NOW | RTLD_LOCAL) : NULL;
        void *chafa = glib ? dlopen("libchafa.so.0", RTLD_NOW | RTLD_LOCAL) : NULL;
        if (!pixbuf) {
            snprintf(P.error, sizeof P.error, "gdk-pixbuf is not installed (libgdk-pixbuf-2.0-0)");
            P.loaded = -1;
        } else if (!chafa) {
            snprintf(P.error, sizeof P.error, "libchafa is not installed (libchafa0)");
            P.loaded = -1;
        } else {
            int ok = 1;
#define SYM(lib, field, symbol) ok &= (*(void **)&P.field = dlsym(lib, symbol)) != NULL
            SYM(glib, g_free, "g_free");
            SYM(glib, g_error_free, "g_error_free");
            SYM(glib, g_string_free, "g_string_free");
            SYM(gobject, g_object_unref, "g_object_unref");
            SYM(pixbuf, get_file_info, "gdk_pixbuf_get_file_info");
            SYM(pixbuf, format_get_name, "gdk_pixbuf_format_get_name");
            SYM(pixbuf, new_from_file_at_scale, "gdk_pixbuf_new_from_file_at_scale");
            SYM(pixbuf, apply_embedded_orientation, "gdk_pixbuf_apply_embedded_orientation");
            SYM(pixbuf, get_width, "gdk_pixbuf_get_width");
            SYM(pixbuf, get_height, "gdk_pixbuf_get_height");
            SYM(pixbuf, get_rowstride, "gdk_pixbuf_get_rowstride");
            SYM(pixbuf, get_has_alpha, "gdk_pixbuf_get_has_alpha");
            SYM(pixbuf, read_pixels, "gdk_pixbuf_read_pixels");
            SYM(pixbuf, save_to_buffer, "gdk_pixbuf_save_to_buffer");
            SYM(chafa, config_new, "chafa_canvas_config_new");
            SYM(chafa, config_unref, "chafa_canvas_config_unref");
            SYM(chafa, config_set_geometry, "chafa_canvas_config_set_geometry");
            SYM(chafa, config_set_cell_geometry, "chafa_canvas_config_set_cell_geometry");
            SYM(chafa, config_set_pixel_mode, "chafa_canvas_config_set_pixel_mode");
            SYM(chafa, config_set_canvas_mode, "chafa_canvas_config_set_canvas_mode");
            SYM(chafa, canvas_new, "chafa_canvas_new");
            SYM(chafa, canvas_unref, "chafa_canvas_unref");
            SYM(chafa, canvas_draw_all_pixels, "chafa_canvas_draw_all_pixels");
            SYM(chafa, canvas_print, "chafa_canvas_print");
            SYM(chafa, term_db_get_default, "chafa_term_db_get_default");
            SYM(chafa, term_db_get_fallback_info, "chafa_term_db_get_fallback_info");
            SYM(chafa, term_info_unref, "chafa_term_info_unref");
#undef SYM
            if (ok) {
                P.loaded = 1;
            } else {
                snprintf(P.error, sizeof P.error, "libchafa or gdk-pixbuf is older than mediahost needs (chafa 1.12, gdk-pixbuf 2.32)");
                P.loaded = -1;
            }
        }
    }
    int loaded = P.loaded;
    if (loaded < 0) snprintf(error, size, "%s", P.error);
    pthread_mutex_unlock(&load_lock);
    return loaded > 0 ? 0 : -1;
}

/* gdk-pixbuf's messages quote the path; the caller knows it. What follows "file" is cut. */
static void say(char *error, size_t size, const char *what, GError *gerror) {
    const char *message = gerror && gerror->message ? gerror->message : "no reason given";
    snprintf(error, size, "%s%s", what, message);
}

mh_picture *mh_picture_open(const char *path, int max_width, int max_height, long long max_pixels, char *error,
                            size_t size) {
    if (mh_pictures_load(error, size) != 0) return NULL;
    int width = 0, height = 0;
    GdkPixbufFormat *format = P.get_file_info(path, &width, &height);
    if (!format) {
        /* The header says nothing a loader knows; a decode attempt gives the reason. */
        GError *gerror = NULL;
        GdkPixbuf *attempt = P.new_from_file_at_scale(path, 1, 1, 1, &gerror);
        if (attempt) {
            P.g_object_unref(attempt);
            snprintf(error, size, "not an image any loader reads");
        } else {
            say(error, size, "", gerror);
        }
        if (gerror) P.g_error_free(gerror);
        return NULL;
    }
    char *name = P.format_get_name(format);
    int jpeg = name && strcmp(name, "jpeg") == 0;
    if (name) P.g_free(name);
    if (width <= 0 || height <= 0) {
        snprintf(error, size, "the image says it has no size");
        return NULL;
    }
    /* A JPEG decodes scaled (a fraction of its pixels); other formats at full size first. */
    long long limit = jpeg ? max_pixels : max_pixels / 4;
    if ((long long)width * height > limit) {
        snprintf(error, size, "the image says it is %dx%d pixels, more than a picture needs", width, height);
        return NULL;
    }
    /* The box is square: the EXIF orientation may turn the picture after decoding. Never up. */
    int side = max_width > max_height ? max_width : max_height;
    int decode_width = width, decode_height = height;
    if (width > side || height > side) decode_width = decode_height = side;
    GError *gerror = NULL;
    GdkPixbuf *decoded = P.new_from_file_at_scale(path, decode_width, decode_height, 1, &gerror);
    if (!decoded) {
        say(error, size, "", gerror);
        if (gerror) P.g_error_free(gerror);
        return NULL;
    }
    if (gerror) P.g_error_free(gerror);
    GdkPixbuf *turned = P.apply_embedded_orientation(decoded);
    P.g_object_unref(decoded);
    if (!turned) {
        snprintf(error, size, "the image could not be turned as its EXIF orientation says");
        return NULL;
    }
    mh_picture *picture = calloc(1, sizeof *picture);
    if (!picture) {
        P.g_object_unref(turned);
        snprintf(error, size, "out of memory");
        return NULL;
    }
    picture->pixbuf = turned;
    picture->original_width = width;
    picture->original_height = height;
    return picture;
}

void mh_picture_size(const mh_picture *picture, int *width, int *height, int *original_width, int *original_height) {
    *width = P.get_width(picture->pixbuf);
    *height = P.get_height(picture->pixbuf);
    *original_width = picture->original_width;
    *original_height = picture->original_height;
}

char *mh_picture_draw(const mh_picture *picture, int mode, int colors, int columns, int rows, int cell_width,
                      int cell_height, int *used_columns, int *used_rows, size_t *length) {
    if (columns < 1 || rows < 1 || cell_width < 1 || cell_height < 1) return NULL;
    int width = P.get_width(picture->pixbuf), height = P.get_height(picture->pixbuf);
    /* Fit in the box's pixels, aspect kept (chafa stretches to the canvas it is given). */
    double box_width = (double)columns * cell_width, box_height = (double)rows * cell_height;
    double scale = box_width / width;
    if (height * scale > box_height) scale = box_height / height;
    int cells_wide = (int)(width * scale / cell_width + 0.5), cells_high = (int)(height * scale / cell_height + 0.5);
    if (cells_wide < 1) cells_wide = 1;
    if (cells_high < 1) cells_high = 1;
    if (cells_wide > columns) cells_wide = columns;
    if (cells_high > rows) cells_high = rows;

    int pixel_mode = mode == MH_PICTURE_SIXELS  ? CHAFA_PIXEL_MODE_SIXELS
                     : mode == MH_PICTURE_KITTY ? CHAFA_PIXEL_MODE_KITTY
                     : mode == MH_PICTURE_ITERM ? CHAFA_PIXEL_MODE_ITERM2
                                                : CHAFA_PIXEL_MODE_SYMBOLS;
    int canvas_mode = colors == MH_COLORS_256 ? CHAFA_CANVAS_MODE_INDEXED_256
                      : colors == MH_COLORS_16 ? CHAFA_CANVAS_MODE_INDEXED_16
                                               : CHAFA_CANVAS_MODE_TRUECOLOR;
    ChafaCanvasConfig *config = P.config_new();
    P.config_set_geometry(config, cells_wide, cells_high);
    P.config_set_cell_geometry(config, cell_width, cell_height);
    P.config_set_pixel_mode(config, pixel_mode);
    P.config_set_canvas_mode(config, pixel_mode == CHAFA_PIXEL_MODE_SYMBOLS ? canvas_mode : CHAFA_CANVAS_MODE_TRUECOLOR);
    ChafaCanvas *canvas = P.canvas_new(config);
    P.config_unref(config);
    if (!canvas) return NULL;
    P.canvas_draw_all_pixels(canvas, P.get_has_alpha(picture->pixbuf) ? CHAFA_PIXEL_RGBA8_UNASSOCIATED : CHAFA_PIXEL_RGB8,
                             P.read_pixels(picture->pixbuf), width, height, P.get_rowstride(picture->pixbuf));
    /* The fallback term info has every protocol's sequences, whatever $TERM says. */
    ChafaTermInfo *info = P.term_db_get_fallback_info(P.term_db_get_default());
    GString *printed = P.canvas_print(canvas, info);
    P.term_info_unref(info);
    P.canvas_unref(canvas);
    if (!printed) return NULL;
    char *text = malloc(printed->len + 1);
    if (text) {
        memcpy(text, printed->str, printed->len);
        text[printed->len] = 0;
        *length = printed->len;
        *used_columns = cells_wide;
        *used_rows = cells_high;
    }
    P.g_string_free(printed, 1);
    return text;
}

unsigned char *mh_picture_png(const mh_picture *picture, size_t *length, char *error, size_t size) {
    char *buffer = NULL;
    size_t buffer_size = 0;
    GError *gerror = NULL;
    if (!P.save_to_buffer(picture->pixbuf, &buffer, &buffer_size, "png", &gerror, NULL)) {
        say(error, size, "", gerror);
        if (gerror) P.g_error_free(gerror);
        return NULL;
    }
    unsigned char *bytes = malloc(buffer_size ? buffer_size : 1);
    if (bytes) {
        memcpy(bytes, buffer, buffer_size);
        *length = buffer_size;
    } else {
        snprintf(error, size, "out of memory");
    }
    P.g_free(buffer);
    return bytes;
}

void mh_picture_close(mh_picture *picture) {
    if (!picture) return;
    if (picture->pixbuf) P.g_object_unref(picture->pixbuf);
    free(picture);
}

void mh_pictures_free(void *pointer) { free(pointer); }
