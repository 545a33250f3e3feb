#!/usr/bin/env python3
"""Turns the result lines of firn's benchmarks (bench/bench_lib.sh describes them) into the
Markdown block that bench/run puts in bench/RESULTS.md: one table per bench (medians with their
min-max spread over the repetitions, the ratio reference/firn, the target and whether firn met
it), the exact commands, the output checks and the notes.

usage: results.py RESULTS.TSV [OTHER.txt ...] > block.md
Lines "M key value" give the machine; OTHER.txt files are other scripts' outputs, shown verbatim
(their first line is "# command: ...", their second "# status: ...")."""
import statistics
import sys

BASE = "none"
NO_RATIO = ("%", "MB/min", "rows", "count")


def fnum(x):
    """A number for a table cell: integers with thousands separators, else 3-4 significant digits."""
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1000:
        return "{:,.0f}".format(x)
    if a >= 100:
        return "%.0f" % x
    if a >= 10:
        return "%.1f" % x
    if a >= 1:
        return "%.2f" % x
    return "%.3g" % x


def cell(vals):
    """median [min-max] n=N"""
    if not vals:
        return "—"
    m = statistics.median(vals)
    if len(vals) == 1:
        return "%s (n=1)" % fnum(m)
    return "%s [%s–%s] n=%d" % (fnum(m), fnum(min(vals)), fnum(max(vals)), len(vals))


class Bench:
    def __init__(self, name):
        self.name, self.title = name, name
        self.rows = {}        # (case, metric) -> {tool: [values]}
        self.units = {}       # metric -> unit
        self.tools = []
        self.commands = {}    # (case, tool) -> command
        self.checks = {}      # (case, tool) -> [(status, detail)]
        self.targets = {}     # (case, metric) -> [(kind, a1, a2, text, refcase)]
        self.notes = []


def load(path):
    """Reads result lines; returns (machine dict, ordered benches)."""
    machine, benches = [], {}

    def bench(name):
        if name not in benches:
            benches[name] = Bench(name)
        return benches[name]

    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.rstrip("\n").split("\t")
        if f and f[0] == "@@":
            f = f[1:]
        if not f:
            continue
        k = f[0]
        if k == "M" and len(f) >= 3:
            machine.append((f[1], f[2]))
        elif k == "H" and len(f) >= 3:
            bench(f[1]).title = f[2]
        elif k == "S" and len(f) >= 7:
            b = bench(f[1])
            try:
                v = float(f[5])
            except ValueError:
                continue
            b.rows.setdefault((f[2], f[4]), {}).setdefault(f[3], []).append(v)
            b.units[f[4]] = f[6]
            if f[3] not in b.tools:
                b.tools.append(f[3])
        elif k == "C" and len(f) >= 5:
            bench(f[1]).commands[(f[2], f[3])] = f[4]
        elif k == "V" and len(f) >= 6:
            bench(f[1]).checks.setdefault((f[2], f[3]), []).append((f[4], f[5]))
        elif k == "T" and len(f) >= 7:
            t = bench(f[1]).targets.setdefault((f[2], f[3]), [])
            a1, a2 = (f[5].split(" ", 1) + [""])[:2] if f[4] in ("ratio", "times") else (f[5], "")
            tg = (f[4], a1, a2, f[6], f[7] if len(f) >= 8 and f[7] else f[2])
            if tg not in t:
                t.append(tg)
        elif k == "N" and len(f) >= 3:
            b = bench(f[1])
            if f[2] not in b.notes:
                b.notes.append(f[2])
    return machine, list(benches.values())


def ref_tool(kind, a1, a2):
    """The reference tool a target compares firn with (None for an absolute target)."""
    return {"ratio": a2, "times": a2, "below": a1}.get(kind)


def ref_figures(b, metric, tg):
    """The reference tool's figures for target tg: its row in the target's reference case."""
    kind, a1, a2, _, refcase = tg
    return b.rows.get((refcase, metric), {}).get(ref_tool(kind, a1, a2)) or []


def judge(b, case, metric, tg):
    """Whether firn's median meets one target: 'yes', 'NO: ...' or '?' (a figure is missing)."""
    kind, a1, a2, _, refcase = tg
    firn = b.rows.get((case, metric), {}).get("firn")
    if not firn:
        return "? (no firn figure)"
    f = statistics.median(firn)
    if kind == "max":
        lim = float(a1)
        return "yes" if f <= lim else "NO: %s× the target" % fnum(f / lim if lim else float("inf"))
    if kind == "flat":
        lim = float(a1)
        return "yes" if abs(f) <= lim else "NO: %s per min" % fnum(f)
    ref = ref_figures(b, metric, tg)
    if not ref:
        return "? (no %s figure%s)" % (ref_tool(kind, a1, a2), "" if refcase == case else " for " + refcase)
    r = statistics.median(ref)
    if kind == "ratio":
        got = r / f if f else float("inf")
        return "yes (×%s)" % fnum(got) if got >= float(a1) else "NO: ×%s of ×%s" % (fnum(got), a1)
    if kind == "times":
        got = f / r if r else float("inf")
        return "yes (%s×)" % fnum(got) if got <= float(a1) else "NO: %s×, above %s×" % (fnum(got), a1)
    if kind == "below":
        return "yes" if f < r else "NO: %s× %s's" % (fnum(f / r if r else float("inf")), a1)
    return "?"


def ratios(b, row, unit):
    """reference/firn for each reference tool of the row ('—' for percentages)."""
    firn = row.get("firn")
    if unit in NO_RATIO or not firn or statistics.median(firn) == 0:
        return "—"
    f = statistics.median(firn)
    out = []
    for t in b.tools:
        if t in ("firn", BASE) or t not in row:
            continue
        out.append("%s ×%s" % (t, fnum(statistics.median(row[t]) / f)))
    return ", ".join(out) or "—"


def render_bench(b, out):
    out.append("### %s\n" % b.title)
    tools = ([BASE] if BASE in b.tools else []) + ["firn"] + [t for t in b.tools if t not in ("firn", BASE)]
    head = ["case", "metric"] + tools + ["ratio ref/firn", "target", "met?"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for (case, metric), row in b.rows.items():
        unit = b.units.get(metric, "")
        tg = b.targets.get((case, metric), [])
        cells = [case, metric] + [cell(row.get(t, [])) for t in tools]
        cells.append(ratios(b, row, unit))
        cells.append("; ".join(t[3] for t in tg) or "—")
        cells.append("; ".join(judge(b, case, metric, t) for t in tg) or "—")
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    for (case, metric), tg in b.targets.items():
        if (case, metric) not in b.rows:
            out.append("\nTarget without any valid measurement: %s, %s (%s)." %
                       (case, metric, "; ".join(t[3] for t in tg)))
    out.append("")
    if b.notes:
        out.extend("- " + n for n in b.notes)
        out.append("")
    if b.commands:
        out.append("Commands (OUT = the output file; `&` = started first, in the background):\n")
        for (case, tool), c in b.commands.items():
            out.append("- %s, %s: `%s`" % (case, tool, c))
        out.append("")
    if b.checks:
        nok = sum(1 for v in b.checks.values() for s, _ in v if s == "ok")
        nfail = sum(1 for v in b.checks.values() for s, _ in v if s != "ok")
        out.append("Output checks (%d passed, %d failed; a failed run reports no figures):\n" % (nok, nfail))
        for (case, tool), v in b.checks.items():
            fails = [d for s, d in v if s != "ok"]
            oks = [d for s, d in v if s == "ok"]
            line = "- %s, %s: %d ok" % (case, tool, len(oks))
            if oks:
                line += " (last: %s)" % oks[-1]
            if fails:
                line += "; **%d FAILED**: %s" % (len(fails), " / ".join(fails))
            out.append(line)
        out.append("")


def render_targets(benches, out):
    """Every target in one table: firn's median, the target, whether it was met."""
    rows = []
    for b in benches:
        for (case, metric), tg in b.targets.items():
            f = b.rows.get((case, metric), {}).get("firn")
            unit = b.units.get(metric, "")
            for t in tg:
                kind, a1, a2, text, refcase = t
                ref = "—"
                if ref_tool(kind, a1, a2):
                    r = ref_figures(b, metric, t)
                    ref = "%s%s: %s" % (ref_tool(kind, a1, a2), "" if refcase == case else " (%s)" % refcase,
                                        fnum(statistics.median(r)) if r else "—")
                rows.append("| %s | %s, %s | %s | %s | %s | %s |" % (
                    b.title.split(":")[0], case, metric, text.replace("|", "\\|"),
                    fnum(statistics.median(f)) + " " + unit if f else "—", ref, judge(b, case, metric, t)))
    if not rows:
        return
    out.append("### Targets at a glance\n")
    out.append("| bench | case, metric | target | firn (median) | reference (median) | met? |")
    out.append("|---|---|---|---|---|---|")
    out.extend(rows)
    out.append("")


def render_other(path, out):
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    cmd = lines[0][len("# command: "):] if lines and lines[0].startswith("# command: ") else path
    status = lines[1][2:] if len(lines) > 1 and lines[1].startswith("# ") else ""
    out.append("### `%s`\n" % cmd)
    out.append("%s\n" % status)
    out.append("```")
    out.extend(lines[2:])
    out.append("```\n")


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    machine, benches = load(sys.argv[1])
    out = []
    if machine:
        out.append("| machine | |")
        out.append("|---|---|")
        out.extend("| %s | %s |" % (k, v.replace("|", "\\|")) for k, v in machine)
        out.append("")
    render_targets(benches, out)
    for b in benches:
        render_bench(b, out)
    others = sys.argv[2:]
    if others:
        out.append("### Other benches run by bench/run (their own output, verbatim)\n")
        for p in others:
            render_other(p, out)
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
