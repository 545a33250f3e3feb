/* The running kernel's BTF for CO-RE, read once: libbpf 1.1.2 parses /sys/kernel/btf/vmlinux
 * (5.5 MB) for every BPF object it loads, and searches it for every relocated type. At build
 * time bpf/min_btf.sh keeps only the types the sampler's object relocates against (bpftool gen
 * min_core_btf, ~2 KiB) with the key of the kernel it came from; at run time kbtf_open hands that
 * blob to libbpf (bpf_object_open_opts.btf_custom_path) when the running kernel has the same key.
 * Any other kernel (or no blob) gets the full BTF, as before. */
#ifndef FIRN_KBTF_H
#define FIRN_KBTF_H

#include <stddef.h>

/* The running kernel's BTF identity, as bpf/min_btf.sh writes it: "RELEASE BUILD_ID SIZE" (uname
 * release, the hex GNU build ID of /sys/kernel/notes, empty without one, and the byte size of
 * /sys/kernel/btf/vmlinux) into buf (len bytes). 0, -ENOENT without kernel BTF, -ENOSPC when
 * len is too small. */
int kbtf_key(char *buf, size_t len);

/* When key is the running kernel's (kbtf_key) and len > 0: a memfd holding btf's len bytes,
 * which libbpf can read through kbtf_path. Returns the descriptor (the caller closes it),
 * -ESTALE when key names another kernel, -ENOENT without a blob or kernel BTF, -errno. */
int kbtf_open(const char *key, const void *btf, size_t len);

/* "/proc/self/fd/FD" into buf (at least 32 bytes) for btf_custom_path; returns buf. */
char *kbtf_path(int fd, char *buf, size_t len);

#endif
