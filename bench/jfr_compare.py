#!/usr/bin/env python3
"""Compares firn's and JDK Flight Recorder's self shares of Java methods sampled on the same JVM
(bench/java.sh): the top 10 methods of JFR's jdk.ExecutionSample (each >= 1 % of its samples),
each method's share of those methods' samples in both, the difference in percentage points, the
ratio firn/JFR and 3 standard errors of the difference of the two shares (from both counts).
Prints bench result lines (bench/bench_lib.sh: S and V) for bench BENCH and case prefix CASE.

usage: jfr_compare.py BENCH CASE FIRN_STACKS JFR_TEXT
FIRN_STACKS: tests/fixtures/pprof_stacks.py's lines; JFR_TEXT: `jfr print --events
jdk.ExecutionSample`."""
import collections
import math
import re
import sys

JAVA_NAME = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*\.[A-Za-z_$<][\w$<>]*(\([^)]*\))?@[\w$/.]*:[0-9]+$")


def firn_self(path):
    """Each Java method's self samples: the innermost Java frame of each sample."""
    c = collections.Counter()
    for line in open(path):
        _, n, stack = line.rstrip("\n").split(" ", 2)
        names = [f.split("@")[0] for f in stack.split(";") if JAVA_NAME.match(f)]
        if names:
            c[re.sub(r"\(.*", "", names[-1])] += int(n)
    return c


def jfr_self(path):
    """Each method's samples on top of JFR's stack traces."""
    c, top = collections.Counter(), False
    for line in open(path):
        line = line.strip()
        if top:
            c[re.sub(r"\(.*", "", line)] += 1
        top = line == "stackTrace = ["
    return c


def emit(*fields):
    print("@@\t" + "\t".join(str(f) for f in fields))


def main():
    bench, case, firn_path, jfr_path = sys.argv[1:5]
    firn, jfr = firn_self(firn_path), jfr_self(jfr_path)
    jn = sum(jfr.values())
    methods = [m for m, c in jfr.most_common(10) if c >= 0.01 * jn]
    jt, ft = sum(jfr[m] for m in methods), sum(firn[m] for m in methods)
    ok = jt >= 100 and ft >= 100
    emit("V", bench, case, "firn", "ok" if ok else "FAIL",
         "JFR %d and firn %d samples in JFR's top %d methods" % (jt, ft, len(methods)))
    if not ok:
        return
    emit("S", bench, case + ", samples", "firn", "count", ft, "count")
    emit("S", bench, case + ", samples", "JFR", "count", jt, "count")
    for m in methods:
        pj, pf = jfr[m] / jt, firn[m] / ft
        p = (jfr[m] + firn[m]) / (jt + ft)
        se3 = 3 * math.sqrt(p * (1 - p) * (1 / jt + 1 / ft))
        c = "%s, %s" % (case, m)
        emit("S", bench, c, "firn", "self share", "%.2f" % (100 * pf), "%")
        emit("S", bench, c, "JFR", "self share", "%.2f" % (100 * pj), "%")
        emit("S", bench, c, "firn", "|firn - JFR|", "%.2f" % abs(100 * (pf - pj)), "pp")
        emit("T", bench, c, "|firn - JFR|", "max", "3", "within the issue's 3 pp")
        emit("S", bench, c, "firn", "3 se of the difference", "%.2f" % (100 * se3), "pp")
        emit("S", bench, c, "firn", "firn/JFR", "%.3f" % (pf / pj if pj else 0), "x")
        print("%s: JFR %.2f %%, firn %.2f %%, %+.2f pp (3 se %.2f pp), firn/JFR %.3f"
              % (c, 100 * pj, 100 * pf, 100 * (pf - pj), 100 * se3, pf / pj if pj else 0),
              file=sys.stderr)


main()
