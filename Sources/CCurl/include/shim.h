#ifndef MEDIAHOST_CCURL_SHIM_H
#define MEDIAHOST_CCURL_SHIM_H

#include <curl/curl.h>

/* libcurl is loaded when the first request is made, not when the process starts: its ~30
   dependent libraries (TLS, Kerberos, LDAP, IDN...) cost about 6 ms of start-up that commands
   without network (--version, host.info, favorites, the REPL's first prompt) never need. Every
   call goes through a table of functions resolved with dlsym (shim.c); nothing links libcurl.

   curl_easy_setopt and friends are variadic, which Swift cannot call: typed wrappers. */

typedef size_t (*mh_curl_data_cb)(char *data, size_t size, size_t count, void *context);
typedef int (*mh_curl_xferinfo_cb)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

/* Loads libcurl and resolves every function used; 0 on success. Safe to call again. */
int mh_curl_load(void);
/* Why loading failed, for the error a person sees. */
const char *mh_curl_load_error(void);

CURLcode mh_curl_global_init(long flags);
CURL * mh_curl_easy_init(void);
void mh_curl_easy_cleanup(CURL *handle);
const char * mh_curl_easy_strerror(CURLcode code);
CURLM * mh_curl_multi_init(void);
CURLMcode mh_curl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode mh_curl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMsg * mh_curl_multi_info_read(CURLM *multi, int *left);
CURLMcode mh_curl_multi_perform(CURLM *multi, int *running);
CURLMcode mh_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready);
CURLMcode mh_curl_multi_wakeup(CURLM *multi);
CURLSH * mh_curl_share_init(void);
struct curl_slist * mh_curl_slist_append(struct curl_slist *list, const char *text);
void mh_curl_slist_free_all(struct curl_slist *list);
CURLcode mh_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode mh_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode mh_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode mh_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode mh_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode mh_curl_easy_setopt_share(CURL *handle, CURLSH *share);
CURLcode mh_curl_easy_setopt_data_cb(CURL *handle, CURLoption option, mh_curl_data_cb callback);
CURLcode mh_curl_easy_setopt_xferinfo_cb(CURL *handle, mh_curl_xferinfo_cb callback);
CURLcode mh_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode mh_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value);
CURLMcode mh_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLSHcode mh_curl_share_setopt_lock_data(CURLSH *share, curl_lock_data data);
CURLcode mh_curl_msg_result(CURLMsg *message);

#endif
