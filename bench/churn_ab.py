# A/B of two firn builds under process churn: both record -a at once over the same loop of
# short programs (tests/fixtures/shortlived 15, as bench/churn.sh), and each one's CPU
# (user+sys, from wait4) is printed. Usage: python3 bench/churn_ab.py FIRN_A FIRN_B (SECS,
# default 20; BUILD, default build). Run it with the order swapped too: the first one started
# learns the loop's processes a little earlier.
import os, subprocess, sys, time
bins = sys.argv[1:]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
short = os.path.join(root, os.environ.get("BUILD", "build"), "fixtures", "shortlived")
secs = int(os.environ.get("SECS", "20"))
loop = subprocess.Popen(["bash", "-c", "end=$((SECONDS+%d)); while [ $SECONDS -lt $end ]; do %s 15; done" % (secs + 2, short)])
time.sleep(0.5)
ps = {}
for i, b in enumerate(bins):
    ps[subprocess.Popen([b, "record", "-a", "-F", "99", "-q", "-o", "/tmp/cab%d.pb" % i, "-d", str(secs)]).pid] = b
out = {}
while ps:
    pid, st, ru = os.wait4(-1, 0)
    if pid in ps:
        out[ps.pop(pid)] = ru.ru_utime + ru.ru_stime
loop.wait()
print(" ".join("%s=%.3f" % (os.path.basename(b), out[b]) for b in bins))
