/* libfirn-cuda.so: CUPTI callbacks and activity records as USDT probes (provider firn_cuda).
 * Loaded by the CUDA driver through CUDA_INJECTION64_PATH; see firn_cuda.h for the probes.
 *
 * Cost while no tracer is attached: every probe has a semaphore, and the launch callback checks
 * three of them (launch, kernel, memcpy) and returns. CUPTI allocates activity buffers only for
 * enabled activity kinds, and kernel (CONCURRENT_KERNEL: KERNEL would serialize kernels) and
 * memcpy activity are enabled only while the kernel or memcpy probe's semaphore is non-zero: the
 * check runs at every callback (launch, module load or unload), so activity starts at the first
 * callback after a tracer attaches (that launch's record may be missed) and stops at the first
 * callback after it detaches; then the partly filled buffers are flushed and freed. What a tracer
 * has not received when it detaches is dropped (its semaphores are zero). At exit the buffers are
 * flushed (atexit), so a tracer that outlives the program sees every record. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#include "firn_cuda.h"

/* Probes below get a semaphore each (firn_cuda_NAME_semaphore, in .probes), set by a tracer. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#define FIRN_CUDA_SEMAPHORE(name)                                                                  \
	__attribute__((visibility("protected"), section(".probes"))) volatile unsigned short       \
		firn_cuda_##name##_semaphore
#define FIRN_CUDA_PROBE_ENABLED(name) __builtin_expect(firn_cuda_##name##_semaphore != 0, 0)
#define FIRN_CUDA_LAUNCH_ENABLED() FIRN_CUDA_PROBE_ENABLED(launch)
#define FIRN_CUDA_KERNEL_ENABLED() FIRN_CUDA_PROBE_ENABLED(kernel)
#define FIRN_CUDA_MEMCPY_ENABLED() FIRN_CUDA_PROBE_ENABLED(memcpy)
#define FIRN_CUDA_ERROR_ENABLED() FIRN_CUDA_PROBE_ENABLED(error)

FIRN_CUDA_SEMAPHORE(launch);
FIRN_CUDA_SEMAPHORE(kernel);
FIRN_CUDA_SEMAPHORE(memcpy);
FIRN_CUDA_SEMAPHORE(error);

#define EXPORT __attribute__((visibility("default")))

/* CUDA 13's activity records (CUPTI returns the newest version of each kind it was built with). */
typedef CUpti_ActivityKernel10 firn_kernel_record;
typedef CUpti_ActivityMemcpy6 firn_memcpy_record;

enum { BUFFER_SIZE = 1 << 20, FLUSH_PERIOD_MS = 100 };

/* An activity kind switched on and off with the semaphore of the probe that reports it. */
struct activity {
	const char *name;
	CUpti_ActivityKind kind;
	volatile unsigned short *semaphore;
	int on; /* what was last asked of CUPTI (atomic; changed under activity_lock) */
};

static struct activity activities[] = {
	{ "CONCURRENT_KERNEL", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &firn_cuda_kernel_semaphore, 0 },
	{ "MEMCPY", CUPTI_ACTIVITY_KIND_MEMCPY, &firn_cuda_memcpy_semaphore, 0 },
};
static pthread_mutex_t activity_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_SubscriberHandle subscriber;

/* Set between a runtime launch's entry and exit: the driver launch inside it is the same launch. */
static __thread int in_runtime_launch;

/* Fires error with CUPTI's code and "CALL(WHAT): CUPTI's text" (a tracer reads why nothing came). */
static void report(CUptiResult rc, const char *call, const char *what)
{
	const char *text = NULL;
	char message[256];
	int code = (int)rc;

	if (!FIRN_CUDA_ERROR_ENABLED())
		return;
	if (cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || !text)
		text = "unknown CUPTI result";
	snprintf(message, sizeof(message), "%s(%s): %s", call, what, text);
	STAP_PROBE2(firn_cuda, error, code, message);
}

/* Gives back the partly filled buffers once no activity is on (no memory kept for no tracer). */
static void flush_when_all_off(void)
{
	CUptiResult rc;

	for (size_t i = 0; i < sizeof(activities) / sizeof(activities[0]); i++)
		if (activities[i].on)
			return;
	rc = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (rc != CUPTI_SUCCESS)
		report(rc, "cuptiActivityFlushAll", "tracer detached");
}

/* Enables or disables one activity kind to match its probe's semaphore (once per change). */
static void switch_activity(struct activity *a)
{
	CUptiResult rc;
	int want;

	pthread_mutex_lock(&activity_lock);
	want = *a->semaphore != 0;
	if (want != a->on) {
		if (want) /* on failure records arrive when a buffer fills or at exit: still correct */
			(void)cuptiActivityFlushPeriod(FLUSH_PERIOD_MS);
		rc = want ? cuptiActivityEnable(a->kind) : cuptiActivityDisable(a->kind);
		if (rc != CUPTI_SUCCESS)
			report(rc, want ? "cuptiActivityEnable" : "cuptiActivityDisable", a->name);
		__atomic_store_n(&a->on, want, __ATOMIC_RELEASE);
		if (!want)
			flush_when_all_off();
	}
	pthread_mutex_unlock(&activity_lock);
}

/* Brings kernel and memcpy activity in line with their semaphores: two loads when it already is. */
static inline void sync_activity(void)
{
	for (size_t i = 0; i < sizeof(activities) / sizeof(activities[0]); i++) {
		struct activity *a = &activities[i];

		if ((*a->semaphore != 0) != __atomic_load_n(&a->on, __ATOMIC_ACQUIRE))
			switch_activity(a);
	}
}

/* The runtime API calls that launch kernels or graphs (each subscribed, each a launch probe). */
static const CUpti_CallbackId runtime_launches[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};

/* The driver API calls that launch kernels or graphs. */
static const CUpti_CallbackId driver_launches[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* 1 when cbid is one of the n ids in ids. */
static int listed(const CUpti_CallbackId *ids, size_t n, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == cbid)
			return 1;
	return 0;
}

/* 1 when (domain, cbid) launches a kernel or a graph. */
static int is_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return listed(runtime_launches, COUNT(runtime_launches), cbid);
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		return listed(driver_launches, COUNT(driver_launches), cbid);
	return 0;
}

/* Fires launch: the kernel's name where CUPTI knows it, else the API's (a graph launch). */
static void fire_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	uint32_t correlation = cb->correlationId;
	uint32_t id = (uint32_t)cbid | (uint32_t)domain << 16;
	const char *name = cb->symbolName ? cb->symbolName : cb->functionName ? cb->functionName : "";

	STAP_PROBE3(firn_cuda, launch, correlation, id, name);
}

/* A runtime or driver API callback: launch once per launch, at the outermost API's entry. Runs
 * only while launch's semaphore is set: a flag left by a tracer leaving mid-launch is reset by
 * the thread's next runtime launch. */
static void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;

	if (!cb || !is_launch(domain, cbid))
		return;
	if (cb->callbackSite != CUPTI_API_ENTER) {
		if (runtime)
			in_runtime_launch = 0;
		return;
	}
	if (!runtime && in_runtime_launch)
		return; /* cudaLaunchKernel's own cuLaunchKernel: fired already */
	in_runtime_launch = runtime;
	fire_launch(domain, cbid, cb);
}

/* CUPTI's callback (firn_cuda.h): activity follows the semaphores, then the launch probe. */
EXPORT void CUPTIAPI firn_cuda_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
					const void *cbdata)
{
	sync_activity();
	if (FIRN_CUDA_LAUNCH_ENABLED() &&
	    (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API))
		on_api(domain, cbid, cbdata);
}

/* CUPTI asks for an empty buffer: 1 MiB, aligned as records need. */
EXPORT void CUPTIAPI firn_cuda_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*size = BUFFER_SIZE;
	*buffer = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, BUFFER_SIZE);
	if (!*buffer) {
		*size = 0;
		report(CUPTI_ERROR_OUT_OF_MEMORY, "aligned_alloc", "activity buffer");
	}
}

/* Fires kernel for one kernel record (copied out of the packed record first). */
static void fire_kernel(const firn_kernel_record *k)
{
	uint64_t start = k->start, end = k->end;
	uint32_t correlation = k->correlationId, device = k->deviceId, stream = k->streamId;
	const char *name = k->name ? k->name : "";

	STAP_PROBE6(firn_cuda, kernel, start, end, correlation, device, stream, name);
}

/* Fires memcpy for one memcpy record. */
static void fire_memcpy(const firn_memcpy_record *m)
{
	uint64_t start = m->start, end = m->end, bytes = m->bytes;
	uint32_t correlation = m->correlationId;
	uint8_t kind = m->copyKind;

	STAP_PROBE5(firn_cuda, memcpy, start, end, correlation, bytes, kind);
}

/* Fires the probe of one record, if it has one and its semaphore is set. */
static void fire_record(const CUpti_Activity *record)
{
	switch (record->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		if (FIRN_CUDA_KERNEL_ENABLED())
			fire_kernel((const firn_kernel_record *)record);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		if (FIRN_CUDA_MEMCPY_ENABLED())
			fire_memcpy((const firn_memcpy_record *)record);
		break;
	default:
		break;
	}
}

/* Reports records CUPTI dropped for want of buffer space (queried only with a tracer listening). */
static void report_dropped(CUcontext ctx, uint32_t stream)
{
	size_t dropped = 0;
	char what[64];

	if (!FIRN_CUDA_ERROR_ENABLED())
		return;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS || !dropped)
		return;
	snprintf(what, sizeof(what), "%zu records dropped", dropped);
	report(CUPTI_ERROR_OUT_OF_MEMORY, "cuptiActivityGetNumDroppedRecords", what);
}

/* CUPTI hands back a buffer: its records to the probes (only while a probe listens), then free. */
EXPORT void CUPTIAPI firn_cuda_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
						size_t valid)
{
	CUpti_Activity *record = NULL;

	if (buffer && (FIRN_CUDA_KERNEL_ENABLED() || FIRN_CUDA_MEMCPY_ENABLED()))
		while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
			fire_record(record);
	report_dropped(ctx, stream);
	free(buffer);
}

/* Delivers what CUPTI still holds before the process goes (the tracer is still attached). */
static void flush_at_exit(void)
{
	int any = 0;

	for (size_t i = 0; i < COUNT(activities); i++)
		any |= __atomic_load_n(&activities[i].on, __ATOMIC_ACQUIRE);
	if (any)
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* Turns on the callbacks of one domain for the listed ids; 0 or CUPTI's error. */
static CUptiResult enable_callbacks(CUpti_CallbackDomain domain, const CUpti_CallbackId *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CUptiResult rc = cuptiEnableCallback(1, subscriber, domain, ids[i]);

		if (rc != CUPTI_SUCCESS)
			return rc;
	}
	return CUPTI_SUCCESS;
}

/* Module load and unload: no probe of their own, one more point where activity follows the
 * semaphores (modules load before a program's first launch). */
static const CUpti_CallbackId module_events[] = {
	CUPTI_CBID_RESOURCE_MODULE_LOADED,
	CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
};

/* Called by the CUDA driver at cuInit: callbacks on, buffer handlers registered, flush at exit. */
EXPORT int InitializeInjection(void)
{
	CUptiResult rc;

	rc = cuptiSubscribe(&subscriber, firn_cuda_callback, NULL);
	if (rc != CUPTI_SUCCESS) {
		report(rc, "cuptiSubscribe", "libfirn-cuda");
		return 0;
	}
	if ((rc = enable_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, runtime_launches, COUNT(runtime_launches))) ||
	    (rc = enable_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, driver_launches, COUNT(driver_launches))) ||
	    (rc = enable_callbacks(CUPTI_CB_DOMAIN_RESOURCE, module_events, COUNT(module_events)))) {
		report(rc, "cuptiEnableCallback", "launch and module callbacks");
		cuptiUnsubscribe(subscriber);
		return 0;
	}
	rc = cuptiActivityRegisterCallbacks(firn_cuda_buffer_requested, firn_cuda_buffer_completed);
	if (rc != CUPTI_SUCCESS) {
		report(rc, "cuptiActivityRegisterCallbacks", "activity buffers");
		cuptiUnsubscribe(subscriber);
		return 0;
	}
	atexit(flush_at_exit);
	sync_activity();
	return 1;
}
