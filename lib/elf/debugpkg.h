/* Which Debian package gives a file's debug information (issue 44: names for stripped files).
 * Read from dpkg's and apt's own files, running neither: the file's package from dpkg's lists
 * (/var/lib/dpkg/info/PKG.list), its source from dpkg's status, and from apt's package lists
 * (plain or lz4, as apt keeps them) whether a SOURCE-dbg or PKG-dbg package exists; else the
 * package's automatic PKG-dbgsym (Debian's debian-debug archive). apt-cache would say the same
 * but takes seconds where apt keeps no binary cache. Nothing is printed; errors are returned. */
#ifndef FIRN_DEBUGPKG_H
#define FIRN_DEBUGPKG_H

#include <stdbool.h>
#include <stddef.h>

/* Where dpkg and apt keep their files; a NULL member takes the default. */
struct debugpkg_dirs {
	const char *dpkg_info;   /* "/var/lib/dpkg/info": PKG.list and PKG:ARCH.list */
	const char *dpkg_status; /* "/var/lib/dpkg/status" */
	const char *apt_lists;   /* "/var/lib/apt/lists": *_Packages and *_Packages.lz4 */
};

/* Fills hint (size bytes) with the debug package to install for the file at path (an absolute
 * path; /usr/lib/X is also looked up as /lib/X, as merged-/usr systems list it). dirs NULL:
 * the defaults. 0; -ENOENT when no package lists path (or there is no dpkg); -ENAMETOOLONG
 * when the name does not fit; -ENOMEM. */
int debugpkg_find(const struct debugpkg_dirs *dirs, const char *path, char *hint, size_t size);

/* The parsers of the files above, over buf[0..len) (any bytes; bounds-checked, fuzzed). */
/* Whether a line of a dpkg .list text is exactly path. */
bool debugpkg_list_has(const char *buf, size_t len, const char *path);
/* The source package of pkg in dpkg's status text: its "Source:" field's first word (up to a
 * space or control byte), or pkg itself where its paragraph has none. 0, -ENOENT (no paragraph
 * "Package: pkg", or an empty field), -ENAMETOOLONG (src too small). */
int debugpkg_status_source(const char *buf, size_t len, const char *pkg, char *src, size_t size);
/* Whether apt's package list text has a paragraph "Package: name". */
bool debugpkg_packages_has(const char *buf, size_t len, const char *name);

#endif
