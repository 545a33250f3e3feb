/* OpenTelemetry thread contexts (OTEP 4947) as sample labels: the runtime runtime_otel
 * (lib/runtimes/runtime.h) of the walker bpf/otelctx.bpf.h. It adds no frames: its walker puts a
 * label context (bpf/firn.h's FIRN_CTX with FIRN_OTEL_TAG) in each sample's key, and it names
 * the labels of each: trace_id and span_id (lowercase hex, the W3C form) and one per attribute,
 * named by the process's OTEP 4719 process context key map (lib/elf/otelproc.h; "attr_N" for an
 * index the map does not name, or where the process published none).
 *   attach, on_mapping, poll: the process's mapped files are searched for otel_thread_ctx_v1
 *     (lib/elf/tlsctx.h, each file once by device and inode); where the loader has relocated the
 *     variable's GOT entries, the walker is told where it lies from a thread's fs base (struct
 *     firn_otel_proc by its tag); until then it is looked at again every OTEL_RETRY_NS, at most
 *     OTEL_RETRIES times (a library loaded by dlopen is mapped before it is relocated);
 *   on_code: a context's announcement (struct firn_otel_ctx_event): its record decoded
 *     (lib/elf/otelctx.h), its labels kept, the key map read the first time; an id announced
 *     again (the walker's ids go round) whose old context is still in the walker's table takes
 *     that one out of it (sample_source_map_update; the walker's otel_epoch bumped);
 *   labels: a context id's labels; FIRN_CTX_OTHER (contexts past the walker's table,
 *     FIRN_OTEL_CTX_MAX) is trace_id and span_id "other";
 *   cut (a continuous recording's, firn top's): the contexts the cut did not ask for are taken
 *     out of the walker's table (new spans get ids past FIRN_OTEL_CTX_MAX), the epoch bumped so
 *     no thread reuses one it remembers; their labels go at the next cut;
 *   summary: "firn: otel: ..." from the walker's counters, the folded samples among them.
 * On by default; record's --no-otel turns it off. */
#ifndef FIRN_OTELTHREAD_H
#define FIRN_OTELTHREAD_H

#include "runtimes/runtime.h"

#define OTEL_RETRY_NS 10000000ULL
#define OTEL_RETRIES 500

extern const struct runtime_ops runtime_otel;

#endif
