#!/usr/bin/env python3
"""events_json_csv.py: vtop --events --format json and csv read back by
python's json and csv modules, under a churn storm this test starts.

The ground truth is the children: each with an argument vector of its own
(a tag, and for one of them a quote, a comma, a newline, a control and a
byte that is not UTF-8) and a known end (exit codes 0..199, SIGKILL,
SIGTERM).  On each backend of the feed that opens here (the others are
skipped, with vtop's reason), every child must be accounted for: its fork
under this test, its exec with its pid and exactly its arguments, its exit
with its pid and its exit code or signal.  Where a backend does not carry
something (vmon_feed(7)'s table: perf and netlink read the arguments from
/proc, and miss them for a process already gone; perf has no status for a
process a signal killed) the field must be null or empty, never a made-up
value, and what an event kind has not (a fork's exit code) is null.  Then -o's choice of fields, the fallback
without a feed (kind new and exit), and the usage errors.
"""

import csv
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtoptest import VTOP, check, finish, kill_all, spawn  # noqa: E402

CHILDREN = 240
ALL_FIELDS = None
children = []


def fields_of_vtop():
    out = subprocess.run([VTOP, "--events", "-o", "help"], stdout=subprocess.PIPE, check=True).stdout.decode()
    return [line.split()[0] for line in out.splitlines()[1:]]


def backend_opens(backend):
    """(True, None) if vtop gets this feed backend here, else (False, vtop's reason)."""
    r = subprocess.run([VTOP, "-b", "-n", "1", "-d", "0.1", "--format", "json", "--backend", backend],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return False, r.stderr.decode(errors="replace").strip()
    feed = json.loads(r.stdout.decode().splitlines()[-1])["feed"]
    if feed.startswith(backend + ","):
        return True, None
    return False, r.stderr.decode(errors="replace").strip() or feed


class Events:
    """vtop --events running, its output read as it comes.

    A thread of its own reads the pipe, so that vtop never waits on a full
    pipe while this test parses what came so far: a writer that waits reads
    no events, and its kernel buffer fills under another test's storm (CI
    runs tests two at a time) whatever its size.
    """

    def __init__(self, args):
        self.p = spawn([VTOP, "--events", "-d", "0.2"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        children.append(self.p)
        self.chunks = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                return
            with self.lock:
                self.chunks.append(chunk)

    @property
    def out(self):
        with self.lock:
            if len(self.chunks) > 1:
                self.chunks[:] = [b"".join(self.chunks)]
            return self.chunks[0] if self.chunks else b""

    def read_until(self, cond, secs):
        end = time.time() + secs
        while not cond(self.out) and time.time() < end:
            if not self.reader.is_alive():
                break
            time.sleep(0.2)
        return cond(self.out)

    def started(self):
        """True once a process started now is in the output: vtop is past its first samples."""
        for _ in range(20):
            tag = "vtop-events-marker-%d-%d" % (os.getpid(), len(children))
            m = spawn(["/bin/sh", "-c", "sleep 30", tag])
            children.append(m)
            seen = self.read_until(lambda out: str(m.pid).encode() in out, 3)
            m.kill()
            m.wait()
            if seen:
                return True
        return False

    def end(self):
        """vtop killed; its output up to the last whole record (the kill may cut one)."""
        self.p.kill()
        self.p.wait(timeout=30)
        self.reader.join(timeout=30)
        err = self.p.stderr.read()
        return whole(self.out), err.decode(errors="replace")


def storm():
    """The children: (pid, argv as str, how it ended: ("code", n) or ("signal", n))."""
    me = os.getpid()
    started = []
    for i in range(CHILDREN):
        tag = "churn-%d-%d" % (me, i)
        if i % 20 == 5:
            # sleep sums its arguments: the second one tells the children apart
            argv = [b"/bin/sleep", b"30", b"0.%d%03d" % (me, i)]
        elif i == 7:
            argv = [b"/bin/sh", b"-c", b'exit "$1"', b'odd "q",x\n\x01\xff' + tag.encode(), b"3"]
        else:
            argv = [b"/bin/sh", b"-c", b'exit "$1"', tag.encode(), str(i % 200).encode()]
        p = spawn(argv)
        children.append(p)
        started.append((p, argv))
    result = []
    for i, (p, argv) in enumerate(started):
        if argv[0] == b"/bin/sleep":
            time.sleep(0.05)	# its exec done, its arguments in /proc, before it is killed
            sig = signal.SIGKILL if i % 40 == 5 else signal.SIGTERM
            p.send_signal(sig)
            p.wait()
            end = ("signal", int(sig))
        else:
            p.wait()
            end = ("code", 3 if i == 7 else i % 200)
        result.append((p.pid, [a.decode("utf-8", errors="replace") for a in argv], end))
    return result


def parse(fmt, out, quiet=False):
    """The events as dicts, read by the json or csv module; args (csv: a JSON array) as a list."""
    if fmt == "json":
        return [json.loads(line) for line in out.decode("utf-8").split("\n") if line]
    rows = list(csv.reader(io.StringIO(out.decode("utf-8"), newline="")))
    header, events = rows[0], []
    if not quiet:
        check(header == ALL_FIELDS, "csv: the header names every field, in the table's order")
        check(all(len(row) == len(header) for row in rows[1:]), "csv: every row has as many fields as the header")
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        e = {}
        for k, v in zip(header, row):
            if v == "":
                e[k] = None
            elif k == "args":
                e[k] = json.loads(v)
            elif k in ("kind", "comm", "filename"):
                e[k] = v
            elif k in ("args_truncated", "found_gone"):
                e[k] = v == "true"
            else:
                e[k] = float(v) if "." in v else int(v)
        events.append(e)
    return events


def whole(out):
    """The output up to its last record end: csv's end in \\r\\n (a \\n alone is inside a field), json's lines in \\n
    (json has no raw \\r)."""
    end = b"\r\n" if b"\r\n" in out else b"\n"
    return out[:out.rfind(end) + len(end)] if end in out else b""


def all_exited(fmt, out, kids):
    """Is every child's exit in the whole records written so far?"""
    out = whole(out)
    if not out:
        return False
    by_pid = {}
    for e in parse(fmt, out, quiet=True):
        by_pid.setdefault(e["pid"], []).append(e)
    me = os.getpid()
    return all(any(e["kind"] == "exit" for e in life_of(by_pid.get(pid, []), me)) for pid, _, _ in kids)


def life_of(evs, parent):
    """Of one pid's events, in the order written, those of the life that parent forked.  The pid may have been
    another process's too while the storm ran (pids wrap quickly beside another test's fork storm): each fork (or,
    without a feed, each "new") starts a life, and the events before the first are a life that began before vtop
    did.  The life forked by parent if there is one (or by a parent the backend does not name), else the first
    that has a fork, so that its wrong parent is reported."""
    lives = [[]]
    for e in evs:
        if e["kind"] in ("fork", "new") and lives[-1]:
            lives.append([])
        lives[-1].append(e)
    forked = [life for life in lives if life and life[0]["kind"] in ("fork", "new")]
    for life in forked:
        if life[0]["ppid"] in (parent, None):
            return life
    return forked[0] if forked else [e for life in lives for e in life]


def account(backend, fmt, events, kids, span_ns):
    """Every child: its fork, exec and exit, each right; what the backend does not carry, null.  span_ns: from
    before the first child was spawned to after the last was reaped, which no child's life exceeds."""
    me = os.getpid()
    by_pid = {}
    for e in events:
        by_pid.setdefault(e["pid"], []).append(e)
    missing, wrong, no_args, no_status = [], [], 0, 0
    for pid, argv, (how, n) in kids:
        mine = life_of(by_pid.get(pid, []), me)
        forks = [e for e in mine if e["kind"] == "fork"]
        execs = [e for e in mine if e["kind"] == "exec"]
        exits = [e for e in mine if e["kind"] == "exit"]
        if not forks or not execs or not exits:
            missing.append("%d (%s: fork %d, exec %d, exit %d)" % (pid, argv[3 if len(argv) > 3 else 2],
                                                                    len(forks), len(execs), len(exits)))
            continue
        if forks[0]["ppid"] is not None and forks[0]["ppid"] != me:
            wrong.append("%d: fork's ppid %s" % (pid, forks[0]["ppid"]))
        x = execs[-1]
        if x["args"] is None:
            no_args += 1
            if backend == "ebpf":
                wrong.append("%d: no arguments with ebpf" % pid)
        elif x["args"] != argv:
            wrong.append("%d: args %r, not %r" % (pid, x["args"], argv))
        if x["filename"] is not None and x["filename"] != argv[0]:
            wrong.append("%d: filename %r" % (pid, x["filename"]))
        ex = exits[-1]
        if ex["found_gone"]:
            wrong.append("%d: its exit's event was lost (found_gone: vtop lost events)" % pid)
        elif ex["exit_status"] is None:
            no_status += 1
            if backend != "perf" or how != "signal":
                wrong.append("%d: no exit status (%s %d)" % (pid, how, n))
            if ex["exit_code"] is not None or ex["exit_signal"] is not None:
                wrong.append("%d: an exit code or signal without a status" % pid)
        elif how == "code" and (ex["exit_code"] != n or ex["exit_signal"] is not None):
            wrong.append("%d: exit_code %s, exit_signal %s, not code %d" % (pid, ex["exit_code"], ex["exit_signal"], n))
        elif how == "signal" and (ex["exit_signal"] != n or ex["exit_code"] is not None):
            wrong.append("%d: exit_code %s, exit_signal %s, not signal %d" % (pid, ex["exit_code"], ex["exit_signal"], n))
        # a life is no longer than the test's storm (start times are clock ticks: 10 ms of slack)
        if ex["duration_ns"] is not None and not 0 <= ex["duration_ns"] <= span_ns + 10_000_000:
            wrong.append("%d: duration_ns %d beyond the storm's %d" % (pid, ex["duration_ns"], span_ns))
        # what no event of the kind has, and what the backend does not know, is null: never a 0 made up
        for e in forks + execs:
            if any(e[k] is not None for k in ("exit_status", "exit_code", "exit_signal", "utime", "maxrss_kb",
                                              "duration_ns")):
                wrong.append("%d: a %s event with exit fields" % (pid, e["kind"]))
        # ebpf carries the owner; the others' events have it only from the tree (a process sampled before)
        if any(e["uid"] != os.geteuid() for e in mine if e["uid"] is not None or backend == "ebpf"):
            wrong.append("%d: uid not %d" % (pid, os.geteuid()))
    label = "--events --format %s --backend %s" % (fmt, backend)
    check(not missing, "%s: every one of %d children forked, execed and exited (%d missing%s)" %
          (label, len(kids), len(missing), ": " + ", ".join(missing[:5]) if missing else ""))
    check(not wrong, "%s: each with its pid, ppid, argv and exit code or signal (%d wrong%s)" %
          (label, len(wrong), ": " + "; ".join(wrong[:5]) if wrong else ""))
    print("%s: %d events; %d children without arguments (the process was gone when /proc was read), "
          "%d without an exit status" % (label, len(events), no_args, no_status))


def run_backend(backend):
    ok, why = backend_opens(backend)
    if not ok:
        print("SKIP --backend %s: it does not open here: %s" % (backend, why))
        return False
    for fmt in ("json", "csv"):
        ev = Events(["--format", fmt, "--backend", backend])
        if not check(ev.started(), "--events --format %s --backend %s: a process started while it runs is written" %
                     (fmt, backend)):
            print(ev.end()[1])
            continue
        t0 = time.monotonic_ns()
        kids = storm()
        span_ns = time.monotonic_ns() - t0
        ev.read_until(lambda out: all_exited(fmt, out, kids), 60)
        out, err = ev.end()
        check(all(b >= 0x20 or b in b"\r\n" for b in out.replace(b"\r\n", b"")) or fmt == "csv",
              "--events --format json: no control byte but the line ends (text is JSON-escaped)")
        events = parse(fmt, out)
        account(backend, fmt, events, kids, span_ns)
        if backend == "ebpf":
            mine = {pid for pid, _, _ in kids}
            lives = [e for e in events if e["kind"] == "exit" and e["pid"] in mine]
            check(lives and all(e["duration_ns"] is not None for e in lives),
                  "--events --backend ebpf: every child's exit says how long it lived (duration_ns)")
        check("no event feed" not in err, "--events --backend %s: no word of comparing samples" % backend)
    return True


def main():
    global ALL_FIELDS
    ALL_FIELDS = fields_of_vtop()
    check(ALL_FIELDS[:4] == ["kind", "time", "time_ns", "pid"] and "args" in ALL_FIELDS and "exit_code" in ALL_FIELDS,
          "-o help with --events lists the event fields (%s)" % ",".join(ALL_FIELDS))
    try:
        opened = [b for b in ("ebpf", "perf", "netlink") if run_backend(b)]
        if not opened:
            print("SKIP: no feed backend opens here (root and a kernel with one of them are needed)")

        # -o: those fields, in that order, in both formats
        if opened:
            want = ["pid", "kind", "args", "exit_code"]
            for fmt in ("json", "csv"):
                ev = Events(["--format", fmt, "--backend", opened[0], "-o", ",".join(want)])
                started = ev.started()
                p = spawn(["/bin/sh", "-c", 'exit "$1"', "vtop-events-o", "9"])
                p.wait()

                def exits(out):
                    """The child's exit records in the whole records so far; each record a dict."""
                    out = whole(out).decode()
                    if fmt == "json":
                        recs = [json.loads(line) for line in out.splitlines()]
                    else:
                        rows = list(csv.reader(io.StringIO(out, newline="")))
                        recs = [dict(zip(rows[0], r)) for r in rows[1:]] if rows else []
                    return [r for r in recs if str(r["pid"]) == str(p.pid) and r["kind"] == "exit"]
                ev.read_until(lambda out: exits(out), 30)
                out, _ = ev.end()
                if fmt == "json":
                    objs = [json.loads(line) for line in out.decode().splitlines()]
                    check(started and objs and all(list(o) == want for o in objs),
                          "-o %s: json objects of those keys alone, in that order" % ",".join(want))
                else:
                    rows = list(csv.reader(io.StringIO(out.decode(), newline="")))
                    check(started and rows[0] == want and all(len(r) == len(want) for r in rows),
                          "-o %s: a csv header of those fields, rows of as many" % ",".join(want))
                got = exits(out)
                check(got and str(got[-1]["exit_code"]) == "9", "-o, %s: the child's exit code 9 (%s)" % (fmt, got))

        # without the feed: what comparing samples finds, in json; what it cannot know is null.  The child lives
        # until a sample has found it (at most a minute), then is ended: a machine loaded by make -j2 check's
        # other tests can make a refresh later than any fixed life (a 3 s child was missed so in a CI run)
        ev = Events(["--format", "json", "--backend", "none"])
        started = ev.started()
        p = spawn(["/bin/sleep", "120"])
        children.append(p)
        born = time.time()
        def child_life(out):
            """The child's life among the whole records so far."""
            objs = [json.loads(line) for line in whole(out).decode().splitlines()]
            return life_of([o for o in objs if o["pid"] == p.pid], os.getpid())

        ev.read_until(lambda out: any(o["kind"] == "new" for o in child_life(out)), 60)
        found = time.time() - born
        p.terminate()
        p.wait()
        ev.read_until(lambda out: any(o["kind"] == "exit" for o in child_life(out)), 60)
        ran = ev.p.poll() is None
        out, err = ev.end()
        mine = child_life(out)
        if [o["kind"] for o in mine] != ["new", "exit"]:
            objs = [json.loads(line) for line in whole(out).decode().splitlines()]
            print("--backend none: %d records in all, %d new, %d written after the child started (%.1f s before it "
                  "was found or given up); vtop %s; its stderr: %r"
                  % (len(objs), sum(o["kind"] == "new" for o in objs), sum(o["time"] >= born for o in objs), found,
                     "still ran" if ran else "had exited", err[-300:]))
        check(started and [o["kind"] for o in mine] == ["new", "exit"],
              "--backend none: the child found new, then gone (%s)" % [o["kind"] for o in mine])
        check(mine and all(o["args"] is None and o["comm"] is None and o["tid"] is None for o in mine),
              "--backend none: what samples do not say (args, comm, tid) is null")
        check("no event feed" in err, "--backend none: stderr says events are found by comparing samples")

        # usage errors: status 2 and why
        for args, why in ((["--format", "prometheus"], "--events writes text, json or csv"),
                          (["-o", "pid"], "text has its own layout"),
                          (["--format", "json", "-o", "pid,nosuch"], 'no event field "nosuch"')):
            r = subprocess.run([VTOP, "--events"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            check(r.returncode == 2 and why in r.stderr.decode(), "--events %s: status 2, %r" % (" ".join(args), why))
    finally:
        kill_all(children)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
