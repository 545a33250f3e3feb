/* libcurl opened on first use (dlopen), not linked: only a push needs it, and linked it made every
 * firn command load and relocate ~30 shared objects at start (libssl, libkrb5, libldap...). */
#ifndef FIRN_RECORD_CURLLOAD_H
#define FIRN_RECORD_CURLLOAD_H

#include <curl/curl.h>

#define CURLLOAD_SONAME "libcurl.so.4"

/* The functions firn calls, by their libcurl names (X(name) for each). */
#define CURLLOAD_FNS(X)                                                                        \
	X(curl_global_init) X(curl_global_cleanup) X(curl_version_info) X(curl_free)           \
	X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_setopt)         \
	X(curl_easy_getinfo) X(curl_easy_escape) X(curl_easy_strerror)                         \
	X(curl_multi_init) X(curl_multi_cleanup) X(curl_multi_add_handle)                      \
	X(curl_multi_remove_handle) X(curl_multi_perform) X(curl_multi_poll)                   \
	X(curl_multi_info_read) X(curl_multi_wakeup) X(curl_multi_strerror)                    \
	X(curl_mime_init) X(curl_mime_free) X(curl_mime_addpart) X(curl_mime_name)             \
	X(curl_mime_filename) X(curl_mime_type) X(curl_mime_data)                              \
	X(curl_slist_append) X(curl_slist_free_all)                                            \
	X(curl_url) X(curl_url_dup) X(curl_url_cleanup) X(curl_url_get) X(curl_url_set)

/* A pointer to each function, typed as curl.h declares it. */
#define CURLLOAD_MEMBER(name) __typeof__(name) *name;
struct curlload {
	CURLLOAD_FNS(CURLLOAD_MEMBER)
};

/* Opens CURLLOAD_SONAME and finds every function of CURLLOAD_FNS, once per process (thread-safe;
 * later calls give the first's answer). 0, or -ELIBACC when the library or a function is missing
 * (curlload_why says what the loader said). The library stays open until the process exits. */
int curlload_open(void);

/* The loader's message of a failed curlload_open (static storage); "" when none failed. */
const char *curlload_why(void);

/* The functions; valid only after curlload_open returned 0. */
const struct curlload *curlload_fns(void);

/* A file that defines CURLLOAD_CALLS before including this header calls libcurl by its usual
 * names, once curlload_open returned 0: each name below goes through curlload_fns().
 * curl_easy_setopt and curl_easy_getinfo lose typecheck-gcc.h's argument checks there. */
#ifdef CURLLOAD_CALLS
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (curlload_fns()->curl_global_init)
#define curl_global_cleanup (curlload_fns()->curl_global_cleanup)
#define curl_version_info (curlload_fns()->curl_version_info)
#define curl_free (curlload_fns()->curl_free)
#define curl_easy_init (curlload_fns()->curl_easy_init)
#define curl_easy_cleanup (curlload_fns()->curl_easy_cleanup)
#define curl_easy_reset (curlload_fns()->curl_easy_reset)
#define curl_easy_setopt (curlload_fns()->curl_easy_setopt)
#define curl_easy_getinfo (curlload_fns()->curl_easy_getinfo)
#define curl_easy_escape (curlload_fns()->curl_easy_escape)
#define curl_easy_strerror (curlload_fns()->curl_easy_strerror)
#define curl_multi_init (curlload_fns()->curl_multi_init)
#define curl_multi_cleanup (curlload_fns()->curl_multi_cleanup)
#define curl_multi_add_handle (curlload_fns()->curl_multi_add_handle)
#define curl_multi_remove_handle (curlload_fns()->curl_multi_remove_handle)
#define curl_multi_perform (curlload_fns()->curl_multi_perform)
#define curl_multi_poll (curlload_fns()->curl_multi_poll)
#define curl_multi_info_read (curlload_fns()->curl_multi_info_read)
#define curl_multi_wakeup (curlload_fns()->curl_multi_wakeup)
#define curl_multi_strerror (curlload_fns()->curl_multi_strerror)
#define curl_mime_init (curlload_fns()->curl_mime_init)
#define curl_mime_free (curlload_fns()->curl_mime_free)
#define curl_mime_addpart (curlload_fns()->curl_mime_addpart)
#define curl_mime_name (curlload_fns()->curl_mime_name)
#define curl_mime_filename (curlload_fns()->curl_mime_filename)
#define curl_mime_type (curlload_fns()->curl_mime_type)
#define curl_mime_data (curlload_fns()->curl_mime_data)
#define curl_slist_append (curlload_fns()->curl_slist_append)
#define curl_slist_free_all (curlload_fns()->curl_slist_free_all)
#define curl_url (curlload_fns()->curl_url)
#define curl_url_dup (curlload_fns()->curl_url_dup)
#define curl_url_cleanup (curlload_fns()->curl_url_cleanup)
#define curl_url_get (curlload_fns()->curl_url_get)
#define curl_url_set (curlload_fns()->curl_url_set)
#endif

#endif
