#!/usr/bin/env python3
"""Watches a test run for the Swift runtime's lock stall, records it, and ends it.

Usage: scripts/runtime-stall-watch.py ROOT_PID REPORT_PREFIX
(scripts/parallel.sh starts it beside each `swift test`; it exits when
ROOT_PID does.)

The stall: under Thread Sanitizer, with the machine's cores busy, threads
of the test process sleep for minutes in FUTEX_LOCK_PI on a lock of the
Swift runtime (its `once` for a generic type's metadata, or its metadata
caches: the runtime's locks are priority-inheritance futexes on Linux,
and nothing of Spindle's, nor glibc's default mutexes, nor dispatch's,
uses one). The futex word names an owner thread that is no longer inside
the lock (seen idle in dispatch's worker wait), and every thread that
touches the same type's metadata joins the queue, so unrelated tests hang
until their hang guards fire (ten minutes). In the run that was watched,
attaching a debugger ended it: the waits were restarted and the queue
moved. Seen on kernel 6.18 with Swift 6.3.1, in two whole-package runs
under Thread Sanitizer beside two CPU hogs (scripts/parallel.sh); not a
wait of Spindle's, which sleeps on plain futexes (the parker), condition
variables or dispatch semaphores. On an AMD EPYC VM the same stall came
four times in one run, twice on the `once` of a Swift global of Spindle's
that every emit read (23, then 40 threads queued; its owner was running,
calling FUTEX_LOCK_PI again: the attach did not end that one), twice on
the runtime's prespecialized metadata for an array; the tests waiting
behind it failed. That global is now a C one (`spindle_lane_streak`):
the emit path reads it without a lazy initializer.
It does not see every form of the stall: a waiter counts only while it is
asleep in FUTEX_LOCK_PI at every look, and an owner that is itself
running, asking for the lock that names it, is not ended by the attach. That is
why CI runs scripts/parallel.sh --plain (see that script).

Every 10 s this looks at each thread of ROOT_PID and its descendants. A
thread found in FUTEX_LOCK_PI on the same word for SPINDLE_STALL_SECONDS
(default 120; a runtime lock is held for microseconds) is a stall: the
script writes which threads, the futex word and its owner's state to
REPORT_PREFIX.stalls, and every thread's stack (gdb) to
REPORT_PREFIX.stall-N.txt. The attach restarts the waits. It acts only
after such a stall, never on a wait of Spindle's alone. While it is
attached, every thread's wait restarts: a plain futex wait re-checks its
word and sleeps again unless the word changed, so a lost wake-up of
Spindle's (a word left unchanged) stays a hang; one whose word changed
with no wake sent would return. That bug is what the models check, and
the stress suite and the unit tests run without this watcher
(scripts/test.sh, scripts/stress.sh).
"""
import os
import subprocess
import sys
import time

FUTEX_SYSCALL = "202"  # x86_64
FUTEX_LOCK_PI = 6
FUTEX_CMD_MASK = 0x7F  # without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME


def children_of():
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            parents.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError):
            pass
    return parents


def process_tree(root):
    parents = children_of()
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(parents.get(pid, []))
    return tree


def pi_waiters(pid):
    """(tid, futex address) of each thread of `pid` asleep in FUTEX_LOCK_PI."""
    found = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as syscall:
                fields = syscall.read().split()
        except OSError:
            continue
        if len(fields) > 2 and fields[0] == FUTEX_SYSCALL and int(fields[2], 16) & FUTEX_CMD_MASK == FUTEX_LOCK_PI:
            found.append((int(tid), int(fields[1], 16)))
    return found


def futex_word(pid, address):
    try:
        with open(f"/proc/{pid}/mem", "rb") as memory:
            memory.seek(address)
            return int.from_bytes(memory.read(4), "little")
    except OSError:
        return None


def thread_state(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/task/{tid}/syscall") as syscall:
            call = syscall.read().split()
        return f"state {state}, syscall {' '.join(call[:3])}"
    except OSError:
        return "gone"


def main():
    root, prefix = int(sys.argv[1]), sys.argv[2]
    stall_seconds = float(os.environ.get("SPINDLE_STALL_SECONDS", "120"))
    first_seen = {}
    stalls = 0
    while os.path.exists(f"/proc/{root}"):
        now = time.monotonic()
        current = {}
        for pid in process_tree(root):
            for tid, address in pi_waiters(pid):
                key = (pid, tid, address)
                current[key] = first_seen.get(key, now)
        first_seen = current
        stalled = [key for key, since in first_seen.items() if now - since >= stall_seconds]
        if stalled:
            stalls += 1
            pid = stalled[0][0]
            lines = [f"stall {stalls} in process {pid}: {len(stalled)} thread(s) asleep in FUTEX_LOCK_PI "
                     f"for at least {stall_seconds:.0f} s"]
            for address in sorted({key[2] for key in stalled if key[0] == pid}):
                word = futex_word(pid, address)
                waiters = sum(1 for key in stalled if key[0] == pid and key[2] == address)
                if word is None:
                    lines.append(f"  futex {address:#x}: {waiters} waiter(s), word unreadable")
                else:
                    owner = word & 0x3FFFFFFF
                    lines.append(f"  futex {address:#x}: {waiters} waiter(s), word {word:#x}, "
                                 f"owner {owner}: {thread_state(pid, owner)}")
            stacks = f"{prefix}.stall-{stalls}.txt"
            with open(stacks, "w") as out:
                subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"],
                               stdout=out, stderr=subprocess.STDOUT, timeout=600, check=False)
            lines.append(f"  every thread's stack: {stacks} (the attach restarted the waits)")
            with open(f"{prefix}.stalls", "a") as report:
                report.write("\n".join(lines) + "\n")
            first_seen = {}
        time.sleep(10)


if __name__ == "__main__":
    main()
