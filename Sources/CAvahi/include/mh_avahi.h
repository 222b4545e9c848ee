#ifndef MEDIAHOST_CAVAHI_H
#define MEDIAHOST_CAVAHI_H

#include <stddef.h>
#include <stdint.h>

/* DNS-SD through the system's Avahi daemon, with libavahi-client loaded at first use (dlopen):
   the binary runs where Avahi is not installed, and says so when asked to announce or browse.
   Only what sharing a list needs: announce one service, and list the services of a type. */

typedef struct mh_avahi_publication mh_avahi_publication;

/* Announces `name` of `type` (e.g. "_mediahost._tcp") on `port` with TXT records `txt`
   (`count` strings), waiting up to `timeout_ms` for the daemon to confirm. NULL on failure,
   with the reason in `error`. */
mh_avahi_publication *mh_avahi_publish(const char *name, const char *type, uint16_t port, const char **txt, int count,
                                       int timeout_ms, char *error, size_t error_size);
/* Withdraws the announcement and frees it. */
void mh_avahi_withdraw(mh_avahi_publication *publication);

typedef void (*mh_avahi_found)(void *context, const char *name, const char *host, const char *address, uint16_t port,
                               const char *txt);

/* Calls `found` for every service of `type` resolved within `timeout_ms` (IPv4 addresses; TXT
   strings joined by newlines). 0 on success, -1 with the reason in `error`. */
int mh_avahi_browse(const char *type, int timeout_ms, mh_avahi_found found, void *context, char *error, size_t error_size);

#endif
