#!/usr/bin/env python3
"""e2e_files.py: vtop's open-files view (key l) on a terminal under tmux, as
e2e.py drives the rest of vtop.

The ground truth is children this test starts: a pipeline (sleep | cat),
whose pipe must show from the sleep's side with the cat holding its other
end; and a holder that opens a file at a known offset (its name holding an
escape sequence), listens on a TCP port of 127.0.0.1 it reports, and on
SIGUSR1 opens /dev/zero and closes the file, which the view must mark as
opened and closed.
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
from vtoptest import VTOP, Term, check, finish, kill_all, spawn  # noqa: E402

if not shutil.which("tmux"):
    print("SKIP: tmux is not installed (apt-get install tmux)")
    sys.exit(77)

term = Term("vtop-e2e-files-%d" % os.getpid())

HOLDER = r"""
import os, signal, socket, sys, time
tmp = sys.argv[1]  # argv[2] is a marker to find it by
f = open(os.path.join(tmp, "fd\x1b[31mname"), "w+b")
f.write(b"x" * 20000)
f.seek(12345)
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
def step(sig, frame):
    global z
    z = open("/dev/zero", "rb")
    f.close()
signal.signal(signal.SIGUSR1, step)
with open(os.path.join(tmp, "port.new"), "w") as p:
    p.write(str(s.getsockname()[1]))
os.rename(os.path.join(tmp, "port.new"), os.path.join(tmp, "port"))
while True:
    time.sleep(3600)
"""


def fd_line(s, fd):
    """The line of fd number fd (its mark, then the number), or None."""
    for line in s.split("\n"):
        if re.match(r"^[ +-]\s+%d " % fd, line):
            return line
    return None


def open_files_of(pattern, pid):
    """Filter the list down to the process, select it by typing its pid, and open its files."""
    term.keys("\\", "C-u")
    term.literal(pattern)
    term.keys("Enter")
    term.wait_for(lambda s: re.search(r"^.\s*%d " % pid, s, re.M), "the list shows %d" % pid)
    time.sleep(1.6)  # digits typed within 1.5 s of each other make one pid
    term.literal(str(pid))
    term.wait_for(lambda s: "pid %d" % pid in s, "typing %d selects it" % pid)
    term.keys("l")
    return term.wait_for(lambda s: "Open files of %d" % pid in s and "FD TYPE" in s,
                         "l: the open files of %d" % pid)


tmp = tempfile.mkdtemp(prefix="vtop-e2e-files-")
children = []
try:
    pipeline = spawn(["/bin/sh", "-c", "/bin/sleep 7373 | /bin/cat"])
    children.append(pipeline)
    holder = spawn([sys.executable, "-c", HOLDER, tmp, "vtop-files-holder"])
    children.append(holder)
    deadline = time.time() + 10
    while not os.path.exists(os.path.join(tmp, "port")) and time.time() < deadline:
        time.sleep(0.05)
    port = int(open(os.path.join(tmp, "port")).read())
    kids = {}
    while len(kids) < 2 and time.time() < deadline:
        for pid in subprocess.run(["pgrep", "-P", str(pipeline.pid)], stdout=subprocess.PIPE).stdout.split():
            with open("/proc/%d/comm" % int(pid)) as c:
                kids[c.read().strip()] = int(pid)
        time.sleep(0.05)
    sleeper, cat = kids["sleep"], kids["cat"]

    # 1 s refreshes: an fd opened or closed is marked for one refresh, time enough to see it
    cmd = "env XDG_CONFIG_HOME=%s LANG=C.UTF-8 TERM=screen-256color %s -d 1" % (os.path.join(tmp, "config"), VTOP)
    term.tmux("new-session", "-d", "-s", "vt", "-x", "150", "-y", "40", cmd)
    term.tmux("set-option", "-t", "vt", "remain-on-exit", "on")
    term.wait_for(lambda s: "F10Quit" in s and "Mem[" in s, "vtop starts")
    term.keys("F5")  # flat: the filtered process on the first line
    term.wait_for(lambda s: "flat view" in s, "flat view")

    # --- a pipe, seen from the writer, with its reader as the other holder ---
    s = open_files_of("sleep 7373", sleeper)
    s = term.wait_for(lambda s: fd_line(s, 1) and re.search(r"\bpipe\s+w\s+0\s+pipe:\[\d+\]", fd_line(s, 1)),
                      "sleep's fd 1: the write end of a pipe")
    ino = re.search(r"pipe:\[(\d+)\]", fd_line(s, 1)).group(1) if s else None
    check(ino and os.readlink("/proc/%d/fd/1" % sleeper) == "pipe:[%s]" % ino, "the pipe's inode is the kernel's")
    term.wait_for(lambda s: "also in %d (cat) as fd 0 r" % cat in s, "its other end: the cat, fd 0, reading")
    term.keys("Escape")
    term.wait_for(lambda s: "Open files of" not in s and "F10Quit" in s, "Escape: back to the list")

    # --- from the reader's side: the same pipe, the sleep holding it ---
    open_files_of("/bin/cat", cat)
    term.wait_for(lambda s: fd_line(s, 0) and "pipe:[%s]" % ino in fd_line(s, 0)
                  and "also in %d (sleep) as fd 1 w" % sleeper in s, "the cat's fd 0: the same pipe, the sleep writing")
    term.keys("l")
    term.wait_for(lambda s: "Open files of" not in s, "l again: back to the list")

    # --- a listening socket, a file at an offset, a name that is an escape sequence ---
    open_files_of("vtop-files-holder", holder.pid)
    term.wait_for(lambda s: re.search(r"\btcp\s+rw\s+0\s+socket:\[\d+\]\s+127\.0\.0\.1:%d -> 0\.0\.0\.0:0 LISTEN" % port,
                                      s), "the listening socket: its address, port %d, LISTEN" % port)
    s = term.wait_for(lambda s: re.search(r"\bfile\s+rw\s+12345\s+.*fd\\x1b\[31mname", s),
                      "the file: read-write at offset 12345, its name escaped (\\x1b)")
    raw = term.tmux("capture-pane", "-p", "-e", "-t", "vt")
    check("\x1b[31mname" not in raw, "the escape sequence never reaches the terminal")
    fd = int(re.search(r"^[ +-]\s+(\d+) file .*fd\\x1b", s, re.M).group(1)) if s else -1

    # --- it opens /dev/zero and closes the file: marked + and - for a refresh ---
    os.kill(holder.pid, signal.SIGUSR1)
    term.wait_for(lambda s: re.search(r"^\+\s+\d+ chr\s+r\s+0\s+/dev/zero", s, re.M), "+: /dev/zero, opened")
    term.wait_for(lambda s: fd_line(s, fd) and fd_line(s, fd).startswith("-") and "fd\\x1b" in fd_line(s, fd),
                  "-: the file, closed", timeout=5)
    term.wait_for(lambda s: not re.search(r"fd\\x1b\[31mname", s) and re.search(r"^ \s+\d+ chr\s+r\s+0\s+/dev/zero",
                                                                                  s, re.M),
                  "a refresh later: the closed file gone, /dev/zero no longer new")
    term.keys("q")
    term.wait_for(lambda s: "Open files of" not in s, "q: back to the list")

    term.quit()
finally:
    term.tmux("kill-server", must=False)
    kill_all(children)
    shutil.rmtree(tmp, ignore_errors=True)

sys.exit(finish())
