#!/usr/bin/env python3
"""CPU seconds of a command and of every process it starts, with its wall time and the load average.

    python3 scripts/cpu-seconds.py LABEL COMMAND [ARG ...]

`/usr/bin/time` misses most of a Playwright run: Chromium's renderer and GPU processes outlive the
browser process that started them and are reaped by init, so their CPU is never added to the
command's. Here the command runs under a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER):
orphaned descendants are re-parented to this process and waited for, so RUSAGE_CHILDREN at the
end holds all of them. Prints one line; exits with the command's status.
"""

import ctypes
import os
import resource
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def load_average() -> str:
    with open('/proc/loadavg') as f:
        return ' '.join(f.read().split()[:3])


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    label, cmd = sys.argv[1], sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_CHILD_SUBREAPER) failed')
    before = load_average()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    status = 1
    while True:  # until the command and every orphan it left have ended
        try:
            done, raw, _ = os.wait4(-1, 0)
        except ChildProcessError:
            break
        if done == pid:
            status = os.waitstatus_to_exitcode(raw)
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    print(f'{label}: exit {status}, {wall:.0f} s wall, {cpu:.0f} s CPU (user {ru.ru_utime:.0f}, system {ru.ru_stime:.0f}); load average {before} before, {load_average()} after')
    return status


if __name__ == '__main__':
    sys.exit(main())
