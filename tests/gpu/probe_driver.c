/* Drives libfirn-cuda.so's probe path without a GPU: calls the handlers CUPTI would call
 * (firn_cuda_callback with synthetic CUpti_CallbackData, firn_cuda_buffer_requested/_completed
 * with a synthetic activity buffer that the real cuptiActivityGetNextRecord walks) from known call
 * paths, so a tracer's hit counts per stack can be checked.
 *
 * CUPTI's subscription and activity switches (cuptiSubscribe, EnableCallback, ActivityEnable,
 * Disable, FlushAll, ...) are replaced by this program's own definitions (exported with -rdynamic,
 * they interpose on libcupti's): they count the calls, so the test sees what InitializeInjection
 * asks for and when the library turns activity on and off; with fail ActivityEnable and Disable
 * return an error, as CUPTI does without a driver. FlushAll hands back a pending buffer (one kernel
 * record) as CUPTI would.
 *
 * usage: probe_driver run WAIT_MS [fail] [untraced] [detach] [paths]
 *          Calls InitializeInjection. With untraced, then 1000 cudaLaunchKernel callbacks while no
 *          tracer is attached.
 *          Then waits (at most WAIT_MS ms, else exit 3) until the launch, kernel and memcpy
 *          semaphores are set, and fires:
 *            launch: 3 cudaLaunchKernel from path_a (each with a nested cuLaunchKernel, not a second
 *                    launch), 1 cuLaunchKernel and 1 cudaGraphLaunch from path_b, 2 cudaMemcpy from
 *                    path_c (not launches);
 *            kernel: 5 records (3 CONCURRENT_KERNEL, 2 KERNEL) and memcpy: 2 records, from deliver,
 *                    with a memset record (no probe) between them; 1 more kernel record in a
 *                    buffer that CUPTI (FlushAll) hands back later: at exit, or when the library
 *                    turns activity off.
 *          With paths, between those: 2 launches from path_small and 2 from path_large, then a
 *          buffer with their kernel records (10 us each for small, 30 us for large: 1:3) and 2
 *          kernel records of path_b's graph launch (7 us each).
 *          With detach, then waits (at most WAIT_MS) until the semaphores are zero again and makes
 *          one more callback. Prints "STAGE CALL COUNT" lines: the CUPTI calls counted by each
 *          stage (untraced, traced, detached); with fail the stand-ins return an error.
 *        probe_driver bench N   N launch callbacks; prints "ns_per_call X". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "firn_cuda.h"

static int cupti_fail;
static int enables[64], disables[64], flushes, flush_periods, subscribes, callbacks_on, registered;
static uint8_t *pending; /* a buffer CUPTI holds until a flush */
static size_t pending_size, pending_valid;

/* Stand-ins for CUPTI's subscription calls: count and succeed. */
CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
	subscribes++;
	*subscriber = (CUpti_SubscriberHandle)&subscribes;
	return callback == firn_cuda_callback ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	subscribes--;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
					 CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	callbacks_on += enable ? 1 : -1;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
						    CUpti_BuffersCallbackCompleteFunc completed)
{
	registered = requested == firn_cuda_buffer_requested && completed == firn_cuda_buffer_completed;
	return CUPTI_SUCCESS;
}

/* Stand-ins for CUPTI's activity switches: count, succeed or fail. */
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	enables[kind & 63]++;
	return cupti_fail ? CUPTI_ERROR_NOT_INITIALIZED : CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	disables[kind & 63]++;
	return cupti_fail ? CUPTI_ERROR_NOT_INITIALIZED : CUPTI_SUCCESS;
}

/* FlushAll also hands back the buffer held so far, as CUPTI does. */
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	uint8_t *buffer = pending;

	flushes++;
	pending = NULL;
	if (buffer)
		firn_cuda_buffer_completed(NULL, 0, buffer, pending_size, pending_valid);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t ms)
{
	flush_periods++;
	return CUPTI_SUCCESS;
}

/* Sleeps ms milliseconds. */
static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The library's semaphore of one probe (found by name: it is exported for this). */
static volatile unsigned short *semaphore(const char *probe)
{
	char name[64];
	void *p;

	snprintf(name, sizeof(name), "firn_cuda_%s_semaphore", probe);
	p = dlsym(RTLD_DEFAULT, name);
	if (!p) {
		fprintf(stderr, "probe_driver: no symbol %s\n", name);
		exit(1);
	}
	return p;
}

/* Waits until the launch, kernel and memcpy semaphores are all set (want 1) or all zero (0). */
static int wait_semaphores(int want, long ms)
{
	volatile unsigned short *l = semaphore("launch"), *k = semaphore("kernel"), *m = semaphore("memcpy");

	for (long waited = 0; (!!*l != want) || (!!*k != want) || (!!*m != want); waited += 5) {
		if (waited >= ms)
			return -1;
		sleep_ms(5);
	}
	return 0;
}

static uint32_t next_correlation = 100;

/* One API call as CUPTI reports it: a callback at entry and one at exit. */
static void api_site(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
		     uint32_t correlation, const char *func, const char *symbol)
{
	CUpti_CallbackData cb;

	memset(&cb, 0, sizeof(cb));
	cb.callbackSite = site;
	cb.functionName = func;
	cb.symbolName = symbol;
	cb.correlationId = correlation;
	firn_cuda_callback(NULL, domain, cbid, &cb);
}

/* cudaLaunchKernel, with the cuLaunchKernel the runtime makes inside it; returns the runtime
 * call's correlation id (the one its kernel's record carries). */
__attribute__((noinline)) static uint32_t runtime_launch(const char *kernel)
{
	uint32_t rt = next_correlation++, drv = next_correlation++;

	api_site(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER,
		 rt, "cudaLaunchKernel", kernel);
	api_site(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, drv,
		 "cuLaunchKernel", kernel);
	api_site(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, drv,
		 "cuLaunchKernel", kernel);
	api_site(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT,
		 rt, "cudaLaunchKernel", kernel);
	return rt;
}

/* An API call that is no launch (cudaMemcpy) or one of the driver API alone, entry and exit. */
__attribute__((noinline)) static uint32_t plain_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
						     const char *func, const char *symbol)
{
	uint32_t c = next_correlation++;

	api_site(domain, cbid, CUPTI_API_ENTER, c, func, symbol);
	api_site(domain, cbid, CUPTI_API_EXIT, c, func, symbol);
	return c;
}

static uint32_t graph_correlation; /* path_b's graph launch */

/* Call path a: 3 runtime launches. */
__attribute__((noinline)) void path_a(void)
{
	for (int i = 0; i < 3; i++)
		runtime_launch("_Z6kernelPf");
	__asm__ volatile("" ::: "memory");
}

/* Call path b: a driver launch and a graph launch. */
__attribute__((noinline)) void path_b(void)
{
	plain_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", "_Z5otherv");
	graph_correlation = plain_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
				       "cudaGraphLaunch", NULL);
	__asm__ volatile("" ::: "memory");
}

/* Call path c: 2 copies, no launch. */
__attribute__((noinline)) void path_c(void)
{
	for (int i = 0; i < 2; i++)
		plain_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", NULL);
	__asm__ volatile("" ::: "memory");
}

/* Appends one record of size bytes to the buffer at *at (kind first, as CUPTI writes them). */
static void *append(uint8_t *buffer, size_t *at, size_t size, CUpti_ActivityKind kind)
{
	void *r = buffer + *at;

	memset(r, 0, size);
	((CUpti_Activity *)r)->kind = kind;
	*at += size;
	return r;
}

/* An empty buffer from the library's allocator, as CUPTI asks for one. */
static uint8_t *request(size_t *size)
{
	uint8_t *buffer = NULL;
	size_t max = 0;

	firn_cuda_buffer_requested(&buffer, size, &max);
	if (!buffer || *size < 8 * sizeof(CUpti_ActivityKernel10)) {
		fprintf(stderr, "probe_driver: buffer_requested gave %zu bytes\n", *size);
		exit(1);
	}
	return buffer;
}

/* A buffer CUPTI keeps until a flush: one kernel record. */
static void hold_pending(void)
{
	CUpti_ActivityKernel10 *k;

	pending_valid = 0;
	pending = request(&pending_size);
	k = append(pending, &pending_valid, sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->start = 5000000, k->end = 6000000, k->correlationId = 300, k->name = "_Z4lastv";
}

/* A buffer with 5 kernel, 1 memset and 2 memcpy records, handed back at once. */
__attribute__((noinline)) void deliver(void)
{
	size_t size = 0, at = 0;
	uint8_t *buffer = request(&size);

	for (int i = 0; i < 5; i++) {
		CUpti_ActivityKernel10 *k = append(buffer, &at, sizeof(*k),
						   i < 3 ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL);
		k->start = 1000000 * (i + 1), k->end = k->start + 1000 * (i + 1);
		k->correlationId = 100 + i, k->deviceId = 0, k->streamId = 7, k->name = "_Z6kernelPf";
		if (i == 2)
			append(buffer, &at, sizeof(CUpti_ActivityMemset4), CUPTI_ACTIVITY_KIND_MEMSET);
	}
	for (int i = 0; i < 2; i++) {
		CUpti_ActivityMemcpy6 *m = append(buffer, &at, sizeof(*m), CUPTI_ACTIVITY_KIND_MEMCPY);

		m->start = 9000000 + i, m->end = m->start + 500, m->bytes = 4096 << i, m->correlationId = 200 + i;
		m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	}
	firn_cuda_buffer_completed(NULL, 0, buffer, size, at);
}

/* Call paths small and large (paths): 2 launches each, of kernels whose records say they ran
 * 10 us and 30 us (1:3); their correlation ids go to ids[0..1] and ids[2..3]. */
__attribute__((noinline)) void path_small(uint32_t *ids)
{
	for (int i = 0; i < 2; i++)
		ids[i] = runtime_launch("_Z5smalli");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void path_large(uint32_t *ids)
{
	for (int i = 0; i < 2; i++)
		ids[i] = runtime_launch("_ZN2ns5largeIfEEvPT_");
	__asm__ volatile("" ::: "memory");
}

/* The records of paths' launches (2 x 10 us small, 2 x 30 us large), 2 kernels of path_b's graph
 * launch (correlation graph: 7 us each), handed back at once. */
static void deliver_paths(const uint32_t *ids, uint32_t graph)
{
	size_t size = 0, at = 0;
	uint8_t *buffer = request(&size);

	for (int i = 0; i < 6; i++) {
		CUpti_ActivityKernel10 *k = append(buffer, &at, sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		k->start = 20000000 + 100000 * i, k->streamId = 7;
		k->end = k->start + (i < 2 ? 10000 : i < 4 ? 30000 : 7000);
		k->correlationId = i < 4 ? ids[i] : graph;
		k->name = i < 2 ? "_Z5smalli" : i < 4 ? "_ZN2ns5largeIfEEvPT_" : "_Z5graphv";
	}
	firn_cuda_buffer_completed(NULL, 0, buffer, size, at);
}

/* paths: the two call paths and their records. */
static void run_paths(void)
{
	uint32_t ids[4];

	path_small(ids);
	path_large(ids + 2);
	deliver_paths(ids, graph_correlation);
	printf("fired paths launch 2 2 kernel 2 2 graph 2\n");
}

/* Prints the CUPTI calls counted so far, prefixed by stage. */
static void print_calls(const char *stage)
{
	printf("%s enable_kernel %d\n", stage, enables[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
	printf("%s enable_memcpy %d\n", stage, enables[CUPTI_ACTIVITY_KIND_MEMCPY]);
	printf("%s disable_kernel %d\n", stage, disables[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
	printf("%s disable_memcpy %d\n", stage, disables[CUPTI_ACTIVITY_KIND_MEMCPY]);
	printf("%s flush %d\n", stage, flushes);
	fflush(stdout);
}

/* The CUPTI calls made by the exit handlers (the library's flush runs before this one). */
static void print_at_exit(void)
{
	printf("exit flush %d\n", flushes);
	fflush(stdout);
}

/* The run mode (see the usage above): init, untraced, traced and detached stages. */
static int run(long wait_ms, int untraced, int detach, int paths)
{
	atexit(print_at_exit);
	printf("init returned %d\n", InitializeInjection());
	printf("init subscribed %d\n", subscribes);
	printf("init callbacks %d\n", callbacks_on);
	printf("init registered %d\n", registered);
	print_calls("init");
	if (untraced) {
		if (wait_semaphores(0, 0)) {
			fprintf(stderr, "probe_driver: a tracer is attached already\n");
			return 3;
		}
		for (int i = 0; i < 1000; i++)
			runtime_launch("_Z6kernelPf");
		print_calls("untraced");
	}
	if (wait_semaphores(1, wait_ms)) {
		fprintf(stderr, "probe_driver: no tracer attached\n");
		return 3;
	}
	sleep_ms(200);
	path_a();
	path_b();
	path_c();
	deliver();
	if (paths)
		run_paths();
	hold_pending();
	print_calls("traced");
	printf("fired launch 3 2 kernel 5 memcpy 2\n");
	fflush(stdout);
	if (!detach)
		return 0;
	if (wait_semaphores(0, wait_ms)) {
		fprintf(stderr, "probe_driver: the tracer did not detach\n");
		return 3;
	}
	plain_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", NULL);
	print_calls("detached");
	return 0;
}

/* ns per launch callback (entry and exit of a cudaLaunchKernel with its nested cuLaunchKernel: 4). */
static int bench(long n)
{
	struct timespec t0, t1;
	CUpti_CallbackData cb;

	memset(&cb, 0, sizeof(cb));
	cb.callbackSite = CUPTI_API_ENTER, cb.functionName = "cudaLaunchKernel", cb.symbolName = "_Z6kernelPf";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		cb.correlationId = (uint32_t)i;
		firn_cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("ns_per_call %.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)n);
	return 0;
}

/* Picks the mode; 2 on a usage error. */
int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "run")) {
		int untraced = 0, detach = 0, paths = 0;

		for (int i = 3; i < argc; i++) {
			cupti_fail |= !strcmp(argv[i], "fail");
			untraced |= !strcmp(argv[i], "untraced");
			detach |= !strcmp(argv[i], "detach");
			paths |= !strcmp(argv[i], "paths");
		}
		return run(atol(argv[2]), untraced, detach, paths);
	}
	if (argc == 3 && !strcmp(argv[1], "bench"))
		return bench(atol(argv[2]));
	fprintf(stderr, "usage: probe_driver run WAIT_MS [fail] [untraced] [detach] | bench N\n");
	return 2;
}
