#!/usr/bin/env python3
"""tiny_log.py OUT: a small vmon_log(5) stream written from the format page
alone, not with the library: the seed tests/fuzz/corpus/tiny.vlog (a header
with a few fields, a keyframe with a thread and a split argv, an event, a
delta sample, a gone notice, a close marker), small enough for the fuzzer to
mutate quickly, and a check that the page says enough to write a log."""

import struct
import sys
import zlib


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def svarint(v):
    return varint(((v << 1) ^ (v >> 63)) & ((1 << 64) - 1))


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return varint(len(b)) + b


def text(b):
    return varint(len(b) + 1) + b


def crc8(data):
    c = 0
    for x in data:
        c ^= x
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xff if c & 0x80 else (c << 1) & 0xff
    return c


def record(kind, body):
    head = bytes([kind]) + varint(len(body))
    r = head + bytes([crc8(head)]) + body
    return r + struct.pack("<I", zlib.crc32(r) & 0xffffffff)


def field(name, wire, flags=0, split=None):
    b = string(name) + bytes([wire, flags])
    if split:
        b += varint(split[0]) + varint(split[1])
    return b + string(name) + string("")


def header():
    b = string("tiny") + string("6.18") + string("00000000-0000-0000-0000-000000000000") + string("tiny_log.py")
    b += varint(100) + varint(4096) + varint(2) + varint(1700000000000000000)
    b += varint(2) + varint(1) + varint(1 | 2)  # VMON_FLAG_PROC_ALL; sys wants; proc wants
    # the system: sys_stat, with per-CPU lines
    b += varint(1) + string("sys_stat") + bytes([1]) + varint(3)
    b += field("user", 7, 1) + field("idle", 7, 1) + field("btime", 7)
    # the processes: proc_stat (argv split from cmdline, argc its count) and the follow-threads want
    b += varint(2) + string("proc_stat") + bytes([0]) + varint(5)
    b += field("pid", 2) + field("comm", 8) + field("cmdline", 8) + field("argc", 2) + field("argv", 9, 2, (2, 3))
    b += string("proc_follow_threads") + bytes([0]) + varint(0)
    return b


def sample(seq, keyframe, entries, user, idle):
    b = varint(seq) + varint(1 if keyframe else 0) + varint(1700000000000000000 + seq * 1000000000)
    b += varint(1) + varint(0) + varint(1)  # sys_stat present, no errors, changed
    bits = 3 if keyframe else 1  # a value, and (the first time) the present bit
    b += varint(2) + varint(bits) + svarint(user) + varint(bits) + svarint(idle)
    b += varint(2)  # two CPUs, online, two columns changed
    for _ in range(2):
        b += bytes([1]) + varint(2) + varint(0) + svarint(user // 2) + varint(0) + svarint(idle // 2)
    return b + varint(len(entries)) + b"".join(entries)


def fresh(pid, back, thread=False, comm=b"a", cmdline=b"a\0b\0"):
    flags = 0x08 | 0x10 | 0x20 | 0x80 | 0x02 | (0x01 if thread else 0)  # fresh, parent, wants, data, new
    b = varint(pid) + bytes([flags]) + varint(back) + varint(3) + varint(3) + varint(1)
    b += varint(4) + varint(3) + svarint(pid) + varint(3) + text(comm + b"\0") + varint(3) + text(cmdline)
    return b + varint(3) + svarint(cmdline.count(b"\0"))


def main():
    log = b"VMON-LOG" + struct.pack("<HH", 1, 0) + record(1, header())
    log += record(2, sample(1, True, [fresh(1, 0), fresh(20, 1), fresh(21, 1, thread=True)], 100, 1000))
    # an exec of pid 20: kind 1, everything known but the exit
    log += record(3, varint(1) + varint(0x7f) + varint(99) + svarint(20) + svarint(20) + svarint(1) + varint(5)
                  + varint(0) + string("sh") + string("/bin/sh") + string(b"sh\0") + bytes([0]))
    # pid 1 unchanged; 20 stale, with a new comm; its thread 21 stale
    log += record(2, sample(2, False, [varint(1) + bytes([0]),
                                       varint(20) + bytes([0x04 | 0x80]) + varint(1) + varint(1) + varint(1 << 2 | 1)
                                       + text(b"zz"),
                                       varint(21) + bytes([0x01 | 0x04])], 5, 50))
    log += record(5, svarint(20) + varint(7) + svarint(256))
    log += record(7, varint(2) + varint(1))
    with open(sys.argv[1], "wb") as f:
        f.write(log)


if __name__ == "__main__":
    main()
