#!/usr/bin/env python3
"""events_slow_reader.py: vtop --events read by a reader that falls behind.

The reader here stops reading while a storm this test starts runs (a log
shipper busy for a moment, a pager scrolled back), and reads everything
after.  The ground truth is the storm's children: their pids, their
arguments (3.5 kB each, so that the storm outgrows the most the kernel's
buffer grows to) and their exit code 0.

- A reader that stops for a few seconds: every child's fork, exec (with
  its arguments) and exit still comes, and no "lost" line.  Written from
  the sampling thread, vtop waited on the full pipe, drained nothing, and
  the kernel's buffer overflowed.
- A reader that stops for longer than vtop may hold for it (16 MiB of
  records): the events vtop could not keep are never a silent gap: "lost"
  lines count them, so that the storm's events written plus those counted
  lost are at least three a child.

Needs the ebpf feed (root and BPF): skipped with its reason elsewhere.
"""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtoptest import VTOP, check, finish, kill_all, spawn  # noqa: E402

children = []


def ebpf_opens():
    r = subprocess.run([VTOP, "-b", "-n", "1", "-d", "0.1", "--format", "json", "--backend", "ebpf"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return r.stderr.decode(errors="replace").strip()
    feed = json.loads(r.stdout.decode().splitlines()[-1])["feed"]
    return None if feed.startswith("ebpf,") else (r.stderr.decode(errors="replace").strip() or feed)


def storm(lives, arg_bytes, tag):
    """lives runs of /bin/true, each with an argument of its own and a common one of arg_bytes: their pids"""
    big = "y" * arg_bytes
    pids = []
    for i in range(lives):
        pids.append(os.posix_spawn("/bin/true", ["/bin/true", "%s-%d" % (tag, i), big], os.environ))
        if len(pids) % 200 == 0:
            time.sleep(0.01)	# a storm, not a fork bomb: the machine runs other tests
    for pid in pids:
        os.waitpid(pid, 0)
    return pids


def read_into(fd, out, done, quiet, most):
    """fd's bytes (non-blocking reads) appended to out until done(out), quiet seconds without a byte or most in
    all; False at its end of file."""
    began = last = time.monotonic()
    while not done(out) and time.monotonic() - last < quiet and time.monotonic() - began < most:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            time.sleep(0.05)
            continue
        if not chunk:
            return False
        out += chunk
        last = time.monotonic()
    return True


def started(p, tag, out):
    """vtop is past its first samples: a process started now comes out (read into out)."""
    os.set_blocking(p.stdout.fileno(), False)
    for attempt in range(20):
        m = spawn(["/bin/sh", "-c", "exit 0", "%s-marker-%d" % (tag, attempt)])
        m.wait()
        key = b'"pid":%d,' % m.pid
        if not read_into(p.stdout.fileno(), out, lambda o: key in o, 3, 3):
            return False
        if key in out:
            return True
    return False


def account(out, pids, tag):
    """(events of the storm's children written, children whole and right, events counted lost).  A child is whole
    when its exec, with its own argument, comes after a fork of its pid and before an exit of it with code 0 (a pid
    another test's process takes after the child's exit has events of its own after those)."""
    mine = set(pids)
    written, lost, by_pid = 0, 0, {}
    for line in out.decode().splitlines():
        e = json.loads(line)
        if e["kind"] == "lost":
            lost += e["lost"]
            continue
        if e["pid"] in mine:
            written += 1
            by_pid.setdefault(e["pid"], []).append(e)
    whole = 0
    for i, pid in enumerate(pids):
        evs = by_pid.get(pid, [])
        own = "%s-%d" % (tag, i)
        at = [k for k, e in enumerate(evs) if e["kind"] == "exec" and e["args"] and e["args"][1:2] == [own]]
        if (at and any(e["kind"] == "fork" for e in evs[:at[0]]) and
                [e["exit_code"] for e in evs[at[0]:] if e["kind"] == "exit"][:1] == [0]):
            whole += 1
    return written, whole, lost


def run(stop_secs, lives, arg_bytes, expect_all):
    tag = "slow-reader-%d-%d" % (os.getpid(), lives)
    p = spawn([VTOP, "--events", "--format", "json", "--backend", "ebpf", "-d", "0.2",
               "-o", "kind,pid,args,exit_code,lost"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    children.append(p)
    out = bytearray()
    if not check(started(p, tag, out), "--events: a process started while it runs is written"):
        p.kill()
        return
    # the reader stops: nothing is read while the storm runs, and for stop_secs
    t0 = time.monotonic()
    pids = storm(lives, arg_bytes, tag)
    time.sleep(max(0.0, stop_secs - (time.monotonic() - t0)))
    # then reads everything: until vtop has written nothing for 3 s
    read_into(p.stdout.fileno(), out, lambda o: False, 3, 60)
    p.send_signal(signal.SIGKILL)
    p.wait()
    out = bytes(out[:out.rfind(b"\n") + 1])
    err = p.stderr.read().decode(errors="replace")
    written, whole, lost = account(out, pids, tag)
    what = ("a reader stopped %.0f s through %d lives with %d-byte arguments (%d bytes written)" %
            (time.monotonic() - t0, lives, arg_bytes, len(out)))
    if expect_all:
        check(whole == lives and lost == 0,
              "%s: every child's fork, exec with its arguments and exit, none lost (%d of %d whole, %d lost)" %
              (what, whole, lives, lost))
    else:
        check(lost > 0 and written + lost >= 3 * lives,
              "%s: what vtop could not hold is counted lost: %d of the storm's events written, %d lost, "
              "of %d" % (what, written, lost, 3 * lives))
    if err:
        print("vtop's standard error: " + err.strip())


def main():
    why = ebpf_opens()
    if why:
        print("SKIP: the ebpf feed does not open here (%s): root and BPF are needed" % why)
        sys.exit(77)
    try:
        # about 8 MB of the kernel's buffer, twice the most it grows to (4 MiB), and 8 MB of output
        run(stop_secs=4, lives=2000, arg_bytes=3500, expect_all=True)
        # about 20 MB of output: more than vtop holds (VT_OUTQ_MAX, 16 MiB)
        run(stop_secs=8, lives=5000, arg_bytes=3500, expect_all=False)
    finally:
        kill_all(children)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
