/* Go's runtime structures as its DWARF describes them (see godwarf.h). */
#include "runtimes/godwarf.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#define GODWARF_MAX_OFF 4096 /* the walker masks offsets with 4095 */

/* What is looked for: a member of a structure, and where its offset goes. */
struct want {
	const char *type, *member;
	uint32_t *out;
	bool found;
};

/* Records the offsets of the wanted members of structure die (a runtime.g or runtime.m). */
static int members(Dwarf_Die *die, struct want *w, unsigned nw)
{
	const char *type = dwarf_diename(die);
	Dwarf_Die m;
	Dwarf_Attribute a;
	Dwarf_Word off;

	if (!type || dwarf_child(die, &m) != 0)
		return 0;
	do {
		const char *name = dwarf_tag(&m) == DW_TAG_member ? dwarf_diename(&m) : NULL;
		for (unsigned i = 0; name && i < nw; i++) {
			if (w[i].found || strcmp(w[i].type, type) || strcmp(w[i].member, name))
				continue;
			if (!dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &off))
				continue;
			if (off >= GODWARF_MAX_OFF)
				return -EINVAL;
			*w[i].out = (uint32_t)off;
			w[i].found = true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return 0;
}

/* Looks through the top-level entries of every unit for the wanted structures; how many of
 * the nw members are still missing, or -EINVAL. */
static int search(Dwarf *dw, struct want *w, unsigned nw)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	unsigned missing = nw;

	while (missing && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				const char *n = dwarf_tag(&d) == DW_TAG_structure_type ?
							dwarf_diename(&d) : NULL;
				if (n && (!strcmp(n, "runtime.g") || !strcmp(n, "runtime.m")) &&
				    members(&d, w, nw))
					return -EINVAL;
			} while (dwarf_siblingof(&d, &d) == 0);
		}
		missing = 0;
		for (unsigned i = 0; i < nw; i++)
			missing += !w[i].found;
		off = next;
	}
	return (int)missing;
}

int godwarf_offsets(int fd, struct godwarf *out)
{
	struct want w[] = {
		{ "runtime.g", "m", &out->g_m, false },
		{ "runtime.g", "labels", &out->g_labels, false },
		{ "runtime.m", "curg", &out->m_curg, false },
	};
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);

	if (!dw)
		return -ENOENT;
	int r = search(dw, w, sizeof(w) / sizeof(w[0]));
	dwarf_end(dw);
	return r < 0 ? r : r ? -ENOENT : 0;
}
