"""vtoptest.py: what the vtop script tests share: children that cannot
outlive the test, checks that are counted, and where vtop is."""

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import time

VTOP = os.environ.get("VTOP", "./vtop/vtop")
PR_SET_PDEATHSIG = 1
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)
    return cond


def die_with_parent():
    """In a child before exec: SIGKILL when the test dies, whatever way it dies; and the signals that
    stop vtop at their defaults, whatever the test inherited (a shell's background job ignores SIGINT,
    and vtop keeps a signal ignored when it started ignored, as nohup asks)."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def spawn(argv, **kw):
    """A child in a process group of its own, so that what it starts goes with it."""
    kw.setdefault("stdout", subprocess.DEVNULL)
    kw.setdefault("stderr", subprocess.DEVNULL)
    return subprocess.Popen(argv, preexec_fn=die_with_parent, start_new_session=True, stdin=subprocess.DEVNULL,
                            **kw)


def kill_all(children):
    """Every child and its process group killed and reaped."""
    for c in children:
        try:
            os.killpg(c.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            c.kill()
        except ProcessLookupError:
            pass
        c.wait()


def list_lines(s):
    """The process lines of a screen: after the column header line, before the bottom line."""
    lines = s.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^\s+PID", line):
            return lines[i + 1:-1]
    return []


def finish():
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


class Term:
    """vtop on a terminal under tmux (a server of its own, on socket `name`): keys sent with
    send-keys, the screen read back with capture-pane."""

    def __init__(self, name):
        if not shutil.which("tmux"):
            print("SKIP: tmux is not installed (apt-get install tmux)")
            sys.exit(77)
        self.name = name

    def tmux(self, *args, must=True):
        r = subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null"] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if must and r.returncode != 0:
            raise RuntimeError("tmux %s: %s" % (" ".join(args), r.stderr.decode(errors="replace")))
        return r.stdout.decode("utf-8", errors="replace")

    def restart(self, cmd, width, height):
        """A new session "vt" running cmd, in place of any before: the server of the last one may still be
        going away when the next client comes ("server exited unexpectedly"), so that is tried again."""
        self.tmux("kill-server", must=False)
        for attempt in range(20):
            try:
                self.tmux("new-session", "-d", "-s", "vt", "-x", str(width), "-y", str(height), cmd)
                break
            except RuntimeError:
                if attempt == 19:
                    raise
                time.sleep(0.2)
        self.tmux("set-option", "-t", "vt", "remain-on-exit", "on")

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "vt")

    def keys(self, *k):
        self.tmux("send-keys", "-t", "vt", *k)

    def literal(self, text):
        """Type text, in two halves: a tmux client given it whole is a process whose
        command line has the text, which vtop lists (as exited, the feed saw it) and
        a filter or search for the text finds; under load it came first and was
        selected in place of the process the test meant (e2e_act under distcheck:
        "724 has exited")."""
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            if part:
                self.tmux("send-keys", "-t", "vt", "-l", "--", part)

    def wait_for(self, pred, what, timeout=20.0):
        """Wait until pred(screen) is true; record a failure with the last screen if it never is."""
        deadline = time.time() + timeout
        s = ""
        while time.time() < deadline:
            s = self.screen()
            try:
                if pred(s):
                    print("ok:", what)
                    return s
            except (ValueError, IndexError):
                pass
            time.sleep(0.1)
        failures.append(what)
        print("FAIL:", what)
        print("---- screen ----\n%s\n----------------" % s)
        return None

    def quit(self, timeout=10.0):
        """q in the list: vtop must end."""
        self.keys("q")
        deadline = time.time() + timeout
        while self.alive() and time.time() < deadline:
            time.sleep(0.1)
        check(not self.alive(), "q quits")

    def alive(self):
        return self.tmux("list-panes", "-t", "vt", "-F", "#{pane_dead}", must=False).strip() == "0"
