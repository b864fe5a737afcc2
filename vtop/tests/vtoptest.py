"""vtoptest.py: what the vtop script tests share: children that cannot
outlive the test, checks that are counted, and where vtop is."""

import ctypes
import os
import signal
import subprocess

VTOP = os.environ.get("VTOP", "./vtop/vtop")
PR_SET_PDEATHSIG = 1
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)
    return cond


def die_with_parent():
    """In a child before exec: SIGKILL when the test dies, whatever way it dies."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


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


def finish():
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0
