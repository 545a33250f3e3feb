/* Files without symbols for the code a profile sampled (issue 44): a stripped file's functions
 * are named by their .eh_frame bounds ("python3.11+0x4fee40"), or not at all ("[libfoo.so]"),
 * and a user wants to know which file it is, how much of the profile it holds and how to get
 * names. The record summary and report's header print what nosym_files gives; the debug package
 * that gives a file's names is found where the file was recorded (nosym_note_packages) and kept
 * in the profile as a comment "debug package: PKG FILE", so report says it anywhere. */
#ifndef FIRN_NOSYM_H
#define FIRN_NOSYM_H

#include <stddef.h>
#include <stdint.h>

#include "elf/debugpkg.h"
#include "model/profile.h"

/* One file whose sampled code has no symbols. */
struct nosym_file {
	uint32_t filename;   /* string id of its path in the profile */
	int64_t value;       /* of the samples with at least one such frame of the file */
	const char *package; /* its comment from the package on ("PKG FILE"), or NULL; p's string */
};

/* Fills out with up to max files whose code p's samples hit without a symbol there (a user file
 * mapping whose location has no line, or a name "BASENAME+0x..." given by the file's function
 * bounds) in at least 1 % of the value (of sample type value_index), largest first: a few
 * samples of a stripped file are no reason to send a user after its debug package. Returns how
 * many, or -ENOMEM. */
int nosym_files(const struct profile *p, uint32_t value_index, struct nosym_file *out, size_t max);

/* For each of the (up to max) largest files of nosym_files that a Debian package holds, adds
 * the comment "debug package: PKG FILE" (lib/elf/debugpkg.h; dirs NULL: the system's), through
 * the answers cached while dpkg and apt are unchanged (lib/elf/debugpkg_cache.h,
 * $FIRN_DEBUGPKG_CACHE). Where it runs: on the machine that recorded the profile. 0 or -ENOMEM. */
int nosym_note_packages(struct profile *p, uint32_t value_index,
			const struct debugpkg_dirs *dirs, size_t max);

#endif
