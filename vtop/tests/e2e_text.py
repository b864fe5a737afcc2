#!/usr/bin/env python3
"""e2e_text.py: what vtop says, on a terminal under tmux, where it used to
say nothing or a bare number:

- a search that finds nothing turns the prompt red and says "no match" (and
  says it without colour, NO_COLOR);
- the status line names the user the list is narrowed to (-u 65534:
  "user: nobody", not "user: 65534");
- the details say why a field has no value: a kernel thread's executable,
  a running process's wait channel, an exited process's directories, and,
  as an unprivileged user, another user's executable and wait channel.

The processes are children this test starts (a sleeper, a busy loop) and
the kernel's kthreadd (pid 2).
"""

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtoptest import VTOP, Term, check, finish, kill_all, list_lines, spawn  # noqa: E402

term = Term("vtop-e2e-text-%d" % os.getpid())
keys, literal, wait_for, screen, tmux = term.keys, term.literal, term.wait_for, term.screen, term.tmux


def start(cmd, what):
    term.restart(cmd, 150, 40)
    wait_for(lambda s: "F10Quit" in s and list_lines(s), what)


def bottom(s):
    return s.rstrip("\n").split("\n")[-1]


def bottom_raw():
    """The bottom line with its colours (SGR sequences), as tmux holds it."""
    return tmux("capture-pane", "-p", "-e", "-t", "vt").rstrip("\n").split("\n")[-1]


def red(raw):
    """A red background anywhere on the line: SGR 41, or 48;5;1 with 256 colours."""
    return any(re.search(r"(^|;)(41|48;5;1)(;|$)", m) for m in re.findall(r"\x1b\[([0-9;]*)m", raw))


def details_of(pid):
    """The details of pid: typed to select it, then Enter."""
    time.sleep(1.6)  # digits typed within 1.5 s of each other make one pid
    literal(str(pid))
    wait_for(lambda s: "pid %d" % pid in bottom(s), "typing %d selects it" % pid)
    keys("Enter")
    # (wchan is read from the refresh after the page opens: vtop reads it only while shown)
    return wait_for(lambda s: re.search(r"^ Process %d\b" % pid, s, re.M) and "Waiting in:" in s and
                    not (field(s, "Waiting in:") or "").startswith("not read yet"),
                    "Enter: the details of %d" % pid)


def field(s, name):
    m = re.search(r"^%s\s+(.*?)\s*$" % re.escape(name), s or "", re.M)
    return m.group(1) if m else None


tmp = tempfile.mkdtemp(prefix="vtop-e2e-text-")
os.chmod(tmp, 0o755)
children = []
try:
    run = "1%07d" % os.getpid()
    sleeper = spawn(["/bin/sleep", run + "1"])
    gone = spawn(["/bin/sleep", run + "3"])
    busy = spawn(["/bin/sh", "-c", "while :; do :; done", "busy" + run])
    children += [sleeper, gone, busy]
    env = "env XDG_CONFIG_HOME=%s LANG=C.UTF-8 TERM=screen-256color" % os.path.join(tmp, "config")

    # --- a search that finds nothing ---
    start("%s %s -d 0.5 --exited 40" % (env, VTOP), "vtop starts")
    keys("/")
    # typed in two send-keys: the feed hears tmux's own short lives with their
    # arguments, and vtop lists them as exited rows a search looks at too, so no
    # one process may carry the whole text (vtop found it in "send-keys -l -- TEXT")
    literal("zz-no-such-")
    literal(run)
    wait_for(lambda s: "Search: zz-no-such-" in bottom(s) and "no match" in bottom(s), "a search for nothing: \"no match\"")
    check(red(bottom_raw()), "and the prompt is red")
    keys("C-u")
    literal("sleep " + run)
    s = wait_for(lambda s: "Search: sleep " in bottom(s) and "no match" not in bottom(s), "a search that finds: no \"no match\"")
    check(not red(bottom_raw()), "and the prompt is not red")
    keys("Escape")

    # --- details: why there is no value ---
    keys("K")
    wait_for(lambda s: "kernel threads shown" in s, "K: kernel threads shown")
    s = details_of(2)
    check(field(s, "Executable:") == "none: a kernel thread runs no program", "kthreadd: no executable, a kernel thread (%s)"
          % field(s, "Executable:"))
    check("Command line: none: a kernel thread runs no program" in (s or ""), "kthreadd: no command line, said why")
    keys("Escape")
    s = details_of(busy.pid)
    check(field(s, "Waiting in:") == "nothing: it is running", "a busy loop waits in nothing: it is running (%s)"
          % field(s, "Waiting in:"))
    check(field(s, "Executable:") == "/usr/bin/dash" or (field(s, "Executable:") or "").endswith("sh"),
          "its executable is the shell (%s)" % field(s, "Executable:"))
    keys("Escape")
    s = details_of(sleeper.pid)
    wchan = field(s, "Waiting in:") or ""
    check(re.match(r"^[a-z_][a-z0-9_.]*$", wchan) or wchan.startswith("not known: the kernel gives 0"),
          "a sleeper waits in a kernel function, or says why not (%s)" % wchan)
    keys("Escape")
    # one that exited before anything but its stat was read: its exited row's details say so
    # (filtered to it: on a busy machine the tree is longer than the screen)
    keys("\\")
    literal(run + "3")
    keys("Enter")
    wait_for(lambda s: "filter: " + run + "3" in s and any(re.match(r"^.\s*%d " % gone.pid, line) for line in list_lines(s)),
             "filtered to the sleeper that will be killed")
    kill_all([gone])
    wait_for(lambda s: any(re.match(r"^X\s*%d " % gone.pid, line) for line in list_lines(s)), "a killed sleeper's exited row")
    s = details_of(gone.pid)
    check("state X (exited)" in (s or ""), "its details say it exited")
    for name in ("Working directory:", "Root directory:"):
        check(field(s, name) == "not read before it exited", "%s not read before it exited (%s)" % (name, field(s, name)))
    keys("Escape")
    term.quit()

    # --- as nobody: the status line names the user; another user's process says why its fields are not shown ---
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP (part): running vtop as another user needs root and setpriv")
    else:
        nobody = pwd.getpwnam("nobody").pw_uid
        mine = spawn(["setpriv", "--reuid=%d" % nobody, "--regid=%d" % nobody, "--clear-groups", "/bin/sleep", run + "2"])
        children.append(mine)
        start("%s setpriv --reuid=%d --regid=%d --clear-groups %s -d 0.5 -u %d" % (env, nobody, nobody, VTOP, nobody),
              "vtop as nobody, -u %d" % nobody)
        wait_for(lambda s: re.search(r"\buser: nobody\b", bottom(s)), "the status line: user: nobody, not the number")
        wait_for(lambda s: any(re.match(r"^.\s*%d " % mine.pid, line) for line in list_lines(s)),
                 "nobody's sleeper listed")
        keys("u")
        wait_for(lambda s: "Show the processes of" in s, "u: the user menu")
        keys("Home", "Enter")
        wait_for(lambda s: "user:" not in bottom(s), "all users again")
        s = details_of(busy.pid)
        check(field(s, "Executable:") == "not shown to us: another user's process (permission denied, EACCES)",
              "root's process, to nobody: its executable is not shown, and why (%s)" % field(s, "Executable:"))
        check((field(s, "Waiting in:") or "").startswith("nothing: it is running") or
              field(s, "Waiting in:") == "not shown to us: another user's process (the kernel gives 0 for it)",
              "its wait channel: running, or not shown to us (%s)" % field(s, "Waiting in:"))
        keys("Escape")
        term.quit()
finally:
    tmux("kill-server", must=False)
    kill_all(children)
    subprocess.run(["rm", "-rf", tmp])

# the same search without colour (NO_COLOR): the words alone say it
try:
    term.restart("env NO_COLOR=1 XDG_CONFIG_HOME=/nonexistent LANG=C.UTF-8 TERM=screen-256color %s -d 0.5" % VTOP, 120, 30)
    wait_for(lambda s: "F10Quit" in s, "vtop with NO_COLOR")
    keys("/")
    literal("zz-no-such-")
    literal("thing-at-all")
    wait_for(lambda s: "no match" in bottom(s), "NO_COLOR: a search for nothing says \"no match\"")
    check(not red(bottom_raw()), "and uses no colour")
    keys("Escape")
    term.quit()
finally:
    tmux("kill-server", must=False)

sys.exit(finish())
