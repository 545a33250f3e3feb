/* libfirn-cuda.so: a CUDA injection library (CUDA_INJECTION64_PATH) that turns CUPTI callbacks and
 * activity records into USDT probes (provider firn_cuda) for a tracer such as `firn record -e usdt:...`.
 *
 * Probes (each with a semaphore; nothing is formatted or fired while its semaphore is zero):
 *   launch(u32 correlation_id, u32 cbid, const char *name)   on the launching thread, at API entry
 *          cbid = CUPTI callback id | CUPTI domain << 16 (1 = driver, 2 = runtime API)
 *   kernel(u64 start_ns, u64 end_ns, u32 correlation_id, u32 device, u32 stream, const char *name)
 *   memcpy(u64 start_ns, u64 end_ns, u32 correlation_id, u64 bytes, u8 kind)   (kind: CUpti_ActivityMemcpyKind)
 *   error(i32 code, const char *message)                      (code: a CUptiResult)
 * kernel and memcpy fire as CUPTI delivers activity buffers, on CUPTI's buffer thread; timestamps are
 * CUPTI's (cuptiGetTimestamp, ns). correlation_id is the one of the outermost launch API, which the
 * activity record of that launch carries.
 *
 * The four functions below are what the CUDA driver (InitializeInjection) and CUPTI (the others,
 * registered by pointer) call. The handlers are exported under these same names only so that a test
 * can drive the probe path without a GPU; they are not an API. */
#ifndef FIRN_CUDA_H
#define FIRN_CUDA_H

#include <cupti.h>

/* Called once by the CUDA driver when it loads the library: subscribes to kernel, graph launch
 * and module callbacks and registers the activity buffer handlers. Returns 1 on success, 0 when
 * CUPTI refused (then the error probe fires, if attached). */
int InitializeInjection(void);

/* The CUPTI callback: fires launch (semaphore set) and enables or disables kernel and memcpy
 * activity when their probes' semaphores have changed since the previous callback. */
void CUPTIAPI firn_cuda_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *cbdata);

/* CUPTI asks for an empty activity buffer: *buffer is malloc'ed (freed by buffer_completed),
 * *size its size; on failure *buffer is NULL and *size 0. */
void CUPTIAPI firn_cuda_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);

/* CUPTI hands back a buffer with valid bytes of records: fires kernel and memcpy per record
 * (each while its semaphore is set), then frees buffer. */
void CUPTIAPI firn_cuda_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
					 size_t valid);

#endif
