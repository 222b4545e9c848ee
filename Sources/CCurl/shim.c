/* libcurl, loaded on first use: see shim.h. */
#include "shim.h"

#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>

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

static mh_curl_api table;
static mh_curl_api *mh_curl_table(void) { return &table; }
static int loaded = 0;
static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;
static const char *load_error = NULL;

/* Resolves every function used; 0 on success. Called under `loading`. */
static int load(void) {
    if (loaded) return 0;
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
    loaded = 1;
    return 0;
}

int mh_curl_load(void) {
    pthread_mutex_lock(&loading);
    int status = load();
    if (status != 0 && !load_error) {
        const char *why = dlerror();
        load_error = why ? why : "libcurl.so.4 not found";
    }
    pthread_mutex_unlock(&loading);
    return status;
}

const char *mh_curl_load_error(void) { return load_error ? load_error : "libcurl.so.4 not found"; }

CURLcode mh_curl_global_init(long flags) { return mh_curl_table()->global_init(flags); }
CURL * mh_curl_easy_init(void) { return mh_curl_table()->easy_init(); }
void mh_curl_easy_cleanup(CURL *handle) { mh_curl_table()->easy_cleanup(handle); }
const char * mh_curl_easy_strerror(CURLcode code) { return mh_curl_table()->easy_strerror(code); }
CURLM * mh_curl_multi_init(void) { return mh_curl_table()->multi_init(); }
CURLMcode mh_curl_multi_add_handle(CURLM *multi, CURL *handle) { return mh_curl_table()->multi_add_handle(multi, handle); }
CURLMcode mh_curl_multi_remove_handle(CURLM *multi, CURL *handle) { return mh_curl_table()->multi_remove_handle(multi, handle); }
CURLMsg * mh_curl_multi_info_read(CURLM *multi, int *left) { return mh_curl_table()->multi_info_read(multi, left); }
CURLMcode mh_curl_multi_perform(CURLM *multi, int *running) { return mh_curl_table()->multi_perform(multi, running); }
CURLMcode mh_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready) { return mh_curl_table()->multi_poll(multi, extra, count, timeout, ready); }
CURLMcode mh_curl_multi_wakeup(CURLM *multi) { return mh_curl_table()->multi_wakeup(multi); }
CURLSH * mh_curl_share_init(void) { return mh_curl_table()->share_init(); }
struct curl_slist * mh_curl_slist_append(struct curl_slist *list, const char *text) { return mh_curl_table()->slist_append(list, text); }
void mh_curl_slist_free_all(struct curl_slist *list) { mh_curl_table()->slist_free_all(list); }



CURLcode mh_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
CURLcode mh_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
CURLcode mh_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
CURLcode mh_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
CURLcode mh_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return mh_curl_table()->easy_setopt(handle, option, value);
}
CURLcode mh_curl_easy_setopt_share(CURL *handle, CURLSH *share) {
    return mh_curl_table()->easy_setopt(handle, CURLOPT_SHARE, share);
}
CURLcode mh_curl_easy_setopt_data_cb(CURL *handle, CURLoption option, mh_curl_data_cb callback) {
    return mh_curl_table()->easy_setopt(handle, option, callback);
}
CURLcode mh_curl_easy_setopt_xferinfo_cb(CURL *handle, mh_curl_xferinfo_cb callback) {
    return mh_curl_table()->easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

CURLcode mh_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return mh_curl_table()->easy_getinfo(handle, info, value);
}
CURLcode mh_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return mh_curl_table()->easy_getinfo(handle, info, value);
}

CURLMcode mh_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return mh_curl_table()->multi_setopt(multi, option, value);
}
CURLSHcode mh_curl_share_setopt_lock_data(CURLSH *share, curl_lock_data data) {
    return mh_curl_table()->share_setopt(share, CURLSHOPT_SHARE, data);
}

/* CURLMsg carries its result in a union. */
CURLcode mh_curl_msg_result(CURLMsg *message) { return message->data.result; }

