#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark 6: the mount backend's guard, measured from outside.

  stop      how long the guard takes from an unannounced replacement of a
            protected file (the rename(2) outside returning) to the end of
            `ralon run` (every process of the sandbox gone): median and
            worst of N
  race      how often an agent writing the protected path in a tight shell
            loop gets a write into the new file before the stop, per kind
            of outside change, out of N
  pause     how long `ralon pause -- true` takes against one running
            sandbox (freeze, run, re-protect, thaw): median and worst of N
  growth    how that grows with what the sandbox holds: processes (each
            frozen, and each one's descriptors checked on resume), open
            descriptors, and threads (each held while frozen); medians of
            N / 5 at each size, with `bench/holder.c` as the load

    bench/guard.py RALON [N]    (default N = 100)

Prints a summary and `key=value` lines for bench/out/results.txt. Runs as
the invoking user, in a fresh project under $TMPDIR. Never a pass/fail
gate.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MARK = "RACER"
CHANGES = {
    "rename_over": "cp Cargo.lock x.tmp && echo new >> x.tmp && mv x.tmp Cargo.lock",
    "sed_i": "sed -i s/lock/LOCK/ Cargo.lock",
    "backup_by_rename": "mv Cargo.lock Cargo.lock~ && echo new > Cargo.lock",
    "directory_recreated": "rm -rf golden && mkdir -p golden && echo regenerated > golden/a.txt",
}


def project(base):
    proj = os.path.join(base, "proj")
    os.makedirs(os.path.join(proj, "golden"))
    for rel, text in (("agent.lock", "protect: [Cargo.lock, golden]\n"),
                      ("Cargo.lock", "# lock\n"), ("golden/a.txt", "golden\n"),
                      ("README.md", "readme\n")):
        with open(os.path.join(proj, rel), "w") as f:
            f.write(text)
    return proj


def start(ralon, proj, script, ready_first=True):
    ready = os.path.join(proj, "..", "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    if ready_first:
        script = 'touch ../ready; ' + script
    p = subprocess.Popen([ralon, "run", "-q", "--backend", "mount", "--", "sh", "-c", script],
                         cwd=proj, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not os.path.exists(ready):
        if p.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("bench: the sandbox did not start: %s" % p.stderr.read().decode())
        time.sleep(0.001)
    return p


def reset(base):
    shutil.rmtree(os.path.join(base, "proj"))
    return project(base)


def stop_latency(ralon, base, n):
    times = []
    for _ in range(n):
        proj = reset(base)
        p = start(ralon, proj, "exec sleep 60")
        with open(os.path.join(proj, "x.tmp"), "w") as f:
            f.write("new\n")
        t0 = time.perf_counter()
        os.rename(os.path.join(proj, "x.tmp"), os.path.join(proj, "Cargo.lock"))
        rc = p.wait()
        times.append((time.perf_counter() - t0) * 1000)
        p.stderr.close()
        if rc != 125:
            raise SystemExit("bench: the guard did not stop the sandbox (exit %d)" % rc)
    return times


def race(ralon, base, n):
    wins = {}
    for name, change in CHANGES.items():
        target = "golden/a.txt" if name == "directory_recreated" else "Cargo.lock"
        extra = "mkdir -p golden;" if name == "directory_recreated" else ""
        won = 0
        for _ in range(n):
            proj = reset(base)
            p = start(ralon, proj, "while :; do { %s echo %s >> %s; } 2>/dev/null; done"
                      % (extra, MARK, target))
            subprocess.run(["sh", "-c", change], cwd=proj, check=True)
            p.wait()
            p.stderr.close()
            try:
                with open(os.path.join(proj, target)) as f:
                    won += MARK in f.read()
            except OSError:
                pass
        wins[name] = won
    return wins


def pauses(ralon, proj, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = subprocess.run([ralon, "pause", "--", "true"], cwd=proj, capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
        if r.returncode != 0 or b"1 sandbox(es) thawed" not in r.stdout:
            raise SystemExit("bench: pause failed: %r" % (r,))
    return times


def pause_time(ralon, base, n):
    proj = reset(base)
    p = start(ralon, proj, "exec sleep 600")
    times = pauses(ralon, proj, n)
    # The baseline: the same command without a pause.
    base_times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(["true"])
        base_times.append((time.perf_counter() - t0) * 1000)
    p.terminate()
    p.wait()
    p.stderr.close()
    return times, base_times


# (processes, descriptors each, threads each): one input grown at a time.
GROWTH = [(1, 3, 1), (10, 3, 1), (100, 3, 1),
          (1, 100, 1), (1, 1000, 1), (1, 10000, 1),
          (1, 3, 10), (1, 3, 100), (1, 3, 1000)]


def holder(base):
    exe = os.path.join(base, "holder")
    src = os.path.join(os.path.dirname(os.path.realpath(__file__)), "holder.c")
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-pthread", "-o", exe, src], check=True)
    return exe


def pause_growth(ralon, base, n):
    exe = holder(base)
    rows = []
    for procs, fds, threads in GROWTH:
        proj = reset(base)
        held = os.path.join(base, "held")
        shutil.rmtree(held, ignore_errors=True)
        os.mkdir(held)
        script = ('ulimit -n %d; i=0; while [ $i -lt %d ]; do %s %d %d %s/$i & i=$((i+1)); done; '
                  'while [ $(ls %s | wc -l) -lt %d ]; do sleep 0.01; done; touch ../ready; wait'
                  % (fds + 64, procs, exe, fds, threads, held, held, procs))
        p = start(ralon, proj, script, ready_first=False)
        times = pauses(ralon, proj, max(5, n // 5))
        p.terminate()
        p.wait()
        p.stderr.close()
        rows.append((procs, fds, threads, statistics.median(times), max(times)))
    return rows


def main():
    ralon = os.path.realpath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    base = tempfile.mkdtemp(prefix="ralon-bench-guard-")
    try:
        project(base)
        stops = stop_latency(ralon, base, n)
        wins = race(ralon, base, n)
        pause_ms, trues = pause_time(ralon, base, n)
        growth = pause_growth(ralon, base, n)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("6. the mount backend's guard (%d tries each)" % n)
    print("   unannounced replacement -> sandbox gone: median %.2f ms, worst %.2f ms"
          % (statistics.median(stops), max(stops)))
    for name, won in wins.items():
        print("   racer wrote the new file before the stop: %-20s %3d of %d" % (name, won, n))
    print("   ralon pause -- true: median %.2f ms, worst %.2f ms (true alone: median %.2f ms)"
          % (statistics.median(pause_ms), max(pause_ms), statistics.median(trues)))
    print("   ralon pause -- true, by what the sandbox holds (median, worst):")
    for procs, fds, threads, med, worst in growth:
        print("     %4d process(es), %5d descriptors each, %4d thread(s) each: %8.2f ms %8.2f ms"
              % (procs, fds, threads, med, worst))
    lines = ["guard-stop median_ms=%.3f worst_ms=%.3f n=%d"
             % (statistics.median(stops), max(stops), n),
             "guard-pause median_ms=%.3f worst_ms=%.3f true_median_ms=%.3f n=%d"
             % (statistics.median(pause_ms), max(pause_ms), statistics.median(trues), n)]
    lines += ["guard-pause-growth procs=%d fds=%d threads=%d median_ms=%.3f worst_ms=%.3f"
              % row for row in growth]
    lines += ["guard-race-%s wins=%d n=%d" % (name, won, n) for name, won in wins.items()]
    results = os.environ.get("RALON_BENCH_RESULTS")
    if results:
        with open(results, "a") as f:
            for line in lines:
                f.write("# " + line + "\n")


if __name__ == "__main__":
    main()
