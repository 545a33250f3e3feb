# Bench fixture (bench/python.sh): THREADS threads (argv[1], default 2), each spinning forever at
# the bottom of a recursion of 28 calls of down() under run() and <module>: 30 Python frames.
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


def run():
    down(27)


ts = [threading.Thread(target=run) for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2)]
for t in ts:
    t.start()
run()
