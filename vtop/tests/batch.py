#!/usr/bin/env python3
"""batch.py: vtop -b's output read back by real parsers.

Children this test starts are the ground truth: one with a name and
arguments full of what a terminal or a parser could trip on (escape
sequences, quotes, commas, backslashes, a newline, a tab, invalid UTF-8, a
right-to-left override), and a parent with a child.  Each format must
parse (json with the json module, csv with the csv module, openmetrics with
its grammar in openmetrics.py), carry the children with the right pids,
parents and escaped text, and never hold a raw control character.
"""

import csv
import io
import json
import re
import select
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openmetrics  # noqa: E402
from vtoptest import VTOP, check, finish, kill_all, spawn  # noqa: E402






def vtop(*args, timeout=60):
    env = dict(os.environ, XDG_CONFIG_HOME=tmp, LANG="C.UTF-8")
    r = subprocess.run([VTOP] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=timeout)
    if r.returncode != 0:
        print(r.stderr.decode(errors="replace"))
    check(r.returncode == 0, "vtop %s exits 0" % " ".join(args))
    return r.stdout


def no_controls(data, what):
    bad = [b for b in data if (b < 0x20 and b not in (0x0a, 0x0d)) or b == 0x7f]
    check(not bad, "%s: no raw control bytes (found %r)" % (what, bytes(bad[:5])))


def escaped(raw):
    """What vmon_escape() makes of raw bytes: the reference for this test (see vmon_escape(3))."""
    out = []
    text = raw.decode("utf-8", errors="surrogateescape")
    for ch in text:
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:  # an undecodable byte
            out.append("\\x%02x" % (cp - 0xDC00))
        elif cp < 0x20 or cp == 0x7F or 0x80 <= cp <= 0x9F or cp in (0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF) \
                or 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069:
            out.append("".join("\\x%02x" % b for b in ch.encode("utf-8")))
        elif ch == "\\":
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


tmp = tempfile.mkdtemp(prefix="vtop-batch-")
children = []
try:
    # a program whose name (comm) and arguments hold everything nasty
    name = b"e\x1b[1m\",\\\n\xffz"
    link = os.path.join(tmp.encode(), name)
    os.symlink(b"/bin/sleep", link)
    # exec'd through the link: the link's name is the process's comm and argv[0]
    nasty = spawn([b"/bin/sh", b"-c", b'exec "$0" 600', link], env={"X": "1"})
    children.append(nasty)
    parent = spawn(["/bin/sh", "-c", "sleep 611 & wait"])
    children.append(parent)
    time.sleep(0.5)
    kid = None
    for _ in range(50):
        out = subprocess.run(["pgrep", "-P", str(parent.pid)], stdout=subprocess.PIPE).stdout.split()
        if out:
            kid = int(out[0])
            break
        time.sleep(0.1)
    check(kid is not None, "the sleeping child of the parent was started")
    comm_expected = escaped(name[:15])
    cmd_expected = escaped(link + b" 600")

    cols = "pid,ppid,user,state,cpu_percent,mem_percent,time,comm,command,rchars,exit_status,started"

    # --- json ---
    out = vtop("-b", "-n", "2", "-d", "0.3", "--flat", "-K", "--format", "json", "-o", cols)
    no_controls(out, "json")
    lines = out.decode("utf-8").splitlines()
    check(len(lines) == 2, "json: one line per refresh (%d)" % len(lines))
    frames = [json.loads(line) for line in lines]
    f = frames[-1]
    check(isinstance(f["time"], float) and isinstance(f["seq"], int), "json: typed header fields")
    check(isinstance(f["system"]["sys_vm"]["total_kb"], int), "json: system fields are numbers")
    check(isinstance(f["system"]["sys_loadavg"]["load1"], int), "json: load average present")
    check(len(f["cpus"]) == os.cpu_count(), "json: one entry per CPU")
    procs = {p["pid"]: p for p in f["processes"]}
    check(nasty.pid in procs, "json: the nasty child is there")
    check(kid in procs and procs[kid]["ppid"] == parent.pid, "json: the child under its parent")
    check(parent.pid in procs and procs[parent.pid]["ppid"] == os.getpid(), "json: the parent under this test")
    p = procs.get(nasty.pid, {})
    check(p.get("comm") == comm_expected, "json: comm escaped: %r vs %r" % (p.get("comm"), comm_expected))
    check(p.get("command") == cmd_expected, "json: command escaped: %r vs %r" % (p.get("command"), cmd_expected))
    check(p.get("state") in ("S", "R"), "json: state is a one-letter string")
    check(isinstance(p.get("cpu_percent"), float), "json: cpu_percent is a number")
    check(isinstance(p.get("rchars"), int), "json: rchars (a defs field) is a number")
    check(p.get("exit_status") is None, "json: a missing value is null")
    dirty = [(q["pid"], k) for q in f["processes"] for k, v in q.items()
             if isinstance(v, str) and any(ord(c) < 0x20 or ord(c) == 0x7f for c in v)]
    check(not dirty, "json: no decoded string holds a control character %s" % dirty[:3])

    # --- csv ---
    out = vtop("-b", "-n", "2", "-d", "0.3", "--flat", "--format", "csv", "-o", cols)
    no_controls(out.replace(b"\r\n", b""), "csv")
    rows = list(csv.reader(io.StringIO(out.decode("utf-8"), newline="")))
    header = rows[0]
    check(header[:5] == ["seq", "time", "pid", "ppid", "status"], "csv: identity columns first")
    check("command" in header and "comm" in header, "csv: the asked columns in the header")
    check(all(len(r) == len(header) for r in rows[1:]), "csv: every row as wide as the header")
    check(len({r[0] for r in rows[1:]}) == 2, "csv: two refreshes")
    by_pid = {int(r[2]): dict(zip(header, r)) for r in rows[1:] if r[0] == rows[-1][0]}
    check(by_pid.get(nasty.pid, {}).get("command") == cmd_expected, "csv: command escaped and quoted right")
    check(by_pid.get(nasty.pid, {}).get("comm") == comm_expected, "csv: comm escaped and quoted right")
    check(by_pid.get(kid, {}).get("ppid") == str(parent.pid), "csv: the child under its parent")
    check(by_pid.get(nasty.pid, {}).get("exit_status") == "", "csv: a missing value is empty")

    # --- openmetrics ---
    out = vtop("-b", "-n", "2", "-d", "0.3", "--flat", "--format", "openmetrics", "-o", cols)
    no_controls(out, "openmetrics")
    text = out.decode("utf-8")
    parts = text.split("# EOF\n")
    check(len(parts) == 3 and parts[2] == "", "openmetrics: one exposition per refresh")
    for i, part in enumerate(parts[:2]):
        try:
            fams = openmetrics.validate(part + "# EOF\n")
            check(True, "openmetrics: exposition %d follows the grammar (%d families)" % (i, len(fams)))
        except ValueError as e:
            check(False, "openmetrics: exposition %d: %s" % (i, e))
    s = openmetrics.samples(parts[1])
    cpu = [x for x in s if x[0] == "vtop_process_cpu_percent" and x[1].get("pid") == str(nasty.pid)]
    check(len(cpu) == 1 and cpu[0][1]["comm"] == comm_expected, "openmetrics: the nasty child's CPU%, comm label escaped")
    # its start time (field 22 of /proc/PID/stat, after the comm's closing parenthesis) labels it too
    with open("/proc/%d/stat" % nasty.pid, "rb") as f:
        start = f.read().rsplit(b")", 1)[1].split()[19].decode()
    check(len(cpu) == 1 and cpu[0][1].get("start") == start,
          "openmetrics: the start label is the child's start time (%s)" % start)
    info = [x for x in s if x[0] == "vtop_process_info" and x[1].get("pid") == str(nasty.pid)]
    check(len(info) == 1 and info[0][1].get("command") == cmd_expected, "openmetrics: command as an info label")
    check(any(x[0] == "vtop_sys_vm_total_kb" and x[2] > 0 for x in s), "openmetrics: a system gauge")
    # the checker itself catches what it should
    for bad, why in (("x 1\n", "no EOF"), ("# TYPE a gauge\na_total 1\n# EOF\n", "a suffix a gauge may not have"),
                     ('# TYPE a gauge\na{l="\n"} 1\n# EOF\n', "a raw newline in a label"),
                     ("# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\na 2\n# EOF\n", "a family twice"),
                     ('# TYPE a gauge\na{x="1",x="2"} 1\n# EOF\n', "a label twice")):
        try:
            openmetrics.validate(bad)
            check(False, "openmetrics checker refuses %s" % why)
        except ValueError:
            check(True, "openmetrics checker refuses %s" % why)

    # --- text ---
    out = vtop("-b", "-n", "1", "-d", "0.3", "--flat")
    no_controls(out, "text")
    check(cmd_expected.encode() in out, "text: the command escaped")
    check(b"Tasks:" in out and re.search(rb"; feed: (none|(ebpf|perf|netlink), \d+ ev/s, lost \d+)\n", out),
          "text: the summary, and the feed's meter")
    out = vtop("-b", "-n", "1", "-d", "0.3", "--backend", "none")
    check(re.search(rb"; feed: none\n", out), "text --backend none: the feed said to be none")
    out = vtop("-b", "-n", "1", "-d", "0.3", "--ascii")
    check(all(b < 0x80 for b in out), "text --ascii: nothing but ASCII, tree lines included")

    # --- -p: the window-manager mode: the parent, its child, nothing else ---
    out = vtop("-b", "-n", "1", "-d", "0.3", "-p", str(parent.pid), "--format", "json")
    f = json.loads(out.decode("utf-8").splitlines()[-1])
    pids = sorted(p["pid"] for p in f["processes"])
    check(pids == sorted([parent.pid, kid]), "-p: only the process and its descendants (%s)" % pids)

    # --- --events ---
    env = dict(os.environ, XDG_CONFIG_HOME=tmp)
    f = json.loads(vtop("-b", "-n", "1", "-d", "0.2", "--format", "json").decode("utf-8").splitlines()[-1])
    feed_on = not f["feed"].startswith("none")
    print("the feed: %s" % f["feed"])
    # the markers wait until vtop is past its first samples: what starts then is new to it
    marker_mark = b" fork pid=%d " if feed_on else b" new pid=%d "

    def events_run(extra):
        """vtop --events, with a marker seen in its output: (process, the output so far in a list)"""
        ev = spawn([VTOP, "--events", "-d", "0.2"] + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   env=env)
        children.append(ev)
        got = [b""]
        mark = marker_mark if not extra else b" new pid=%d "
        for _ in range(20):
            marker = spawn(["/bin/sleep", "60"])
            children.append(marker)
            if read_until(ev, got, mark % marker.pid, 5):
                return ev, got, True
        return ev, got, False

    def read_until(ev, got, pattern, secs):
        end = time.time() + secs
        while pattern not in got[0] and time.time() < end:
            r, _, _ = select.select([ev.stdout], [], [], 0.1)
            if r:
                chunk = os.read(ev.stdout.fileno(), 65536)
                if not chunk:
                    break
                got[0] += chunk
        return pattern in got[0]

    def events_end(ev, got):
        ev.kill()
        out, err = ev.communicate(timeout=30)
        return got[0] + out, err

    def lines_of(text, pid):
        return [line for line in text.splitlines() if " pid=%d " % pid in line]

    if feed_on:
        # with the feed: a child that lives a few milliseconds, with a known exit code, and one with a
        # name full of controls, each seen forked, execed and exited, with its pid and exit code
        ev, got, marked = events_run([])
        check(marked, "--events (feed): a process started while it runs")
        me = os.getpid()
        short = spawn(["/bin/sh", "-c", "exit 7"])
        children.append(short)
        short.wait()
        odd = spawn([link, "0"])
        children.append(odd)
        odd.wait()
        read_until(ev, got, b" exit pid=%d " % odd.pid, 30)
        text, err = events_end(ev, got)
        no_controls(text, "--events")
        text = text.decode("utf-8")
        mine = lines_of(text, short.pid)
        ok = check(any(" fork pid=%d ppid=%d " % (short.pid, me) in line for line in mine),
                   "--events (feed): the short child's fork, under this test")
        ok &= check(any(" exec pid=%d " % short.pid in line and " file=/bin/sh args=/bin/sh -c exit 7" in line
                        for line in mine), "--events (feed): its exec, with the program and its arguments")
        ok &= check(any(re.search(r" exit pid=%d ppid=%d code=7 comm=sh$" % (short.pid, me), line) for line in mine),
                    "--events (feed): its exit, with its exit code 7")
        odd_lines = lines_of(text, odd.pid)
        ok &= check(any(" exec pid=%d " % odd.pid in line and "comm=%s file=%s args=%s 0" %
                        (comm_expected, escaped(link), escaped(link)) in line for line in odd_lines),
                    "--events (feed): a name and arguments with controls, escaped")
        ok &= check(any(" exit pid=%d " % odd.pid in line and " code=0 " in line for line in odd_lines),
                    "--events (feed): and its exit")
        check(b"no event feed" not in err, "--events (feed): no word of comparing samples")
        if not ok:
            print("---- vtop --events wrote %d lines; about pids %d and %d:" % (text.count("\n"), short.pid, odd.pid))
            print("\n".join(mine + odd_lines) or "(nothing)")
            print("---- its stderr:\n%s" % err.decode(errors="replace"))

    # without the feed: what comparing samples finds, and it says so
    ev, got, marked = events_run(["--backend", "none"])
    check(marked, "--events --backend none: a process started while it runs")
    short = spawn(["/bin/sleep", "1"])
    children.append(short)
    short.wait()
    read_until(ev, got, b" exit pid=%d " % short.pid, 60)
    text, err = events_end(ev, got)
    text = text.decode("utf-8")
    seen = check(" new pid=%d " % short.pid in text, "--events --backend none: the short process's start")
    seen &= check(" exit pid=%d " % short.pid in text, "--events --backend none: and its exit")
    if not seen:
        print("---- vtop --events wrote %d lines; about pid %d:" % (text.count("\n"), short.pid))
        print("\n".join(lines_of(text, short.pid)) or "(nothing)")
        print("---- its last lines, and its stderr:\n%s\n%s" % ("\n".join(text.splitlines()[-5:]),
                                                             err.decode(errors="replace")))
    check(b"no event feed" in err, "--events --backend none: says it has no feed and what that means")

    # --- the task iterator asked for where it cannot be used: /proc, and why, on stderr ---
    # a captured tree (not a procfs) as the proc root: the iterator does not describe it
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures",
                           "linux-6.18-x86_64")
    fixture_pids = sorted(int(d) for d in os.listdir(fixture) if d.isdigit())
    told = b"vtop: the task iterator was asked for but cannot be used (the proc root is not a procfs): " \
        b"processes are sampled from /proc\n"
    for args, sampler, tell in ((["--source", "iter"], None, True), ([], "iter", True),
                                (["--source", "proc"], None, False), ([], None, False)):
        env = dict(os.environ, XDG_CONFIG_HOME=tmp, VMON_PROC_ROOT=fixture)
        env.pop("VMON_SAMPLER", None)
        if sampler:
            env["VMON_SAMPLER"] = sampler
        what = "VMON_SAMPLER=" + sampler if sampler else " ".join(args) or "auto"
        r = subprocess.run([VTOP, "-b", "-n", "1", "-d", "0.2", "--format", "csv"] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60, env=env)
        pids = sorted({int(row[2]) for row in list(csv.reader(io.StringIO(r.stdout.decode())))[1:]})
        check(r.returncode == 0 and pids and set(pids) <= set(fixture_pids),
              "fixture root, %s: the fixture's processes (%s)" % (what, pids[:5]))
        check((r.stderr == told) if tell else (r.stderr == b""),
              "fixture root, %s: %s (%r)" % (what, "says why not the iterator" if tell else "nothing on stderr",
                                             r.stderr[:160]))

    # --- bad input: clear errors, no output ---
    for args, what in ((["-b", "-n", "0"], "-n 0"), (["-b", "--format", "xml"], "an unknown format"),
                       (["-b", "-o", "pid,bogus"], "an unknown column"), (["-p", "0"], "pid 0"),
                       (["--backend", "bpf", "-b", "-n", "1"], "an unknown feed backend")):
        r = subprocess.run([VTOP] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30,
                           env=dict(os.environ, XDG_CONFIG_HOME=tmp))
        check(r.returncode != 0 and r.stderr.startswith(b"vtop: ") and not r.stdout,
              "refuses %s with a message (%r)" % (what, r.stderr[:80]))
finally:
    kill_all(children)
    subprocess.run(["rm", "-rf", tmp])

sys.exit(finish())
