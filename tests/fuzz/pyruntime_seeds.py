# Writes the seeds of fuzz_pyruntime (and test_pyruntime's memory images): usage
# python3 tests/fuzz/pyruntime_seeds.py tests/fuzz/corpus/fuzz_pyruntime. Byte 0 = minor version, the
# rest a fake CPython memory image loaded at BASE with _PyRuntime at BASE.
import struct, sys
BASE = 0x10000000
O = {  # minor: offsets as in lib/runtimes/pyruntime.c's tables
 9: dict(rt_head=32, is_head=8, ts_next=8, ts_interp=16, ts_frame=24, ts_tid=176, cf=None,
         fr_back=24, fr_code=32, fr_lasti=104, fr_owner=None, co_first=40, co_file=104, co_name=112,
         co_qual=None, co_lines=120, co_ft=None, co_code=None, ascii=48),
 12: dict(rt_head=40, is_head=72, ts_next=8, ts_interp=16, ts_frame=56, ts_tid=136, cf=0,
          fr_back=8, fr_code=0, fr_lasti=56, fr_owner=70, co_first=68, co_file=112, co_name=120,
          co_qual=128, co_lines=136, co_ft=176, co_code=192, ascii=40),
}
def build(minor):
    o = O[minor]; img = bytearray(0x1000)
    def p64(off, v): img[off:off+8] = struct.pack('<Q', v)
    def p32(off, v): img[off:off+4] = struct.pack('<i', v)
    A = lambda off: BASE + off
    p64(o['rt_head'], A(0x100))                       # runtime -> interp
    p64(0x100 + o['is_head'], A(0x200))               # interp -> tstate
    p64(0x200 + o['ts_interp'], A(0x100))
    p64(0x200 + o['ts_tid'], 0x1234)
    if o['cf'] is None:
        p64(0x200 + o['ts_frame'], A(0x400))
    else:
        p64(0x200 + o['ts_frame'], A(0x300)); p64(0x300 + o['cf'], A(0x400))
    for fr, back in ((0x400, A(0x480)), (0x480, 0)):  # two frames, same code
        p64(fr + o['fr_back'], back); p64(fr + o['fr_code'], A(0x600))
        if o['co_code'] is None:
            p32(fr + o['fr_lasti'], 4)
        else:
            p64(fr + o['fr_lasti'], A(0x600 + o['co_code'] + 4)); img[fr + o['fr_owner']] = 0
    p64(0x600 + 8, A(0x900))                          # code: ob_type
    p32(0x600 + o['co_first'], 10)
    p64(0x600 + o['co_file'], A(0xa00)); p64(0x600 + o['co_name'], A(0xa80))
    if o['co_qual']: p64(0x600 + o['co_qual'], A(0xa80))
    p64(0x600 + o['co_lines'], A(0xb00))
    p64(0x900 + 24, A(0x980)); img[0x980:0x985] = b'code\0'
    for off, txt in ((0xa00, b'/tmp/x.py'), (0xa80, b'func')):
        p64(off + 16, len(txt)); p32(off + 32, 0x64); img[off + o['ascii']:off + o['ascii'] + len(txt)] = txt
    tab = bytes([2, 1, 2, 1]) if minor < 11 else bytes([0x80 | 13 << 3 | 1, 2, 0x80 | 13 << 3 | 1, 2])
    p64(0xb00 + 16, len(tab)); img[0xb00 + 32:0xb00 + 32 + len(tab)] = tab
    return bytes([minor]) + bytes(img)
# 3.14: _PyRuntime starts with _Py_DebugOffsets (the 3.14 layout, Debian 3.14.10's values), so
# the image is 16 KiB: runtime 0x0000, interp 0x1000, thread 0x3000, frames 0x3400 (f_executable
# tagged: Py_TAG_REFCNT), 0x3480 (the interpreter's entry frame: owner 3, skipped) and 0x3500,
# the code object 0x3600 (lasti 4, first line 10), type 0x3900, file 0x3a00, name 0x3a80.
D14 = {3: 316616, 5: 808, 6: 225864, 9: 7344, 22: 832, 24: 8, 25: 16, 26: 72, 27: 152, 28: 160,
       31: 88, 32: 8, 33: 0, 34: 56, 36: 74, 39: 216, 40: 112, 41: 120, 42: 128, 43: 136, 44: 68,
       48: 208, 50: 16, 51: 8, 52: 416, 53: 24, 74: 40, 75: 16, 76: 32, 77: 64, 78: 32, 79: 16, 80: 40}
def build314():
    img = bytearray(0x4000)
    def p64(off, v): img[off:off+8] = struct.pack('<Q', v)
    def p32(off, v): img[off:off+4] = struct.pack('<i', v)
    A = lambda off: BASE + off
    img[0:8] = b'xdebugpy'; p64(8, 0x030e0af0)
    for w, v in D14.items(): p64(8 * w, v)
    p64(808, A(0x1000)); p64(0x1000 + 7344, A(0x3000))
    p64(0x3000 + 16, A(0x1000)); p64(0x3000 + 152, 0x1234); p64(0x3000 + 160, 4321)
    p64(0x3000 + 72, A(0x3400))
    for fr, back, owner in ((0x3400, A(0x3480), 0), (0x3480, A(0x3500), 3), (0x3500, 0, 0)):
        p64(fr + 8, back); img[fr + 74] = owner
        if owner != 3:
            p64(fr + 0, A(0x3600) | 1); p64(fr + 56, A(0x3600 + 208 + 4))
    p64(0x3600 + 8, A(0x3900)); p32(0x3600 + 68, 10)
    p64(0x3600 + 112, A(0x3a00)); p64(0x3600 + 120, A(0x3a80)); p64(0x3600 + 128, A(0x3a80))
    p64(0x3600 + 136, A(0x3b00))
    p64(0x3900 + 24, A(0x3980)); img[0x3980:0x3985] = b'code\0'
    for off, txt in ((0x3a00, b'/tmp/x.py'), (0x3a80, b'func')):
        p64(off + 16, len(txt)); p32(off + 32, 0x64); img[off + 40:off + 40 + len(txt)] = txt
    tab = bytes([0x80 | 13 << 3 | 1, 2, 0x80 | 13 << 3 | 1, 2])
    p64(0x3b00 + 16, len(tab)); img[0x3b00 + 32:0x3b00 + 32 + len(tab)] = tab
    return bytes([14]) + bytes(img)
for m in O:
    open('%s/seed-v3%d' % (sys.argv[1], m), 'wb').write(build(m))
open('%s/seed-v314' % sys.argv[1], 'wb').write(build314())
