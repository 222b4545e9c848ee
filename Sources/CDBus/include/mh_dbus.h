#ifndef MEDIAHOST_CDBUS_H
#define MEDIAHOST_CDBUS_H

#include <stddef.h>
#include <stdint.h>

/* The session bus through systemd's sd-bus (libsystemd.so.0, loaded at first use: the binary
   runs where it is missing and says so when asked), for two things: being an MPRIS2 media
   player (org.mpris.MediaPlayer2, what media keys, playerctl and the desktops' player widgets
   control), and desktop notifications (org.freedesktop.Notifications).

   One thread owns the connection (sd-bus objects are not thread-safe): it answers the bus, and
   the calls below hand it what to send through a wake-up pipe. */

typedef struct mh_mpris mh_mpris;

/* What plays, as the player's properties say it. Strings may be NULL (empty); the function
   copies everything. */
typedef struct {
    const char *status; /* "Playing", "Paused" or "Stopped" */
    const char *track_id; /* an object path; NULL: no track */
    const char *title;
    const char *artist;
    const char *album;
    const char *art_url; /* file:///... */
    const char *url;
    int64_t length_us; /* 0: unknown */
    int64_t position_us;
    double volume; /* 0.0-1.0, < 0: unknown */
    int can_go_next;
    int can_go_previous;
    int can_seek;
    int can_play;
    int can_pause;
} mh_mpris_state;

/* A method called on the player (or Volume set): "PlayPause", "Play", "Pause", "Stop", "Next",
   "Previous", "Seek" (`offset_us`), "SetPosition" (`offset_us`, the track id in `text`),
   "OpenUri" (`text`), "Volume" (`number`), "Raise", "Quit". Called on the bus's thread: it
   must only hand the command on. */
typedef void (*mh_mpris_command)(void *context, const char *command, int64_t offset_us, double number,
                                 const char *text);

/* Connects to the session bus, takes `name` (e.g. "org.mpris.MediaPlayer2.mediahost"; when
   another process has it, `name`.instance<pid>, as the MPRIS spec allows), and serves
   /org/mpris/MediaPlayer2. NULL on failure, with the reason in `error`. `taken` receives the
   bus name in use (may be NULL). */
mh_mpris *mh_mpris_start(const char *name, const char *identity, mh_mpris_command command, void *context,
                         char *taken, size_t taken_size, char *error, size_t error_size);
/* The new state; the properties that changed are signalled (PropertiesChanged). */
void mh_mpris_update(mh_mpris *player, const mh_mpris_state *state);
/* Emits Seeked: the position jumped (a seek, a new track starting part way). */
void mh_mpris_seeked(mh_mpris *player, int64_t position_us);
/* Leaves the bus and frees the player. */
void mh_mpris_stop(mh_mpris *player);

/* A desktop notification (org.freedesktop.Notifications.Notify) on a connection of its own
   (they are rare): 0 when sent, -1 with the reason in `error`. */
int mh_dbus_notify(const char *app, const char *summary, const char *body, const char *icon, char *error,
                   size_t error_size);

#endif
