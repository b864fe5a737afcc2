#!/usr/bin/env python3
"""Where a running process's BPF programs spend their time, by source line.

    tests/bench/bpf_lines.py [--secs S] [--freq HZ] [--top N] [--disasm] PID

perf can name a BPF program's samples (bpf_prog_TAG_NAME) but, built without
libopcodes, cannot annotate them, and a kernel without a vmlinux or
/proc/kcore cannot be annotated at all.  Our own programs need neither: the
kernel keeps, for each loaded program, its JIT image and, for each line of
its BTF line info, the address the JIT put that line at.  This script
records the process with `perf record -p PID`, asks the kernel for those
(bpf(2): BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD) for every program
the process holds an fd of (its prog and link fds, /proc/PID/fdinfo), and
counts each sample against the source line of the instruction before the
sampled address: a sample lands on the instruction after the one that
waited (a load's cache miss, mostly), which is the line to blame.

Root, with kernel.kptr_restrict below 2 (the kernel gives a program's
addresses only to a caller that may see kernel pointers); x86-64 (the
syscall's number, objdump's machine).  perf records `-e cycles`, whose
samples land after the instruction that waited on this project's machines;
a precise event (cycles:P with PEBS) may land on it instead.  --disasm
prints that instruction (objdump).  Only for measuring: nothing of the
project runs it.

Example: what task_record() waits on in vtop -b at 10,000 processes:

    vtop -b -n 1000 -d 0.05 > /dev/null & sleep 3
    tests/bench/bpf_lines.py --secs 6 --disasm $!
"""
import argparse
import bisect
import ctypes
import os
import platform
import re
import struct
import subprocess
import sys
import tempfile

SYS_BPF = 321  # x86-64
BPF_PROG_GET_FD_BY_ID = 13
BPF_OBJ_GET_INFO_BY_FD = 15
BPF_BTF_GET_FD_BY_ID = 19

# struct bpf_prog_info (include/uapi/linux/bpf.h): the offsets of what we read
PI_SIZE = 232
PI = dict(jited_prog_len=(16, 'I'), jited_prog_insns=(24, 'Q'), name=(64, '16s'),
          nr_jited_ksyms=(104, 'I'), nr_jited_func_lens=(108, 'I'), jited_ksyms=(112, 'Q'),
          jited_func_lens=(120, 'Q'), btf_id=(128, 'I'), nr_line_info=(148, 'I'), line_info=(152, 'Q'),
          jited_line_info=(160, 'Q'), nr_jited_line_info=(168, 'I'), line_info_rec_size=(172, 'I'),
          jited_line_info_rec_size=(176, 'I'))

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    r = libc.syscall(SYS_BPF, cmd, buf, len(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r, buf.raw


def get_info(fd, info):
    """BPF_OBJ_GET_INFO_BY_FD into the bytes-like info (a ctypes buffer)"""
    attr = struct.pack('IIQ', fd, len(info), ctypes.addressof(info))
    bpf(BPF_OBJ_GET_INFO_BY_FD, attr.ljust(16, b'\0'))


def field(raw, name):
    off, fmt = PI[name]
    return struct.unpack_from(fmt, raw, off)[0]


def put(info, name, value):
    off, fmt = PI[name]
    struct.pack_into(fmt, info, off, value)


def btf_strings(btf_id):
    """the string section of BTF object btf_id"""
    fd, _ = bpf(BPF_BTF_GET_FD_BY_ID, struct.pack('I', btf_id).ljust(16, b'\0'))
    try:
        info = ctypes.create_string_buffer(32)
        get_info(fd, info)
        size = struct.unpack_from('I', info.raw, 8)[0]
        data = ctypes.create_string_buffer(size)
        info = ctypes.create_string_buffer(32)
        struct.pack_into('QI', info, 0, ctypes.addressof(data), size)
        get_info(fd, info)
    finally:
        os.close(fd)
    raw = data.raw
    _magic, _ver, _flags, hdr_len, _toff, _tlen, str_off, str_len = struct.unpack_from('HBBIIIII', raw, 0)
    return raw[hdr_len + str_off:hdr_len + str_off + str_len]


def cstr(strings, off):
    end = strings.find(b'\0', off)
    return strings[off:end].decode('utf-8', 'replace')


class Prog:
    """one loaded program: its functions' addresses, image and line table"""

    def __init__(self, prog_id):
        fd, _ = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack('I', prog_id).ljust(16, b'\0'))
        try:
            first = ctypes.create_string_buffer(PI_SIZE)
            get_info(fd, first)
            raw = first.raw
            self.name = field(raw, 'name').split(b'\0')[0].decode()
            n_img, n_ks, n_fl = field(raw, 'jited_prog_len'), field(raw, 'nr_jited_ksyms'), field(raw, 'nr_jited_func_lens')
            n_li, n_jli = field(raw, 'nr_line_info'), field(raw, 'nr_jited_line_info')
            li_size = field(raw, 'line_info_rec_size')
            btf_id = field(raw, 'btf_id')
            img = ctypes.create_string_buffer(max(n_img, 1))
            ks = ctypes.create_string_buffer(max(n_ks, 1) * 8)
            fl = ctypes.create_string_buffer(max(n_fl, 1) * 4)
            li = ctypes.create_string_buffer(max(n_li, 1) * max(li_size, 16))
            jli = ctypes.create_string_buffer(max(n_jli, 1) * 8)
            info = ctypes.create_string_buffer(PI_SIZE)
            for name, value in (('jited_prog_len', n_img), ('jited_prog_insns', ctypes.addressof(img)),
                                ('nr_jited_ksyms', n_ks), ('jited_ksyms', ctypes.addressof(ks)),
                                ('nr_jited_func_lens', n_fl), ('jited_func_lens', ctypes.addressof(fl)),
                                ('nr_line_info', n_li), ('line_info_rec_size', li_size),
                                ('line_info', ctypes.addressof(li)), ('nr_jited_line_info', n_jli),
                                ('jited_line_info_rec_size', 8), ('jited_line_info', ctypes.addressof(jli))):
                put(info, name, value)
            get_info(fd, info)
        finally:
            os.close(fd)
        if not n_img or not n_ks:
            raise OSError(0, 'no JIT image (bpf_jit_enable 0, or not root)')
        addrs = struct.unpack_from('%dQ' % n_ks, ks.raw)
        if not field(info.raw, 'jited_ksyms') or not all(addrs):
            # the kernel zeroes what the caller may not see (bpf_prog_get_info_by_fd(): bpf_dump_raw_ok())
            raise OSError(0, 'its addresses are hidden (kernel.kptr_restrict, or not root)')
        lens = struct.unpack_from('%dI' % n_fl, fl.raw)
        self.funcs = []  # (start, end, offset in the image)
        off = 0
        for a, n in zip(addrs, lens):
            self.funcs.append((a, a + n, off))
            off += n
        self.image = img.raw[:n_img]
        strings = btf_strings(btf_id) if btf_id else b''
        self.lines = []  # (address, "file:line", text)
        for i in range(min(n_li, n_jli)):
            _insn, file_off, line_off, line_col = struct.unpack_from('IIII', li.raw, i * li_size)
            addr = struct.unpack_from('Q', jli.raw, i * 8)[0]
            where = '%s:%d' % (os.path.basename(cstr(strings, file_off)), line_col >> 10)
            self.lines.append((addr, where, cstr(strings, line_off).strip()))
        self.lines.sort()
        self.line_addrs = [a for a, _, _ in self.lines]

    def func_of(self, ip):
        for i, (a, e, _) in enumerate(self.funcs):
            if a <= ip < e:
                return i
        return -1

    def line_of(self, fi, ip):
        """the line of the instruction before ip (a sample lands after the one that waited), in function fi"""
        ip = max(ip - 1, self.funcs[fi][0])
        i = bisect.bisect_right(self.line_addrs, ip) - 1
        return self.lines[i] if i >= 0 and self.lines[i][0] >= self.funcs[fi][0] else (0, '?', '?')


def prog_ids(pid):
    ids = set()
    fdinfo = '/proc/%d/fdinfo' % pid
    for fd in os.listdir(fdinfo):
        try:
            with open(os.path.join(fdinfo, fd)) as f:
                for line in f:
                    m = re.match(r'prog_id:\s*(\d+)', line)
                    if m:
                        ids.add(int(m.group(1)))
        except OSError:
            pass
    return sorted(ids)


def kallsyms_names():
    names = {}
    with open('/proc/kallsyms') as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[2].startswith('bpf_prog_'):
                names[int(p[0], 16)] = p[2]
    return names


def insn_before(prog, fi, ip):
    """the instruction that ends just before ip, by objdump"""
    a, e, off = prog.funcs[fi]
    with tempfile.NamedTemporaryFile(suffix='.bin') as t:
        t.write(prog.image[off:off + (e - a)])
        t.flush()
        out = subprocess.run(['objdump', '-D', '--insn-width=16', '-b', 'binary', '-m', 'i386:x86-64',
                              '--adjust-vma=%#x' % a, t.name],
                             capture_output=True, text=True).stdout
    best = ''
    for line in out.splitlines():
        m = re.match(r'\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)', line)
        if m and int(m.group(1), 16) < ip:
            best = m.group(2).strip()
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('pid', type=int)
    ap.add_argument('--secs', type=float, default=5)
    ap.add_argument('--freq', type=int, default=4000)
    ap.add_argument('--top', type=int, default=20)
    ap.add_argument('--disasm', action='store_true', help='the instruction before each line\'s hottest address')
    a = ap.parse_args()
    if platform.machine() != 'x86_64':
        sys.exit('x86-64 only (the bpf syscall\'s number, objdump\'s machine)')

    def read_progs(progs):
        """the programs the process holds now, those not read yet (a program loaded again has a new id)"""
        try:
            ids = prog_ids(a.pid)
        except OSError as e:
            sys.exit('pid %d: %s' % (a.pid, e.strerror))
        for i in ids:
            if i not in progs:
                try:
                    progs[i] = Prog(i)
                except OSError as e:
                    print('program %d: %s' % (i, e.strerror or e), file=sys.stderr)

    progs = {}
    read_progs(progs)
    if not progs:
        sys.exit('pid %d holds no BPF program this script can read' % a.pid)
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, 'perf.data')
        r = subprocess.run(['perf', 'record', '-q', '-e', 'cycles', '-F', str(a.freq), '-o', data, '-p', str(a.pid),
                            '--', 'sleep', str(a.secs)])
        if r.returncode:
            sys.exit('perf record failed (%d)' % r.returncode)
        if os.path.exists('/proc/%d' % a.pid):
            read_progs(progs)
        ips = subprocess.run(['perf', 'script', '-i', data, '-F', 'ip'], capture_output=True,
                             text=True, check=True).stdout.split()
    progs = list(progs.values())
    total = len(ips)
    if not total:
        sys.exit('no samples: is %d running, and using CPU?' % a.pid)
    names = kallsyms_names()
    by_line, by_func, hits, hottest = {}, {}, {}, {}
    for s in ips:
        ip = int(s, 16)
        for p in progs:
            fi = p.func_of(ip)
            if fi < 0:
                continue
            fname = names.get(p.funcs[fi][0], '%s[%d]' % (p.name, fi))
            _, where, text = p.line_of(fi, ip)
            key = (fname, where, text)
            by_line[key] = by_line.get(key, 0) + 1
            by_func[fname] = by_func.get(fname, 0) + 1
            h = hits.setdefault(key, {})
            h[ip] = h.get(ip, 0) + 1
            if key not in hottest or h[ip] > h[hottest[key][2]]:
                hottest[key] = (p, fi, ip)
            break
    print('%d samples of pid %d in %.1f s; %d in its BPF programs (%.1f %%)' %
          (total, a.pid, a.secs, sum(by_func.values()), 100.0 * sum(by_func.values()) / total))
    for f, n in sorted(by_func.items(), key=lambda x: -x[1]):
        print('%6.2f %%  %s' % (100.0 * n / total, f))
    print('\nby source line (the line of the instruction before the sampled one), % of all samples:')
    for (f, where, text), n in sorted(by_line.items(), key=lambda x: -x[1])[:a.top]:
        fshort = re.sub(r'^bpf_prog_[0-9a-f]+_', '', f)
        print('%6.2f %%  %-16s %-18s %s' % (100.0 * n / total, fshort, where, text[:90]))
        if a.disasm:
            p, fi, ip = hottest[(f, where, text)]
            print('          %#x after: %s' % (ip, insn_before(p, fi, ip)))


if __name__ == '__main__':
    main()
