#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark 6: the mount backend's guard, measured from outside.

  stop      how long the guard takes from an unannounced replacement of a
            protected file (the rename(2) outside returning) to the end of
            `ralon run` (every process of the sandbox gone): median and
            worst of N
  race      how often an agent writing the protected path in a tight shell
            loop gets a write into the new file before the stop, per kind
            of outside change (issue 29's list: rename over, sed -i, backup
            by rename, the protected directory made again (the agent
            making it first, as a directory or a link), RENAME_EXCHANGE,
            the pinned directory moved away, git checkout, agent.lock
            replaced), out of N; and how often the object at the path
            afterwards was the agent's own (made by it in the window).
            Every try must end in the guard's stop (exit 125).
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
import stat
import statistics
import subprocess
import sys
import tempfile
import time

MARK = "RACER"
# Where the racer's symbolic link leads (a directory of its own, made by
# it, outside the project).
OWN = "own"
PY_EXCHANGE = ("python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
               "exit(l.renameat2(-100, b\"x.tmp\", -100, b\"Cargo.lock\", 2) != 0)'")
# Each kind of outside change: (the change, made outside with sh -c in the
# project; the path the racer appends to; the racer's step before that; the
# project's extra setup). The changes are tests/enforcement/test_guard.py's
# UNANNOUNCED on this benchmark's project, but for two: the exchange is with
# a new file, as an editor's save would be, and agent.lock is replaced by
# sed -i.
RACES = {
    "rename_over": ("cp Cargo.lock x.tmp && echo new >> x.tmp && mv x.tmp Cargo.lock",
                    "Cargo.lock", "", None),
    "sed_i": ("sed -i s/lock/LOCK/ Cargo.lock", "Cargo.lock", "", None),
    "backup_by_rename": ("mv Cargo.lock Cargo.lock~ && echo new > Cargo.lock",
                         "Cargo.lock", "", None),
    "directory_recreated": (
        "rm -rf golden && mkdir -p golden && echo regenerated > golden/a.txt",
        "golden/a.txt", "mkdir -p golden;", None),
    # The agent tries to make the protected directory first as a link to a
    # directory of its own.
    "directory_recreated_link": (
        "rm -rf golden && mkdir -p golden && echo regenerated > golden/a.txt",
        "golden/a.txt", "ln -s ../%s golden;" % OWN, None),
    # RENAME_EXCHANGE of the protected file with a new one beside it (mv of
    # Debian 12 has no --exchange): its read-only mount moves along with
    # the old file to x.tmp, and no mount event comes.
    "rename_exchange": ("cp Cargo.lock x.tmp && echo new >> x.tmp && " + PY_EXCHANGE,
                        "Cargo.lock", "", None),
    # The pinned directory above a protected file moved away, a new one made.
    "pinned_dir_moved": (
        "mv conf conf.moved && mkdir conf && echo regenerated > conf/app.yml",
        "conf/app.yml", "", "conf"),
    # A branch where Cargo.lock differs: git unlinks it and creates it anew.
    "git_checkout": ("git checkout -q other", "Cargo.lock", "", "git"),
    "agent_lock_replaced": ("sed -i '$a # edited' agent.lock", "agent.lock", "", None),
}
STOPPED = 125
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C"}


def git(proj, *args):
    subprocess.run(["git"] + list(args), cwd=proj, env=dict(os.environ, **GIT_ENV), check=True,
                   stdout=subprocess.DEVNULL)


def project(base, extra=None):
    proj = os.path.join(base, "proj")
    os.makedirs(os.path.join(proj, "golden"))
    protect = "Cargo.lock, golden"
    files = [("Cargo.lock", "# lock\n"), ("golden/a.txt", "golden\n"), ("README.md", "readme\n")]
    if extra == "conf":
        os.mkdir(os.path.join(proj, "conf"))
        protect += ", conf/app.yml"
        files.append(("conf/app.yml", "app: 1\n"))
    for rel, text in [("agent.lock", "protect: [%s]\n" % protect)] + files:
        with open(os.path.join(proj, rel), "w") as f:
            f.write(text)
    if extra == "git":
        for args in (["init", "-q", "-b", "main"], ["config", "user.name", "ralon bench"],
                     ["config", "user.email", "bench@example.invalid"], ["add", "-A"],
                     ["commit", "-q", "-m", "initial"], ["checkout", "-q", "-b", "other"]):
            git(proj, *args)
        with open(os.path.join(proj, "Cargo.lock"), "a") as f:
            f.write("# rotated\n")
        git(proj, "commit", "-q", "-am", "rotate")
        git(proj, "checkout", "-q", "main")
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


def reset(base, extra=None):
    shutil.rmtree(os.path.join(base, "proj"))
    shutil.rmtree(os.path.join(base, OWN), ignore_errors=True)
    return project(base, extra)


def stopped(p, what, timeout=30):
    """Waits for the guard's stop; anything else ends the benchmark, so that
    a change the guard did not see cannot count as no win."""
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise SystemExit("bench: %s: the guard did not stop the sandbox within %d s"
                         % (what, timeout))
    if p.returncode != STOPPED or b"changed outside it" not in err:
        raise SystemExit("bench: %s: the guard did not stop the sandbox (exit %d): %s"
                         % (what, p.returncode, err.decode(errors="replace")))


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


def agents(proj, target):
    """Whether an object on the way to target (the protected name and what
    is under it) was made by the agent, seen from outside: its link, or a
    file or directory made under its umask (077; the outside's is 022)."""
    parts = target.split("/")
    for i in range(1, len(parts) + 1):
        try:
            st = os.lstat(os.path.join(proj, *parts[:i]))
        except OSError:
            return False
        if stat.S_ISLNK(st.st_mode) or st.st_mode & 0o077 == 0:
            return True
    return False


def race(ralon, base, n):
    """Per kind: (tries in which the racer's MARK is, after the stop, in
    what stands at its path (through any link), tries in which an object at
    that path was the agent's own)."""
    wins = {}
    for name, (change, target, extra, setup) in RACES.items():
        won = made = 0
        for i in range(n):
            proj = reset(base, setup)
            # The umask marks what the agent makes; the loop is unchanged.
            p = start(ralon, proj, "umask 077; mkdir -p ../%s; touch ../ready; "
                      "while :; do { %s echo %s >> %s; } 2>/dev/null; done"
                      % (OWN, extra, MARK, target), ready_first=False)
            r = subprocess.run(["sh", "-c", change], cwd=proj, env=dict(os.environ, **GIT_ENV),
                               stdin=subprocess.DEVNULL, capture_output=True)
            stopped(p, "%s, try %d" % (name, i + 1))
            took = agents(proj, target)
            if r.returncode != 0 and not took:
                raise SystemExit("bench: %s: the outside change failed: %r" % (name, r))
            try:
                with open(os.path.join(proj, target), errors="replace") as f:
                    won += MARK in f.read()
            except OSError:
                pass
            made += took
        wins[name] = (won, made)
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
    # The racer's objects are told from the outside's by their mode.
    os.umask(0o022)
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
    for name, (won, made) in wins.items():
        print("   racer wrote the new file before the stop: %-24s %3d of %d"
              " (the agent's own object at the path: %d)" % (name, won, n, made))
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
    lines += ["guard-race-%s wins=%d n=%d" % (name, won, n) for name, (won, _) in wins.items()]
    lines += ["guard-race-own-%s made=%d n=%d" % (name, made, n)
              for name, (_, made) in wins.items()]
    results = os.environ.get("RALON_BENCH_RESULTS")
    if results:
        with open(results, "a") as f:
            for line in lines:
                f.write("# " + line + "\n")


if __name__ == "__main__":
    main()
