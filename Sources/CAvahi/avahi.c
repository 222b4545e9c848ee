#include "mh_avahi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The parts of Avahi's ABI used here (avahi-client 0.6-0.8), declared so no -dev package is
   needed to build. */
typedef struct AvahiPoll AvahiPoll;
typedef struct AvahiSimplePoll AvahiSimplePoll;
typedef struct AvahiThreadedPoll AvahiThreadedPoll;
typedef struct AvahiClient AvahiClient;
typedef struct AvahiEntryGroup AvahiEntryGroup;
typedef struct AvahiServiceBrowser AvahiServiceBrowser;
typedef struct AvahiServiceResolver AvahiServiceResolver;
typedef struct AvahiStringList AvahiStringList;
typedef struct AvahiAddress AvahiAddress;
typedef int AvahiIfIndex;
typedef int AvahiProtocol;

enum { IF_UNSPEC = -1, PROTO_INET = 0, PROTO_UNSPEC = -1 };
enum { CLIENT_S_RUNNING = 2, CLIENT_S_COLLISION = 3, CLIENT_FAILURE = 100 };
enum { GROUP_ESTABLISHED = 2, GROUP_COLLISION = 3, GROUP_FAILURE = 4 };
enum { BROWSER_NEW = 0, BROWSER_ALL_FOR_NOW = 3, BROWSER_FAILURE = 4 };
enum { RESOLVER_FOUND = 0 };

typedef void (*ClientCallback)(AvahiClient *, int state, void *);
typedef void (*GroupCallback)(AvahiEntryGroup *, int state, void *);
typedef void (*BrowserCallback)(AvahiServiceBrowser *, AvahiIfIndex, AvahiProtocol, int event, const char *name,
                                const char *type, const char *domain, int flags, void *);
typedef void (*ResolverCallback)(AvahiServiceResolver *, AvahiIfIndex, AvahiProtocol, int event, const char *name,
                                 const char *type, const char *domain, const char *host, const AvahiAddress *address,
                                 uint16_t port, AvahiStringList *txt, int flags, void *);

static struct {
    int loaded;
    char error[256];
    AvahiSimplePoll *(*simple_poll_new)(void);
    const AvahiPoll *(*simple_poll_get)(AvahiSimplePoll *);
    int (*simple_poll_iterate)(AvahiSimplePoll *, int);
    void (*simple_poll_free)(AvahiSimplePoll *);
    AvahiThreadedPoll *(*threaded_poll_new)(void);
    const AvahiPoll *(*threaded_poll_get)(AvahiThreadedPoll *);
    int (*threaded_poll_start)(AvahiThreadedPoll *);
    int (*threaded_poll_stop)(AvahiThreadedPoll *);
    void (*threaded_poll_free)(AvahiThreadedPoll *);
    void (*threaded_poll_lock)(AvahiThreadedPoll *);
    void (*threaded_poll_unlock)(AvahiThreadedPoll *);
    AvahiClient *(*client_new)(const AvahiPoll *, int flags, ClientCallback, void *, int *error);
    void (*client_free)(AvahiClient *);
    int (*client_errno)(AvahiClient *);
    const char *(*strerror)(int);
    AvahiEntryGroup *(*entry_group_new)(AvahiClient *, GroupCallback, void *);
    int (*entry_group_add_service_strlst)(AvahiEntryGroup *, AvahiIfIndex, AvahiProtocol, int flags, const char *name,
                                          const char *type, const char *domain, const char *host, uint16_t port,
                                          AvahiStringList *);
    int (*entry_group_commit)(AvahiEntryGroup *);
    int (*entry_group_free)(AvahiEntryGroup *);
    AvahiStringList *(*string_list_new_from_array)(const char **, int);
    void (*string_list_free)(AvahiStringList *);
    AvahiStringList *(*string_list_get_next)(AvahiStringList *);
    uint8_t *(*string_list_get_text)(AvahiStringList *);
    size_t (*string_list_get_size)(AvahiStringList *);
    char *(*address_snprint)(char *, size_t, const AvahiAddress *);
    AvahiServiceBrowser *(*service_browser_new)(AvahiClient *, AvahiIfIndex, AvahiProtocol, const char *type,
                                                const char *domain, int flags, BrowserCallback, void *);
    int (*service_browser_free)(AvahiServiceBrowser *);
    AvahiServiceResolver *(*service_resolver_new)(AvahiClient *, AvahiIfIndex, AvahiProtocol, const char *name,
                                                  const char *type, const char *domain, AvahiProtocol, int flags,
                                                  ResolverCallback, void *);
    int (*service_resolver_free)(AvahiServiceResolver *);
} A;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int load(char *error, size_t size) {
    pthread_mutex_lock(&load_lock);
    if (!A.loaded) {
        void *common = dlopen("libavahi-common.so.3", RTLD_NOW | RTLD_GLOBAL);
        void *client = common ? dlopen("libavahi-client.so.3", RTLD_NOW | RTLD_LOCAL) : NULL;
        if (!common || !client) {
            snprintf(A.error, sizeof A.error, "Avahi's client library (libavahi-client3) is not installed");
            A.loaded = -1;
        } else {
            int ok = 1;
#define COMMON(field, symbol) ok &= (*(void **)&A.field = dlsym(common, symbol)) != NULL
#define CLIENT(field, symbol) ok &= (*(void **)&A.field = dlsym(client, symbol)) != NULL
            COMMON(simple_poll_new, "avahi_simple_poll_new");
            COMMON(simple_poll_get, "avahi_simple_poll_get");
            COMMON(simple_poll_iterate, "avahi_simple_poll_iterate");
            COMMON(simple_poll_free, "avahi_simple_poll_free");
            COMMON(threaded_poll_new, "avahi_threaded_poll_new");
            COMMON(threaded_poll_get, "avahi_threaded_poll_get");
            COMMON(threaded_poll_start, "avahi_threaded_poll_start");
            COMMON(threaded_poll_stop, "avahi_threaded_poll_stop");
            COMMON(threaded_poll_free, "avahi_threaded_poll_free");
            COMMON(threaded_poll_lock, "avahi_threaded_poll_lock");
            COMMON(threaded_poll_unlock, "avahi_threaded_poll_unlock");
            COMMON(strerror, "avahi_strerror");
            COMMON(string_list_new_from_array, "avahi_string_list_new_from_array");
            COMMON(string_list_free, "avahi_string_list_free");
            COMMON(string_list_get_next, "avahi_string_list_get_next");
            COMMON(string_list_get_text, "avahi_string_list_get_text");
            COMMON(string_list_get_size, "avahi_string_list_get_size");
            COMMON(address_snprint, "avahi_address_snprint");
            CLIENT(client_new, "avahi_client_new");
            CLIENT(client_free, "avahi_client_free");
            CLIENT(client_errno, "avahi_client_errno");
            CLIENT(entry_group_new, "avahi_entry_group_new");
            CLIENT(entry_group_add_service_strlst, "avahi_entry_group_add_service_strlst");
            CLIENT(entry_group_commit, "avahi_entry_group_commit");
            CLIENT(entry_group_free, "avahi_entry_group_free");
            CLIENT(service_browser_new, "avahi_service_browser_new");
            CLIENT(service_browser_free, "avahi_service_browser_free");
            CLIENT(service_resolver_new, "avahi_service_resolver_new");
            CLIENT(service_resolver_free, "avahi_service_resolver_free");
#undef COMMON
#undef CLIENT
            if (ok) {
                A.loaded = 1;
            } else {
                snprintf(A.error, sizeof A.error, "Avahi's client library lacks a function mediahost needs");
                A.loaded = -1;
            }
        }
    }
    int loaded = A.loaded;
    if (loaded < 0) snprintf(error, size, "%s", A.error);
    pthread_mutex_unlock(&load_lock);
    return loaded > 0 ? 0 : -1;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
}

/* ---- Publishing ---- */

struct mh_avahi_publication {
    AvahiThreadedPoll *poll;
    AvahiClient *client;
    AvahiEntryGroup *group;
    volatile int state; /* 0 pending, 1 established, -1 failed */
    char error[200];
};

static void group_changed(AvahiEntryGroup *group, int state, void *context) {
    (void)group;
    mh_avahi_publication *p = context;
    if (state == GROUP_ESTABLISHED) {
        p->state = 1;
    } else if (state == GROUP_COLLISION || state == GROUP_FAILURE) {
        snprintf(p->error, sizeof p->error, "the announcement failed (%s)",
                 state == GROUP_COLLISION ? "its name is taken on the network" : "the daemon refused it");
        p->state = -1;
    }
}

static void publish_client_changed(AvahiClient *client, int state, void *context) {
    (void)client;
    mh_avahi_publication *p = context;
    if (state == CLIENT_FAILURE) {
        snprintf(p->error, sizeof p->error, "the Avahi daemon went away");
        p->state = -1;
    }
}

mh_avahi_publication *mh_avahi_publish(const char *name, const char *type, uint16_t port, const char **txt, int count,
                                       int timeout_ms, char *error, size_t error_size) {
    if (load(error, error_size) != 0) return NULL;
    mh_avahi_publication *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->poll = A.threaded_poll_new();
    int code = 0;
    p->client = p->poll ? A.client_new(A.threaded_poll_get(p->poll), 0, publish_client_changed, p, &code) : NULL;
    if (!p->client) {
        snprintf(error, error_size, "the Avahi daemon is not running (%s)", A.strerror(code));
        if (p->poll) A.threaded_poll_free(p->poll);
        free(p);
        return NULL;
    }
    p->group = A.entry_group_new(p->client, group_changed, p);
    AvahiStringList *list = A.string_list_new_from_array(txt, count);
    int added = p->group ? A.entry_group_add_service_strlst(p->group, IF_UNSPEC, PROTO_UNSPEC, 0, name, type, NULL, NULL,
                                                            port, list)
                         : -1;
    if (list) A.string_list_free(list);
    if (added < 0 || A.entry_group_commit(p->group) < 0) {
        snprintf(error, error_size, "Avahi refused the announcement (%s)", A.strerror(A.client_errno(p->client)));
        mh_avahi_withdraw(p);
        return NULL;
    }
    A.threaded_poll_start(p->poll);
    double deadline = now_ms() + timeout_ms;
    while (p->state == 0 && now_ms() < deadline) usleep(10000);
    if (p->state != 1) {
        snprintf(error, error_size, "%s", p->state < 0 ? p->error : "the Avahi daemon did not confirm the announcement");
        mh_avahi_withdraw(p);
        return NULL;
    }
    return p;
}

void mh_avahi_withdraw(mh_avahi_publication *p) {
    if (!p) return;
    if (p->poll) A.threaded_poll_stop(p->poll);
    if (p->group) A.entry_group_free(p->group);
    if (p->client) A.client_free(p->client);
    if (p->poll) A.threaded_poll_free(p->poll);
    free(p);
}

/* ---- Browsing ---- */

struct browse {
    AvahiClient *client;
    mh_avahi_found found;
    void *context;
    int pending;
    int all_for_now;
    int failed;
};

static void resolved(AvahiServiceResolver *resolver, AvahiIfIndex interface, AvahiProtocol protocol, int event,
                     const char *name, const char *type, const char *domain, const char *host,
                     const AvahiAddress *address, uint16_t port, AvahiStringList *txt, int flags, void *context) {
    (void)interface; (void)protocol; (void)type; (void)domain; (void)flags;
    struct browse *b = context;
    if (event == RESOLVER_FOUND && address) {
        char text[40] = {0};
        A.address_snprint(text, sizeof text, address);
        char records[2048] = {0};
        size_t used = 0;
        for (AvahiStringList *item = txt; item; item = A.string_list_get_next(item)) {
            size_t length = A.string_list_get_size(item);
            if (used + length + 2 >= sizeof records) break;
            if (used) records[used++] = '\n';
            memcpy(records + used, A.string_list_get_text(item), length);
            used += length;
        }
        b->found(b->context, name, host ? host : "", text, port, records);
    }
    b->pending--;
    A.service_resolver_free(resolver);
}

static void browsed(AvahiServiceBrowser *browser, AvahiIfIndex interface, AvahiProtocol protocol, int event,
                    const char *name, const char *type, const char *domain, int flags, void *context) {
    (void)browser; (void)flags;
    struct browse *b = context;
    if (event == BROWSER_NEW) {
        if (A.service_resolver_new(b->client, interface, protocol, name, type, domain, PROTO_INET, 0, resolved, b))
            b->pending++;
    } else if (event == BROWSER_ALL_FOR_NOW) {
        b->all_for_now = 1;
    } else if (event == BROWSER_FAILURE) {
        b->failed = 1;
    }
}

static void browse_client_changed(AvahiClient *client, int state, void *context) {
    (void)client;
    if (state == CLIENT_FAILURE) ((struct browse *)context)->failed = 1;
}

int mh_avahi_browse(const char *type, int timeout_ms, mh_avahi_found found, void *context, char *error,
                    size_t error_size) {
    if (load(error, error_size) != 0) return -1;
    AvahiSimplePoll *poll = A.simple_poll_new();
    if (!poll) {
        snprintf(error, error_size, "cannot start Avahi's event loop");
        return -1;
    }
    struct browse b = {0};
    b.found = found;
    b.context = context;
    int code = 0;
    b.client = A.client_new(A.simple_poll_get(poll), 0, browse_client_changed, &b, &code);
    if (!b.client) {
        snprintf(error, error_size, "the Avahi daemon is not running (%s)", A.strerror(code));
        A.simple_poll_free(poll);
        return -1;
    }
    AvahiServiceBrowser *browser =
        A.service_browser_new(b.client, IF_UNSPEC, PROTO_UNSPEC, type, NULL, 0, browsed, &b);
    if (!browser) {
        snprintf(error, error_size, "Avahi cannot browse %s (%s)", type, A.strerror(A.client_errno(b.client)));
        A.client_free(b.client);
        A.simple_poll_free(poll);
        return -1;
    }
    double deadline = now_ms() + timeout_ms;
    /* Until the time is up, or the daemon has said all it knows and every resolution is in. */
    while (!b.failed && now_ms() < deadline && !(b.all_for_now && b.pending == 0)) {
        if (A.simple_poll_iterate(poll, 50) != 0) break;
    }
    A.service_browser_free(browser);
    A.client_free(b.client);
    A.simple_poll_free(poll);
    if (b.failed) {
        snprintf(error, error_size, "the Avahi daemon failed while browsing");
        return -1;
    }
    return 0;
}
