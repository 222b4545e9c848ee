#ifndef MEDIAHOST_CCURL_SHIM_H
#define MEDIAHOST_CCURL_SHIM_H

#include <curl/curl.h>

/* curl_easy_setopt and friends are variadic, which Swift cannot call: typed wrappers. */

typedef size_t (*mh_curl_data_cb)(char *data, size_t size, size_t count, void *context);
typedef int (*mh_curl_xferinfo_cb)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode mh_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mh_curl_easy_setopt_share(CURL *handle, CURLSH *share) {
    return curl_easy_setopt(handle, CURLOPT_SHARE, share);
}
static inline CURLcode mh_curl_easy_setopt_data_cb(CURL *handle, CURLoption option, mh_curl_data_cb callback) {
    return curl_easy_setopt(handle, option, callback);
}
static inline CURLcode mh_curl_easy_setopt_xferinfo_cb(CURL *handle, mh_curl_xferinfo_cb callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode mh_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode mh_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode mh_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLSHcode mh_curl_share_setopt_lock_data(CURLSH *share, curl_lock_data data) {
    return curl_share_setopt(share, CURLSHOPT_SHARE, data);
}

/* CURLMsg carries its result in a union. */
static inline CURLcode mh_curl_msg_result(CURLMsg *message) { return message->data.result; }

#endif
