/* libcurl opened on first use: the table of its functions that push.c calls through
 * (curlload.h). */
#include "record/curlload.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

static struct curlload fns;
static int load_err = -ELIBACC;
static char why[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym of every function into fns, by its name; false (why set) at the first one missing. */
static bool find_all(void *h)
{
#define CURLLOAD_FIND(name)                                                            \
	if (!(*(void **)&fns.name = dlsym(h, #name))) {                                \
		snprintf(why, sizeof(why), "%s: no function %s", CURLLOAD_SONAME, #name); \
		return false;                                                          \
	}
	CURLLOAD_FNS(CURLLOAD_FIND)
#undef CURLLOAD_FIND
	return true;
}

/* Opens the library and fills the table (pthread_once's routine); load_err says how it went. */
static void load(void)
{
	void *h = dlopen(CURLLOAD_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!h) {
		snprintf(why, sizeof(why), "%s", (e = dlerror()) ? e : CURLLOAD_SONAME);
		return;
	}
	if (!find_all(h)) {
		dlclose(h);
		return;
	}
	load_err = 0;
}

int curlload_open(void)
{
	pthread_once(&once, load);
	return load_err;
}

const char *curlload_why(void)
{
	return why;
}

const struct curlload *curlload_fns(void)
{
	return &fns;
}
