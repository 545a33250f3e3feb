/* A JVM's memory, faked for the HotSpot readers' unit tests (test_hotspot_names,
 * test_hotspot_codecache, test_hotspot_runtime): the includer defines BASE, the address of
 * mem[0], and FAKE_SIZE. fake_read reads it as a struct hotspot_mem reads a process; the poke
 * helpers lay HotSpot's objects out in it. */
#ifndef FIRN_TEST_HOTSPOT_FAKE_H
#define FIRN_TEST_HOTSPOT_FAKE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define FAKE_UNUSED __attribute__((unused))

struct fake {
	uint8_t mem[FAKE_SIZE];
};

/* A hotspot_mem read of [addr, addr + len): -EFAULT outside the fake, as a process's unmapped
 * memory. */
static FAKE_UNUSED int fake_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	(void)pid;
	if (addr < BASE || addr - BASE > FAKE_SIZE || len > FAKE_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - BASE), len);
	return 0;
}

static FAKE_UNUSED void poke(struct fake *f, size_t at, const void *v, size_t len)
{
	memcpy(f->mem + at, v, len);
}

static FAKE_UNUSED void poke_ptr(struct fake *f, size_t at, uint64_t v)
{
	poke(f, at, &v, sizeof(v));
}

static FAKE_UNUSED void poke_u16(struct fake *f, size_t at, uint16_t v)
{
	poke(f, at, &v, sizeof(v));
}

static FAKE_UNUSED void poke_u32(struct fake *f, size_t at, uint32_t v)
{
	poke(f, at, &v, sizeof(v));
}

/* A Symbol at at: its length, then its bytes (JDK 17's layout: length at 4, body at 6). */
static FAKE_UNUSED void put_symbol(struct fake *f, size_t at, const char *s)
{
	poke_u16(f, at + 4, (uint16_t)strlen(s));
	poke(f, at + 6, s, strlen(s));
}

/* JDK 17's offsets of what a Method*'s names need (as test_hotspot_structs reads them). */
static FAKE_UNUSED void jdk17_names(struct hotspot_structs *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->method_const = 8, hs->cmethod_constants = 8, hs->cmethod_name_index = 34;
	hs->cmethod_signature_index = 36, hs->cpool_holder = 24, hs->cpool_length = 60;
	hs->size_cpool = 72, hs->klass_name = 24, hs->symbol_length = 4, hs->symbol_body = 6;
}

#endif
