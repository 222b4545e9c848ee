#ifndef MEDIAHOST_CCURL_SHIM_H
#define MEDIAHOST_CCURL_SHIM_H

#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>

/* libcurl is loaded when the first request is made, not when the process starts: its ~30
   dependent libraries (TLS, Kerberos, LDAP, IDN...) cost about 6 ms of start-up that commands
   without network (--version, host.info, favorites, the REPL's first prompt) never need. Every
   call goes through this table; nothing here links libcurl. */
typedef struct {
    CURLcode (*global_init)(long flags);
    CURL * (*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    const char * (*easy_strerror)(CURLcode code);
    CURLM * (*multi_init)(void);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *handle);
    CURLMsg * (*multi_info_read)(CURLM *multi, int *left);
    CURLMcode (*multi_perform)(CURLM *multi, int *running);
    CURLMcode (*multi_poll)(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready);
    CURLMcode (*multi_wakeup)(CURLM *multi);
    CURLSH * (*share_init)(void);
    struct curl_slist * (*slist_append)(struct curl_slist *list, const char *text);
    void (*slist_free_all)(struct curl_slist *list);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    CURLMcode (*multi_setopt)(CURLM *multi, CURLMoption option, ...);
    CURLSHcode (*share_setopt)(CURLSH *share, CURLSHoption option, ...);
} mh_curl_api;

/* A function-local static: Swift's importer emits it with the functions that use it. */
static inline mh_curl_api *mh_curl_table(void) {
    static mh_curl_api table;
    return &table;
}

/* Loads libcurl and resolves every function used; 0 on success. Called under the engine's lock. */
static inline int mh_curl_load(void) {
    if (mh_curl_table()->easy_init) return 0;
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
    if (!library) return -1;
    if (!(*(void **)&mh_curl_table()->global_init = dlsym(library, "curl_global_init"))) return -2;
    if (!(*(void **)&mh_curl_table()->easy_init = dlsym(library, "curl_easy_init"))) return -2;
    if (!(*(void **)&mh_curl_table()->easy_cleanup = dlsym(library, "curl_easy_cleanup"))) return -2;
    if (!(*(void **)&mh_curl_table()->easy_strerror = dlsym(library, "curl_easy_strerror"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_init = dlsym(library, "curl_multi_init"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_add_handle = dlsym(library, "curl_multi_add_handle"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_remove_handle = dlsym(library, "curl_multi_remove_handle"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_info_read = dlsym(library, "curl_multi_info_read"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_perform = dlsym(library, "curl_multi_perform"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_poll = dlsym(library, "curl_multi_poll"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_wakeup = dlsym(library, "curl_multi_wakeup"))) return -2;
    if (!(*(void **)&mh_curl_table()->share_init = dlsym(library, "curl_share_init"))) return -2;
    if (!(*(void **)&mh_curl_table()->slist_append = dlsym(library, "curl_slist_append"))) return -2;
    if (!(*(void **)&mh_curl_table()->slist_free_all = dlsym(library, "curl_slist_free_all"))) return -2;
    if (!(*(void **)&mh_curl_table()->easy_setopt = dlsym(library, "curl_easy_setopt"))) return -2;
    if (!(*(void **)&mh_curl_table()->easy_getinfo = dlsym(library, "curl_easy_getinfo"))) return -2;
    if (!(*(void **)&mh_curl_table()->multi_setopt = dlsym(library, "curl_multi_setopt"))) return -2;
    if (!(*(void **)&mh_curl_table()->share_setopt = dlsym(library, "curl_share_setopt"))) return -2;
    return 0;
}

/* Why loading failed, for the error a person sees. */
static inline const char *mh_curl_load_error(void) { const char *e = dlerror(); return e ? e : "libcurl.so.4 not found"; }

static inline CURLcode mh_curl_global_init(long flags) { return mh_curl_table()->global_init(flags); }
static inline CURL * mh_curl_easy_init(void) { return mh_curl_table()->easy_init(); }
static inline void mh_curl_easy_cleanup(CURL *handle) { mh_curl_table()->easy_cleanup(handle); }
static inline const char * mh_curl_easy_strerror(CURLcode code) { return mh_curl_table()->easy_strerror(code); }
static inline CURLM * mh_curl_multi_init(void) { return mh_curl_table()->multi_init(); }
static inline CURLMcode mh_curl_multi_add_handle(CURLM *multi, CURL *handle) { return mh_curl_table()->multi_add_handle(multi, handle); }
static inline CURLMcode mh_curl_multi_remove_handle(CURLM *multi, CURL *handle) { return mh_curl_table()->multi_remove_handle(multi, handle); }
static inline CURLMsg * mh_curl_multi_info_read(CURLM *multi, int *left) { return mh_curl_table()->multi_info_read(multi, left); }
static inline CURLMcode mh_curl_multi_perform(CURLM *multi, int *running) { return mh_curl_table()->multi_perform(multi, running); }
static inline CURLMcode mh_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready) { return mh_curl_table()->multi_poll(multi, extra, count, timeout, ready); }
static inline CURLMcode mh_curl_multi_wakeup(CURLM *multi) { return mh_curl_table()->multi_wakeup(multi); }
static inline CURLSH * mh_curl_share_init(void) { return mh_curl_table()->share_init(); }
static inline struct curl_slist * mh_curl_slist_append(struct curl_slist *list, const char *text) { return mh_curl_table()->slist_append(list, text); }
static inline void mh_curl_slist_free_all(struct curl_slist *list) { mh_curl_table()->slist_free_all(list); }

/* curl_easy_setopt and friends are variadic, which Swift cannot call: typed wrappers. */

typedef size_t (*mh_curl_data_cb)(char *data, size_t size, size_t count, void *context);
typedef int (*mh_curl_xferinfo_cb)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode mh_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_share(CURL *handle, CURLSH *share) {
    return mh_curl_table()->easy_setopt(handle, CURLOPT_SHARE, share);
}
static inline CURLcode mh_curl_easy_setopt_data_cb(CURL *handle, CURLoption option, mh_curl_data_cb callback) {
    return mh_curl_table()->easy_setopt(handle, option, callback);
}
static inline CURLcode mh_curl_easy_setopt_xferinfo_cb(CURL *handle, mh_curl_xferinfo_cb callback) {
    return mh_curl_table()->easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode mh_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return mh_curl_table()->easy_getinfo(handle, info, value);
}
static inline CURLcode mh_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return mh_curl_table()->easy_getinfo(handle, info, value);
}

static inline CURLMcode mh_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return mh_curl_table()->multi_setopt(multi, option, value);
}
static inline CURLSHcode mh_curl_share_setopt_lock_data(CURLSH *share, curl_lock_data data) {
    return mh_curl_table()->share_setopt(share, CURLSHOPT_SHARE, data);
}

/* CURLMsg carries its result in a union. */
static inline CURLcode mh_curl_msg_result(CURLMsg *message) { return message->data.result; }

#endif
