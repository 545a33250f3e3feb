/* Tagged user-stack values (bpf/firn.h) as seen from user space. */
#include "model/resolver.h"

#include <linux/types.h>

#include "../../bpf/firn.h"

unsigned resolver_kind_of(uint64_t v)
{
	return FIRN_FRAME_KIND_OF(v);
}

uint64_t resolver_payload(uint64_t v)
{
	return v & FIRN_FRAME_PAYLOAD_MASK;
}
