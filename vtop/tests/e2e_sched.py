#!/usr/bin/env python3
"""e2e_sched.py: the columns htop users missed (context switches, OOM score,
I/O priority, affinity, PSS) and the keys i (I/O priority) and a (CPU
affinity), on a terminal under tmux, as e2e.py drives the rest of vtop.

The ground truth is a child of this test: the test sets its oom_score_adj,
reads its /proc files (oom_score, status, statm, smaps_rollup) and, after
vtop set them, its I/O priority (ionice -p, which calls ioprio_get) and its
affinity (os.sched_getaffinity).  As root, a second vtop runs as nobody
(setpriv) on the same child: its refusal (EPERM) must be said in the
dialog.
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtoptest import VTOP, Term, check, finish, kill_all, spawn  # noqa: E402

if not shutil.which("tmux"):
    print("SKIP: tmux is not installed (apt-get install tmux)")
    sys.exit(77)

COLUMNS = "pid,io_priority,oom_score,oom_score_adj,voluntary_ctxt,involuntary_ctxt,cpus_allowed,pss_kb,res,command"
# it touches 8 MB, sleeps 30 times (voluntary switches), then rests
CHILD = r"""
import sys, time
x = bytearray(8 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
for i in range(30):
    time.sleep(0.001)
with open(sys.argv[1], "w") as f:
    f.write("ready")
while True:
    time.sleep(3600)
"""


def proc_key(pid, name, key):
    with open("/proc/%d/%s" % (pid, name)) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def proc_number(pid, name):
    with open("/proc/%d/%s" % (pid, name)) as f:
        return int(f.read().split()[0])


def row_of(s, pid):
    """The child's row, split into its columns (COMMAND last, with its spaces), or None."""
    for line in s.split("\n"):
        m = re.match(r"^.\s*%d (.*)$" % pid, line)
        if m:
            return m.group(1).split(None, len(COLUMNS.split(",")) - 2)
    return None


def size_kb(text):
    """RES's text ("8.50M", "912K") in kB."""
    units = {"B": 1.0 / 1024, "K": 1, "M": 1024, "G": 1024 * 1024}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text) / 1024


def ionice(pid):
    return subprocess.run(["ionice", "-p", str(pid)], stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()


def start_vtop(term, pid, config, prefix=(), pss=True):
    cmd = " ".join(list(prefix) + ["env", "HOME=" + config, "XDG_CONFIG_HOME=" + config, "LANG=C.UTF-8",
                                   "TERM=screen-256color", VTOP, "-d", "1", "-p", str(pid), "-o", COLUMNS])
    term.tmux("new-session", "-d", "-s", "vt", "-x", "160", "-y", "30", cmd)
    term.tmux("set-option", "-t", "vt", "remain-on-exit", "on")
    if not pss:  # another user's smaps_rollup is not readable: PSS shows "-"
        return term.wait_for(lambda s: "F10Quit" in s and row_of(s, pid), "vtop shows the child")
    return term.wait_for(lambda s: "F10Quit" in s and row_of(s, pid) and row_of(s, pid)[7] != "-",
                         "vtop shows the child with its PSS")


# The CPU menu and the CPUS column are checked against the CPUs online: hold
# the lock the library's CPU hotplug tests take (tests/testlib.c, cpu1_lock()),
# so that another check on this machine cannot take CPU 1 offline meanwhile.
# The kernel drops it when this program exits.
try:
    cpu1_lock = os.open("/tmp/libvmon-tests-cpu1.lock",
                        os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    fcntl.flock(cpu1_lock, fcntl.LOCK_EX)
except OSError:
    pass  # another user's lock file, or a symlink: unlocked, as the C tests

tmp = tempfile.mkdtemp(prefix="vtop-e2e-sched-")
os.chmod(tmp, 0o777)  # the second vtop, as nobody, writes its settings here
children = []
term = Term("vtop-e2e-sched-%d" % os.getpid())
nobody = Term("vtop-e2e-sched-nobody-%d" % os.getpid())
try:
    ready = os.path.join(tmp, "ready")
    child = spawn([sys.executable, "-c", CHILD, ready])
    children.append(child)
    pid = child.pid
    deadline = time.time() + 20
    while not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    with open("/proc/%d/oom_score_adj" % pid, "w") as f:
        f.write("321\n")

    # --- the columns, each against /proc or what the test set ---
    s = start_vtop(term, pid, tmp)
    row = row_of(s, pid) if s else None
    if row:
        io, oom, oomadj, vctx, ictx, cpus, pss, res = row[:8]
        check(io == "none", "IO: none, as ionice says (%s)" % ionice(pid))
        check(int(oomadj) == 321, "OOMADJ: the 321 the test wrote")
        check(int(oom) == proc_number(pid, "oom_score"), "OOM: /proc's oom_score (%s)" % oom)
        check(int(vctx) == proc_key(pid, "status", "voluntary_ctxt_switches") and int(vctx) >= 30,
              "VCTX: status's voluntary_ctxt_switches, at least its 30 sleeps (%s)" % vctx)
        check(int(ictx) == proc_key(pid, "status", "nonvoluntary_ctxt_switches"),
              "ICTX: status's nonvoluntary_ctxt_switches (%s)" % ictx)
        allowed = sorted(os.sched_getaffinity(pid))
        want = "%d-%d" % (allowed[0], allowed[-1]) if len(allowed) > 1 else str(allowed[0])
        check(cpus == want, "CPUS: %s, its affinity" % want)
        rollup = proc_key(pid, "smaps_rollup", "Pss")
        # others mapping the same libraries come and go: the shared part of PSS moves a little
        check(abs(int(pss) - rollup) <= max(64, rollup // 20) and int(pss) >= 8 * 1024,
              "PSS: smaps_rollup's Pss (%s kB, /proc %d kB)" % (pss, rollup))
        with open("/proc/%d/statm" % pid) as f:
            statm_kb = int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE") // 1024
        check(abs(size_kb(res) - statm_kb) <= max(8, statm_kb / 100), "RES: statm's resident (%s, %d kB)" % (res, statm_kb))
        if shutil.which("ps"):
            ps_kb = int(subprocess.run(["ps", "-o", "rss=", "-p", str(pid)], stdout=subprocess.PIPE,
                                       universal_newlines=True).stdout.strip() or "0")
            check(abs(size_kb(res) - ps_kb) <= max(8, ps_kb / 100), "RES: what ps shows (%s, %d kB)" % (res, ps_kb))

    # --- batch: PSS for the processes of -p, and for no process without it ---
    env = dict(os.environ, XDG_CONFIG_HOME=tmp, LANG="C.UTF-8")
    for args, named in ((["-p", str(pid)], True), ([], False)):
        out = subprocess.run([VTOP, "-b", "-n", "2", "-d", "0.3", "--format", "json", "-o", "pid,pss_kb"] + args,
                             stdout=subprocess.PIPE, env=env, universal_newlines=True).stdout.splitlines()
        procs = json.loads(out[-1])["processes"] if out else []
        mine = [p for p in procs if p["pid"] == pid]
        if named:
            rollup = proc_key(pid, "smaps_rollup", "Pss")
            check(mine and mine[0]["pss_kb"] is not None and abs(mine[0]["pss_kb"] - rollup) <= max(64, rollup // 20),
                  "vtop -b -p: the child's PSS (%s, /proc %d kB)" % (mine[0]["pss_kb"] if mine else None, rollup))
        else:
            check(procs and mine and all(p["pss_kb"] is None for p in procs),
                  "vtop -b without -p: PSS read for none of %d processes" % len(procs))

    # --- i: best-effort, level 6 ---
    term.keys("i")
    term.wait_for(lambda s: "I/O priority of %d" % pid in s and "none (by nice)" in s,
                  "i: the I/O priority dialog, at the child's class (none)")
    term.keys("Right", "Right")
    term.wait_for(lambda s: "< best-effort >" in s, "Right Right: best-effort")
    term.keys("6")
    term.wait_for(lambda s: "level  6" in s, "6: level 6")
    term.keys("Enter")
    term.wait_for(lambda s: "I/O priority of" not in s and "I/O priority be/6" in s, "Enter: set, and said")
    check(ionice(pid) == "best-effort: prio 6", "the child's I/O priority is best-effort 6 (%s)" % ionice(pid))
    term.wait_for(lambda s: row_of(s, pid) and row_of(s, pid)[0] == "be/6", "IO shows be/6")

    # --- i: idle, the next class to the right ---
    term.keys("i")
    term.wait_for(lambda s: "< best-effort >" in s and "level  6" in s, "i again: the dialog at best-effort 6")
    term.keys("Right", "Enter")
    term.wait_for(lambda s: "I/O priority of" not in s and row_of(s, pid) and row_of(s, pid)[0] == "idle",
                  "Right Enter: idle, and IO shows it")
    check(ionice(pid) == "idle", "the child's I/O class is idle (%s)" % ionice(pid))

    # --- a: one CPU off, then none (refused in the dialog), then applied ---
    cpus_now = sorted(os.sched_getaffinity(pid))
    term.keys("a")
    s = term.wait_for(lambda s: "CPUs for %d" % pid in s and "[x] CPU %d" % cpus_now[0] in s,
                      "a: the CPU menu, the child's CPUs ticked")
    online = sorted(os.sched_getaffinity(0))
    if len(online) > 1 and s:
        term.keys("Down", "Space")
        term.wait_for(lambda s: "[ ] CPU %d" % online[1] in s, "Down Space: CPU %d off" % online[1])
        term.keys("Up", "Space", "Enter")
        term.wait_for(lambda s: "choose at least one CPU" in s, "none chosen: Enter says so in the menu")
        term.keys("Space", "Enter")
        term.wait_for(lambda s: "CPUs for" not in s and "CPUs %d" % online[0] in s, "Enter: set, and said")
        check(os.sched_getaffinity(pid) == {online[0]}, "the child's affinity is CPU %d (%s)" %
              (online[0], os.sched_getaffinity(pid)))
        term.wait_for(lambda s: row_of(s, pid) and row_of(s, pid)[5] == str(online[0]), "CPUS shows %d" % online[0])
    else:
        print("ok: one CPU online: the menu has one entry")
        term.keys("Escape")
    term.quit()

    # --- as nobody: ioprio_set and sched_setaffinity of root's child are refused, in the dialog ---
    if os.geteuid() == 0 and shutil.which("setpriv"):
        config = os.path.join(tmp, "nobody")
        os.mkdir(config)
        os.chmod(config, 0o777)
        start_vtop(nobody, pid, config, ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"], pss=False)
        nobody.keys("i")
        nobody.wait_for(lambda s: "I/O priority of %d" % pid in s, "as nobody, i: the dialog")
        nobody.keys("Left", "Enter")  # best-effort
        nobody.wait_for(lambda s: "I/O priority of %d" % pid in s and "Operation not permitted" in s,
                        "EPERM is said in the dialog, which stays open")
        check(ionice(pid) == "idle", "and the child's I/O class is still idle")
        nobody.keys("Escape", "a", "Enter")
        nobody.wait_for(lambda s: "CPUs for %d" % pid in s and "Operation not permitted" in s,
                        "a, Enter: EPERM said in the CPU menu")
        nobody.keys("Escape")
        nobody.quit()
    else:
        print("ok: not root (or no setpriv): the refusal as another user is not tried")
finally:
    for t in (term, nobody):
        t.tmux("kill-server", must=False)
    kill_all(children)
    shutil.rmtree(tmp, ignore_errors=True)

sys.exit(finish())
