# Writes the seeds of fuzz_funcbounds: usage python3 tests/fuzz/funcbounds_seeds.py OUTDIR ELF...
# Each ELF file is copied as seed-NAME (funcbounds_init_fd), and its .eh_frame_hdr and .eh_frame
# behind the 21-byte header of tests/fuzz/fuzz_funcbounds.c as seed-NAME-raw (funcbounds_parse).
import os, struct, sys

def sections(data):
    elf32 = data[4] == 1
    if elf32:
        shoff, = struct.unpack_from('<I', data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x2e)
    else:
        shoff, = struct.unpack_from('<Q', data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    def sh(i):
        o = shoff + i * shentsize
        if elf32:
            name, typ, flags, addr, off, size = struct.unpack_from('<IIIIII', data, o)
        else:
            name, typ, flags, addr, off, size = struct.unpack_from('<IIQQQQ', data, o)
        return name, addr, off, size
    strs = sh(shstrndx)[2]
    out = {}
    for i in range(shnum):
        name, addr, off, size = sh(i)
        n = data[strs + name:data.index(b'\0', strs + name)].decode()
        out[n] = (addr, data[off:off + size])
    return elf32, out

for path in sys.argv[2:]:
    data = open(path, 'rb').read()
    name = os.path.basename(path)
    open(os.path.join(sys.argv[1], 'seed-' + name), 'wb').write(data)
    elf32, secs = sections(data)
    eh_addr, eh = secs['.eh_frame']
    hdr_addr, hdr = secs.get('.eh_frame_hdr', (0, b''))
    head = struct.pack('<BIQQ', 1 if elf32 else 0, len(hdr), eh_addr, hdr_addr)
    open(os.path.join(sys.argv[1], 'seed-%s-raw' % name), 'wb').write(head + hdr + eh)
