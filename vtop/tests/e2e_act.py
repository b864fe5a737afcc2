#!/usr/bin/env python3
"""e2e_act.py: kill, renice and tags in vtop on a terminal under tmux, as a
person uses them, checked against the children this test starts (how they
died, their nice values read back with getpriority).

- Tags belong to a process and go with it: two sleepers tagged with Space
  and killed (F9, Enter, y); their exited rows are untagged, the count on the
  header goes, and F8 on a third sleeper renices that one alone.
- A target that exits while its dialog is open is said to have exited, and
  the action reports it.
- A pid reused while the screen is paused (as root: the old sleeper reaped,
  a new one made at its pid): kill and renice, from the old snapshot, must
  not reach the new process.
- k on the details page is for the process the page shows: not for the
  processes tagged in the list, and not, once that process has exited, for
  another made at its pid (as root).
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
from vtoptest import VTOP, Term, check, finish, kill_all, list_lines, spawn  # noqa: E402

term = Term("vtop-e2e-act-%d" % os.getpid())
keys, literal, wait_for, screen = term.keys, term.literal, term.wait_for, term.screen


def header_line(s):
    for line in s.split("\n"):
        if re.match(r"^\s+PID", line):
            return line
    return ""


def row(s, pid):
    for line in list_lines(s):
        if re.match(r"^.\s*%d " % pid, line):
            return line
    return None


def filter_to(text):
    """The list filtered to text, flat: only the matches, the first selected."""
    keys("\\", "C-u")
    literal(text)
    keys("Enter", "Home")
    wait_for(lambda s: "filter: " + text in s, "filtered to " + text)


def nice_of(pid):
    return os.getpriority(os.PRIO_PROCESS, pid)


def make_at_pid(pid, argv):
    """A child at a pid that was another process's: ns_last_pid, then a fork; retried while
    other forks on the machine take the pid first.  None if it cannot be done."""
    for _ in range(500):
        try:
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
        except OSError:
            return None
        p = spawn(argv)
        if p.pid == pid:
            return p
        kill_all([p])
    return None


tmp = tempfile.mkdtemp(prefix="vtop-e2e-act-")
children = []
try:
    run = "1%07d" % os.getpid()
    tag_arg, third_arg, gone_arg, reuse_arg, new_arg, detail_arg = (run + k for k in ("1", "2", "3", "4", "5", "6"))
    tagged = [spawn(["/bin/sleep", tag_arg + str(i)]) for i in range(2)]
    third = spawn(["/bin/sleep", third_arg])
    children.extend(tagged + [third])

    # exited rows stay 20 refreshes (6 s): the tags must go while they are still there
    cmd = "env XDG_CONFIG_HOME=%s LANG=C.UTF-8 TERM=screen-256color %s -d 0.3 --exited 20 --flat" % (
        os.path.join(tmp, "config"), VTOP)
    term.tmux("new-session", "-d", "-s", "vt", "-x", "120", "-y", "30", cmd)
    term.tmux("set-option", "-t", "vt", "remain-on-exit", "on")
    wait_for(lambda s: "F10Quit" in s and list_lines(s), "vtop starts")

    # --- two tagged, killed: their tags go with them ---
    filter_to(tag_arg)
    wait_for(lambda s: all(row(s, p.pid) for p in tagged), "the two sleepers to tag are listed")
    keys("Space", "Space")
    s = wait_for(lambda s: re.search(r"\b2 tagged\s*$", header_line(s)), "Space twice: the header says 2 tagged")
    check(s and all(row(s, p.pid).startswith("*") for p in tagged), "both rows are marked *")
    keys("F9")
    wait_for(lambda s: "Send a signal to 2 tagged processes" in s, "F9: the signal menu for the 2 tagged")
    keys("Enter")
    wait_for(lambda s: "Send SIGTERM to 2 tagged processes?" in s, "Enter: the confirmation")
    keys("y")
    for p in tagged:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        check(p.returncode == -signal.SIGTERM, "the tagged sleeper %d died of SIGTERM (%s)" % (p.pid, p.returncode))
    wait_for(lambda s: "sent SIGTERM to 2 processes" in s, "the result is said")
    s = wait_for(lambda s: all((row(s, p.pid) or "").startswith("X") for p in tagged) and "tagged" not in header_line(s),
                 "their exited rows are there, marked X, and no tag is counted any more")

    # a third, selected, F8: it alone is reniced (the exited rows still listed)
    filter_to(third_arg)
    wait_for(lambda s: row(s, third.pid), "the third sleeper is listed")
    third_nice = nice_of(third.pid)  # what make check's nice gave it
    keys("F8")
    s = wait_for(lambda s: "Renice %d (" % third.pid in s, "F8: the renice dialog is for the selected process alone")
    check(s and "tagged" not in s, "and not for tags of the dead")
    keys("Enter")
    wait_for(lambda s: "reniced 1 process to %d" % (third_nice + 1) in s, "Enter: reniced, one process")
    check(nice_of(third.pid) == third_nice + 1, "the third sleeper's nice is %d (%d)" % (third_nice + 1, nice_of(third.pid)))

    # --- a target that exits while the dialog is open ---
    gone = spawn(["/bin/sleep", gone_arg])
    children.append(gone)
    filter_to(gone_arg)
    wait_for(lambda s: row(s, gone.pid), "a sleeper to kill is listed")
    keys("k")
    wait_for(lambda s: "Send a signal to %d (" % gone.pid in s and "which has exited" not in s,
             "k: the signal menu for it, alive")
    kill_all([gone])
    wait_for(lambda s: re.search(r"Send a signal to %d \(.*\), which has exited" % gone.pid, s),
             "it is killed from outside: the open menu says it has exited")
    keys("Enter", "y")
    wait_for(lambda s: "kill SIGTERM: %d: it has exited" % gone.pid in s, "y: nothing sent, and said why")

    # --- a pid reused while the screen is paused: renice, then kill, each from the old snapshot ---
    def reused_while_paused(arg, new_argv, act):
        """A sleeper listed, the screen paused, the sleeper reaped and a new process made at its
        pid; then act(pid, new) on the paused screen.  False if the pid could not be had again."""
        old = spawn(["/bin/sleep", arg])
        children.append(old)
        keys("U")  # no tags: the selected process is the target (whatever became of the tags above)
        filter_to(arg)
        wait_for(lambda s: row(s, old.pid), "a sleeper whose pid will be reused is listed")
        keys("Z")
        wait_for(lambda s: "PAUSED" in s, "Z: paused, the list stands still")
        pid = old.pid
        kill_all([old])
        time.sleep(0.05)  # a later clock tick: the new process's start time differs
        new = make_at_pid(pid, new_argv)
        if not new:
            print("SKIP (part): could not make a process at pid %d again" % pid)
            keys("Z")
            return False
        children.append(new)
        check(os.readlink("/proc/%d/exe" % pid).endswith("sleep"), "pid %d is a new sleeper now" % pid)
        s = wait_for(lambda s: row(s, pid) and not row(s, pid).startswith("X") and "PAUSED" in s,
                     "paused: the old sleeper is still shown alive")
        check(s and new_argv[-1] not in s, "(the old one: the screen has not seen the new one)")
        act(pid, new)
        check(new.poll() is None, "the new process at pid %d is alive" % pid)
        keys("Escape", "Z")
        wait_for(lambda s: "PAUSED" not in s, "Z: sampling again")
        wait_for(lambda s: (row(s, pid) or "").startswith("X"), "sampling, the old sleeper shows as exited")
        return True

    def renice_reused(pid, new):
        before = nice_of(pid)
        keys("F7")
        wait_for(lambda s: re.search(r"Renice %d \(.*\), which has exited" % pid, s),
                 "F7: the renice dialog says the process shown has exited, though its pid is alive")
        keys("Enter")
        wait_for(lambda s: re.search(r"renice to -?\d+: %d: it has exited" % pid, s), "Enter: not reniced, and said why")
        check(nice_of(pid) == before, "the new process's nice is untouched (%d, was %d)" % (nice_of(pid), before))

    def kill_reused(pid, new):
        keys("k")
        wait_for(lambda s: re.search(r"Send a signal to %d \(.*\), which has exited" % pid, s),
                 "k: the menu says the process shown has exited, though its pid is alive")
        keys("9", "Enter", "y")
        wait_for(lambda s: "kill SIGKILL: %d: it has exited" % pid in s, "SIGKILL: not sent, and said why")
        time.sleep(0.3)

    if os.geteuid() != 0:
        print("SKIP (part): a process at a chosen pid needs root (ns_last_pid)")
    else:
        reused_while_paused(reuse_arg + "1", ["/bin/sleep", new_arg + "1"], renice_reused)
        reused_while_paused(reuse_arg + "2", ["/bin/sleep", new_arg + "2"], kill_reused)

    # --- k on the details page: the process the page shows, not the tagged ones ---
    shown = spawn(["/bin/sleep", detail_arg + "1"])
    tagged_other = spawn(["/bin/sleep", detail_arg + "2"])
    children.extend([shown, tagged_other])
    keys("U")
    filter_to(detail_arg + "2")
    wait_for(lambda s: row(s, tagged_other.pid), "a sleeper to tag is listed")
    keys("Space")
    wait_for(lambda s: re.search(r"\b1 tagged\s*$", header_line(s)), "Space: 1 tagged")
    filter_to(detail_arg + "1")
    wait_for(lambda s: row(s, shown.pid), "the sleeper whose details are shown is listed")
    keys("Enter")
    wait_for(lambda s: re.search(r"^ Process %d\b" % shown.pid, s), "Enter: its details page")
    keys("k")
    s = wait_for(lambda s: "Send a signal to %d (" % shown.pid in s,
                 "k on the details page: the signal menu for the process shown")
    check(s and "tagged" not in s.split("Send a signal", 1)[1].split("\n", 1)[0],
          "and not for the one tagged in the list")
    keys("Escape", "U")

    # --- k on the details page of a process that exited, its pid another's now: nothing to change ---
    def details_kill_reused():
        old = spawn(["/bin/sleep", detail_arg + "3"])
        children.append(old)
        filter_to(detail_arg + "3")
        wait_for(lambda s: row(s, old.pid), "a sleeper whose pid will be reused is listed")
        keys("Enter")
        wait_for(lambda s: re.search(r"^ Process %d\b" % old.pid, s), "Enter: its details page")
        pid = old.pid
        kill_all([old])
        time.sleep(0.05)  # a later clock tick: the new process's start time differs
        # (its arguments match the list's filter too: a lookup by pid alone can find it there)
        new = make_at_pid(pid, ["/bin/sleep", detail_arg + "30"])
        if not new:
            print("SKIP (part): could not make a process at pid %d again" % pid)
            keys("Escape")
            return
        children.append(new)
        wait_for(lambda s: re.search(r"^ Process %d\b" % pid, s) and ("(exited)" in s or "no longer there" in s),
                 "the details page shows its process exited, its pid another's now")
        keys("k")
        wait_for(lambda s: "%d has exited: there is nothing to change" % pid in s,
                 "k: no signal menu, the page's process has exited")
        time.sleep(0.3)
        check(new.poll() is None, "the process now at pid %d is alive" % pid)

    if os.geteuid() != 0:
        print("SKIP (part): a process at a chosen pid needs root (ns_last_pid)")
    else:
        details_kill_reused()

    term.quit()
finally:
    term.tmux("kill-server", must=False)
    kill_all(children)
    subprocess.run(["rm", "-rf", tmp])

sys.exit(finish())
