#!/usr/bin/env python3
"""events_slow_reader.py: vtop --events read by a reader that falls behind.

The reader here stops reading while a storm this test starts runs (a log
shipper busy for a moment, a pager scrolled back), and reads everything
after.  The ground truth is the storm's children: their pids, their
arguments (3.5 kB each, so that the storm outgrows the most the kernel's
buffer grows to) and their exit code 0.  vtop runs with -p this test's pid,
so that it writes the events of this test's processes alone.

- A reader that stops for a few seconds: every child's fork, exec (with
  its arguments) and exit still comes, and no "lost" line.  Written from
  the sampling thread, vtop waited on the full pipe, drained nothing, and
  the kernel's buffer overflowed.
- The same storm recorded (-w) and replayed (-r) to a reader that stops: a
  replay waits for its reader, and loses nothing.
- A reader that stops for longer than vtop may hold for it (16 MiB of
  records): what vtop could not keep is never a silent gap: the storm's
  events written and those counted lost add up to the events this test
  made, no fewer and no more.
- SIGTERM while records wait: vtop writes them to a reader that takes them,
  then ends by the signal; a reader that takes nothing for 2 s is not
  waited for, and how many events it missed is said on standard error
  (SIGINT; and SIGTERM once -n's samples are done and vtop waits for such
  a reader).

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


class Run:
    """vtop --events --format json on a pipe, following this test's processes; read by started() and read_into()."""

    def __init__(self, args, tag):
        self.tag = tag
        self.markers = 0
        self.t0 = time.monotonic()
        self.p = spawn([VTOP, "--events", "--format", "json", "-o", "kind,pid,args,exit_code,lost"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        children.append(self.p)
        self.out = bytearray()
        os.set_blocking(self.p.stdout.fileno(), False)

    def started(self):
        """vtop is past its first samples: a process started now comes out."""
        for _ in range(20):
            m = spawn(["/bin/sh", "-c", "exit 0", "%s-marker-%d" % (self.tag, self.markers)])
            m.wait()
            self.markers += 1
            key = b'"pid":%d,' % m.pid
            if not read_into(self.p.stdout.fileno(), self.out, lambda o: key in o, 3, 3):
                return False
            if key in self.out:
                return True
        return False

    def read_rest(self, most=60):
        """What comes until vtop ends, or writes nothing for 3 s; the whole records, and vtop's stderr."""
        read_into(self.p.stdout.fileno(), self.out, lambda o: False, 3, most)
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
        self.p.wait()
        out = bytes(self.out[:self.out.rfind(b"\n") + 1])
        return out, self.p.stderr.read().decode(errors="replace")


def live(tag, extra=()):
    """vtop live on the ebpf feed, past its first samples (None if it is not)"""
    r = Run(["--backend", "ebpf", "-d", "0.2", "-p", str(os.getpid())] + list(extra), tag)
    if not check(r.started(), "--events: a process started while it runs is written"):
        r.p.kill()
        return None
    return r


def stopped_reader(stop_secs, lives, arg_bytes, log=None, extra=()):
    """A reader that stops through a storm: (vtop's run, the storm's pids, its tag, the seconds stopped)"""
    tag = "slow-reader-%d-%d" % (os.getpid(), lives)
    r = live(tag, (["-w", log] if log else []) + list(extra))
    if not r:
        return None, None, tag, 0
    t0 = time.monotonic()
    pids = storm(lives, arg_bytes, tag)
    # (a second at least after the last exit: vtop has read the kernel's buffer by then)
    time.sleep(max(1.0, stop_secs - (time.monotonic() - t0)))
    return r, pids, tag, time.monotonic() - t0


def gave_up(r, sig, what, least):
    """sig to vtop, whose reader takes nothing: it ends by the signal within the stop's patience (2 s, 10 s in
    all), saying that it did not write at least least events"""
    t0 = time.monotonic()
    r.p.send_signal(sig)
    try:
        r.p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    secs = time.monotonic() - t0
    err = r.p.stderr.read().decode(errors="replace") if r.p.returncode is not None else ""
    said = [int(w) for w in err.split() if w.isdigit()]
    check(r.p.returncode == -sig and secs < 12 and said and said[0] >= least,
          "%s: vtop ends by the signal after %.1f s, saying what it did not write (%s; %s)" %
          (what, secs, r.p.returncode, err.strip()))


def whole_and_none_lost(what, out, pids, tag):
    _, whole, lost = account(out, pids, tag)
    check(whole == len(pids) and lost == 0,
          "%s (%d bytes written): every child's fork, exec with its arguments and exit, none lost "
          "(%d of %d whole, %d lost)" % (what, len(out), whole, len(pids), lost))


def main():
    why = ebpf_opens()
    if why:
        print("SKIP: the ebpf feed does not open here (%s): root and BPF are needed" % why)
        return 77
    log = "/tmp/vtop-slow-reader-%d.vlog" % os.getpid()
    try:
        # about 8 MB of the kernel's buffer, twice the most it grows to (4 MiB), and 8 MB of records
        r, pids, tag, secs = stopped_reader(4, 2000, 3500, log)
        if r:
            out, err = r.read_rest()
            whole_and_none_lost("a reader stopped %.0f s through 2000 lives with 3500-byte arguments" % secs,
                                out, pids, tag)
            # the same, replayed to a reader that stops
            rp = Run(["-r", log], tag)
            time.sleep(3)
            out, err = rp.read_rest()
            whole_and_none_lost("the storm's log replayed to a reader stopped 3 s", out, pids, tag)
            check(rp.p.returncode == 0, "the replay ends, 0, at the log's end (%s%s)" % (rp.p.returncode, err))

        # about 20 MB of records: more than vtop holds (VT_OUTQ_MAX, 16 MiB)
        r, pids, tag, secs = stopped_reader(8, 5000, 3500)
        if r:
            out, err = r.read_rest()
            written, _, lost = account(out, pids, tag)
            made = 3 * (len(pids) + r.markers)
            check(lost > 0 and 3 * len(pids) <= written + lost <= made,
                  "a reader stopped %.0f s through 5000 lives (%d bytes written): what vtop could not hold is "
                  "counted lost, once: %d of the storm's events written, %d lost, of %d (%d with the markers')" %
                  (secs, len(out), written, lost, 3 * len(pids), made))

        # SIGTERM with 8 MB waiting: written to a reader that takes it, then vtop ends by the signal
        r, pids, tag, secs = stopped_reader(3, 2000, 3500)
        if r:
            r.p.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            out, err = r.read_rest()
            whole_and_none_lost("SIGTERM, then a reader that reads", out, pids, tag)
            check(r.p.returncode == -signal.SIGTERM and "not written" not in err,
                  "... and vtop ended by the signal, all written (%s%s)" % (r.p.returncode, err))

        # SIGINT and a reader that never reads again: not waited for, and said
        r, pids, tag, secs = stopped_reader(3, 2000, 3500)
        if r:
            gave_up(r, signal.SIGINT, "SIGINT and a reader that takes nothing", 3 * len(pids) // 2)

        # -n's last sample done (50 at -d 0.2: 10 s after vtop started), waiting for a reader that takes nothing:
        # SIGTERM still ends it
        r, pids, tag, secs = stopped_reader(3, 2000, 3500, extra=["-n", "50"])
        if r:
            try:
                r.p.wait(timeout=max(0.0, r.t0 + 13 - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            if check(r.p.returncode is None, "-n 50 at -d 0.2 with a reader that takes nothing: vtop waits for it"):
                gave_up(r, signal.SIGTERM, "... then SIGTERM", 1000)
    finally:
        kill_all(children)
        if os.path.exists(log):
            os.unlink(log)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
