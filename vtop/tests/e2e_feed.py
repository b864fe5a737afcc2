#!/usr/bin/env python3
"""e2e_feed.py: what the event feed shows in vtop, on a terminal under tmux
(as e2e.py drives the rest of vtop).

The ground truth is children this test starts and reaps itself, so that
their pids, their parent (this test) and how they ended are known: one that
exits with code 42 a few milliseconds after it starts, one killed with
SIGKILL, and one whose name holds an escape sequence.  They live a few
milliseconds, less than vtop's refresh (0.5 s here, short so that a busy
machine's events do not push theirs out of the log before it is read):
mostly, only the feed can show them.  Each must appear as an exited row
(marked X) under this test, with its exit status in its details, and in the
event log (e) with its fork, exec and exit.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtoptest import VTOP, Term, check, finish, kill_all  # noqa: E402

term = Term("vtop-e2e-feed-%d" % os.getpid())
MARK = "vtop-feed-mark"
me = os.getpid()


def exited_line(s, pid):
    for line in s.split("\n"):
        if re.match(r"^X\s*%d " % pid, line):
            return line
    return None


def run_short(argv):
    """A child that lives a moment, reaped here: its pid and its wait status."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status = os.waitpid(p.pid, 0)
    p.returncode = 0  # reaped by hand: Popen must not wait for it again
    return p.pid, status


tmp = tempfile.mkdtemp(prefix="vtop-e2e-feed-")
children = []
try:
    # exited rows stay 100 refreshes (50 s): long enough on a loaded machine
    cmd = "env XDG_CONFIG_HOME=%s LANG=C.UTF-8 TERM=screen-256color %s -d 0.5 --exited 100" % (
        os.path.join(tmp, "config"), VTOP)
    term.tmux("new-session", "-d", "-s", "vt", "-x", "160", "-y", "40", cmd)
    term.tmux("set-option", "-t", "vt", "remain-on-exit", "on")
    s = term.wait_for(lambda s: "F10Quit" in s and "Mem[" in s and "Feed:" in s, "vtop starts, with the feed's meter")
    check(re.search(r"Exited since last refresh: \d+", s or ""), "the header counts the processes exited since the last refresh")
    m = re.search(r"Feed: (\w+)(?:, (\d+) ev/s, lost (\d+))?(.*)", s or "")
    check(m, "the feed's meter: the backend, events per second, lost")
    if m and m.group(1) == "none":
        # not root and no proc connector: nothing below can be shown
        print("SKIP: vtop has no event feed here:%s" % m.group(4))
        term.keys("q")
        sys.exit(77 if not finish() else 1)
    check(m and m.group(2) is not None and m.group(3) is not None,
          "the meter: %s" % (m.group(0).strip() if m else "?"))

    # the list filtered to this test's marker: the short-lived children and their parent, this test
    term.keys("\\")
    term.literal(MARK)
    term.keys("Enter")
    term.wait_for(lambda s: "filter: " + MARK in s, "filtered to the marker")
    time.sleep(1.2)  # past a few refreshes: the children start after the first samples

    # --- three short lives between two refreshes ---
    code_pid, code_status = run_short(["/bin/sh", "-c", "exit 42", MARK])
    check(os.WIFEXITED(code_status) and os.WEXITSTATUS(code_status) == 42, "the child %d exited with 42" % code_pid)
    sleeper = os.path.join(tmp, MARK + "-sleep")
    os.symlink("/bin/sleep", sleeper)
    killed = subprocess.Popen([sleeper, "30"], stdin=subprocess.DEVNULL)
    time.sleep(0.05)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    check(killed.returncode == -signal.SIGKILL, "the child %d was killed by SIGKILL" % killed.pid)
    evil = os.path.join(tmp, "fe\x1b[31med")
    os.symlink("/bin/true", evil)
    evil_pid, _ = run_short([evil, MARK])

    # --- the event log first (a busy machine soon pushes events out of it): fork, exec and exit of each ---
    term.keys("e")
    term.wait_for(lambda s: re.search(r"Event log \(feed: \w+, \d+ ev/s, lost \d+\): newest first; filter: " + MARK, s),
                  "e: the event log, the feed named, the list's filter applied")

    def logged(pid, kind, rest=""):
        return lambda s: re.search(r"\b%s\s+%d ppid %d\s+%s" % (kind, pid, me, rest), s)

    # the last one's exit is there: all are; Z holds the log still to be read
    term.wait_for(logged(evil_pid, "exit", r"\S+\s+exit code 0"), "the log: the last child's exit", timeout=15)
    term.keys("Z")
    term.wait_for(lambda s: "PAUSED" in s, "Z in the log: paused")
    for pred, what in ((logged(code_pid, "fork"), "the log: the first child's fork, under this test"),
                       (logged(code_pid, "exec", re.escape("sh  /bin/sh -c exit 42 " + MARK)), "the log: its exec"),
                       (logged(code_pid, "exit", r"sh\s+exit code 42"), "the log: its exit, exit code 42"),
                       (logged(killed.pid, "exit", re.escape((MARK + "-sleep")[:15]) + r"\s+killed by SIGKILL"),
                        "the log: the killed one"),
                       (logged(evil_pid, "exec", re.escape("fe\\x1b[31med")), "the log: the odd name, escaped")):
        term.wait_for(pred, what, timeout=5)
    raw = term.tmux("capture-pane", "-p", "-e", "-t", "vt")
    check("\x1b[31med" not in raw, "the log never writes the escape sequence raw")
    term.keys("Z")
    term.wait_for(lambda s: "PAUSED" not in s, "Z again: sampling again")
    term.keys("e")
    term.wait_for(lambda s: "Event log" not in s and "F10Quit" in s, "e again: back to the list")

    # exited rows, marked X, and their details: whose child, how it ended
    s = term.wait_for(lambda s: exited_line(s, code_pid) and exited_line(s, killed.pid) and exited_line(s, evil_pid),
                      "the three show as exited rows, marked X", timeout=30)
    line = exited_line(s or "", code_pid) or ""
    check("/bin/sh -c exit 42 " + MARK in line, "the exited row keeps the command line its exec carried")
    check("fe\\x1b[31med " + MARK in (exited_line(s or "", evil_pid) or ""), "a name with an escape sequence, escaped")
    raw = term.tmux("capture-pane", "-p", "-e", "-t", "vt")
    check("\x1b[31med" not in raw, "and never reaches the terminal as one")

    time.sleep(1.6)  # digits typed within 1.5 s of each other make one pid
    term.literal(str(code_pid))
    term.wait_for(lambda s: "pid %d" % code_pid in s, "typing %d selects it" % code_pid)
    term.keys("Enter")
    term.wait_for(lambda s: re.search(r"PID %d\s+parent %d\b" % (code_pid, me), s) and
                  "Exited with status 42" in s, "details: its parent is this test, and it exited with status 42")
    term.keys("Escape")
    term.wait_for(lambda s: "F10Quit" in s and "Event log" not in s, "back to the list")

    term.quit()
finally:
    term.tmux("kill-server", must=False)
    kill_all(children)
    subprocess.run(["rm", "-rf", tmp])

sys.exit(finish())
