#define _GNU_SOURCE
#include "mh_dbus.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The parts of sd-bus's ABI used here (libsystemd.so.0, systemd 240 and later), declared so no
   -dev package is needed to build. Only the message-level API: the vtable macros are C layout
   that a declaration here could get wrong. */
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;
typedef struct {
    const char *name;
    const char *message;
    int _need_free;
} sd_bus_error;
typedef int (*sd_bus_message_handler_t)(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);

static struct {
    int loaded;
    char error[256];
    int (*open_user)(sd_bus **);
    int (*request_name)(sd_bus *, const char *, uint64_t);
    int (*add_object)(sd_bus *, sd_bus_slot **, const char *, sd_bus_message_handler_t, void *);
    sd_bus *(*flush_close_unref)(sd_bus *);
    int (*get_fd)(sd_bus *);
    int (*get_events)(sd_bus *);
    int (*get_timeout)(sd_bus *, uint64_t *);
    int (*process)(sd_bus *, sd_bus_message **);
    int (*flush)(sd_bus *);
    int (*send)(sd_bus *, sd_bus_message *, uint64_t *);
    sd_bus_slot *(*slot_unref)(sd_bus_slot *);
    int (*is_method_call)(sd_bus_message *, const char *, const char *);
    int (*read)(sd_bus_message *, const char *, ...);
    int (*enter_container)(sd_bus_message *, char, const char *);
    int (*peek_type)(sd_bus_message *, char *, const char **);
    int (*new_method_return)(sd_bus_message *, sd_bus_message **);
    int (*new_signal)(sd_bus *, sd_bus_message **, const char *, const char *, const char *);
    int (*new_method_call)(sd_bus *, sd_bus_message **, const char *, const char *, const char *, const char *);
    int (*append)(sd_bus_message *, const char *, ...);
    int (*append_basic)(sd_bus_message *, char, const void *);
    int (*open_container)(sd_bus_message *, char, const char *);
    int (*close_container)(sd_bus_message *);
    int (*set_expect_reply)(sd_bus_message *, int);
    int (*reply_method_return)(sd_bus_message *, const char *, ...);
    int (*reply_method_errorf)(sd_bus_message *, const char *, const char *, ...);
    sd_bus_message *(*message_unref)(sd_bus_message *);
} B;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int load(char *error, size_t size) {
    pthread_mutex_lock(&load_lock);
    if (!B.loaded) {
        void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(B.error, sizeof B.error, "systemd's library (libsystemd0) is not installed");
            B.loaded = -1;
        } else {
            int ok = 1;
#define SYM(field, symbol) ok &= (*(void **)&B.field = dlsym(lib, symbol)) != NULL
            SYM(open_user, "sd_bus_open_user");
            SYM(request_name, "sd_bus_request_name");
            SYM(add_object, "sd_bus_add_object");
            SYM(flush_close_unref, "sd_bus_flush_close_unref");
            SYM(get_fd, "sd_bus_get_fd");
            SYM(get_events, "sd_bus_get_events");
            SYM(get_timeout, "sd_bus_get_timeout");
            SYM(process, "sd_bus_process");
            SYM(flush, "sd_bus_flush");
            SYM(send, "sd_bus_send");
            SYM(slot_unref, "sd_bus_slot_unref");
            SYM(is_method_call, "sd_bus_message_is_method_call");
            SYM(read, "sd_bus_message_read");
            SYM(enter_container, "sd_bus_message_enter_container");
            SYM(peek_type, "sd_bus_message_peek_type");
            SYM(new_method_return, "sd_bus_message_new_method_return");
            SYM(new_signal, "sd_bus_message_new_signal");
            SYM(new_method_call, "sd_bus_message_new_method_call");
            SYM(append, "sd_bus_message_append");
            SYM(append_basic, "sd_bus_message_append_basic");
            SYM(open_container, "sd_bus_message_open_container");
            SYM(close_container, "sd_bus_message_close_container");
            SYM(set_expect_reply, "sd_bus_message_set_expect_reply");
            SYM(reply_method_return, "sd_bus_reply_method_return");
            SYM(reply_method_errorf, "sd_bus_reply_method_errorf");
            SYM(message_unref, "sd_bus_message_unref");
#undef SYM
            if (ok) {
                B.loaded = 1;
            } else {
                snprintf(B.error, sizeof B.error, "libsystemd.so.0 lacks sd-bus (systemd 240 or later is needed)");
                B.loaded = -1;
            }
        }
    }
    int loaded = B.loaded;
    if (loaded < 0) snprintf(error, size, "%s", B.error);
    pthread_mutex_unlock(&load_lock);
    return loaded > 0 ? 0 : -1;
}

static int open_bus(sd_bus **bus, char *error, size_t size) {
    if (load(error, size) != 0) return -1;
    int r = B.open_user(bus);
    if (r < 0) {
        snprintf(error, size, "no session bus (%s)", strerror(-r));
        return -1;
    }
    return 0;
}

/* MARK: The player */

#define ROOT "org.mpris.MediaPlayer2"
#define PLAYER "org.mpris.MediaPlayer2.Player"
#define PATH "/org/mpris/MediaPlayer2"
#define NO_TRACK "/org/mpris/MediaPlayer2/TrackList/NoTrack"

typedef struct {
    char *status, *track_id, *title, *artist, *album, *art_url, *url;
    int64_t length_us, position_us;
    double volume;
    int can_go_next, can_go_previous, can_seek, can_play, can_pause;
    struct timespec stamp; /* when position_us was true */
} state;

struct mh_mpris {
    sd_bus *bus;
    sd_bus_slot *slot;
    char *identity;
    mh_mpris_command command;
    void *context;
    pthread_t thread;
    int wake[2];
    pthread_mutex_t lock;
    state now;     /* what the properties answer */
    state sent;    /* what was last signalled */
    int have_sent;
    int64_t seeked; /* a Seeked to send, or -1 */
    int stopping;
    int serving;
};

static char *copy(const char *text) { return strdup(text ? text : ""); }

static void state_free(state *s) {
    free(s->status);
    free(s->track_id);
    free(s->title);
    free(s->artist);
    free(s->album);
    free(s->art_url);
    free(s->url);
    memset(s, 0, sizeof *s);
}

static void state_copy(state *to, const state *from) {
    state_free(to);
    *to = *from;
    to->status = copy(from->status);
    to->track_id = copy(from->track_id);
    to->title = copy(from->title);
    to->artist = copy(from->artist);
    to->album = copy(from->album);
    to->art_url = copy(from->art_url);
    to->url = copy(from->url);
}

static int64_t position_now(const state *s) {
    if (strcmp(s->status, "Playing") != 0) return s->position_us;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t elapsed = (int64_t)(now.tv_sec - s->stamp.tv_sec) * 1000000 + (now.tv_nsec - s->stamp.tv_nsec) / 1000;
    int64_t position = s->position_us + (elapsed > 0 ? elapsed : 0);
    return s->length_us > 0 && position > s->length_us ? s->length_us : position;
}

static int add_variant(sd_bus_message *m, const char *key, char type, const void *value) {
    char contents[2] = {type, 0};
    int r = B.open_container(m, 'e', "sv");
    if (r >= 0) r = B.append_basic(m, 's', key);
    if (r >= 0) r = B.open_container(m, 'v', contents);
    if (r >= 0) r = B.append_basic(m, type, value);
    if (r >= 0) r = B.close_container(m);
    if (r >= 0) r = B.close_container(m);
    return r;
}

static int append_metadata(sd_bus_message *m, const state *s) {
    int r = B.open_container(m, 'a', "{sv}");
    const char *track = s->track_id[0] ? s->track_id : NO_TRACK;
    if (r >= 0) r = add_variant(m, "mpris:trackid", 'o', track);
    if (r >= 0 && s->length_us > 0) r = add_variant(m, "mpris:length", 'x', &s->length_us);
    if (r >= 0 && s->title[0]) r = add_variant(m, "xesam:title", 's', s->title);
    if (r >= 0 && s->album[0]) r = add_variant(m, "xesam:album", 's', s->album);
    if (r >= 0 && s->art_url[0]) r = add_variant(m, "mpris:artUrl", 's', s->art_url);
    if (r >= 0 && s->url[0]) r = add_variant(m, "xesam:url", 's', s->url);
    if (r >= 0 && s->artist[0]) {
        r = B.open_container(m, 'e', "sv");
        if (r >= 0) r = B.append(m, "s", "xesam:artist");
        if (r >= 0) r = B.open_container(m, 'v', "as");
        if (r >= 0) r = B.append(m, "as", 1, s->artist);
        if (r >= 0) r = B.close_container(m);
        if (r >= 0) r = B.close_container(m);
    }
    if (r >= 0) r = B.close_container(m);
    return r;
}

/* Appends property `name` of `interface` as a variant; 0 when there is none of that name. */
static int append_property(sd_bus_message *m, const char *interface, const char *name, const struct mh_mpris *p,
                           const state *s) {
    int yes = 1, no = 0;
    double one = 1.0;
    char *empty[] = {NULL};
    (void)empty;
#define VARIANT(sig, ...)                                                                                  \
    do {                                                                                                   \
        int r_ = B.open_container(m, 'v', sig);                                                            \
        if (r_ >= 0) r_ = B.append(m, sig, __VA_ARGS__);                                                   \
        if (r_ >= 0) r_ = B.close_container(m);                                                            \
        return r_ < 0 ? r_ : 1;                                                                            \
    } while (0)
    if (strcmp(interface, ROOT) == 0) {
        if (strcmp(name, "CanQuit") == 0) VARIANT("b", no);
        if (strcmp(name, "CanRaise") == 0) VARIANT("b", no);
        if (strcmp(name, "HasTrackList") == 0) VARIANT("b", no);
        if (strcmp(name, "Identity") == 0) VARIANT("s", p->identity);
        if (strcmp(name, "DesktopEntry") == 0) VARIANT("s", "mediahost");
        if (strcmp(name, "SupportedUriSchemes") == 0) VARIANT("as", 0);
        if (strcmp(name, "SupportedMimeTypes") == 0) VARIANT("as", 0);
        return 0;
    }
    if (strcmp(interface, PLAYER) != 0) return 0;
    if (strcmp(name, "PlaybackStatus") == 0) VARIANT("s", s->status);
    if (strcmp(name, "Rate") == 0 || strcmp(name, "MinimumRate") == 0 || strcmp(name, "MaximumRate") == 0)
        VARIANT("d", one);
    if (strcmp(name, "Volume") == 0) VARIANT("d", s->volume < 0 ? 1.0 : s->volume);
    if (strcmp(name, "Position") == 0) VARIANT("x", position_now(s));
    if (strcmp(name, "CanGoNext") == 0) VARIANT("b", s->can_go_next);
    if (strcmp(name, "CanGoPrevious") == 0) VARIANT("b", s->can_go_previous);
    if (strcmp(name, "CanPlay") == 0) VARIANT("b", s->can_play);
    if (strcmp(name, "CanPause") == 0) VARIANT("b", s->can_pause);
    if (strcmp(name, "CanSeek") == 0) VARIANT("b", s->can_seek);
    if (strcmp(name, "CanControl") == 0) VARIANT("b", yes);
    if (strcmp(name, "Metadata") == 0) {
        int r = B.open_container(m, 'v', "a{sv}");
        if (r >= 0) r = append_metadata(m, s);
        if (r >= 0) r = B.close_container(m);
        return r < 0 ? r : 1;
    }
#undef VARIANT
    return 0;
}

static const char *const root_properties[] = {"CanQuit", "CanRaise", "HasTrackList", "Identity", "DesktopEntry",
                                              "SupportedUriSchemes", "SupportedMimeTypes", NULL};
static const char *const player_properties[] = {"PlaybackStatus", "Rate", "Metadata", "Volume", "Position",
                                                "MinimumRate", "MaximumRate", "CanGoNext", "CanGoPrevious",
                                                "CanPlay", "CanPause", "CanSeek", "CanControl", NULL};

static int append_all(sd_bus_message *m, const char *interface, const struct mh_mpris *p, const state *s) {
    const char *const *names = strcmp(interface, ROOT) == 0 ? root_properties : player_properties;
    int r = B.open_container(m, 'a', "{sv}");
    for (int i = 0; r >= 0 && names[i]; i++) {
        r = B.open_container(m, 'e', "sv");
        if (r >= 0) r = B.append_basic(m, 's', names[i]);
        if (r >= 0) r = append_property(m, interface, names[i], p, s);
        if (r >= 0) r = B.close_container(m);
    }
    if (r >= 0) r = B.close_container(m);
    return r;
}

static const char introspection[] =
    "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
    " \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
    "<node>\n"
    " <interface name=\"org.freedesktop.DBus.Introspectable\">\n"
    "  <method name=\"Introspect\"><arg name=\"xml\" type=\"s\" direction=\"out\"/></method>\n"
    " </interface>\n"
    " <interface name=\"org.freedesktop.DBus.Peer\">\n"
    "  <method name=\"Ping\"/>\n"
    "  <method name=\"GetMachineId\"><arg name=\"id\" type=\"s\" direction=\"out\"/></method>\n"
    " </interface>\n"
    " <interface name=\"org.freedesktop.DBus.Properties\">\n"
    "  <method name=\"Get\"><arg name=\"interface\" type=\"s\" direction=\"in\"/>"
    "<arg name=\"property\" type=\"s\" direction=\"in\"/><arg name=\"value\" type=\"v\" direction=\"out\"/></method>\n"
    "  <method name=\"GetAll\"><arg name=\"interface\" type=\"s\" direction=\"in\"/>"
    "<arg name=\"properties\" type=\"a{sv}\" direction=\"out\"/></method>\n"
    "  <method name=\"Set\"><arg name=\"interface\" type=\"s\" direction=\"in\"/>"
    "<arg name=\"property\" type=\"s\" direction=\"in\"/><arg name=\"value\" type=\"v\" direction=\"in\"/></method>\n"
    "  <signal name=\"PropertiesChanged\"><arg name=\"interface\" type=\"s\"/>"
    "<arg name=\"changed\" type=\"a{sv}\"/><arg name=\"invalidated\" type=\"as\"/></signal>\n"
    " </interface>\n"
    " <interface name=\"org.mpris.MediaPlayer2\">\n"
    "  <method name=\"Raise\"/>\n"
    "  <method name=\"Quit\"/>\n"
    "  <property name=\"CanQuit\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"CanRaise\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"HasTrackList\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"Identity\" type=\"s\" access=\"read\"/>\n"
    "  <property name=\"DesktopEntry\" type=\"s\" access=\"read\"/>\n"
    "  <property name=\"SupportedUriSchemes\" type=\"as\" access=\"read\"/>\n"
    "  <property name=\"SupportedMimeTypes\" type=\"as\" access=\"read\"/>\n"
    " </interface>\n"
    " <interface name=\"org.mpris.MediaPlayer2.Player\">\n"
    "  <method name=\"Next\"/>\n"
    "  <method name=\"Previous\"/>\n"
    "  <method name=\"Pause\"/>\n"
    "  <method name=\"PlayPause\"/>\n"
    "  <method name=\"Stop\"/>\n"
    "  <method name=\"Play\"/>\n"
    "  <method name=\"Seek\"><arg name=\"Offset\" type=\"x\" direction=\"in\"/></method>\n"
    "  <method name=\"SetPosition\"><arg name=\"TrackId\" type=\"o\" direction=\"in\"/>"
    "<arg name=\"Position\" type=\"x\" direction=\"in\"/></method>\n"
    "  <method name=\"OpenUri\"><arg name=\"Uri\" type=\"s\" direction=\"in\"/></method>\n"
    "  <signal name=\"Seeked\"><arg name=\"Position\" type=\"x\"/></signal>\n"
    "  <property name=\"PlaybackStatus\" type=\"s\" access=\"read\"/>\n"
    "  <property name=\"Rate\" type=\"d\" access=\"readwrite\"/>\n"
    "  <property name=\"Metadata\" type=\"a{sv}\" access=\"read\"/>\n"
    "  <property name=\"Volume\" type=\"d\" access=\"readwrite\"/>\n"
    "  <property name=\"Position\" type=\"x\" access=\"read\"/>\n"
    "  <property name=\"MinimumRate\" type=\"d\" access=\"read\"/>\n"
    "  <property name=\"MaximumRate\" type=\"d\" access=\"read\"/>\n"
    "  <property name=\"CanGoNext\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"CanGoPrevious\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"CanPlay\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"CanPause\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"CanSeek\" type=\"b\" access=\"read\"/>\n"
    "  <property name=\"CanControl\" type=\"b\" access=\"read\"/>\n"
    " </interface>\n"
    "</node>\n";

static int reply_with(sd_bus_message *m, int (*fill)(sd_bus_message *, const void *), const void *argument) {
    sd_bus_message *reply = NULL;
    int r = B.new_method_return(m, &reply);
    if (r >= 0) r = fill(reply, argument);
    if (r >= 0) r = B.send(NULL, reply, NULL);
    if (reply) B.message_unref(reply);
    return r;
}

typedef struct {
    const struct mh_mpris *player;
    const char *interface;
    const char *name;
} property_request;

static int fill_get(sd_bus_message *reply, const void *argument) {
    const property_request *request = argument;
    int r = append_property(reply, request->interface, request->name, request->player, &request->player->now);
    return r == 0 ? -ENOENT : r;
}

static int fill_get_all(sd_bus_message *reply, const void *argument) {
    const property_request *request = argument;
    return append_all(reply, request->interface, request->player, &request->player->now);
}

static void hand_on(struct mh_mpris *p, const char *command, int64_t offset, double number, const char *text) {
    p->command(p->context, command, offset, number, text ? text : "");
}

static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    struct mh_mpris *p = userdata;
    if (B.is_method_call(m, "org.freedesktop.DBus.Introspectable", "Introspect") > 0)
        return B.reply_method_return(m, "s", introspection);
    if (B.is_method_call(m, "org.freedesktop.DBus.Properties", "Get") > 0) {
        const char *interface = NULL, *name = NULL;
        if (B.read(m, "ss", &interface, &name) < 0) return 0;
        pthread_mutex_lock(&p->lock);
        property_request request = {p, interface, name};
        int r = reply_with(m, fill_get, &request);
        pthread_mutex_unlock(&p->lock);
        if (r < 0)
            return B.reply_method_errorf(m, "org.freedesktop.DBus.Error.UnknownProperty", "no property %s.%s",
                                         interface, name);
        return 1;
    }
    if (B.is_method_call(m, "org.freedesktop.DBus.Properties", "GetAll") > 0) {
        const char *interface = NULL;
        if (B.read(m, "s", &interface) < 0) return 0;
        if (strcmp(interface, ROOT) != 0 && strcmp(interface, PLAYER) != 0) return B.reply_method_return(m, "a{sv}", 0);
        pthread_mutex_lock(&p->lock);
        property_request request = {p, interface, NULL};
        int r = reply_with(m, fill_get_all, &request);
        pthread_mutex_unlock(&p->lock);
        return r < 0 ? r : 1;
    }
    if (B.is_method_call(m, "org.freedesktop.DBus.Properties", "Set") > 0) {
        const char *interface = NULL, *name = NULL;
        if (B.read(m, "ss", &interface, &name) < 0) return 0;
        if (strcmp(interface, PLAYER) == 0 && strcmp(name, "Volume") == 0) {
            double volume = 0;
            if (B.enter_container(m, 'v', "d") < 0 || B.read(m, "d", &volume) < 0)
                return B.reply_method_errorf(m, "org.freedesktop.DBus.Error.InvalidArgs", "Volume is a double");
            hand_on(p, "Volume", 0, volume < 0 ? 0 : volume, NULL);
            return B.reply_method_return(m, "");
        }
        if (strcmp(interface, PLAYER) == 0 && strcmp(name, "Rate") == 0) return B.reply_method_return(m, "");
        return B.reply_method_errorf(m, "org.freedesktop.DBus.Error.PropertyReadOnly", "%s.%s cannot be set", interface,
                                     name);
    }
    static const char *const plain[] = {"PlayPause", "Play", "Pause", "Stop", "Next", "Previous", NULL};
    for (int i = 0; plain[i]; i++)
        if (B.is_method_call(m, PLAYER, plain[i]) > 0) {
            hand_on(p, plain[i], 0, 0, NULL);
            return B.reply_method_return(m, "");
        }
    if (B.is_method_call(m, PLAYER, "Seek") > 0) {
        int64_t offset = 0;
        if (B.read(m, "x", &offset) < 0) return 0;
        hand_on(p, "Seek", offset, 0, NULL);
        return B.reply_method_return(m, "");
    }
    if (B.is_method_call(m, PLAYER, "SetPosition") > 0) {
        const char *track = NULL;
        int64_t position = 0;
        if (B.read(m, "ox", &track, &position) < 0) return 0;
        hand_on(p, "SetPosition", position, 0, track);
        return B.reply_method_return(m, "");
    }
    if (B.is_method_call(m, PLAYER, "OpenUri") > 0) {
        const char *uri = NULL;
        if (B.read(m, "s", &uri) < 0) return 0;
        hand_on(p, "OpenUri", 0, 0, uri);
        return B.reply_method_return(m, "");
    }
    if (B.is_method_call(m, ROOT, "Raise") > 0 || B.is_method_call(m, ROOT, "Quit") > 0)
        return B.reply_method_return(m, "");
    return 0;
}

/* PropertiesChanged for what differs between what was signalled and what is (lock held). */
static void signal_changes(struct mh_mpris *p) {
    const state *s = &p->now, *o = &p->sent;
    const char *changed[8];
    int count = 0;
    if (!p->have_sent || strcmp(s->status, o->status) != 0) changed[count++] = "PlaybackStatus";
    if (!p->have_sent || strcmp(s->track_id, o->track_id) != 0 || strcmp(s->title, o->title) != 0 ||
        strcmp(s->artist, o->artist) != 0 || strcmp(s->album, o->album) != 0 || strcmp(s->art_url, o->art_url) != 0 ||
        strcmp(s->url, o->url) != 0 || s->length_us != o->length_us)
        changed[count++] = "Metadata";
    if (!p->have_sent || s->volume != o->volume) changed[count++] = "Volume";
    if (!p->have_sent || s->can_go_next != o->can_go_next) changed[count++] = "CanGoNext";
    if (!p->have_sent || s->can_go_previous != o->can_go_previous) changed[count++] = "CanGoPrevious";
    if (!p->have_sent || s->can_seek != o->can_seek) changed[count++] = "CanSeek";
    if (!p->have_sent || s->can_play != o->can_play) changed[count++] = "CanPlay";
    if (!p->have_sent || s->can_pause != o->can_pause) changed[count++] = "CanPause";
    if (count == 0) return;
    sd_bus_message *m = NULL;
    int r = B.new_signal(p->bus, &m, PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged");
    if (r >= 0) r = B.append(m, "s", PLAYER);
    if (r >= 0) r = B.open_container(m, 'a', "{sv}");
    for (int i = 0; r >= 0 && i < count; i++) {
        r = B.open_container(m, 'e', "sv");
        if (r >= 0) r = B.append_basic(m, 's', changed[i]);
        if (r >= 0) r = append_property(m, PLAYER, changed[i], p, s);
        if (r >= 0) r = B.close_container(m);
    }
    if (r >= 0) r = B.close_container(m);
    if (r >= 0) r = B.append(m, "as", 0);
    if (r >= 0) B.send(p->bus, m, NULL);
    if (m) B.message_unref(m);
    state_copy(&p->sent, s);
    p->have_sent = 1;
}

static void *serve(void *argument) {
    struct mh_mpris *p = argument;
    for (;;) {
        while (B.process(p->bus, NULL) > 0) {
        }
        pthread_mutex_lock(&p->lock);
        int stopping = p->stopping;
        if (!stopping) {
            signal_changes(p);
            if (p->seeked >= 0) {
                sd_bus_message *m = NULL;
                if (B.new_signal(p->bus, &m, PATH, PLAYER, "Seeked") >= 0 && B.append(m, "x", p->seeked) >= 0)
                    B.send(p->bus, m, NULL);
                if (m) B.message_unref(m);
                p->seeked = -1;
            }
        }
        pthread_mutex_unlock(&p->lock);
        B.flush(p->bus);
        if (stopping) break;
        uint64_t until = 0;
        int timeout = -1;
        if (B.get_timeout(p->bus, &until) > 0 && until != UINT64_MAX) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            uint64_t now_us = (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
            timeout = until <= now_us ? 0 : (int)((until - now_us + 999) / 1000);
        }
        struct pollfd fds[2] = {{B.get_fd(p->bus), (short)B.get_events(p->bus), 0}, {p->wake[0], POLLIN, 0}};
        if (poll(fds, 2, timeout) < 0 && errno != EINTR) break;
        if (fds[0].revents & (POLLHUP | POLLERR)) {
            B.process(p->bus, NULL);
        }
        if (fds[1].revents & POLLIN) {
            char drain[64];
            while (read(p->wake[0], drain, sizeof drain) > 0) {
            }
        }
    }
    return NULL;
}

static void wake(struct mh_mpris *p) {
    char byte = 1;
    ssize_t written = write(p->wake[1], &byte, 1);
    (void)written;
}

mh_mpris *mh_mpris_start(const char *name, const char *identity, mh_mpris_command command, void *context,
                         char *taken, size_t taken_size, char *error, size_t error_size) {
    sd_bus *bus = NULL;
    if (open_bus(&bus, error, error_size) != 0) return NULL;
    char chosen[256];
    snprintf(chosen, sizeof chosen, "%s", name);
    int r = B.request_name(bus, chosen, 0);
    if (r == -EEXIST) {
        snprintf(chosen, sizeof chosen, "%s.instance%ld", name, (long)getpid());
        r = B.request_name(bus, chosen, 0);
    }
    if (r < 0) {
        snprintf(error, error_size, "cannot take the name %s on the session bus (%s)", chosen, strerror(-r));
        B.flush_close_unref(bus);
        return NULL;
    }
    struct mh_mpris *p = calloc(1, sizeof *p);
    p->bus = bus;
    p->identity = strdup(identity);
    p->command = command;
    p->context = context;
    p->seeked = -1;
    pthread_mutex_init(&p->lock, NULL);
    mh_mpris_state stopped = {.status = "Stopped", .volume = -1};
    state_copy(&p->now, &(state){0});
    state_copy(&p->sent, &(state){0});
    mh_mpris_update(p, &stopped);
    p->wake[0] = p->wake[1] = -1;
    if (pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) != 0 || B.add_object(bus, &p->slot, PATH, on_message, p) < 0 ||
        pthread_create(&p->thread, NULL, serve, p) != 0) {
        if (p->wake[0] >= 0) close(p->wake[0]);
        if (p->wake[1] >= 0) close(p->wake[1]);
        snprintf(error, error_size, "cannot serve %s on the session bus", PATH);
        if (p->slot) B.slot_unref(p->slot);
        B.flush_close_unref(bus);
        state_free(&p->now);
        state_free(&p->sent);
        free(p->identity);
        free(p);
        return NULL;
    }
    pthread_mutex_lock(&p->lock);
    p->serving = 1;
    pthread_mutex_unlock(&p->lock);
    if (taken) snprintf(taken, taken_size, "%s", chosen);
    return p;
}

void mh_mpris_update(mh_mpris *p, const mh_mpris_state *update) {
    state next = {
        .status = (char *)(update->status ? update->status : "Stopped"),
        .track_id = (char *)update->track_id,
        .title = (char *)update->title,
        .artist = (char *)update->artist,
        .album = (char *)update->album,
        .art_url = (char *)update->art_url,
        .url = (char *)update->url,
        .length_us = update->length_us,
        .position_us = update->position_us,
        .volume = update->volume,
        .can_go_next = update->can_go_next,
        .can_go_previous = update->can_go_previous,
        .can_seek = update->can_seek,
        .can_play = update->can_play,
        .can_pause = update->can_pause,
    };
    clock_gettime(CLOCK_MONOTONIC, &next.stamp);
    pthread_mutex_lock(&p->lock);
    state_copy(&p->now, &next);
    int serving = p->serving;
    pthread_mutex_unlock(&p->lock);
    if (serving) wake(p);
}

void mh_mpris_seeked(mh_mpris *p, int64_t position_us) {
    pthread_mutex_lock(&p->lock);
    p->seeked = position_us < 0 ? 0 : position_us;
    pthread_mutex_unlock(&p->lock);
    wake(p);
}

void mh_mpris_stop(mh_mpris *p) {
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_mutex_unlock(&p->lock);
    wake(p);
    pthread_join(p->thread, NULL);
    B.slot_unref(p->slot);
    B.flush_close_unref(p->bus);
    close(p->wake[0]);
    close(p->wake[1]);
    state_free(&p->now);
    state_free(&p->sent);
    free(p->identity);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* MARK: Notifications */

int mh_dbus_notify(const char *app, const char *summary, const char *body, const char *icon, char *error,
                   size_t error_size) {
    sd_bus *bus = NULL;
    if (open_bus(&bus, error, error_size) != 0) return -1;
    sd_bus_message *m = NULL;
    int r = B.new_method_call(bus, &m, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                              "org.freedesktop.Notifications", "Notify");
    if (r >= 0) r = B.append(m, "susssasa{sv}i", app, 0u, icon ? icon : "", summary, body ? body : "", 0, 0, -1);
    if (r >= 0) r = B.set_expect_reply(m, 0);
    if (r >= 0) r = B.send(bus, m, NULL);
    if (r >= 0) r = B.flush(bus);
    if (m) B.message_unref(m);
    B.flush_close_unref(bus);
    if (r < 0) {
        snprintf(error, error_size, "the notification could not be sent (%s)", strerror(-r));
        return -1;
    }
    return 0;
}
