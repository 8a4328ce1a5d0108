#ifndef VITRINE_CCURL_SHIM_H
#define VITRINE_CCURL_SHIM_H
/*
 * libcurl 7.88 (Debian bookworm, Raspberry Pi OS), loaded when a WebDAV source first syncs (Sources/CLazyLink).
 * curl_easy_setopt and curl_easy_getinfo take variadic arguments, which Swift cannot pass: one wrapper per argument
 * type. The checking macros of typecheck-gcc.h would wrap the calls in statement expressions; they are off.
 */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

static inline CURLcode vitrine_curl_set_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode vitrine_curl_set_offset(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode vitrine_curl_set_pointer(CURL *curl, CURLoption option, const void *value) {
    return curl_easy_setopt(curl, option, value);
}

typedef size_t (*vitrine_curl_data_fn)(char *data, size_t size, size_t count, void *context);

static inline CURLcode vitrine_curl_set_data_function(CURL *curl, CURLoption option, vitrine_curl_data_fn function) {
    return curl_easy_setopt(curl, option, function);
}

static inline CURLcode vitrine_curl_get_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

static inline CURLcode vitrine_curl_get_offset(CURL *curl, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(curl, info, value);
}

#endif
