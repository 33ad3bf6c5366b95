#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times command A against baseline B, side by side, and reports medians.

    measure.py run --name NAME --a-label L --b-label L --runs N [--warmup W]
               [--rounds R] [--shell] [--tool hyperfine|python]
               [--target-kind delta|ratio|same|info --target X --target-text T]
               --out FILE -- CMD_A -- CMD_B
    measure.py table FILE
    measure.py growth FILE
    measure.py faults -- CMD [ARGS...]

With hyperfine, the runs are split into R rounds of N/R runs of each
command (hyperfine runs A's block, then B's), so both see the same machine
state; the per-run times of every round are pooled. Without it, a python3
loop alternates A B B A … on its own. Either way A and B are run once first
and must exit 0 or 1 (ralon's "fine" and "protected"), never 2 (an error
would be timed instead of the work). Commands are split like a shell
would, or run by /bin/sh with --shell (needed for pipes).

Beside the medians it reports a 95 % bootstrap interval of their
difference (delta_ci_ms): a target missed or met by less than that
interval's half-width is within the machine's noise.

Each benchmark appends one line of `key=value` pairs to FILE, values quoted
as a POSIX shell would (python: shlex.split); `table` prints them as a
table. `growth` reads benchmark 4's lines back and prints what each added
protected path costs between consecutive sizes (ralon, the floor, bwrap,
and ralon's own share: ralon minus the floor, with its 95 % interval),
with a verdict on whether ralon's own share grows at most linearly
("inconclusive" where only the noise would decide). `faults` prints the median page faults of 5 runs of one command
(the whole process, what it executes included), which unlike a time do
not move with the machine's load.
"""
import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def argv_of(cmd, shell):
    return ["/bin/sh", "-c", cmd] if shell else shlex.split(cmd)


def spawn(argv):
    """One run, output discarded: wall time in seconds, exit status, and
    the child's resource usage (page faults among them)."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        start = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0] if "/" in argv[0] else shutil.which(argv[0]), argv,
                             os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 0),
                                                       (os.POSIX_SPAWN_DUP2, null, 1),
                                                       (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status, usage = os.wait4(pid, 0)
        elapsed = time.perf_counter_ns() - start
    finally:
        os.close(null)
    return elapsed / 1e9, os.waitstatus_to_exitcode(status), usage


def run_once(argv):
    """Wall time of one run in seconds, and its exit status."""
    elapsed, code, _ = spawn(argv)
    return elapsed, code


def cmd_faults(o):
    """The median page faults of 5 runs of a whole process (the command and
    whatever it executes), or "?" when it fails."""
    counts = []
    for _ in range(5):
        _, code, usage = spawn(o.command)
        if code not in (0, 1):
            print("?")
            return
        counts.append(usage.ru_minflt)
    print(int(statistics.median(counts)))


def sanity(cmd, shell):
    p = subprocess.run(argv_of(cmd, shell), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):
        sys.exit("measure: `%s` exits %d, not 0 or 1:\n%s" % (cmd, p.returncode,
                                                               p.stderr.decode(errors="replace")))


def time_python(a, b, runs, warmup, shell):
    argv_a, argv_b = argv_of(a, shell), argv_of(b, shell)
    for _ in range(warmup):
        run_once(argv_a)
        run_once(argv_b)
    ta, tb = [], []
    for i in range(runs):
        # A B, then B A: neither always goes first.
        order = ((argv_a, ta), (argv_b, tb)) if i % 2 == 0 else ((argv_b, tb), (argv_a, ta))
        for argv, times in order:
            times.append(run_once(argv)[0])
    return ta, tb


def time_hyperfine(a, b, runs, warmup, rounds, shell):
    rounds = max(1, min(rounds, runs))
    per_round = max(2, runs // rounds)
    ta, tb = [], []
    with tempfile.TemporaryDirectory(prefix="ralon-measure-") as tmp:
        for r in range(rounds):
            out = os.path.join(tmp, "round%d.json" % r)
            cmd = ["hyperfine", "--style", "none", "--ignore-failure", "--runs", str(per_round),
                   "--warmup", str(warmup if r == 0 else max(1, warmup // 4)),
                   "--export-json", out]
            if not shell:
                cmd.append("--shell=none")
            # Alternate which command goes first in a round.
            cmd += [a, b] if r % 2 == 0 else [b, a]
            # hyperfine's own warnings (non-zero exits, outliers) would drown
            # the summary: keep them for when it fails.
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode != 0:
                sys.exit("measure: hyperfine failed:\n" + p.stderr.decode(errors="replace"))
            with open(out) as f:
                res = json.load(f)["results"]
            by_cmd = {x["command"]: x["times"] for x in res}
            ta += by_cmd[a]
            tb += by_cmd[b]
    return ta, tb


def delta_ci(ta, tb, resamples=1000):
    """A 95 % bootstrap interval of median(A) - median(B) in ms: how far
    the difference could move with the machine's noise alone. Seeded, so
    the same times give the same interval."""
    rng = random.Random(0)
    na, nb = len(ta), len(tb)
    ds = sorted(
        (statistics.median(rng.choices(ta, k=na)) - statistics.median(rng.choices(tb, k=nb))) * 1e3
        for _ in range(resamples))
    return ds[int(0.025 * resamples)], ds[int(0.975 * resamples) - 1]


def quartiles(xs):
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def slow_runs(times, median_ms):
    """How many runs took more than twice the median: a tail the median
    does not show (a grace period the kernel waits for in some runs)."""
    return sum(1 for t in times if t * 1e3 > 2 * median_ms)


def tail(times, median_ms):
    n = slow_runs(times, median_ms)
    if n == 0:
        return ""
    return "; mean %.3f, %d of %d runs over twice the median" % (
        statistics.mean(times) * 1e3, n, len(times))


def cmd_run(o):
    for c in (o.a, o.b):
        sanity(c, o.shell)
    tool = o.tool
    if tool == "hyperfine" and shutil.which("hyperfine") is None:
        tool = "python"
    if tool == "hyperfine":
        ta, tb = time_hyperfine(o.a, o.b, o.runs, o.warmup, o.rounds, o.shell)
    else:
        ta, tb = time_python(o.a, o.b, o.runs, o.warmup, o.shell)
    ma, mb = statistics.median(ta) * 1e3, statistics.median(tb) * 1e3
    qa, qb = quartiles([t * 1e3 for t in ta]), quartiles([t * 1e3 for t in tb])
    ratio = ma / mb if mb > 0 else float("inf")
    delta = ma - mb
    ci = delta_ci(ta, tb)
    if o.target_kind == "delta":
        ok = delta <= o.target
    elif o.target_kind == "ratio":
        ok = ratio <= o.target
    elif o.target_kind == "same":
        # A and B are the same command on two inputs: within X ms or 10 %.
        ok = abs(delta) <= max(o.target, 0.10 * mb)
    else:
        ok = None
    verdict = "info" if ok is None else ("ok" if ok else "MISSED")
    fields = [
        ("bench", o.name), ("a", o.a_label), ("b", o.b_label),
        ("a_median_ms", "%.3f" % ma), ("b_median_ms", "%.3f" % mb),
        ("ratio", "%.3f" % ratio), ("delta_ms", "%.3f" % delta),
        ("delta_ci_ms", "%.3f..%.3f" % ci),
        ("a_iqr_ms", "%.3f-%.3f" % qa), ("b_iqr_ms", "%.3f-%.3f" % qb),
        ("a_mean_ms", "%.3f" % (statistics.mean(ta) * 1e3)),
        ("b_mean_ms", "%.3f" % (statistics.mean(tb) * 1e3)),
        ("a_slow", str(slow_runs(ta, ma))), ("b_slow", str(slow_runs(tb, mb))),
        ("runs", str(len(ta))), ("tool", tool),
        ("target", o.target_text or "-"), ("result", verdict),
    ]
    line = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in fields)
    with open(o.out, "a") as f:
        f.write(line + "\n")
    print("  %-34s %10.3f ms  (IQR %s%s)" % (o.a_label, ma, "%.3f-%.3f" % qa, tail(ta, ma)))
    print("  %-34s %10.3f ms  (IQR %s%s)" % (o.b_label, mb, "%.3f-%.3f" % qb, tail(tb, mb)))
    print("  ratio %.3f, difference %+.3f ms (95%% CI %+.3f to %+.3f) over %d runs each [%s]; "
          "target: %s -> %s" % (ratio, delta, ci[0], ci[1], len(ta), tool,
                                o.target_text or "none", verdict))


def cmd_table(o):
    rows = read_rows(o.file)
    head = ("benchmark", "A", "A median ms", "B (baseline)", "B median ms", "A/B", "A-B ms",
            "A-B 95% CI", "target", "result")
    # Lines written before the interval was recorded show "-".
    table = [head] + [(r["bench"], r["a"], r["a_median_ms"], r["b"], r["b_median_ms"], r["ratio"],
                       r["delta_ms"], r.get("delta_ci_ms", "-"), r["target"], r["result"])
                      for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for n, row in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def read_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rows.append(dict(kv.split("=", 1) for kv in shlex.split(line)))
    return rows


# ralon's own share may cost this much more per added path at a larger
# step than at a smaller one (plus a microsecond) and still count as
# linear.
GROWTH_TOLERANCE = 1.25


def growth(rows):
    """Per added path, between consecutive sizes of benchmark 4: for each
    backend, (backend, n1, n2, ralon, floor, bwrap, own, own_lo, own_hi) in
    microseconds, None where a row is missing. `own` is ralon minus the
    floor, timed in the same block of runs (the `-floor` rows), so the
    machine's drift between blocks does not enter it; own_lo..own_hi is
    how far it could move with the noise, from the 95 % intervals of the
    two differences (delta_ci_ms)."""
    by = {}
    for r in rows:
        parts = r["bench"].split("-")
        if len(parts) != 4 or parts[0] != "run" or not parts[2].isdigit():
            continue
        _, backend, n, base = parts
        entry = by.setdefault(backend, {}).setdefault(int(n), {})
        lo, _, hi = r.get("delta_ci_ms", "").partition("..")
        a, b = float(r["a_median_ms"]), float(r["b_median_ms"])
        try:
            ci = (float(lo), float(hi))
        except ValueError:  # lines written before the interval was recorded
            ci = (a - b, a - b)
        entry[base] = (a, b, ci)
    out = []
    for backend in sorted(by):
        sizes = sorted(by[backend])
        for n1, n2 in zip(sizes, sizes[1:]):
            e1, e2 = by[backend][n1], by[backend][n2]
            step = (n2 - n1) / 1e3  # ms -> us per path

            def per_path(base, pick):
                if base not in e1 or base not in e2:
                    return None
                return (pick(e2[base]) - pick(e1[base])) / step

            own, own_lo, own_hi = None, None, None
            if "floor" in e1 and "floor" in e2:
                own = per_path("floor", lambda x: x[0] - x[1])
                own_lo = (e2["floor"][2][0] - e1["floor"][2][1]) / step
                own_hi = (e2["floor"][2][1] - e1["floor"][2][0]) / step
            out.append((backend, n1, n2, per_path("floor", lambda x: x[0]),
                        per_path("floor", lambda x: x[1]), per_path("bwrap", lambda x: x[1]),
                        own, own_lo, own_hi))
    return out


def growth_verdict(earlier_hi, later, later_lo):
    """Whether ralon's own share grows at most linearly from one step to
    the next: judged against the most the earlier step could have cost.
    "inconclusive" where only the noise decides."""
    bound = max(earlier_hi, 0.0) * GROWTH_TOLERANCE + 1.0
    if later_lo > bound:
        return "GROWS FASTER THAN LINEAR"
    if later <= bound:
        return "at most linear"
    return "inconclusive (within the noise)"


def literal_growth(rows):
    """Benchmark 7 (many literal patterns vs one glob over the same files):
    for each command, between consecutive sizes, what each added pattern
    costs beyond the glob, in microseconds: the change of A-B (timed side
    by side, so the drift between blocks of runs does not enter it) over
    the patterns added, with the interval the two differences' 95 %
    intervals allow. (command, n1, n2, ratio1, ratio2, own, own_lo,
    own_hi)."""
    by = {}
    for r in rows:
        parts = r["bench"].split("-")
        if len(parts) != 3 or parts[0] != "literals" or not parts[2].isdigit():
            continue
        lo, _, hi = r.get("delta_ci_ms", "").partition("..")
        d = float(r["delta_ms"])
        try:
            ci = (float(lo), float(hi))
        except ValueError:
            ci = (d, d)
        by.setdefault(parts[1], {})[int(parts[2])] = (float(r["ratio"]), d, ci)
    out = []
    for cmd in sorted(by):
        sizes = sorted(by[cmd])
        for n1, n2 in zip(sizes, sizes[1:]):
            e1, e2 = by[cmd][n1], by[cmd][n2]
            step = (n2 - n1) / 1e3  # ms -> us per pattern
            out.append((cmd, n1, n2, e1[0], e2[0], (e2[1] - e1[1]) / step,
                        (e2[2][0] - e1[2][1]) / step, (e2[2][1] - e1[2][0]) / step))
    return out


def cmd_growth(o):
    rows = read_rows(o.file)
    steps = growth(rows)
    literal_steps = literal_growth(rows)
    fmt = lambda v: "-" if v is None else "%.1f" % v
    if not steps and not literal_steps:
        print("  (no sizes of benchmark 4 to compare)")
        return
    if steps:
        print("  per added protected path, us (ralon's own = ralon - the floor, timed side by side,"
              " with its 95% interval):")
    last = {}
    for backend, n1, n2, ralon, floor, bwrap, own, own_lo, own_hi in steps:
        verdict = ""
        if own is not None and backend in last:
            verdict = "  -> " + growth_verdict(last[backend], own, own_lo)
        if own is not None:
            last[backend] = own_hi
        interval = "" if own is None else " (%s..%s)" % (fmt(own_lo), fmt(own_hi))
        print("  %-8s %5d -> %-5d ralon %7s  floor %7s  bwrap %9s  ralon's own %6s%s%s" %
              (backend, n1, n2, fmt(ralon), fmt(floor), fmt(bwrap), fmt(own), interval, verdict))
    if literal_steps:
        print("  per added literal pattern, us (literals - one glob over the same files, timed"
              " side by side, with its 95% interval; ratio literals/glob at each size):")
    last = {}
    for cmd, n1, n2, r1, r2, own, own_lo, own_hi in literal_steps:
        verdict = ""
        if cmd in last:
            verdict = "  -> " + growth_verdict(last[cmd], own, own_lo)
        last[cmd] = own_hi
        print("  %-9s %5d -> %-5d ratio %5.2f -> %5.2f  per pattern %6s (%s..%s)%s" %
              (cmd, n1, n2, r1, r2, fmt(own), fmt(own_lo), fmt(own_hi), verdict))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--name", required=True)
    r.add_argument("--a-label", required=True)
    r.add_argument("--b-label", required=True)
    r.add_argument("--runs", type=int, required=True)
    r.add_argument("--warmup", type=int, default=5)
    r.add_argument("--rounds", type=int, default=5)
    r.add_argument("--shell", action="store_true")
    r.add_argument("--tool", choices=("hyperfine", "python"), default="hyperfine")
    r.add_argument("--target-kind", choices=("delta", "ratio", "same", "info"), default="info")
    r.add_argument("--target", type=float, default=0.0)
    r.add_argument("--target-text", default="")
    r.add_argument("--out", required=True)
    r.add_argument("commands", nargs=argparse.REMAINDER)
    t = sub.add_parser("table")
    t.add_argument("file")
    g = sub.add_parser("growth")
    g.add_argument("file")
    f = sub.add_parser("faults")
    f.add_argument("command", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    if o.cmd == "table":
        return cmd_table(o)
    if o.cmd == "growth":
        return cmd_growth(o)
    if o.cmd == "faults":
        if o.command[:1] == ["--"]:
            o.command = o.command[1:]
        if not o.command:
            ap.error("expected: faults -- CMD [ARGS...]")
        return cmd_faults(o)
    cmds = o.commands
    if len(cmds) != 4 or cmds[0] != "--" or cmds[2] != "--":
        ap.error("expected: -- CMD_A -- CMD_B")
    o.a, o.b = cmds[1], cmds[3]
    cmd_run(o)


if __name__ == "__main__":
    main()
