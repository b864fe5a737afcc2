#!/usr/bin/env python3
"""e2e.py: vtop on a terminal, driven like a person would: under tmux, keys
sent with send-keys, the screen read back with capture-pane.

The processes on screen that matter are children this test starts (their
pids are the ground truth), found with vtop's own filter and search.  Each
check waits for the screen to show what it must (vtop refreshes every 0.3 s
here) and fails after a timeout, printing the screen it saw.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtoptest import VTOP, Term, check, finish, kill_all, list_lines, spawn  # noqa: E402

SOCKET = "vtop-e2e-%d" % os.getpid()

if not shutil.which("tmux"):
    print("SKIP: tmux is not installed (apt-get install tmux)")
    sys.exit(77)


term = Term(SOCKET)
tmux, screen, keys, literal, wait_for = term.tmux, term.screen, term.keys, term.literal, term.wait_for


def line_of(s, pattern):
    for i, line in enumerate(list_lines(s)):
        if re.search(pattern, line):
            return i, line
    return None


def pid_order(s, pids):
    order = []
    for line in list_lines(s):
        m = re.match(r"^.\s*(\d+) ", line)
        if m and int(m.group(1)) in pids:
            order.append(int(m.group(1)))
    return order


def tree_level(s, line):
    """A tree line's depth: levels folded into the "\u2026N" count, plus two columns per level drawn."""
    head = re.search(r"^\s+PID.*COMMAND", s, re.M)
    if not head:
        return None
    prefix = line[head.group(0).index("COMMAND"):]
    m = re.match(r"(?:\u2026(\d+))?((?:[\u2502 ] )*)[\u2514\u251c]\u2500", prefix)
    if not m:
        return None
    return int(m.group(1) or 0) + len(m.group(2)) // 2 + 1


vtop_alive = term.alive


tmp = tempfile.mkdtemp(prefix="vtop-e2e-")
children = []
try:
    # the ground truth: a parent with a child, a few sleepers, and a name with an escape sequence in it.
    # Their arguments hold this run's pid, fixed width: another run of these tests on the same
    # machine (a second build, a developer's) has sleepers of its own that a search must not find.
    run = "1%07d" % os.getpid()
    tree_arg, sleeper_arg, victim_arg, evil_arg, marked_arg, paused_arg = (run + k for k in ("1", "8", "9", "6", "5",
                                                                                            "4"))
    parent = spawn(["/bin/sh", "-c", "sleep %s & wait" % tree_arg])
    children.append(parent)
    sleepers = [spawn(["/bin/sleep", "%s%d" % (sleeper_arg, i)]) for i in range(4)]
    children.extend(sleepers)
    victim = spawn(["/bin/sleep", victim_arg])
    children.append(victim)
    evil_name = "ev\x1b[31mil"
    os.symlink("/bin/sleep", os.path.join(tmp, evil_name))
    evil = spawn([os.path.join(tmp, evil_name), evil_arg])
    children.append(evil)
    marked = spawn(["/bin/sleep", marked_arg], env={"VTOP_E2E_MARK": "seen-it"})
    children.append(marked)
    time.sleep(0.3)
    kid = int(subprocess.run(["pgrep", "-P", str(parent.pid)], stdout=subprocess.PIPE).stdout.split()[0])

    cfgdir = os.path.join(tmp, "config")
    # exited rows stay 30 refreshes (9 s): long enough to be seen on a loaded machine
    cmd = "env XDG_CONFIG_HOME=%s LANG=C.UTF-8 TERM=screen-256color %s -d 0.3 --exited 30" % (cfgdir, VTOP)
    tmux("new-session", "-d", "-s", "vt", "-x", "110", "-y", "32", cmd)
    tmux("set-option", "-t", "vt", "remain-on-exit", "on")
    wait_for(lambda s: "F10Quit" in s and "Mem[" in s and list_lines(s), "vtop starts: meters, list, function keys")

    # --- the child under its parent in the tree ---
    keys("\\")
    literal("sleep " + tree_arg)
    keys("Enter")
    # the filter keeps the matches' ancestors; under a deep build the chain
    # can be longer than the screen, and the child is the last line
    keys("End")

    # Rows are found by pid alone: how deep this test runs in the real tree
    # (make distcheck nests it under some fifteen shells and makes) decides
    # how much of a command line is left on a 110-column screen.
    def child_under_parent(s):
        p = line_of(s, r"^.\s*%d " % parent.pid)
        c = line_of(s, r"^.\s*%d " % kid)
        if not p or not c or c[0] != p[0] + 1:
            return False
        # the child is one level deeper than its parent
        pl, cl = tree_level(s, p[1]), tree_level(s, c[1])
        return pl is not None and cl == pl + 1
    wait_for(child_under_parent, "tree: the spawned child is right under its parent, one level in")

    # --- a filter hides rows: the sleepers are not there, the match is ---
    # (the tree check above can pass on a screen drawn before the filter took: wait for it)
    wait_for(lambda s: "filter: sleep " + tree_arg in s and all("%s%d" % (sleeper_arg, i) not in s for i in range(4)),
             "filter: the other processes are hidden")
    wait_for(lambda s: "filter: sleep " + tree_arg in s, "filter: the bottom line says what is filtered")

    # --- sorting changes the order: the sleepers by PID, flat, one way then the other ---
    keys("\\")
    keys("C-u")
    literal("sleep " + sleeper_arg)
    keys("Enter", "F5")
    wait_for(lambda s: len(pid_order(s, [p.pid for p in sleepers])) == 4, "flat view: the four sleepers listed")
    keys("O")
    if not vtop_alive():
        check(False, "vtop still runs")
    up = sorted(p.pid for p in sleepers)
    s = wait_for(lambda s: pid_order(s, up) in (up, up[::-1]), "sorted by PID")
    first = pid_order(s, up) if s else []
    keys("I")
    wait_for(lambda s: pid_order(s, up) == first[::-1] and first, "I: the order turns round")
    keys(">")
    wait_for(lambda s: re.search(r"USER[\u25bc\u25b2v^]", s) or re.search(r"PRI[\u25bc\u25b2v^]", s),
             "> moves the sort to the next column (its header marked)")
    keys("F6")
    wait_for(lambda s: "Sort by" in s, "F6: the sort menu")
    keys("Escape")

    # --- search, then details with the environment, then kill ---
    keys("\\", "C-u", "Enter", "F5")  # no filter, back to the tree
    wait_for(lambda s: "filter:" not in s, "filter cleared")
    keys("/")
    literal("sleep " + marked_arg)
    keys("Enter", "Enter")
    wait_for(lambda s: "Process %d" % marked.pid in s, "search + Enter: the details of the found process")
    wait_for(lambda s: "VTOP_E2E_MARK=seen-it" in s, "details: its environment")
    s = screen()
    check("[1] " + marked_arg in s, "details: its arguments one by one")
    check("Working directory:" in s, "details: its working directory")
    keys("Escape")

    keys("/")
    literal("sleep " + victim_arg)
    keys("Enter")
    wait_for(lambda s: line_of(s, r"sleep " + victim_arg), "search: the victim found")
    keys("k")
    wait_for(lambda s: "Send a signal to %d" % victim.pid in s, "k: the signal menu, for the selected process")
    keys("Enter")
    wait_for(lambda s: "Send SIGTERM to %d" % victim.pid in s, "a confirmation before anything is sent")
    keys("y")
    try:
        victim.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    check(victim.returncode == -signal.SIGTERM, "kill: the child died of SIGTERM (%s)" % victim.returncode)
    wait_for(lambda s: "sent SIGTERM to 1 process" in s, "kill: the result is said")
    # exited rows: it stays a few refreshes, marked X
    keys("\\")
    literal("sleep " + victim_arg)
    keys("Enter")
    wait_for(lambda s: re.search(r"^X\s*%d " % victim.pid, "\n".join(list_lines(s)), re.M),
             "the killed process shows as an exited row, marked X")
    keys("\\", "C-u", "Enter")

    # --- a name holding an escape sequence is shown escaped ---
    keys("\\")
    literal(evil_arg)
    keys("Enter", "F5")
    wait_for(lambda s: "ev\\x1b[31mil " + evil_arg in s, "an escape sequence in a name is shown as \\x1b (flat view)")
    raw = tmux("capture-pane", "-p", "-e", "-t", "vt")
    check("\x1b[31mil" not in raw, "and never reaches the terminal as one")
    keys("\\", "C-u", "Enter", "F5")

    # --- resize to 40x10 and back ---
    tmux("resize-window", "-t", "vt", "-x", "40", "-y", "10")
    s = wait_for(lambda s: len(s.rstrip("\n").split("\n")) <= 10 and re.search(r"^\s+PID", s, re.M)
                 and "COMMAND" in s, "40x10: the list and its header still drawn")
    check(vtop_alive(), "40x10: vtop still runs")
    tmux("resize-window", "-t", "vt", "-x", "110", "-y", "32")
    wait_for(lambda s: "Mem[" in s and "F10Quit" in s, "back to 110x32: the meters are back")

    # --- a fast burst of keys: every one is handled ---
    keys("\\")
    literal("sleep " + sleeper_arg)
    keys("Enter", "F5")
    # the sleepers alone: the keys below count lines, and the tmux client that typed the filter has it in
    # its arguments (an exited row for a few refreshes, longer on a busy machine)
    def rows(s):
        return [ln for ln in list_lines(s) if re.match(r"^.\s*\d+ ", ln)]
    wait_for(lambda s: len(pid_order(s, up)) == 4 and len(rows(s)) == 4, "burst: the sleepers, flat, and nothing else")
    # Home, then Down three times, Up once, Down once, and Enter: all in one write
    keys("Home", "Down", "Down", "Down", "Up", "Down", "Enter")
    s = wait_for(lambda s: re.search(r"^ Process (\d+)", s), "burst: the details of the line the keys led to")
    shown = int(re.search(r"^ Process (\d+)", s).group(1)) if s else -1
    keys("Escape")
    s = wait_for(lambda s: len(pid_order(s, up)) == 4, "burst: back to the list")
    check(s and pid_order(s, up)[3] == shown, "burst: all seven keys handled, in order: line 4 was detailed")
    # twenty-one tree toggles at once: an odd number, so the view flips once
    keys(*(["t"] * 21))
    wait_for(lambda s: "tree view" in s, "burst: 21 toggles leave the tree view on")

    # --- a paused screen shows the processes as they were when it was paused ---
    # (the rows borrow the library's stores: nothing may sample under them while paused)
    flag = os.path.join(tmp, "exec-now")
    code = "import os,sys,time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.05)\n" \
           "os.execv('/bin/sleep', ['sleep', sys.argv[2]])"
    changer = spawn(["python3", "-c", code, flag, paused_arg], executable=sys.executable)
    children.append(changer)

    def changer_row(s):
        for ln in list_lines(s):
            if re.match(r"^.?\s*%d " % changer.pid, ln):
                return ln
        return None
    keys("\\", "C-u")
    literal(paused_arg)
    keys("Enter", "F5")  # flat: the command at the start of its column
    wait_for(lambda s: "python3 -c" in (changer_row(s) or ""), "pause: the process is listed before its exec")
    keys("Z")
    wait_for(lambda s: "PAUSED" in s, "Z: paused")
    open(flag, "w").close()
    deadline = time.time() + 10
    exec_d = lambda: open("/proc/%d/cmdline" % changer.pid).read().startswith("sleep\0")  # noqa: E731
    while time.time() < deadline and not exec_d():
        time.sleep(0.05)
    check(exec_d(), "pause: the process exec'd sleep")
    time.sleep(1.5)  # five refreshes, were it not paused
    keys("Down", "Up", "F5", "F5")  # redrawn from the snapshot in hand
    time.sleep(0.5)
    s = screen()
    check("PAUSED" in s and "python3 -c" in (changer_row(s) or "") and "sleep " + paused_arg not in s,
          "paused: the row still shows the command it had when paused\n" + s)
    keys("Z")
    wait_for(lambda s: "PAUSED" not in s and "sleep " + paused_arg in (changer_row(s) or ""),
             "Z again: sampling, the row shows its new command")
    keys("\\", "C-u", "Enter", "F5")

    # --- help and setup ---
    keys("F1")
    wait_for(lambda s: "vtop help" in s and "F9 k" in s, "F1: the help with the key map")
    keys("Escape", "F2")
    wait_for(lambda s: "Columns shown" in s and "Columns to add" in s, "F2: the setup screen")
    keys("Escape")
    path = os.path.join(cfgdir, "vtop", "vtoprc")
    deadline = time.time() + 5
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.1)
    check(os.path.exists(path) and "columns = pid," in open(path).read(), "leaving setup saves vtoprc")

    def saved_columns():
        m = re.search(r"^columns = (.*)$", open(path).read(), re.M) if os.path.exists(path) else None
        return m.group(1).split(",") if m else []

    # two Enters in one write, on the last column to add: both act on a column that is there (the
    # second read one past the end of the list: ASan's SEGV)
    before = saved_columns()
    os.unlink(path)
    keys("F2")
    wait_for(lambda s: "Columns shown" in s and "Columns to add" in s, "F2 again: the setup screen")
    keys("Right", "End")
    time.sleep(0.3)
    keys("Enter", "Enter")
    time.sleep(0.5)
    check(vtop_alive(), "setup: two Enters at once on the last column to add, vtop still runs")
    keys("Escape")
    deadline = time.time() + 5
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.1)
    after = saved_columns()
    check(len(after) == len(before) + 2 and len(set(after)) == len(after) and set(before) <= set(after),
          "setup: the two Enters added two columns, each once (%s, then %s)" % (before, after))

    keys("q")
    deadline = time.time() + 5
    while vtop_alive() and time.time() < deadline:
        time.sleep(0.1)
    check(not vtop_alive(), "q quits")

    # --- "source = iter" where the task iterator cannot be used: told once, and why ---
    # a captured tree (not a procfs) as the proc root: the iterator does not describe it
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures",
                           "linux-6.18-x86_64")
    itercfg = os.path.join(tmp, "itercfg")
    os.makedirs(os.path.join(itercfg, "vtop"))
    with open(os.path.join(itercfg, "vtop", "vtoprc"), "w") as f:
        f.write("source = iter\n")
    cmd = "env -u VMON_SAMPLER VMON_PROC_ROOT=%s XDG_CONFIG_HOME=%s LANG=C.UTF-8 TERM=screen-256color %s -d 0.3" % (
        fixture, itercfg, VTOP)
    # a new server: the last session's may still be going away ("server exited unexpectedly", seen in CI)
    term.restart(cmd, 110, 32)
    wait_for(lambda s: "no task iterator (the proc root is not a procfs): sampling /proc" in s
             and re.search(r"ms per sample \(proc\)", s), "source = iter on a fixture: /proc, and the message says why")
    keys("Down")
    wait_for(lambda s: "no task iterator" not in s and "F10Quit" in s, "the message goes with a key")
    time.sleep(1)
    check("no task iterator" not in screen(), "the message is shown once, not again with each refresh")
    keys("q")
    deadline = time.time() + 5
    while vtop_alive() and time.time() < deadline:
        time.sleep(0.1)
    check(not vtop_alive(), "q quits")
finally:
    tmux("kill-server", must=False)
    kill_all(children)
    shutil.rmtree(tmp, ignore_errors=True)

sys.exit(finish())
