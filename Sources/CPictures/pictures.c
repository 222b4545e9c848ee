#define _GNU_SOURCE
#include "mh_pictures.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
typedef struct GdkPixbufLoader GdkPixbufLoader;
typedef struct {
    const char *key;
    const void *value;
    long length;
} GLogField;
typedef void (*GLogFunc)(const char *domain, int level, const char *message, void *data);
typedef int (*GLogWriterFunc)(int level, const GLogField *fields, size_t count, void *data);
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
    GdkPixbufLoader *(*loader_new_with_type)(const char *, GError **);
    gboolean (*loader_write)(GdkPixbufLoader *, const unsigned char *, size_t, GError **);
    gboolean (*loader_close)(GdkPixbufLoader *, GError **);
    GdkPixbuf *(*loader_get_pixbuf)(GdkPixbufLoader *);
    void (*loader_set_size)(GdkPixbufLoader *, int, int);
    unsigned long (*signal_connect_data)(void *, const char *, void (*)(void), void *, void *, int);
    void *(*g_object_ref)(void *);
    GLogFunc (*g_log_set_default_handler)(GLogFunc, void *);
    void (*g_log_set_writer_func)(GLogWriterFunc, void *, void *);
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

/* The last message GLib or a loader logged on this thread. */
static __thread char last_log[200];

static void keep_log_message(const char *domain, int level, const char *message, void *data) {
    (void)domain, (void)level, (void)data;
    snprintf(last_log, sizeof last_log, "%s", message ? message : "");
}

static int keep_log_fields(int level, const GLogField *fields, size_t count, void *data) {
    (void)level, (void)data;
    for (size_t i = 0; i < count; i++) {
        if (fields[i].key && strcmp(fields[i].key, "MESSAGE") == 0 && fields[i].value) {
            if (fields[i].length < 0) {
                snprintf(last_log, sizeof last_log, "%s", (const char *)fields[i].value);
            } else {
                int length = fields[i].length < (long)sizeof last_log - 1 ? (int)fields[i].length : (int)sizeof last_log - 1;
                memcpy(last_log, fields[i].value, length);
                last_log[length] = 0;
            }
        }
    }
    return 1; /* G_LOG_WRITER_HANDLED */
}

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
            SYM(pixbuf, loader_new_with_type, "gdk_pixbuf_loader_new_with_type");
            SYM(pixbuf, loader_write, "gdk_pixbuf_loader_write");
            SYM(pixbuf, loader_close, "gdk_pixbuf_loader_close");
            SYM(pixbuf, loader_get_pixbuf, "gdk_pixbuf_loader_get_pixbuf");
            SYM(pixbuf, loader_set_size, "gdk_pixbuf_loader_set_size");
            SYM(gobject, signal_connect_data, "g_signal_connect_data");
            SYM(gobject, g_object_ref, "g_object_ref");
            SYM(glib, g_log_set_default_handler, "g_log_set_default_handler");
            SYM(glib, g_log_set_writer_func, "g_log_set_writer_func");
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
                /* GLib's and the loaders' warnings (a WebP loader's "Could not instantiate
                   WebPAnimDecoder", CRITICALs) would be written over the REPL's screen: they are
                   kept instead, for the reason a picture is not drawn. */
                P.g_log_set_default_handler(keep_log_message, NULL);
                P.g_log_set_writer_func(keep_log_fields, NULL, NULL);
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

/* gdk-pixbuf's messages quote the path and the decoder's state ("Error interpreting JPEG image
   file (Improper call to JPEG library in state 205)"): a person gets the first clause alone. */
static void say(char *error, size_t size, const char *what, GError *gerror) {
    const char *message = gerror && gerror->message ? gerror->message : (last_log[0] ? last_log : "no reason given");
    size_t length = strcspn(message, "(\n");
    while (length > 0 && (message[length - 1] == ' ' || message[length - 1] == '.' || message[length - 1] == ':')) length--;
    snprintf(error, size, "%s%.*s", what, (int)length, message);
}

/* What a file holds, told by its first bytes (its name and the server's type may lie). */
enum format { FORMAT_UNKNOWN, FORMAT_JPEG, FORMAT_PNG, FORMAT_GIF, FORMAT_WEBP };

static enum format sniff(const unsigned char *b, size_t n, const char **other) {
    *other = NULL;
    if (n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return FORMAT_JPEG;
    if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) return FORMAT_PNG;
    if (n >= 6 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0)) return FORMAT_GIF;
    if (n >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0) return FORMAT_WEBP;
    /* Others are named, so the reason says what it was. */
    if (n >= 12 && memcmp(b + 4, "ftyp", 4) == 0) {
        *other = memcmp(b + 8, "avif", 4) == 0 || memcmp(b + 8, "avis", 4) == 0 ? "AVIF" : "HEIF";
    } else if (n >= 2 && b[0] == 'B' && b[1] == 'M') {
        *other = "BMP";
    } else if (n >= 4 && (memcmp(b, "II*\0", 4) == 0 || memcmp(b, "MM\0*", 4) == 0)) {
        *other = "TIFF";
    } else if (n >= 4 && memcmp(b, "\0\0\1\0", 4) == 0) {
        *other = "ICO";
    } else {
        size_t i = 0;
        while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t' || b[i] == 0xEF || b[i] == 0xBB || b[i] == 0xBF)) i++;
        if (i < n && b[i] == '<') {
            *other = memmem(b, n, "<svg", 4) ? "SVG" : "page";
        }
    }
    return FORMAT_UNKNOWN;
}

static uint32_t le24(const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16; }
static uint32_t le32(const unsigned char *p) { return le24(p) | (uint32_t)p[3] << 24; }

/* An animated WebP's first frame as a WebP of its own (its ALPH and VP8/VP8L chunks in a new
   container): the loader otherwise composes every frame, 2.5 GB for a 15 MB file. The file as it
   is when it is not animated; NULL (with `error`) when the animation has no readable frame. */
static unsigned char *webp_first_frame(const unsigned char *b, size_t n, size_t *out_length, char *error, size_t size) {
    if (n < 30 || memcmp(b + 12, "VP8X", 4) != 0 || !(b[20] & 0x02)) return NULL;
    size_t at = 12;
    while (at + 8 <= n) {
        uint32_t length = le32(b + at + 4);
        size_t next = at + 8 + length + (length & 1);
        if (memcmp(b + at, "ANMF", 4) == 0 && length >= 16 && at + 8 + length <= n) {
            const unsigned char *frame = b + at + 8;
            uint32_t width = le24(frame + 6) + 1, height = le24(frame + 9) + 1;
            size_t data = 16, end = length;
            /* ALPH (optional), then VP8 or VP8L: copied as they are. */
            size_t alpha_at = 0, alpha_length = 0, image_at = 0, image_length = 0;
            int lossless = 0;
            while (data + 8 <= end) {
                uint32_t chunk = le32(frame + data + 4);
                if (data + 8 + chunk > end) break;
                if (memcmp(frame + data, "ALPH", 4) == 0) {
                    alpha_at = data, alpha_length = 8 + chunk + (chunk & 1);
                } else if (memcmp(frame + data, "VP8 ", 4) == 0 || memcmp(frame + data, "VP8L", 4) == 0) {
                    image_at = data, image_length = 8 + chunk + (chunk & 1);
                    lossless = frame[data + 3] == 'L';
                    break;
                }
                data += 8 + chunk + (chunk & 1);
            }
            if (!image_length || (image_at + image_length > end && image_at + 8 + le32(frame + image_at + 4) > end)) break;
            if (image_at + image_length > end) image_length = end - image_at;
            int extended = alpha_length > 0 && !lossless;
            size_t total = 12 + (extended ? 18 + alpha_length : 0) + image_length;
            unsigned char *still = malloc(total);
            if (!still) break;
            memcpy(still, "RIFF", 4);
            uint32_t riff = (uint32_t)(total - 8);
            still[4] = riff, still[5] = riff >> 8, still[6] = riff >> 16, still[7] = riff >> 24;
            memcpy(still + 8, "WEBP", 4);
            size_t w = 12;
            if (extended) {
                memcpy(still + w, "VP8X\x0a\0\0\0\x10\0\0\0", 12); /* the alpha flag */
                uint32_t cw = width - 1, ch = height - 1;
                still[w + 12] = cw, still[w + 13] = cw >> 8, still[w + 14] = cw >> 16;
                still[w + 15] = ch, still[w + 16] = ch >> 8, still[w + 17] = ch >> 16;
                w += 18;
                memcpy(still + w, frame + alpha_at, alpha_length);
                w += alpha_length;
            }
            memcpy(still + w, frame + image_at, image_length);
            *out_length = total;
            return still;
        }
        if (next <= at) break;
        at = next;
    }
    snprintf(error, size, "the animated WebP has no frame that can be read");
    return NULL;
}

/* A GIF's first frame as a GIF of its own (the loader decodes every frame of an animation).
   NULL when it has one frame, or cannot be walked (the loader then says why). */
static unsigned char *gif_first_frame(const unsigned char *b, size_t n, size_t *out_length) {
    if (n < 13) return NULL;
    size_t at = 13;
    if (b[10] & 0x80) at += 3u << ((b[10] & 7) + 1);
    size_t header = at, control = 0, control_length = 0, frame = 0, frame_end = 0;
    int frames = 0;
    while (at < n) {
        if (b[at] == 0x3B) break;
        if (b[at] == 0x21 && at + 2 <= n) {
            size_t start = at;
            at += 2;
            while (at < n && b[at]) at += b[at] + 1;
            at++;
            if (b[start + 1] == 0xF9 && !frames) control = start, control_length = at - start;
        } else if (b[at] == 0x2C && at + 10 <= n) {
            if (frames++ == 0) frame = at;
            at += 10;
            if (b[at - 1] & 0x80) at += 3u << ((b[at - 1] & 7) + 1);
            at++; /* LZW minimum code size */
            while (at < n && b[at]) at += b[at] + 1;
            at++;
            if (frames == 1) frame_end = at;
            if (frames > 1) break;
        } else {
            return NULL;
        }
    }
    if (frames < 2 || frame_end > n) return NULL;
    size_t total = header + control_length + (frame_end - frame) + 1;
    unsigned char *still = malloc(total);
    if (!still) return NULL;
    memcpy(still, b, header);
    if (control_length) memcpy(still + header, b + control, control_length);
    memcpy(still + header + control_length, b + frame, frame_end - frame);
    still[total - 1] = 0x3B;
    *out_length = total;
    return still;
}

/* A JPEG's size, its components and whether it is progressive, from its frame header: a
   progressive JPEG is decoded whole into memory first (two bytes per component per pixel). */
static int jpeg_frame(const unsigned char *b, size_t n, int *width, int *height, int *components, int *progressive) {
    size_t at = 2;
    while (at + 4 <= n) {
        if (b[at] != 0xFF) return 0;
        unsigned char marker = b[at + 1];
        if (marker == 0xFF) {
            at++;
            continue;
        }
        size_t length = (size_t)b[at + 2] << 8 | b[at + 3];
        if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
            if (at + 10 > n) return 0;
            *height = b[at + 5] << 8 | b[at + 6];
            *width = b[at + 7] << 8 | b[at + 8];
            *components = b[at + 9];
            *progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
            return 1;
        }
        if (marker == 0xD9 || marker == 0xDA) return 0;
        at += 2 + length;
    }
    return 0;
}

/* The most a progressive JPEG may make the decoder hold: its coefficients, whole. */
static const long long max_progressive_bytes = 160LL * 1000 * 1000;
/* The largest file read: a picture is a few MB; a cover a server sends over 64 MB is no picture. */
static const long long max_file_bytes = 64LL * 1024 * 1024;

struct sizing {
    int side;
};

static void size_prepared(GdkPixbufLoader *loader, int width, int height, void *data) {
    int side = ((struct sizing *)data)->side;
    if (width <= side && height <= side) return;
    /* Fit the square box, aspect kept: the EXIF orientation may turn it after decoding. */
    double scale = width > height ? (double)side / width : (double)side / height;
    int w = (int)(width * scale + 0.5), h = (int)(height * scale + 0.5);
    P.loader_set_size(loader, w > 0 ? w : 1, h > 0 ? h : 1);
}

static unsigned char *read_file(const char *path, size_t *length, char *error, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(error, size, "%s", strerror(errno));
        return NULL;
    }
    size_t capacity = 65536, used = 0;
    unsigned char *bytes = malloc(capacity);
    while (bytes) {
        if (used == capacity) {
            if ((long long)capacity >= max_file_bytes) {
                snprintf(error, size, "the file is over %lld MB: no picture", max_file_bytes >> 20);
                free(bytes);
                bytes = NULL;
                break;
            }
            unsigned char *grown = realloc(bytes, capacity * 2);
            if (!grown) {
                free(bytes);
                bytes = NULL;
                break;
            }
            bytes = grown, capacity *= 2;
        }
        ssize_t got = read(fd, bytes + used, capacity - used);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(error, size, "%s", strerror(errno));
            free(bytes);
            bytes = NULL;
            break;
        }
        if (got == 0) break;
        used += (size_t)got;
    }
    close(fd);
    if (bytes) *length = used;
    else if (!error[0]) snprintf(error, size, "out of memory");
    return bytes;
}

mh_picture *mh_picture_open(const char *path, int max_width, int max_height, long long max_pixels, char *error,
                            size_t size) {
    if (mh_pictures_load(error, size) != 0) return NULL;
    error[0] = 0;
    last_log[0] = 0;
    size_t length = 0;
    unsigned char *bytes = read_file(path, &length, error, size);
    if (!bytes) return NULL;
    const char *other = NULL;
    enum format format = sniff(bytes, length, &other);
    if (format == FORMAT_UNKNOWN) {
        if (length == 0) snprintf(error, size, "the file is empty: couldn't recognize it as a picture");
        else if (other && strcmp(other, "page") == 0) snprintf(error, size, "a web page, not a picture: couldn't recognize a picture format");
        else if (other) snprintf(error, size, "%s pictures are not drawn (JPEG, PNG, GIF and WebP are)", other);
        else snprintf(error, size, "not a picture: couldn't recognize its format (JPEG, PNG, GIF or WebP)");
        free(bytes);
        return NULL;
    }
    static const char *const types[] = {"", "jpeg", "png", "gif", "webp"};
    int width = 0, height = 0;
    GdkPixbufFormat *info = P.get_file_info(path, &width, &height);
    (void)info;
    if (format == FORMAT_JPEG) {
        int w = 0, h = 0, components = 3, progressive = 0;
        if (jpeg_frame(bytes, length, &w, &h, &components, &progressive)) {
            width = w, height = h;
            if (progressive && (long long)w * h * components * 2 > max_progressive_bytes) {
                snprintf(error, size, "the progressive JPEG is %dx%d pixels, more than a picture needs", w, h);
                free(bytes);
                return NULL;
            }
        }
    }
    /* A JPEG decodes scaled (a fraction of its pixels); other formats at full size first. */
    long long limit = format == FORMAT_JPEG ? max_pixels : max_pixels / 4;
    if ((long long)width * height > limit) {
        snprintf(error, size, "the image says it is %dx%d pixels, more than a picture needs", width, height);
        free(bytes);
        return NULL;
    }
    /* An animation is its first frame. */
    size_t still_length = 0;
    unsigned char *still = format == FORMAT_WEBP ? webp_first_frame(bytes, length, &still_length, error, size)
                           : format == FORMAT_GIF ? gif_first_frame(bytes, length, &still_length)
                                                  : NULL;
    if (!still && error[0]) {
        free(bytes);
        return NULL;
    }
    if (still) {
        free(bytes);
        bytes = still, length = still_length;
    }
    GError *gerror = NULL;
    GdkPixbufLoader *loader = P.loader_new_with_type(types[format], &gerror);
    if (!loader) {
        say(error, size, "", gerror);
        if (gerror) P.g_error_free(gerror);
        free(bytes);
        return NULL;
    }
    struct sizing sizing = {max_width > max_height ? max_width : max_height};
    P.signal_connect_data(loader, "size-prepared", (void (*)(void))size_prepared, &sizing, NULL, 0);
    int written = 1;
    for (size_t at = 0; at < length && written;) {
        size_t chunk = length - at < 65536 ? length - at : 65536;
        written = P.loader_write(loader, bytes + at, chunk, &gerror);
        at += chunk;
    }
    free(bytes);
    GError *closing = NULL;
    int closed = P.loader_close(loader, written ? &closing : NULL);
    /* What arrived is drawn (as browsers draw a cut-off picture); without it, one short reason. */
    GdkPixbuf *decoded = P.loader_get_pixbuf(loader);
    if (decoded) P.g_object_ref(decoded);
    if (!decoded) say(error, size, "", gerror ? gerror : closing);
    if (gerror) P.g_error_free(gerror);
    if (closing) P.g_error_free(closing);
    (void)closed;
    P.g_object_unref(loader);
    if (!decoded) return NULL;
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
    picture->original_width = width > 0 ? width : P.get_width(turned);
    picture->original_height = height > 0 ? height : P.get_height(turned);
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
