# Bench fixture (bench/python.sh): THREADS threads (argv[1], default 2), each spinning forever at
# the bottom of a recursion of DOWN calls of down() (argv[2], default 28) under run() and
# <module>: DOWN + 2 Python frames.
import sys
import threading


def spin():
    while True:
        s = 0
        for i in range(1000):
            s += i


def down(n):
    if n:
        return down(n - 1)
    spin()


DOWN = int(sys.argv[2]) if len(sys.argv) > 2 else 28
sys.setrecursionlimit(DOWN + 100)


def run():
    down(DOWN - 1)


ts = [threading.Thread(target=run) for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2)]
for t in ts:
    t.start()
run()
