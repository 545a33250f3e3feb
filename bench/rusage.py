#!/usr/bin/env python3
"""Runs a command and writes its resource use, for firn's benchmarks against perf.

usage: rusage.py OUT [--pidfile FILE] -- COMMAND [ARGS...]

Writes one line to OUT when COMMAND ends: "STATUS WALL_S USER_S SYS_S MAXRSS_KB" (wall from a
monotonic clock, CPU times from wait4 with microsecond resolution, GNU time's are 10 ms; STATUS is
the exit status, or 128+N for signal N). --pidfile gets the command's pid as soon as it runs, so a
script can signal the command itself (this process ignores SIGINT and SIGTERM and just waits)."""
import os
import signal
import sys
import time


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--" not in args:
        sys.stderr.write(__doc__)
        return 2
    out, pidfile = args[0], None
    opts, cmd = args[1:args.index("--")], args[args.index("--") + 1:]
    if opts[:1] == ["--pidfile"] and len(opts) == 2:
        pidfile = opts[1]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            sys.stderr.write("rusage.py: cannot run '%s': %s\n" % (cmd[0], e.strerror))
        os._exit(127)
    if pidfile:
        with open(pidfile + ".tmp", "w") as f:
            f.write("%d\n" % pid)
        os.rename(pidfile + ".tmp", pidfile)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    rc = 128 - rc if rc < 0 else rc
    with open(out, "w") as f:
        f.write("%d %.6f %.6f %.6f %d\n" % (rc, wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
    return rc


if __name__ == "__main__":
    sys.exit(main())
