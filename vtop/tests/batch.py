#!/usr/bin/env python3
"""batch.py: vtop -b's output read back by the real parsers of each format.

Every format is parsed by what its readers use: json by the json module
(a key twice is an error), csv by the csv module (a header twice is an
error), the Prometheus text format by promtool and prometheus_client's
text parser, OpenMetrics by prometheus_client's OpenMetrics parser and by
openmetrics.py for the rules that parser does not check.  All of it runs
under a churn of short-lived processes this test starts, with every column
asked for, and each format must list one row per process (pid and start
time) in each refresh.

The ground truth is the children this test starts: their pids and start
times (from /proc), their argument bytes (a backslash, escape sequences, a
newline, a quote, a comma, UTF-8 and bytes that are not UTF-8), which the
machine formats must carry as the real text and the text format escaped,
their parents, and how they ended (exit 7, SIGKILL, SIGTERM), as two typed
fields.  Then what batch mode says on stderr (no feed and why, a bad
settings file), -u's context rows, -p's parents, and exit status 1 when
the output cannot be written.
"""

import csv
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def prometheus_client_python():
    """Debian's python3-prometheus-client lives in Debian's python3: when another python3 comes first in PATH
    (pyenv) and lacks it, the test goes on in /usr/bin/python3.  True when the module can be imported here."""
    try:
        import prometheus_client  # noqa: F401
        return True
    except ImportError:
        pass
    alt = "/usr/bin/python3"
    if os.environ.get("VTOP_BATCH_PYTHON") or not os.path.exists(alt) or \
            os.path.realpath(sys.executable) == os.path.realpath(alt):
        return False
    if subprocess.run([alt, "-c", "import prometheus_client"], stderr=subprocess.DEVNULL).returncode != 0:
        return False
    os.environ["VTOP_BATCH_PYTHON"] = alt
    sys.stdout.flush()
    os.execv(alt, [alt] + sys.argv)
    return False


HAVE_CLIENT = prometheus_client_python()
if HAVE_CLIENT:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_families
    from prometheus_client.parser import text_string_to_metric_families as prom_families

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openmetrics  # noqa: E402
from vtoptest import VTOP, check, finish, kill_all, spawn  # noqa: E402

PROMTOOL = shutil.which("promtool")
FORMATS = ("text", "json", "csv", "prometheus", "openmetrics")
if not PROMTOOL:
    print("skip: promtool checks: promtool is not installed (Debian package prometheus)")
if not HAVE_CLIENT:
    print("skip: prometheus_client checks: no python3 here imports prometheus_client "
          "(Debian package python3-prometheus-client)")


def vtop(*args, ok=True, timeout=120, env=None, stdout=subprocess.PIPE):
    env = env or dict(os.environ, XDG_CONFIG_HOME=tmp, LANG="C.UTF-8")
    r = subprocess.run([VTOP] + list(args), stdout=stdout, stderr=subprocess.PIPE, env=env, timeout=timeout)
    if ok and r.returncode != 0:
        print(r.stderr.decode(errors="replace"))
    if ok:
        check(r.returncode == 0, "vtop %s exits 0" % " ".join(args)[:150])
    return r


def no_controls(data, what):
    bad = [b for b in data if (b < 0x20 and b not in (0x0a, 0x0d)) or b == 0x7f]
    check(not bad, "%s: no raw control bytes (found %r)" % (what, bytes(bad[:5])))


def escaped(raw):
    """What vmon_escape() makes of raw bytes: the text format's reference (see vmon_escape(3))."""
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


def real(raw):
    """What the machine formats carry: the bytes as UTF-8, each part that is not UTF-8 one U+FFFD (vtop(1))."""
    return raw.decode("utf-8", errors="replace")


def stat_fields(pid):
    """/proc/PID/stat's fields after the command name: [0] is field 3."""
    with open("/proc/%d/stat" % pid, "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


def start_of(pid):
    return int(stat_fields(pid)[19])


# --- the parsers ---

def no_twice(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key twice: %s" % sorted(k for k in keys if keys.count(k) > 1))
    return dict(pairs)


def parse_json(out, what):
    """The refreshes, each a dict; None when a line does not parse or holds a key twice."""
    try:
        frames = [json.loads(line, object_pairs_hook=no_twice) for line in out.decode("utf-8").splitlines()]
        check(True, "%s: json.loads reads every refresh, no key twice (%d)" % (what, len(frames)))
        return frames
    except ValueError as e:
        check(False, "%s: json.loads: %s" % (what, e))
        return None


def parse_csv(out, what):
    """(header, rows as dicts) by csv.DictReader; every header once."""
    reader = csv.DictReader(io.StringIO(out.decode("utf-8"), newline=""))
    rows = list(reader)
    header = reader.fieldnames or []
    check(len(set(header)) == len(header), "%s: every csv header once (%d; twice: %s)" %
          (what, len(header), sorted({h for h in header if header.count(h) > 1})))
    check(all(None not in r and None not in r.values() for r in rows), "%s: every row as wide as the header" % what)
    return header, rows


def parse_text(out):
    """The refreshes of the text format, each (column header line, [process lines])."""
    refreshes = []
    for part in re.split(r"(?m)^(?=vtop - )", out.decode("utf-8")):
        if not part:
            continue
        lines = part.split("\n")
        head = next(i for i, line in enumerate(lines) if line == "") + 1
        end = lines.index("", head)
        refreshes.append((lines[head], lines[head + 1:end]))
    return refreshes


def split_expositions(text, om):
    """One exposition per refresh: ending with # EOF (OpenMetrics) or a blank line (Prometheus)."""
    if om:
        parts = text.split("# EOF\n")
        check(parts[-1] == "", "openmetrics: every exposition ends with # EOF")
        return [p + "# EOF\n" for p in parts[:-1]]
    parts = text.split("\n\n")
    check(parts[-1] == "", "prometheus: every exposition ends with a blank line")
    return [p + "\n" for p in parts[:-1]]


def promtool(exposition, what):
    if not PROMTOOL:
        return
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=exposition.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    check(r.returncode == 0, "%s: promtool check metrics is clean (%s)" %
          (what, r.stdout.decode(errors="replace").strip()[:300] or "no remark"))


def parse_metrics(out, om, what):
    """Each exposition checked (promtool for Prometheus, openmetrics.py's rules for OpenMetrics) and parsed by
    prometheus_client: a list per exposition of (sample name, labels, value), or None without the client."""
    text = out.decode("utf-8")
    expositions = split_expositions(text, om)
    parsed = []
    for i, expo in enumerate(expositions):
        names = re.findall(r"(?m)^# TYPE (\S+) ", expo)
        check(len(set(names)) == len(names), "%s %d: every family once (%d)" % (what, i, len(names)))
        if om:
            try:
                openmetrics.validate(expo)
            except ValueError as e:
                check(False, "%s %d: openmetrics.py: %s" % (what, i, e))
        else:
            promtool(expo, "%s %d" % (what, i))
        if not HAVE_CLIENT:
            parsed.append(None)
            continue
        try:
            fams = list((om_families if om else prom_families)(expo))
        except Exception as e:  # the parsers raise ValueError, or worse on bad input
            check(False, "%s %d: prometheus_client's parser: %r" % (what, i, e))
            parsed.append(None)
            continue
        samples = [(s.name, s.labels, s.value) for f in fams for s in f.samples]
        keys = [(n, tuple(sorted(lb.items()))) for n, lb, _ in samples]
        check(len(set(keys)) == len(keys), "%s %d: prometheus_client reads it, no series twice (%d families, "
              "%d samples)" % (what, i, len(fams), len(samples)))
        parsed.append(samples)
    return parsed


def one_row_each(keys, what):
    """keys: the (pid, start) of one refresh's rows."""
    twice = sorted({k for k in keys if keys.count(k) > 1})
    return check(not twice, "%s: one row per process (pid, start) in %d rows%s" %
                 (what, len(keys), "; twice: %s" % twice[:5] if twice else ""))


def rows_of_format(fmt, out, what):
    """Every format read by its parsers, as refreshes of rows: [{pid, start, ...}] per refresh."""
    if fmt == "json":
        frames = parse_json(out, what) or []
        return [f["processes"] for f in frames]
    if fmt == "csv":
        _, rows = parse_csv(out, what)
        by_seq = {}
        for r in rows:
            by_seq.setdefault(r["seq"], []).append(dict(r, pid=int(r["pid"]), start=int(r["start"])))
        return list(by_seq.values())
    if fmt == "text":
        out_rows = []
        for header, lines in parse_text(out):
            # -o starts with pid,start: the first two numbers after the two marks
            out_rows.append([{"pid": int(line[2:].split()[0]), "start": int(line[2:].split()[1]), "line": line,
                              "header": header} for line in lines])
        return out_rows
    parsed = parse_metrics(out, fmt == "openmetrics", what)
    frames = []
    for samples in parsed:
        if samples is None:
            continue
        info = [dict(lb, pid=int(lb["pid"]), start=int(lb["start"]), values={}) for name, lb, _ in samples
                if name == "vtop_process_info"]
        by_key = {(r["pid"], r["start"]): r for r in info}
        for name, lb, value in samples:
            if "pid" in lb and name != "vtop_process_info" and (int(lb["pid"]), int(lb["start"])) in by_key:
                by_key[(int(lb["pid"]), int(lb["start"]))]["values"][name] = value
        frames.append(info)
    return frames


tmp = tempfile.mkdtemp(prefix="vtop-batch-")
os.chmod(tmp, 0o755)
children = []
try:
    # a churn of short-lived processes, the whole time: pids come and go between and within refreshes
    churn = spawn(["/bin/sh", "-c", "while :; do for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait; "
                   "sleep 0.01; done"])
    children.append(churn)

    # arguments holding what a terminal or a parser could trip on
    ARGS = [b"back\\slash", b"\x1b[31mred\x1b[0m", b"new\nline", b'qu"ote', b"com,ma", "h\u00e9llo \u2713".encode(),
            b"bad\xff\xfe", b"cut\xe2\x82", b"\x1b]2;title\x07"]
    nasty_argv = [b"/bin/sh", b"-c", b"sleep 600; :", b"vtop-batch"] + ARGS
    nasty = spawn(nasty_argv)
    children.append(nasty)
    nasty_command = b" ".join(nasty_argv)
    # a command line longer than the text writer's line buffer (16 KiB): written whole, not cut or garbled
    long_argv = [b"/bin/sh", b"-c", b"sleep 600; :", b"vtop-long", b"L" * 20000, b"the-end"]
    longer = spawn(long_argv)
    children.append(longer)
    # a program whose name (comm) is nasty too: exec'd through a link of that name
    name = b"e\x1b[1m\",\\\n\xffz"
    link = os.path.join(tmp.encode(), name)
    os.symlink(b"/bin/sleep", link)
    named = spawn([b"/bin/sh", b"-c", b'exec "$0" 600', link])
    children.append(named)
    parent = spawn(["/bin/sh", "-c", "sleep 611 & wait"])
    children.append(parent)
    kid = None
    for _ in range(50):
        out = subprocess.run(["pgrep", "-P", str(parent.pid)], stdout=subprocess.PIPE).stdout.split()
        if out:
            kid = int(out[0])
            break
        time.sleep(0.1)
    check(kid is not None, "the sleeping child of the parent was started")
    time.sleep(0.3)  # the named child has exec'd
    comm_expected = escaped(name[:15])
    truth = {nasty.pid: start_of(nasty.pid), named.pid: start_of(named.pid), parent.pid: start_of(parent.pid),
             kid: start_of(kid)}

    # every column vtop has, from -o help (name, then label, in columns of 22 and 10)
    help_lines = vtop("-o", "help").stdout.decode().splitlines()[1:]
    names = [line[:22].strip() for line in help_lines]
    labels = [line[23:33].strip() for line in help_lines]
    check(len(names) > 60 and len(set(names)) == len(names), "-o help: %d columns, each name once" % len(names))
    check(len(set(labels)) == len(labels), "-o help: each label once (twice: %s)" %
          sorted({x for x in labels if labels.count(x) > 1}))
    ALL = ",".join(["pid", "start"] + [n for n in names if n not in ("pid", "start")])

    # --- every format, every column, under the churn ---
    for fmt in FORMATS:
        what = "%s, every column" % fmt
        r = vtop("-b", "-n", "3", "-d", "0.3", "-K", "--format", fmt, "-o", ALL)
        frames = rows_of_format(fmt, r.stdout, what)
        check(len(frames) == 3, "%s: three refreshes (%d)" % (what, len(frames)))
        for i, rows in enumerate(frames):
            one_row_each([(x["pid"], x["start"]) for x in rows], "%s, refresh %d" % (what, i))
        last = {(x["pid"], x["start"]): x for x in frames[-1]} if frames else {}
        check(all((pid, start) in last for pid, start in truth.items()),
              "%s: this test's children are there, by pid and start time" % what)
        if fmt == "text":
            no_controls(r.stdout, what)
            header = frames[-1][0]["header"] if frames and frames[-1] else ""
            check(all(label in header for label in labels), "text: every column's label in the header")
            check(re.search(r" PRI   NI ", header) is not None, "text: PRI and NI four wide, not nine (%r)" %
                  re.search(r"PRI +NI", header).group(0) if re.search(r"PRI +NI", header) else header[:60])
            line = last.get((nasty.pid, truth[nasty.pid]), {}).get("line", "")
            check(escaped(nasty_command) in line, "text: the command line escaped for a terminal")
            line = last.get((longer.pid, start_of(longer.pid)), {}).get("line", "")
            check(b" ".join(long_argv).decode() in line, "text: a command of 20,000 bytes whole, in a "
                  "line of %d bytes" % len(line))
            line = last.get((nasty.pid, truth[nasty.pid]), {}).get("line", "")
            code = "0x%x" % int(stat_fields(nasty.pid)[23])
            check(re.search(r"(^| )%s " % code, line) is not None, "text: STARTCODE in hex (%s)" % code)
        if fmt == "json":
            no_controls(r.stdout, what)
            frame = parse_json(r.stdout, what)[-1]
            p = last.get((nasty.pid, truth[nasty.pid]), {})
            check(set(p) >= set(names) - {"pid", "start", "ppid"} | {"status", "thread", "context"},
                  "json: every column a key")
            check(p.get("command") == real(nasty_command), "json: the command line is the real text (%r)" %
                  p.get("command"))
            check(p.get("argv") == [real(a) for a in nasty_argv], "json: argv, an array of the real arguments")
            check(p.get("ppid") == os.getpid(), "json: ppid, this test")
            st = stat_fields(nasty.pid)
            check(p.get("startcode") == "0x%x" % int(st[23]) and p.get("startstack") == "0x%x" % int(st[25]),
                  "json: addresses as /proc gives them, in hex (%s %s)" % (p.get("startcode"), p.get("startstack")))
            check(p.get("sigcatch") == "0x%x" % int(st[31]), "json: a signal bitmap in hex")
            check(isinstance(p.get("utime"), int) and isinstance(p.get("cpu_percent"), float) and
                  isinstance(p.get("pid"), int) and p.get("exit_status") is None and p.get("term_signal") is None,
                  "json: numbers are numbers, a missing value null")
            n = last.get((named.pid, truth[named.pid]), {})
            check(n.get("comm") == real(name), "json: comm is the real name (%r)" % n.get("comm"))
            check(last.get((kid, truth[kid]), {}).get("ppid") == parent.pid, "json: the child under its parent")
            check(isinstance(frame["system"]["sys_vm"]["total_kb"], int), "json: system fields are numbers")
            check(len(frame["cpus"]) == os.cpu_count(), "json: one entry per CPU")
        if fmt == "csv":
            header, rows = parse_csv(r.stdout, what)
            check(header[:8] == ["seq", "timestamp", "pid", "ppid", "start", "status", "thread", "context"],
                  "csv: the refresh and the row's identity first (%s)" % header[:8])
            check(set(header) >= set(names), "csv: every column a header")
            p = last.get((nasty.pid, truth[nasty.pid]), {})
            check(p.get("command") == real(nasty_command), "csv: the command line is the real text, quoted")
            check(p.get("startcode") == "0x%x" % int(stat_fields(nasty.pid)[23]), "csv: addresses in hex")
            check(p.get("exit_status") == "" and p.get("term_signal") == "", "csv: a missing value is empty")
            check(last.get((named.pid, truth[named.pid]), {}).get("comm") == real(name), "csv: comm, the real name")
        if fmt in ("prometheus", "openmetrics") and frames:
            p = last.get((nasty.pid, truth[nasty.pid]), {})
            check(p.get("command") == real(nasty_command), "%s: the command as a label, the real text" % fmt)
            check(p.get("ppid") == str(os.getpid()), "%s: ppid a label of vtop_process_info" % fmt)
            ticks = os.sysconf("SC_CLK_TCK")
            utime = p.get("values", {}).get("vtop_process_utime_seconds_total")
            check(utime is not None and abs(utime - int(stat_fields(nasty.pid)[11]) / ticks) < 5,
                  "%s: utime a counter in seconds (%s)" % (fmt, utime))
            rss = p.get("values", {}).get("vtop_process_rss_bytes")
            check(rss is not None and rss % os.sysconf("SC_PAGESIZE") == 0 and rss > 0, "%s: rss in bytes" % fmt)
            check(all(k.startswith("vtop_") for k in p.get("values", {})), "%s: vtop's families" % fmt)
            check((named.pid, truth[named.pid]) in last and last[(named.pid, truth[named.pid])].get("comm") ==
                  real(name), "%s: comm, the real name" % fmt)
        if fmt == "openmetrics":
            check(re.search(rb"(?m)^# UNIT vtop_process_utime_seconds seconds$", r.stdout) is not None and
                  re.search(rb"(?m)^# TYPE vtop_process_utime_seconds counter$", r.stdout) is not None,
                  "openmetrics: a counter family with its unit")
        if fmt == "prometheus":
            check(re.search(rb"(?m)^# TYPE vtop_process_utime_seconds_total counter$", r.stdout) is not None,
                  "prometheus: a counter named _total")

    # --- how processes ended: children that exit 7, are killed (SIGKILL), kill themselves (SIGTERM) ---
    # zombies until vtop has printed a refresh, then reaped: the next samples find them gone
    exit7 = spawn(["/bin/sh", "-c", "exit 7"])
    killed = spawn(["/bin/sleep", "600"])
    termed = spawn(["/bin/sh", "-c", "kill -TERM $$"])
    children += [exit7, killed, termed]
    os.kill(killed.pid, signal.SIGKILL)
    ended = {exit7.pid: (7, None), killed.pid: (None, 9), termed.pid: (None, 15)}
    for pid in ended:
        for _ in range(100):
            if stat_fields(pid)[0] == b"Z":
                break
            time.sleep(0.02)
    ended_start = {pid: start_of(pid) for pid in ended}
    cols = "pid,start,ppid,user,state,time,comm,command,argv,exit_status,startcode,rchars"
    log = os.path.join(tmp, "exits.vlog")
    rec = subprocess.Popen([VTOP, "-b", "--format", "json", "-d", "0.4", "-n", "5", "-w", log, "-o", cols],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, XDG_CONFIG_HOME=tmp))
    first = rec.stdout.readline()
    for c in (exit7, killed, termed):
        c.wait()
    live, err = rec.communicate(timeout=120)
    live = first + live
    check(rec.returncode == 0, "exits: vtop -b -w exits 0 (%s)" % err.decode(errors="replace").strip()[:200])

    def ended_rows(frames, key):
        """{pid: (exit code, signal)} of the exited rows of the children, as a format gives them by key()"""
        got = {}
        for rows in frames:
            for x in rows:
                if x["pid"] in ended and x["start"] == ended_start[x["pid"]] and key(x) is not None:
                    got[x["pid"]] = key(x)
        return got

    frames = rows_of_format("json", live, "exits, json")
    got = ended_rows(frames, lambda x: (x["exit_status"], x["term_signal"]) if x["status"] == "exited" else None)
    check(got == ended, "exits, json: exit code and signal, typed, apart: %s (want %s)" % (got, ended))
    for fmt in ("text", "csv", "prometheus", "openmetrics"):
        out = vtop("-r", log, "-b", "--format", fmt, "-o", cols).stdout
        frames = rows_of_format(fmt, out, "exits, %s" % fmt)
        for i, rows in enumerate(frames):
            one_row_each([(x["pid"], x["start"]) for x in rows], "exits, %s, refresh %d" % (fmt, i))
        if fmt == "text":
            # EXIT: the code, or the signal by name (the 10th column: pid start ppid user state time comm ...)
            want = {pid: str(code) if code is not None else "SIG" + signal.Signals(sig).name[3:]
                    for pid, (code, sig) in ended.items()}
            got = ended_rows(frames, lambda x: next((w for w in want.values() if " %s " % w in x["line"]), None)
                             if x["line"].startswith("X") else None)
            check(got == want, "exits, text: EXIT says 7, SIGKILL, SIGTERM: %s" % got)
        elif fmt == "csv":
            got = ended_rows(frames, lambda x: (int(x["exit_status"]) if x["exit_status"] else None,
                                                int(x["term_signal"]) if x["term_signal"] else None)
                             if x["status"] == "exited" else None)
            check(got == ended, "exits, csv: exit_status and term_signal columns: %s" % got)
        elif HAVE_CLIENT:
            got = ended_rows(frames, lambda x: (
                int(x["values"]["vtop_process_exit_status"]) if "vtop_process_exit_status" in x["values"] else None,
                int(x["values"]["vtop_process_term_signal"]) if "vtop_process_term_signal" in x["values"] else None)
                if x["status"] == "exited" else None)
            check(got == ended, "exits, %s: vtop_process_exit_status and _term_signal: %s" % (fmt, got))

    # --- -u: another user's ancestors are context, marked; -p: the real parent ---
    if os.geteuid() == 0 and shutil.which("setpriv"):
        theirs = spawn(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "sleep", "600"])
        children.append(theirs)
        time.sleep(0.3)
        frames = rows_of_format("json", vtop("-b", "-n", "1", "-d", "0.2", "-u", "nobody", "--format", "json",
                                             "-o", "pid,start,user").stdout, "-u, json")
        rows = frames[-1] if frames else []
        mine = [x for x in rows if x["pid"] == theirs.pid]
        check(mine and mine[0]["context"] is False and mine[0]["user"] == "nobody" and mine[0]["ppid"] == os.getpid(),
              "-u nobody, json: its process, no context, under this test")
        check(rows and all(x["context"] == (x["user"] != "nobody") for x in rows),
              "-u nobody, json: every other user's row is marked context (%d rows)" % len(rows))
        _, crows = parse_csv(vtop("-b", "-n", "1", "-d", "0.2", "-u", "nobody", "--format", "csv", "-o",
                                  "pid,user").stdout, "-u, csv")
        check(crows and all(x["context"] == ("true" if x["user"] != "nobody" else "false") for x in crows),
              "-u nobody, csv: the context column")
        text = vtop("-b", "-n", "1", "-d", "0.2", "-u", "nobody", "-o", "pid,start,user").stdout
        lines = parse_text(text)[-1][1]
        check(lines and all((line[1] == "c") == (line[2:].split()[2] != "nobody") for line in lines),
              "-u nobody, text: context lines marked c")
        for fmt in ("prometheus", "openmetrics"):
            frames = rows_of_format(fmt, vtop("-b", "-n", "1", "-d", "0.2", "-u", "nobody", "--format", fmt,
                                              "-o", "pid,user,cpu_percent").stdout, "-u, %s" % fmt)
            check(not HAVE_CLIENT or (frames and frames[-1] and all(x["user"] == "nobody" for x in frames[-1])),
                  "-u nobody, %s: context rows left out" % fmt)
    else:
        print("skip: -u context rows: not root, or no setpriv, to start another user's process")
    frames = rows_of_format("json", vtop("-b", "-n", "1", "-d", "0.3", "-p", str(parent.pid), "--format", "json",
                                         "-o", "pid,start").stdout, "-p, json")
    rows = frames[-1] if frames else []
    check(sorted(x["pid"] for x in rows) == sorted([parent.pid, kid]), "-p: only the process and its descendants")
    check(any(x["pid"] == parent.pid and x["ppid"] == os.getpid() for x in rows),
          "-p: its real parent (this test), not 0")

    # --- the output cannot be written: status 1 and one line saying why, in every format and --events ---
    if os.path.exists("/dev/full"):
        for args in [["-b", "-n", "1", "-d", "0.2", "--format", fmt] for fmt in FORMATS] + \
                [["--events", "-n", "3", "-d", "0.3"]]:
            with open("/dev/full", "wb") as full:
                r = vtop(*args, ok=False, stdout=full)
            check(r.returncode == 1 and r.stderr == b"vtop: cannot write the output: No space left on device\n",
                  "vtop %s > /dev/full: exits 1, says why once (%d, %r)" % (" ".join(args), r.returncode,
                                                                           r.stderr[:200]))
    else:
        print("skip: no /dev/full here")

    # --- what batch mode cannot do, said on stderr once ---
    cfgdir = os.path.join(tmp, "cfg")
    os.makedirs(os.path.join(cfgdir, "vtop"))
    with open(os.path.join(cfgdir, "vtop", "vtoprc"), "w") as f:
        f.write("bogus = 1\ncolumns = pid,nonesuch\ndelay = 2\n")
    r = vtop("-b", "-n", "1", "-d", "0.2", "--backend", "none",
             env=dict(os.environ, XDG_CONFIG_HOME=cfgdir, LANG="C.UTF-8"))
    rc = os.path.join(cfgdir, "vtop", "vtoprc")
    check(r.stderr == ("vtop: settings: %s:1: unknown setting bogus; %s:2: bad value for columns\n" % (rc, rc)).encode(),
          "a bad vtoprc: each bad line said, once (%r)" % r.stderr[:300])
    nobody_env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent", LANG="C.UTF-8")
    if os.path.isdir("/sys/kernel/tracing/events"):
        print("skip: --backend perf without tracefs: tracefs is mounted here")
    else:
        r = vtop("-b", "-n", "1", "-d", "0.2", "--backend", "perf", ok=False, env=nobody_env)
        check(r.returncode == 0 and re.fullmatch(rb"vtop: no event feed \(perf: [^\n]*tracefs[^\n]*\): [^\n]*\n",
                                                 r.stderr) is not None and b"; feed: none\n" in r.stdout,
              "--backend perf without tracefs: says why on stderr, once (%r)" % r.stderr[:300])
    unprivileged = [] if os.geteuid() != 0 else \
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if shutil.which("setpriv") else None
    if unprivileged is None:
        print("skip: --backend ebpf unprivileged: root without setpriv")
    else:
        r = subprocess.run(unprivileged + [VTOP, "-b", "-n", "1", "-d", "0.2", "--backend", "ebpf"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=nobody_env, timeout=60)
        if r.returncode == 0 or b"no event feed" in r.stderr:
            check(r.returncode == 0 and re.fullmatch(rb"vtop: no event feed \(ebpf: [^\n]+\): [^\n]*\n",
                                                     r.stderr) is not None,
                  "--backend ebpf, unprivileged: says why on stderr, once (%r)" % r.stderr[:300])
        else:
            print("skip: --backend ebpf unprivileged: vtop cannot run as nobody here (%r)" % r.stderr[:200])

    # --- text ---
    out = vtop("-b", "-n", "1", "-d", "0.3", "--flat").stdout
    no_controls(out, "text")
    check(escaped(nasty_command).encode() in out, "text: the command escaped")
    check(b"Tasks:" in out and re.search(rb"; feed: (none|(ebpf|perf|netlink), \d+ ev/s, lost \d+)\n", out),
          "text: the summary, and the feed's meter")
    out = vtop("-b", "-n", "1", "-d", "0.3", "--backend", "none").stdout
    check(re.search(rb"; feed: none\n", out), "text --backend none: the feed said to be none")
    out = vtop("-b", "-n", "1", "-d", "0.3", "--ascii").stdout
    check(all(b < 0x80 for b in out), "text --ascii: nothing but ASCII, tree lines included")

    # --ascii in every text column, not the command's alone: a name (comm) of UTF-8
    uname = "h\u00e9\u2713".encode()
    ulink = os.path.join(tmp.encode(), uname)
    os.symlink(b"/bin/sleep", ulink)
    utf8_named = spawn([b"/bin/sh", b"-c", b'exec "$0" 600', ulink])
    children.append(utf8_named)
    time.sleep(0.3)
    as_ascii = ("h" + "".join("\\x%02x" % b for b in "\u00e9\u2713".encode())).encode()
    out = vtop("-b", "-n", "1", "-d", "0.2", "--ascii", "-p", str(utf8_named.pid), "-o", "pid,comm,command").stdout
    check(all(b < 0x80 for b in out) and out.count(as_ascii) == 2,
          "text --ascii: comm escaped as the command is (%r)" % out[-200:])
    out = vtop("-b", "-n", "1", "-d", "0.2", "-p", str(utf8_named.pid), "-o", "pid,comm").stdout
    check(uname in out, "text: comm of UTF-8 as it is without --ascii")

    # a text column longer than the text format's piece (8 KiB): cut between whole characters, the cut marked
    euros = spawn([b"/bin/sh", b"-c", b"sleep 600; :", b"vtop-euros", b"a" + "\u20ac".encode() * 5000])
    children.append(euros)
    time.sleep(0.2)
    out = vtop("-b", "-n", "1", "-d", "0.2", "-p", str(euros.pid), "-o", "pid,cmdline").stdout
    try:
        line = [x for x in out.decode("utf-8").splitlines() if x.split()[:1] == [str(euros.pid)]]
    except UnicodeDecodeError as e:
        line = None
        print("not UTF-8: %s" % e)
    check(line and line[0].endswith("\u20ac...") and len(line[0].encode()) < 8300,
          "text: a 15 kB command line cut at 8 KiB between two characters, marked ...")

    # user names are the user database's text: escaped as a command is, the real text in json and csv
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("setpriv"):
        import pwd
        uid = 54321
        while True:
            try:
                pwd.getpwuid(uid)
                uid += 1
            except KeyError:
                break
        hostile = b"ev\x1b[31mil\\x41\xab"  # an escape sequence, a backslash, a byte that is not UTF-8
        passwd = os.path.join(tmp, "passwd")
        with open("/etc/passwd", "rb") as f:
            content = f.read()
        with open(passwd, "wb") as f:
            f.write(content + hostile + b":x:%d:%d::/nonexistent:/usr/sbin/nologin\n" % (uid, uid))
        os.chmod(passwd, 0o644)
        owned = spawn(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", "sleep", "600"])
        children.append(owned)
        time.sleep(0.3)
        # vtop in a mount namespace of its own, where /etc/passwd holds that name (private: the host's is untouched)
        in_ns = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/passwd && exec "$@"', passwd, VTOP]
        base = ["-b", "-n", "1", "-d", "0.2", "-p", str(owned.pid), "-o", "pid,user"]
        env = dict(os.environ, XDG_CONFIG_HOME=tmp, LANG="C.UTF-8")
        runs = {fmt: subprocess.run(in_ns + base + ["--format", fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, timeout=60) for fmt in ("text", "json", "csv")}
        if any(r.returncode != 0 for r in runs.values()):
            print("skip: hostile user names: vtop in a mount namespace failed (%r)" % runs["text"].stderr[:200])
        else:
            out = runs["text"].stdout
            no_controls(out, "text, a user name with an escape sequence")
            check(escaped(hostile).encode() in out, "text: the user name escaped (%r)" % out[-120:])
            frames = rows_of_format("json", runs["json"].stdout, "hostile user, json")
            rows = [x for x in (frames[-1] if frames else []) if x["pid"] == owned.pid]
            check(rows and rows[0]["user"] == real(hostile), "json: the user name's real text (%r)" % rows[:1])
            _, crows = parse_csv(runs["csv"].stdout, "hostile user, csv")
            crows = [x for x in crows or [] if x["pid"] == str(owned.pid)]
            check(crows and crows[-1]["user"] == real(hostile), "csv: the user name's real text (%r)" % crows[-1:])
    else:
        print("skip: hostile user names: not root, or no unshare or setpriv")

    # --- --events ---
    env = dict(os.environ, XDG_CONFIG_HOME=tmp)
    # csv with no event is its header alone, not an empty file
    quiet = spawn(["/bin/sleep", "600"])
    children.append(quiet)
    out = vtop("--events", "--format", "csv", "-n", "1", "-d", "0.2", "-p", str(quiet.pid)).stdout
    rows = list(csv.reader(io.StringIO(out.decode("utf-8"), newline="")))
    check(len(rows) == 1 and rows[0][:2] == ["kind", "time"], "--events csv, no event: the header alone (%r)" % out[:200])
    f = json.loads(vtop("-b", "-n", "1", "-d", "0.2", "--format", "json").stdout.decode("utf-8").splitlines()[-1])
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
        # a captured tree has no event feed either, and batch mode says so, as the screen does
        feed = re.compile(rb"(?m)^vtop: no event feed \([^\n]*the proc root is not a procfs[^\n]*\n")
        check(len(feed.findall(r.stderr)) == 1, "fixture root, %s: says once why there is no feed" % what)
        stderr = feed.sub(b"", r.stderr)
        check((stderr == told) if tell else (stderr == b""),
              "fixture root, %s: %s (%r)" % (what, "says why not the iterator" if tell else "nothing else on stderr",
                                             stderr[:160]))

    # --- a line kept while its process is unchanged, and made again once what it shows changed ---
    # vtop -b keeps the text of an idle process's columns from one refresh to the next (text.c).  Ground truth:
    # a sleeping child changed from outside (its nice, its RSS limit, then stopped), and a child that burns
    # the CPU until told (SIGUSR1, after refresh 2), 0.15 s more (a refresh that saw part of the burning, its
    # line made, then one that saw none: nothing in its stores changed, its CPU% did), and then sleeps.
    sleeper = spawn(["/bin/sleep", "120"])
    burner = spawn([sys.executable, "-c", "import signal, time\ntold = []\n"
                    "signal.signal(signal.SIGUSR1, lambda *a: told.append(1))\nwhile not told: pass\n"
                    "t = time.time()\nwhile time.time() - t < 0.15: pass\ntime.sleep(120)"])
    children += [sleeper, burner]
    run = subprocess.Popen([VTOP, "-b", "-d", "0.3", "-n", "14", "-p", "%d,%d" % (sleeper.pid, burner.pid),
                            "-o", "pid,nice,priority,state,rsslim,res,cpu_percent,time,command"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, XDG_CONFIG_HOME=tmp))
    changes = {2: lambda: (os.setpriority(os.PRIO_PROCESS, sleeper.pid, 7), os.kill(burner.pid, signal.SIGUSR1)),
               4: lambda: resource.prlimit(sleeper.pid, resource.RLIMIT_RSS, (4096, 4096)),
               6: lambda: os.kill(sleeper.pid, signal.SIGSTOP)}
    out, blank = b"", 0
    for line in iter(run.stdout.readline, b""):
        out += line
        blank += line == b"\n"
        if blank % 2 == 0 and line == b"\n" and blank // 2 - 1 in changes:
            changes.pop(blank // 2 - 1)()     # after refresh k is out, before the next is sampled
    err = run.stderr.read()
    check(run.wait() == 0, "kept lines: vtop -b exits 0 (%s)" % err.decode(errors="replace").strip()[:200])
    seen = {sleeper.pid: [], burner.pid: []}
    for _, rows in parse_text(out):
        for row in rows:
            f = row[2:].split()
            if f and int(f[0]) in seen:
                seen[int(f[0])].append(f)
    slept = seen[sleeper.pid]
    # a change made after refresh k is in refresh k + 1, or k + 2 should the test have been slow to make it
    check(len(slept) == 14 and all(f[1] == "0" for f in slept[:3]) and all(f[1] == "7" for f in slept[4:]),
          "kept lines: NI follows a renice of a sleeping process (%s)" % [f[1] for f in slept])
    check(len(slept) == 14 and all(f[4] != "4096" for f in slept[:5]) and all(f[4] == "4096" for f in slept[6:]),
          "kept lines: RSSLIM follows a prlimit of it (%s)" % [f[4] for f in slept])
    check(len(slept) == 14 and all(f[3] == "S" for f in slept[:7]) and all(f[3] == "T" for f in slept[8:]),
          "kept lines: S follows a SIGSTOP of it (%s)" % [f[3] for f in slept])
    burnt = [float(f[6]) for f in seen[burner.pid]]
    check(len(burnt) == 14 and min(burnt[:3]) > 10 and all(c == 0.0 for c in burnt[6:]),
          "kept lines: CPU%% of a process that burnt the CPU, then sleeps: back to 0.0 (%s)" % burnt)

    # --- bad input: clear errors, no output ---
    for args, what in ((["-b", "-n", "0"], "-n 0"), (["-b", "--format", "xml"], "an unknown format"),
                       (["-b", "-o", "pid,bogus"], "an unknown column"), (["-p", "0"], "pid 0"),
                       (["--backend", "bpf", "-b", "-n", "1"], "an unknown feed backend"),
                       (["-b", "-o", "pid,cpu_percent,CPU%"], "a column twice")):
        r = subprocess.run([VTOP] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30,
                           env=dict(os.environ, XDG_CONFIG_HOME=tmp))
        check(r.returncode != 0 and r.stderr.startswith(b"vtop: ") and not r.stdout,
              "refuses %s with a message (%r)" % (what, r.stderr[:80]))
finally:
    kill_all(children)
    subprocess.run(["rm", "-rf", tmp])

sys.exit(finish())
