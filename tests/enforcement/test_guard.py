#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The mount backend's guard, attacked as an adversary would (ATTACKS #73,
#74): while the agent runs, something OUTSIDE the sandbox (the user's git,
an editor, sed -i, npm install) replaces a protected path, which detaches
its read-only mount; a racing agent tries to write it all the while.

Verified from outside the sandbox, as root and as nobody:

  unannounced   each change stops the sandbox (exit 125, the path named);
                how often the racer got a write in before the stop is
                printed (bench/guard-race counts it over many tries).
                Under Landlock the same changes never let the racer write.
  pause         the same changes under `ralon pause -- CMD`: the racer never
                writes the new objects (appending, through an O_PATH handle,
                through a hard link), the user's content is what is on disk,
                the agent carries on, trying again after the resume; a
                process in a namespace of its own made before the pause is
                stopped; a resume that fails (a full mount table) stops
                the sandbox.
  at start      a change made outside after the binds, before the command
                runs, refuses to run (exit 2, the path named).
  leftovers     nothing of the session outlives the agent (setsid, SIGTERM
                ignored), nor the guard killed with SIGKILL.
  process       exit status and signals as if started directly; kill(0,
                SIGSTOP), tcflow(TCOOFF) and TOSTOP from inside do not stall
                the guard; the guard cannot be traced; bubblewrap runs
                inside; --seal turns nested user namespaces off.

Environment as for test_enforcement.py (whose helpers this uses).
"""

import os
import pty as pty_module
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_enforcement as te  # noqa: E402

STOPPED = 125
# A line for each path an outside change stopped the sandbox for.
# What resume says of the processes it stopped (with how many).
STOPPED_AT_RESUME = (r"(?m)^%s process\(es\) stopped: each in a mount namespace of its own "
                     r"or holding a way around the new read-only mounts$")
STOP_LINE = re.compile(r"(?m)^ralon: stopped the sandbox: (\S+) changed outside it ")
# The agent writes this marker into whatever it manages to write.
MARK = "RACER-7d1e"


def user_preexec(user, ctty=False):
    return te._preexec(te.USERS[user], ctty)


def outside(user, cwd, script, env):
    """A change made outside the sandbox, as the same user."""
    p = subprocess.run(["sh", "-c", script], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, preexec_fn=user_preexec(user),
                       timeout=te.TIMEOUT)
    if p.returncode != 0:
        raise AssertionError("the outside change failed: %r" % (p,))
    return p


def chown_all(pr, user):
    uid = te.USERS[user]
    if uid is None:
        return
    for top, dirs, files in os.walk(pr.base):
        for n in [top] + [os.path.join(top, x) for x in dirs + files]:
            os.lchown(n, uid, uid)


def session_processes(token):
    """Pids of processes whose command line holds token (seen from outside)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if token.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


class Session:
    """`ralon run` of an agent in the background, its output in files."""

    def __init__(self, tc, pr, user, backend, script, extra=(), pty=False):
        self.tc, self.pr, self.user = tc, pr, user
        self.out = open(os.path.join(pr.tmp, "session.out"), "w+b")
        self.err = open(os.path.join(pr.tmp, "session.err"), "w+b")
        self.ready = os.path.join(pr.tmp, "ready")
        argv = ([te.Tools.ralon, "run", "-q", "--backend", backend] + list(extra)
                + ["--", "sh", "-c", script])
        self.master = None
        if pty:
            self.master, slave = pty_module.openpty()
            self.proc = subprocess.Popen(argv, cwd=pr.proj, env=pr.env(), stdin=slave,
                                         stdout=slave, stderr=slave, start_new_session=True,
                                         preexec_fn=user_preexec(user, True))
            os.close(slave)
        else:
            self.proc = subprocess.Popen(argv, cwd=pr.proj, env=pr.env(),
                                         stdin=subprocess.DEVNULL, stdout=self.out,
                                         stderr=self.err, preexec_fn=user_preexec(user))
        tc.addCleanup(self.close)

    def wait_ready(self, timeout=30):
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.ready):
            if self.proc.poll() is not None:
                raise AssertionError("the agent ended before it was ready: %r" % self.result())
            if time.monotonic() > deadline:
                raise AssertionError("the agent never got ready: %r" % self.result())
            self.drain()
            time.sleep(0.01)

    def drain(self):
        if self.master is None:
            return
        while True:
            r, _, _ = select.select([self.master], [], [], 0)
            if not r:
                return
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.err.write(chunk)

    def wait(self, timeout=30):
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError("ralon run did not end within %ds: %r"
                                     % (timeout, self.result()))
            self.drain()
            time.sleep(0.01)
        self.drain()
        return self.result()

    def result(self):
        self.out.seek(0)
        self.err.seek(0)
        return te.Result(self.proc.returncode, self.out.read().decode(errors="replace"),
                         self.err.read().decode(errors="replace"))

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.master is not None:
            os.close(self.master)
            self.master = None
        self.out.close()
        self.err.close()


# An agent that races to write `path` (relative to the project), as fast as
# a shell loop can, and says when it has started.
def racer(path, extra=""):
    return ("touch \"$TMPDIR/ready\"; while :; do { echo %s >> %s; %s } 2>/dev/null; done"
            % (MARK, path, extra))


# (name, path the agent races for, outside change, extra racer step, the
# pins and protected paths the stop names: each one whose object changed;
# a pinned directory moved away takes the protected path in it along, and
# a protected directory is named, not the file in it)
UNANNOUNCED = [
    ("rename_over", "Cargo.lock", "cp Cargo.lock x.tmp && echo new >> x.tmp && mv x.tmp Cargo.lock",
     "", ("Cargo.lock",)),
    ("sed_i", "Cargo.lock", "sed -i 's/lock/LOCK/' Cargo.lock", "", ("Cargo.lock",)),
    ("git_checkout", "conf/secret.yml", "git checkout -q other", "", ("conf/secret.yml",)),
    ("backup_by_rename", "Cargo.lock", "mv Cargo.lock Cargo.lock~ && echo new > Cargo.lock", "",
     ("Cargo.lock",)),
    ("rename_exchange", "Cargo.lock",
     "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
     "exit(l.renameat2(-100, b\"Cargo.lock\", -100, b\"README.md\", 2) != 0)'", "",
     ("Cargo.lock",)),
    ("pinned_directory_moved", "conf/secret.yml",
     "mv conf conf.moved && mkdir conf && echo regenerated > conf/secret.yml", "",
     ("conf", "conf/secret.yml")),
    ("protected_directory_recreated", "tests/golden/a.txt",
     "rm -rf tests/golden && mkdir -p tests/golden && echo regenerated > tests/golden/a.txt",
     "mkdir -p tests/golden 2>/dev/null;", ("tests/golden",)),
    ("protected_directory_replaced_by_link", "tests/golden/a.txt",
     "rm -rf tests/golden && mkdir -p tests/golden && echo regenerated > tests/golden/a.txt",
     "ln -s \"$TMPDIR\" tests/golden 2>/dev/null;", ("tests/golden",)),
    ("policy_replaced", "agent.lock",
     "cp agent.lock x.tmp && echo '# edited' >> x.tmp && mv x.tmp agent.lock", "",
     ("agent.lock",)),
]


def prepare(pr, user, name):
    """Per-scenario setup outside, as the user (a branch for git checkout)."""
    if name == "git_checkout":
        outside(user, pr.proj, "git checkout -q -b other && echo 'rotated: yes' >> conf/secret.yml"
                " && git commit -q -am rotate && git checkout -q main", te.git_env(pr.home))


def racer_won(pr, name, path):
    """Whether, seen from outside, the racer's mark reached what now stands
    at `path` (or the protected directory became its link)."""
    full = os.path.join(pr.proj, path)
    if name == "protected_directory_replaced_by_link" and os.path.islink(
            os.path.join(pr.proj, "tests", "golden")):
        return True
    try:
        with open(full, encoding="utf-8", errors="replace") as f:
            return MARK in f.read()
    except OSError:
        return False


def kill_group(p):
    """Ends p's process group (strace, and ralon under it), if it runs."""
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()


class GuardBase(te.Base):
    def project_as(self, user):
        pr = te.Project(te.USERS[user])
        self.addCleanup(pr.cleanup)
        return pr

    def mount_users(self):
        return [u for u in self.users() if self.available("mount", u)]

    def traced(self, pr, user, strace_argv, script):
        """`ralon run --backend mount` of script under strace_argv (strace
        and its options), as user, in a process group of its own: a guard
        that hangs is killed with strace, since it holds the pipes open. A
        sanitized build's leak checker cannot work under ptrace."""
        env = dict(pr.env(), ASAN_OPTIONS="detect_leaks=0")
        p = subprocess.Popen(strace_argv + te.ralon_run("mount", script), cwd=pr.proj, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, errors="replace",
                             preexec_fn=user_preexec(user), start_new_session=True)
        self.addCleanup(kill_group, p)
        return p

    def wait_until(self, p, done, what):
        """Until done() holds, while ralon (p) runs."""
        deadline = time.monotonic() + 60
        while not done():
            self.assertIsNone(p.poll(), "ralon ended before %s" % what)
            self.assertLess(time.monotonic(), deadline, "never: %s" % what)
            time.sleep(0.002)

    def traced_result(self, p, timeout=te.TIMEOUT):
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(p)
            self.fail("ralon run did not end within %ds" % timeout)
        return te.Result(p.returncode, out, err)

    def assertStoppedFor(self, r, pr, *changed):
        """Stopped by the guard (exit 125) for an outside change, with a
        line naming each of `changed` (relative to the project), and no
        other path."""
        self.assertEqual(r.rc, STOPPED, r)
        proj = os.path.realpath(pr.proj)
        self.assertEqual(sorted(STOP_LINE.findall(r.stderr)),
                         sorted(os.path.join(proj, c) for c in changed), r)

    def assertNoLeftovers(self, token, r=None, at_once=False):
        """Nothing of the session left; with at_once, already when `ralon
        run` has returned (PID 1 has ended and reaped what was left before
        the guard exits), not only once the kernel has ended the namespace
        after it."""
        if at_once:
            self.assertEqual(session_processes(token), [],
                             "processes of the session outlived `ralon run`: %r" % (r,))
            return
        deadline = time.monotonic() + 5
        while session_processes(token) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(session_processes(token), [],
                         "processes of the session outlived it: %r" % (r,))


class TestUnannounced(GuardBase):
    """ATTACKS #73: an outside change, not announced with `ralon pause`."""

    wins = {}

    def scenario(self, backend, user, name, path, change, extra, named):
        pr = self.project_as(user)
        prepare(pr, user, name)
        chown_all(pr, user)
        s = Session(self, pr, user, backend, racer(path, extra))
        s.wait_ready()
        outside(user, pr.proj, change, dict(te.git_env(pr.home), PATH=te.Tools.path))
        if backend == "mount":
            r = s.wait()
            self.assertStoppedFor(r, pr, *named)
            self.assertIn("ralon pause", r.stderr, r)
            won = racer_won(pr, name, path)
            key = (name, user)
            self.wins[key] = self.wins.get(key, 0) + won
            print("race %s as %s: the racer %s before the stop"
                  % (name, user, "got a write in" if won else "never wrote"))
        else:
            # Landlock's rules follow inodes: the racer never gets in, and
            # the session goes on.
            time.sleep(0.5)
            self.assertIsNone(s.proc.poll(), s.result())
            s.proc.send_signal(signal.SIGTERM)
            r = s.wait()
            self.assertEqual(r.rc, -signal.SIGTERM, r)
            if name == "rename_exchange":
                # Landlock protects objects: the protected file, now named
                # README.md, stays as it was; the writable README the
                # exchange put at the protected name stays writable.
                self.assertNotIn(MARK, te.read_text(os.path.join(pr.proj, "README.md")), r)
            else:
                self.assertFalse(racer_won(pr, name, path), r)
        self.assertNoLeftovers(MARK, r)

    def test_unannounced_changes(self):
        for backend, user in self.each_backend_and_user():
            for name, path, change, extra, named in UNANNOUNCED:
                with self.subTest(backend=backend, user=user, change=name):
                    self.scenario(backend, user, name, path, change, extra, named)


PAUSE_RACER = r'''
import os, sys, time
mark, path, wins = sys.argv[1], sys.argv[2], os.path.join(os.environ["TMPDIR"], "wins")
# A byte for each round of tries, where the test sees it (not protected).
tries = os.path.join(os.environ["TMPDIR"], "tries")
open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()
end = time.monotonic() + float(sys.argv[3])
def won(how):
    with open(wins, "a") as f:
        f.write(how + "\n")
while time.monotonic() < end:
    try:
        with open(path, "a") as f:
            f.write(mark + " append\n")
        won("append")
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_PATH)
        try:
            w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_APPEND)
            os.write(w, (mark + " o_path\n").encode())
            os.close(w)
            won("o_path")
        finally:
            os.close(fd)
    except OSError:
        pass
    try:
        os.link(path, path + ".hl")
        try:
            with open(path + ".hl", "a") as f:
                f.write(mark + " hard link\n")
            won("hard link")
        finally:
            os.unlink(path + ".hl")
    except OSError:
        pass
    with open(tries, "a") as f:
        f.write(".")
print("agent carried on")
'''


class TestPause(GuardBase):
    """The same changes, announced: made while the sandbox is frozen, then
    re-protected before it thaws."""

    def racing_session(self, pr, user, path, seconds, extra=(), prelude=""):
        with open(os.path.join(pr.tmp, "racer.py"), "w", encoding="utf-8") as f:
            f.write(PAUSE_RACER)
        script = '%s python3 "$TMPDIR/racer.py" %s %s %s' % (prelude, MARK, path, seconds)
        return Session(self, pr, user, "mount", script, extra)

    def python_session(self, pr, user, name, program, rest):
        """A mount-backend session whose agent runs `program`, written to
        $TMPDIR/name, as `python3 "$TMPDIR/name" REST` (REST: its
        arguments, and what the shell does after), once it is ready.
        Returns the program's path (which its command line holds) and the
        session."""
        path = os.path.join(pr.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(program)
        s = Session(self, pr, user, "mount", 'python3 "$TMPDIR/%s" %s' % (name, rest))
        s.wait_ready()
        return path, s

    def pause(self, pr, user, change):
        return te.run([te.Tools.ralon, "pause", "--", "sh", "-c", change], user, pr.proj,
                      dict(pr.env(), **{"GIT_CONFIG_NOSYSTEM": "1"}))

    def assertTriedAfterResume(self, s, pr):
        """The racing session's agent tried again once the resume had
        returned: two more rounds counted than then (so one begun after
        it), while it runs. A pause that outlasted the racer's time would
        else pass with nothing tried on what the resume protected."""
        tries = os.path.join(pr.tmp, "tries")

        def rounds():
            return os.path.getsize(tries) if os.path.exists(tries) else 0
        at_resume = rounds()
        self.wait_until(s.proc, lambda: rounds() >= at_resume + 2,
                        "the racer tried again after the resume (%d rounds before)" % at_resume)

    def test_announced_changes_are_safe(self):
        for user in self.mount_users():
            for seal in ((), ("--seal",)):
                for name, path, change, _, _ in UNANNOUNCED:
                    if name == "protected_directory_replaced_by_link":
                        continue
                    with self.subTest(user=user, change=name, seal=seal):
                        self.check_pause(user, name, path, change, seal)

    def check_pause(self, user, name, path, change, seal):
        pr = self.project_as(user)
        prepare(pr, user, name)
        chown_all(pr, user)
        s = self.racing_session(pr, user, path, 3, seal)
        s.wait_ready()
        r = self.pause(pr, user, change + " && cat " + path + " > \"$TMPDIR/user-wrote\"")
        self.assertEqual(r.rc, 0, r)
        self.assertRegex(r.stdout, r"(?m)^enforcing %s$" % re.escape(pr.proj), r)
        self.assertRegex(r.stdout, r"(?m)^1 sandbox\(es\) thawed; [1-9][0-9]* path\(s\) changed",
                         r)
        self.assertTriedAfterResume(s, pr)
        res = s.wait()
        self.assertEqual(res.rc, 0, res)
        self.assertIn("agent carried on", res.stdout, res)
        wins = os.path.join(pr.tmp, "wins")
        if os.path.exists(wins):
            self.fail("the agent wrote a protected path: %s\n%r" % (te.read_text(wins), res))
        # What the user wrote is what is on disk.
        self.assertEqual(te.read_text(os.path.join(pr.proj, path)),
                         te.read_text(os.path.join(pr.tmp, "user-wrote")))
        self.assertNoLeftovers(MARK, res)

    def test_pause_and_resume_separately(self):
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                s = self.racing_session(pr, user, "Cargo.lock", 4)
                s.wait_ready()
                env = pr.env()
                r = te.run([te.Tools.ralon, "pause", "--minutes", "5"], user, pr.proj, env)
                self.assertEqual(r.rc, 0, r)
                self.assertRegex(r.stdout, r"(?m)^paused %s$" % re.escape(pr.proj), r)
                self.assertIn("in 5 minute(s)", r.stdout, r)
                outside(user, pr.proj, "sed -i s/lock/LOCK/ Cargo.lock", env)
                # Frozen: nothing in the sandbox runs, and the guard does not
                # take the change for an attack.
                time.sleep(0.5)
                self.assertIsNone(s.proc.poll(), s.result())
                r = te.run([te.Tools.ralon, "resume"], user, pr.proj, env)
                self.assertEqual(r.rc, 0, r)
                self.assertIn("1 path(s) changed and protected again", r.stdout, r)
                self.assertTriedAfterResume(s, pr)
                res = s.wait()
                self.assertEqual(res.rc, 0, res)
                self.assertFalse(os.path.exists(os.path.join(pr.tmp, "wins")), res)
                self.assertEqual(te.read_text(os.path.join(pr.proj, "Cargo.lock")),
                                 "# LOCK file\n")

    def test_a_path_missing_at_resume_is_watched_by_name(self):
        # Cargo.lock removed under a pause: the resume cannot protect it,
        # says so, and watches for its name. Made again outside without a
        # pause, or by the agent inside, it stops the sandbox; made under
        # the next pause, that resume protects it (a read-only mount there
        # in the sandbox's mount table, read from outside).
        for user in self.mount_users():
            for how in ("outside", "inside", "paused"):
                with self.subTest(user=user, made=how):
                    pr = self.project_as(user)
                    chown_all(pr, user)
                    if how == "inside":
                        s = self.racing_session(pr, user, "Cargo.lock", 20)
                    else:
                        token = "MISSING-%d-%s" % (os.getpid(), user)
                        s = Session(self, pr, user, "mount",
                                    'touch "$TMPDIR/ready"; sleep 20; : %s' % token)
                    s.wait_ready()
                    env = pr.env()
                    r = te.run([te.Tools.ralon, "pause"], user, pr.proj, env)
                    self.assertEqual(r.rc, 0, r)
                    outside(user, pr.proj, "rm Cargo.lock", env)
                    r = te.run([te.Tools.ralon, "resume"], user, pr.proj, env)
                    self.assertEqual(r.rc, 0, r)
                    self.assertIn("Cargo.lock does not exist now", r.stderr, r)
                    if how == "outside":
                        outside(user, pr.proj, "echo new > Cargo.lock", env)
                    if how != "paused":
                        self.assertStoppedFor(s.wait(), pr, "Cargo.lock")
                        continue
                    r = self.pause(pr, user, "echo new > Cargo.lock")
                    self.assertEqual(r.rc, 0, r)
                    self.assertIn("1 path(s) changed and protected again", r.stdout, r)
                    cmd = [p for p in session_processes(token) if p != s.proc.pid][-1]
                    lock = os.path.realpath(os.path.join(pr.proj, "Cargo.lock"))
                    table = te.read_text("/proc/%d/mountinfo" % cmd).splitlines()
                    self.assertTrue([m for m in table if m.split()[4] == lock and
                                     "ro" in m.split()[5].split(",")], table)
                    self.assertIsNone(s.proc.poll(), s.result())
                    s.close()

    # After resumes, changes that only some of the watches see: a backup by
    # rename (the directory's watch and the file's own), a hard link made
    # in another directory (the file's own watch only: its link count), a
    # pinned directory moved away (its parent's watch only). None of them
    # makes a mount event. Each with what the stop names.
    AFTER_RESUMES = [
        ("backup_by_rename", "mv Cargo.lock Cargo.lock~ && echo new > Cargo.lock",
         ("Cargo.lock",)),
        ("hard_link_elsewhere", "ln Cargo.lock src/alias", ("Cargo.lock",)),
        ("pinned_directory_moved", "mv conf conf.moved && mkdir conf",
         ("conf", "conf/secret.yml")),
    ]

    def test_the_watches_hold_after_resumes(self):
        """Each resume sets the watches anew, in the guard's one inotify
        instance. After two, each change of AFTER_RESUMES made outside must
        stop the sandbox; an agent that ends by itself (exit 0) means the
        guard no longer watched what saw it. And the guard holds one
        instance, not one a resume (the user's limit of instances is
        shared with the user's editors)."""
        for user in self.mount_users():
            for name, change, named in self.AFTER_RESUMES:
                with self.subTest(user=user, change=name):
                    pr = self.project_as(user)
                    chown_all(pr, user)
                    token = "RESUMES-%d-%s" % (os.getpid(), user)
                    s = Session(self, pr, user, "mount",
                                'touch "$TMPDIR/ready"; sleep 20; : %s' % token)
                    s.wait_ready()
                    for _ in range(2):
                        r = self.pause(pr, user, "true")
                        self.assertEqual(r.rc, 0, r)
                        self.assertIn("1 sandbox(es) thawed", r.stdout, r)
                    instances = [fd for fd in os.listdir("/proc/%d/fd" % s.proc.pid)
                                 if os.readlink("/proc/%d/fd/%s" % (s.proc.pid, fd))
                                 == "anon_inode:inotify"]
                    self.assertEqual(len(instances), 1, instances)
                    outside(user, pr.proj, change, pr.env())
                    res = s.wait()
                    self.assertStoppedFor(res, pr, *named)
                    self.assertNoLeftovers(token, res, at_once=True)

    def test_nested_namespace_made_before_the_pause_is_stopped(self):
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                token = "NESTED-%d" % os.getpid()
                # A process in user and mount namespaces of its own would
                # keep the view it had (or unmount what resume adds).
                prelude = ("unshare -Um sh -c 'while :; do { echo %s >> Cargo.lock; } 2>/dev/null;"
                           " sleep 0.01; done' %s & " % (MARK, token))
                s = self.racing_session(pr, user, "Cargo.lock", 3, prelude=prelude)
                s.wait_ready()
                deadline = time.monotonic() + 10
                while not session_processes(token):
                    self.assertLess(time.monotonic(), deadline, "the nested process never ran")
                    time.sleep(0.02)
                r = self.pause(pr, user, "cp Cargo.lock x.tmp && mv x.tmp Cargo.lock")
                self.assertEqual(r.rc, 0, r)
                self.assertRegex(r.stdout, STOPPED_AT_RESUME % "[1-9][0-9]*", r)
                self.assertNoLeftovers(token, r)
                res = s.wait()
                self.assertEqual(res.rc, 0, res)
                self.assertNotIn(MARK, te.read_text(os.path.join(pr.proj, "Cargo.lock")))

    FD_PASSER = r"""
import ctypes, os, socket, sys, time
# A directory opened in user and mount namespaces of its own, handed to a
# process of the sandbox's namespace before the pause: a path walked from
# it goes through the nested namespace's mounts, which never get the
# read-only mount resume puts on the new file (made private, they get no
# copy of it by propagation).
libc = ctypes.CDLL(None, use_errno=True)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
if os.fork() == 0:
    MS_REC, MS_PRIVATE = 0x4000, 0x40000
    if (libc.unshare(0x10000000 | 0x00020000) != 0 or
            libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0):
        os._exit(1)
    socket.send_fds(b, [b"d"], [os.open(".", os.O_RDONLY | os.O_DIRECTORY)])
    while True:
        time.sleep(1)
_, fds, _, _ = socket.recv_fds(a, 1, 1)
open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()
while True:
    try:
        f = os.open("Cargo.lock", os.O_WRONLY | os.O_APPEND, dir_fd=fds[0])
        os.write(f, (sys.argv[1] + "\n").encode())
        os.close(f)
    except OSError:
        pass
    time.sleep(0.005)
"""

    def test_a_directory_from_a_nested_namespace_is_stopped(self):
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                before = te.read_text(os.path.join(pr.proj, "Cargo.lock"))
                script, s = self.python_session(pr, user, "fdpass.py", self.FD_PASSER,
                                                "%s & wait; sleep 30" % MARK)
                r = self.pause(pr, user, "cp Cargo.lock x.tmp && mv x.tmp Cargo.lock")
                self.assertEqual(r.rc, 0, r)
                # The nested process, and the one holding its directory.
                self.assertRegex(r.stdout, STOPPED_AT_RESUME % "([2-9]|[1-9][0-9]+)", r)
                time.sleep(0.3)
                self.assertEqual(session_processes(script), [], r)
                self.assertEqual(te.read_text(os.path.join(pr.proj, "Cargo.lock")), before)
                self.assertIsNone(s.proc.poll(), s.result())
                s.close()

    NESTED_LATER = r"""
import ctypes, os, sys, threading, time
# A way into a mount namespace of the agent's own that the main thread of
# a process in the sandbox's namespace does not show: a thread of its own
# in one ("thread"), or descriptors of one, kept to enter after the
# resume ("descriptor"). Either writes Cargo.lock once the user's new file
# stands there, through that namespace's mounts, which never get the
# read-only mount resume puts on it.
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
mode, mark = sys.argv[1], sys.argv[2]
first = os.stat("Cargo.lock").st_ino


def write_once_replaced():
    while os.stat("Cargo.lock").st_ino == first:
        time.sleep(0.002)
    while True:
        try:
            f = os.open("Cargo.lock", os.O_WRONLY | os.O_APPEND)
            os.write(f, (mark + "\n").encode())
            os.close(f)
        except OSError:
            pass
        time.sleep(0.005)


def ready():
    open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()


if mode in ("thread", "leaderless"):
    # No uid map is needed (nor, for root, allowed without CAP_SETFCAP).
    if libc.unshare(CLONE_NEWUSER) != 0:
        sys.exit("unshare: %d" % ctypes.get_errno())

    def nested():
        if libc.unshare(CLONE_NEWNS) != 0:
            sys.exit("unshare: %d" % ctypes.get_errno())
        ready()
        write_once_replaced()
    t = threading.Thread(target=nested)
    t.start()
    if mode == "leaderless":
        # The first thread ends (its /proc/PID/ns links go), the other
        # runs on in the process.
        libc.pthread_exit(None)
    t.join()
else:
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            os._exit(1)
        os.write(w, b"x")
        while True:
            time.sleep(1)
    os.read(r, 1)
    fds = [os.open("/proc/%d/ns/%s" % (child, ns), os.O_RDONLY) for ns in ("user", "mnt")]
    ready()
    while os.stat("Cargo.lock").st_ino == first:
        time.sleep(0.002)
    here = os.getcwd()
    if libc.setns(fds[0], CLONE_NEWUSER) != 0 or libc.setns(fds[1], CLONE_NEWNS) != 0:
        sys.exit("setns: %d" % ctypes.get_errno())
    os.chdir(here)  # setns(2) of a mount namespace moves to its root
    write_once_replaced()
"""

    def test_a_thread_or_descriptor_of_a_nested_namespace_is_stopped(self):
        # The main thread's namespace is not all: a thread can have a mount
        # namespace of its own, and a process can hold one's descriptors
        # to enter later. Resume stops both; the new file holds nothing of
        # theirs.
        for user in self.mount_users():
            for mode in ("thread", "leaderless", "descriptor"):
                with self.subTest(user=user, mode=mode):
                    pr = self.project_as(user)
                    script, s = self.python_session(pr, user, "nested-later.py",
                                                    self.NESTED_LATER,
                                                    "%s %s; sleep 30" % (mode, MARK))
                    r = self.pause(pr, user, "cp Cargo.lock x.tmp && echo new >> x.tmp && "
                                   "mv x.tmp Cargo.lock")
                    self.assertEqual(r.rc, 0, r)
                    self.assertRegex(r.stdout, STOPPED_AT_RESUME % "[1-9][0-9]*", r)
                    # It would have written within milliseconds of the thaw.
                    time.sleep(0.5)
                    self.assertEqual(session_processes(script), [], r)
                    self.assertNotIn(MARK, te.read_text(os.path.join(pr.proj, "Cargo.lock")), r)
                    self.assertIsNone(s.proc.poll(), s.result())
                    s.close()

    HOLDER = r"""
import ctypes, mmap, os, signal, sys, time
# Handles on what the user then moves into protection under a pause:
# "handles": the working directory in src/gen, and an O_PATH descriptor of
# a file there, which writes once reopened through /proc/self/fd; "map": a
# shared writable mapping of a file there (its descriptor closed);
# "detached": a descriptor of a file there opened through a bind mount of
# a nested namespace since ended (its path reads "/b.txt"); "map-later": a
# shared mapping of it, read-only until the move, of a descriptor opened
# for writing (so mprotect(2) can make it writable).
mode, mark = sys.argv[1], sys.argv[2]
os.makedirs("src/gen")
for n in ("a.txt", "b.txt"):
    with open("src/gen/" + n, "w") as f:
        f.write("generated\n" * 8)
ready = os.path.join(os.environ["TMPDIR"], "ready")
libc = ctypes.CDLL(None, use_errno=True)
if mode in ("map", "map-later"):
    # mmap(2) itself: Python's mmap module keeps a descriptor.
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    rw = mmap.PROT_READ | mmap.PROT_WRITE
    f = os.open("src/gen/a.txt", os.O_RDWR)
    ino = os.fstat(f).st_ino
    addr = libc.mmap(None, mmap.PAGESIZE, rw if mode == "map" else mmap.PROT_READ,
                     mmap.MAP_SHARED, f, 0)
    os.close(f)
    page = (ctypes.c_char * 12).from_address(addr)
    open(ready, "w").close()
    if mode == "map-later":
        while True:
            try:
                if os.stat("tests/golden/a.txt").st_ino == ino:
                    break
            except OSError:
                pass
            time.sleep(0.002)
        libc.mprotect(ctypes.c_void_p(addr), mmap.PAGESIZE, rw)
    n = 0
    while True:
        n += 1
        page[:] = ("%-11d\n" % n).encode()
        libc.msync(ctypes.c_void_p(addr), mmap.PAGESIZE, 4)
        time.sleep(0.005)
if mode == "detached":
    gen = os.path.realpath("src/gen")
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        if (libc.unshare(0x10000000 | 0x00020000) != 0 or
                libc.mount(gen.encode(), gen.encode(), None, 0x1000, None) != 0):
            os._exit(1)
        os.write(w, b"x")
        time.sleep(300)
    os.read(r, 1)
    held = os.open("/proc/%d/root%s/b.txt" % (child, gen), os.O_RDONLY)
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
else:
    held = os.open("src/gen/b.txt", os.O_PATH)
    os.chdir("src/gen")
open(ready, "w").close()
while True:
    for how in ("cwd", "fd") if mode == "handles" else ("fd",):
        try:
            if how == "cwd":
                f = os.open("a.txt", os.O_WRONLY | os.O_APPEND)
            else:
                f = os.open("/proc/self/fd/%d" % held, os.O_WRONLY | os.O_APPEND)
            os.write(f, ("%s %s\n" % (mark, how)).encode())
            os.close(f)
        except OSError:
            pass
    time.sleep(0.005)
"""

    def test_handles_on_what_becomes_protected_are_stopped(self):
        # The user replaces tests/golden with a directory the agent made
        # and still holds (its working directory, a descriptor of a file
        # in it, a shared writable mapping, a descriptor through a mount
        # since detached). The resume puts a read-only mount on
        # tests/golden, but those handles reach it around that mount:
        # their holder is stopped, and nothing changes after the move.
        for user, mode in [(u, m) for u in self.mount_users()
                           for m in ("handles", "map", "map-later", "detached")]:
            with self.subTest(user=user, mode=mode):
                pr = self.project_as(user)
                chown_all(pr, user)
                script, s = self.python_session(pr, user, "holder.py", self.HOLDER,
                                                "%s %s & sleep 30" % (mode, MARK))
                r = self.pause(pr, user, 'rm -rf tests/golden && mv src/gen tests/golden && '
                               'cat tests/golden/a.txt tests/golden/b.txt > "$TMPDIR/moved"')
                self.assertEqual(r.rc, 0, r)
                self.assertIn("1 path(s) changed and protected again", r.stdout, r)
                self.assertRegex(r.stdout, STOPPED_AT_RESUME % "1", r)
                time.sleep(0.5)
                golden = os.path.join(pr.proj, "tests", "golden")
                self.assertEqual(te.read_text(os.path.join(golden, "a.txt")) +
                                 te.read_text(os.path.join(golden, "b.txt")),
                                 te.read_text(os.path.join(pr.tmp, "moved")))
                self.assertEqual(session_processes(script), [], r)
                self.assertIsNone(s.proc.poll(), s.result())
                s.close()

    READER = r"""
import ctypes, mmap, os, time
# A shared mapping of a protected file, read-only and of a descriptor
# opened only to read (as tools that mmap what they read do): no way to
# write, through any mount.
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
f = os.open("tests/golden/a.txt", os.O_RDONLY)
if libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_SHARED, f, 0) in (None, 2**64 - 1):
    raise SystemExit("mmap failed")
os.close(f)
open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()
time.sleep(300)
"""

    def test_a_read_only_mapping_of_a_protected_file_is_left_alone(self):
        # What resume stops must not take in a reader: the same shared
        # mapping that writes when opened for writing (the rows above)
        # carries on when it cannot (its VmFlags have no "mw").
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                script, s = self.python_session(pr, user, "reader.py", self.READER, "& sleep 30")
                r = self.pause(pr, user, "cp Cargo.lock x.tmp && mv x.tmp Cargo.lock")
                self.assertEqual(r.rc, 0, r)
                self.assertNotRegex(r.stdout, STOPPED_AT_RESUME % "[0-9]+", r)
                self.assertEqual(len(session_processes(script)), 1, r)
                self.assertIsNone(s.proc.poll(), s.result())
                s.close()

    QUEUE_FILLER = r"""
import os, socket, sys, time
# Fills the queue of this user's guard sockets from inside the sandbox
# ("flood": connections made and dropped as fast as it can, in several
# processes), or binds a name like the guard's and accepts nothing, its
# one place in the queue taken ("squat").
mode = sys.argv[1]
prefix = "@ralon-guard/%d/" % os.getuid()
names = []
while not names:
    with open("/proc/net/unix") as f:
        names = [l.split()[-1] for l in f if l.split()[-1].startswith(prefix)]
if mode == "squat":
    fake = names[0].rsplit("/", 1)[0] + "/squatter"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind("\0" + fake[1:])
    s.listen(0)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect("\0" + fake[1:])
    open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()
    time.sleep(300)
for _ in range(3):
    if os.fork() == 0:
        break
open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()
while True:
    for name in names:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_NONBLOCK)
        try:
            c.connect("\0" + name[1:])
        except OSError:
            pass
        c.close()
"""

    def test_a_filled_guard_queue_is_waited_for_not_skipped(self):
        # An agent that keeps its guard's queue full made `ralon pause`
        # say no sandbox ran (and run the change unpaused). pause now waits
        # for room, and gets in. A name bound inside the sandbox that
        # accepts nothing cannot be told from a guard: after waiting, pause
        # fails and says so, and runs nothing; the real sandbox carries on.
        for user in self.mount_users():
            for mode in ("flood", "squat"):
                with self.subTest(user=user, mode=mode):
                    pr = self.project_as(user)
                    _, s = self.python_session(pr, user, "filler.py", self.QUEUE_FILLER,
                                               "%s & sleep 300" % mode)
                    lock = os.path.join(pr.proj, "Cargo.lock")
                    before = te.read_text(lock)
                    r = self.pause(pr, user, "cp Cargo.lock x.tmp && echo new >> x.tmp && "
                                   "mv x.tmp Cargo.lock")
                    if mode == "flood":
                        self.assertEqual(r.rc, 0, r)
                        self.assertIn("1 sandbox(es) thawed; 1 path(s) changed", r.stdout, r)
                        self.assertEqual(te.read_text(lock), before + "new\n")
                    else:
                        self.assertEqual(r.rc, 2, r)
                        self.assertRegex(r.stderr, r"did not accept a connection in \d+ s", r)
                        self.assertIn("was not run", r.stderr, r)
                        self.assertEqual(te.read_text(lock), before)
                    self.assertIsNone(s.proc.poll(), s.result())
                    s.close()

    WAKER = r"""
import fcntl, os, signal, sys
# Stopped, but woken by the kernel itself: a directory notification that
# sends SIGCONT (no process inside has to run for it).
signal.signal(signal.SIGCONT, signal.SIG_DFL)
fd = os.open(".", os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGCONT)
fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_MODIFY | fcntl.DN_CREATE | fcntl.DN_RENAME |
            fcntl.DN_DELETE | fcntl.DN_MULTISHOT)
open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()
while True:
    os.kill(os.getpid(), signal.SIGSTOP)
    try:
        with open("Cargo.lock", "a") as f:
            f.write(sys.argv[1] + "\n")
    except OSError:
        pass
"""

    def test_a_process_woken_while_frozen_does_not_run(self):
        # SIGSTOP is no lock: the kernel sends the stopped waker SIGCONT
        # when the user changes the directory. The guard also holds every
        # thread with ptrace, which SIGCONT does not end: the waker runs
        # only after the resume, and finds the new file protected.
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                before = te.read_text(os.path.join(pr.proj, "Cargo.lock"))
                with open(os.path.join(pr.tmp, "waker.py"), "w", encoding="utf-8") as f:
                    f.write(self.WAKER)
                s = Session(self, pr, user, "mount", 'exec python3 "$TMPDIR/waker.py" %s' % MARK)
                s.wait_ready()
                time.sleep(0.2)
                r = self.pause(pr, user, "cp Cargo.lock x.tmp && mv x.tmp Cargo.lock && "
                               "sleep 0.3 && echo user >> Cargo.lock")
                self.assertEqual(r.rc, 0, r)
                # Let the released waker try again, then look from outside.
                time.sleep(0.3)
                self.assertIsNone(s.proc.poll(), s.result())
                self.assertEqual(te.read_text(os.path.join(pr.proj, "Cargo.lock")),
                                 before + "user\n")
                s.close()
                self.assertNoLeftovers(MARK)

    def test_a_process_that_cannot_be_held_and_runs_stops_the_sandbox(self):
        # A thread traced already cannot be held: here a debugger outside
        # (strace, which lets its tracee continue on SIGCONT). PID 1
        # watches the frozen sandbox and ends it when such a thread runs.
        strace = shutil.which("strace")
        if strace is None:
            self.skipTest("needs strace to trace the agent from outside")
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                with open(os.path.join(pr.tmp, "waker.py"), "w", encoding="utf-8") as f:
                    f.write(self.WAKER)
                s = Session(self, pr, user, "mount", 'exec python3 "$TMPDIR/waker.py" %s' % MARK)
                s.wait_ready()
                waker = [p for p in session_processes(os.path.join(pr.tmp, "waker.py"))
                         if p != s.proc.pid]
                self.assertEqual(len(waker), 1, waker)
                tracer = subprocess.Popen([strace, "-qq", "-o", "/dev/null", "-p", str(waker[0])],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
                self.addCleanup(lambda t=tracer: (t.poll() is None and t.kill(), t.wait()))
                time.sleep(0.5)
                # What the waker is once the change has woken it, seen from
                # outside while the pause lasts: no longer there (or a
                # zombie) when PID 1 has ended the sandbox, rather than
                # stopped again until the resume finds out.
                during = os.path.join(pr.tmp, "waker-during-pause")
                r = self.pause(pr, user, "cp Cargo.lock x.tmp && mv x.tmp Cargo.lock && "
                               "sleep 0.3 && { cut -d' ' -f3 /proc/%d/stat 2>/dev/null || "
                               "echo none; } > %s && echo user >> Cargo.lock"
                               % (waker[0], shlex.quote(during)))
                self.assertIn(te.read_text(during).strip(), ("none", "Z", "X"), r)
                # PID 1 watched the frozen sandbox and ended it: there was
                # nothing left to resume.
                self.assertEqual(r.rc, 2, r)
                res = s.wait()
                self.assertEqual(res.rc, STOPPED, res)
                self.assertIn("ran while it was frozen", res.stderr, res)
                self.assertNoLeftovers(MARK, res)

    def test_a_failed_resume_ends_the_frozen_sandbox(self):
        """A resume that fails leaves a changed path unprotected, so the
        guard stops the sandbox: what was frozen must be killed where it
        stands, never continued first. A process in a session of its own
        (setsid) counts in a file and appends to Cargo.lock; the pause
        records the count while frozen, then replaces Cargo.lock, and strace
        makes the resume fail at its first step (pipe2(2), which the guard
        calls only there). The count must not have moved, the user's new
        Cargo.lock must hold none of the agent's lines, and `ralon run` must
        end (a thread the guard held that died before it let go is its to
        collect)."""
        self.check_failed_resume("pipe2", "EMFILE", (),
                                 "cannot re-protect the sandbox: Too many open files")

    def test_a_full_mount_table_at_resume_ends_the_frozen_sandbox(self):
        """The same, with the mount table full when resume mounts on the
        new Cargo.lock: move_mount(2) of its clone, where the kernel counts
        the mounts against fs.mount-max, fails with ENOSPC. The guard's
        helper makes that call in the sandbox's mount namespace (strace -f
        follows it; -b execve lets go of the command, which the freeze must
        hold with ptrace itself). The stop names the path and the error."""
        self.check_failed_resume("move_mount", "ENOSPC", ("-f", "-b", "execve"),
                                 "cannot re-protect {lock}: No space left on device")

    def check_failed_resume(self, call, error, follow, why):
        """Resume fails where strace makes `call` fail with `error` (with
        `follow`, strace's options for which processes it traces); the
        guard stops the sandbox and says `why` ({lock}: Cargo.lock)."""
        strace = shutil.which("strace", path=te.SAFE_PATH)
        if strace is None:
            self.skipTest("needs strace to make the resume fail")
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                chown_all(pr, user)
                lock = os.path.join(pr.proj, "Cargo.lock")
                token = "FAILRESUME-%d-%s" % (os.getpid(), user)
                progress = os.path.join(pr.tmp, "progress")
                script = ("setsid sh -c 'while :; do echo x >> \"$TMPDIR/progress\"; "
                          "{ echo %s >> Cargo.lock; } 2>/dev/null; done' & "
                          "touch \"$TMPDIR/ready\"; sleep 30; : %s" % (MARK, token))
                log = os.path.join(pr.tmp, "strace.log")
                p = self.traced(pr, user, [strace, "-qq", "-o", log] + list(follow) + [
                    "-e", "trace=%s,pidfd_send_signal" % call,
                    "-e", "inject=%s:error=%s" % (call, error)], script)
                self.wait_until(p, lambda: os.path.exists(progress) and
                                os.path.getsize(progress) > 0, "the agent ran")
                r = self.pause(pr, user, 'wc -c < "$TMPDIR/progress" > "$TMPDIR/frozen" && '
                               "cp Cargo.lock x.tmp && echo new >> x.tmp && mv x.tmp Cargo.lock")
                self.assertNotEqual(r.rc, 0, r)
                res = self.traced_result(p, timeout=30)
                self.assertEqual(res.rc, STOPPED, res)
                self.assertRegex(res.stderr, r"(?m)^ralon: the guard stopped the sandbox: %s$"
                                 % re.escape(why.format(lock=os.path.realpath(lock))), res)
                self.assertEqual(os.path.getsize(progress),
                                 int(te.read_text(os.path.join(pr.tmp, "frozen")).strip()),
                                 "a frozen process ran after the failed resume: %r" % (res,))
                self.assertNotIn(MARK, te.read_text(lock), res)
                self.assertNoLeftovers(token, res, at_once=True)
                # Whether a frozen process gets to run in that moment is a
                # race; the order of the guard's signals is not. After the
                # failure, each frozen process is killed before any is
                # continued.
                trace = te.read_text(log)
                failed = r"%s\(.*= -1 %s" % (call, error)
                self.assertRegex(trace, failed, trace)
                after = trace[re.search(failed, trace).end():]
                signals = re.findall(r"pidfd_send_signal\((\d+), (SIG[A-Z]+)", after)
                killed = {fd for fd, sig in signals if sig == "SIGKILL"}
                self.assertTrue(killed, trace)
                seen_kill = set()
                for fd, sig in signals:
                    if sig == "SIGKILL":
                        seen_kill.add(fd)
                    elif sig == "SIGCONT":
                        self.assertIn(fd, seen_kill, "continued before it was killed:\n" + trace)

    def test_nothing_to_pause(self):
        pr = self.project_as(te.ME)
        r = te.run([te.Tools.ralon, "pause", "--", "sh", "-c", "exit 3"], te.ME, pr.proj,
                   pr.env())
        self.assertEqual(r.rc, 3, r)
        self.assertIn("nothing to pause", r.stdout, r)
        # -C DIR: the command starts in DIR; one not found exits 127.
        sub = os.path.join(pr.proj, "src")
        r = te.run([te.Tools.ralon, "-C", "src", "pause", "--", "sh", "-c", "pwd -P; exit 4"],
                   te.ME, pr.proj, pr.env())
        self.assertEqual(r.rc, 4, r)
        self.assertTrue(r.stdout.endswith("\n%s\n" % os.path.realpath(sub)), r)
        r = te.run([te.Tools.ralon, "pause", "--", "ralon-no-such-command"], te.ME, pr.proj,
                   pr.env())
        self.assertEqual(r.rc, 127, r)
        r = te.run([te.Tools.ralon, "resume"], te.ME, pr.proj, pr.env())
        self.assertEqual(r.rc, 0, r)
        self.assertIn("nothing to resume", r.stdout, r)

    def test_a_sandbox_cannot_pause_its_guard(self):
        # The agent itself (a PID namespace deeper) is not trusted by its
        # guard: its pause finds nothing, and the sandbox is not frozen.
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                r = te.run(te.ralon_run("mount", '"$RALON" pause; echo rc=$?'), user, pr.proj,
                           pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertIn("nothing to pause", r.stdout, r)
                self.assertIn("rc=0", r.stdout, r)


class TestHardLinkMadeOutside(GuardBase):
    """A hard link made outside during the session is another name, not
    under the read-only mount: the guard stops the sandbox."""

    def test_hard_link_made_outside_stops_the_sandbox(self):
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                # Writes through the link once it exists (never makes it).
                s = Session(self, pr, user, "mount",
                            'touch "$TMPDIR/ready"; while :; do { test -f src/alias && '
                            'echo %s >> src/alias; } 2>/dev/null; done' % MARK)
                s.wait_ready()
                outside(user, pr.proj, "ln Cargo.lock src/alias", pr.env())
                r = s.wait()
                self.assertStoppedFor(r, pr, "Cargo.lock")
                self.assertNoLeftovers(MARK, r)


class TestChangedAtStart(GuardBase):
    """A protected file replaced outside after the binds were made but
    before the command runs: its mount is gone, and the command would start
    with the new file writable. The last checks before the execve (every
    pin and protected path still the object bound, still a mount point in
    the locked namespace) must refuse to run: exit 2, the path named, the
    command never started. Also when the object is the same one, under the
    same name, with as many links, but no longer mounted on (a link made,
    the name removed, which detaches its mount, and put back): only the
    second check sees that.

    The moment is made certain: strace holds the command's process right
    after it has locked the namespace (when it opens its /proc/self/ns/mnt
    for the guard, just before those checks), the change is made then, and
    only once it is done does the test let go: it kills strace, and the
    kernel detaches and resumes every process strace traced. (A hold of a
    fixed time, however long, could end before a slow outside change had.)
    ralon runs under a shell that writes its exit status to a file, since
    ralon is strace's child and strace is gone when ralon exits."""

    # Longer than any test: the hold ends when the test kills strace.
    DELAY_US = 600000000

    def test_a_change_before_the_command_runs_refuses_to_run(self):
        strace = shutil.which("strace", path=te.SAFE_PATH)
        if strace is None:
            self.skipTest("needs strace to hold ralon at that moment")
        changes = {
            "replaced": "cp Cargo.lock x && mv x Cargo.lock",
            "unmounted": "ln Cargo.lock x && rm Cargo.lock && ln x Cargo.lock && rm x",
        }
        for user, (change, script) in ((u, c) for u in self.mount_users()
                                       for c in changes.items()):
            with self.subTest(user=user, change=change):
                pr = self.project_as(user)
                lock = os.path.join(pr.proj, "Cargo.lock")
                ino = os.stat(lock).st_ino
                log = os.path.join(pr.tmp, "strace.log")
                rc_file = os.path.join(pr.tmp, "ralon.rc")
                token = "START-%d-%s" % (os.getpid(), user)
                cmd = "echo '%s' >&2; echo %s >> Cargo.lock" % (te.STARTED, token)
                argv = ([strace, "-f", "-qq", "-o", log, "-e", "trace=openat", "-P",
                         "/proc/self/ns/mnt", "-e",
                         "inject=openat:delay_exit=%d" % self.DELAY_US,
                         "/bin/sh", "-c", '"$@"; echo $? > "$0"', rc_file]
                        + te.ralon_run("mount", cmd))
                # A sanitized build's leak checker cannot work under ptrace.
                env = dict(pr.env(), ASAN_OPTIONS="detect_leaks=0")
                p = subprocess.Popen(argv, cwd=pr.proj, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     errors="replace", preexec_fn=user_preexec(user))
                try:
                    deadline = time.monotonic() + 60
                    while not (os.path.exists(log) and "ns/mnt" in te.read_text(log)):
                        self.assertLess(time.monotonic(), deadline, "ralon never locked")
                        self.assertIsNone(p.poll(), "ralon ended before it locked")
                        time.sleep(0.001)
                    outside(user, pr.proj, script, pr.env())
                finally:
                    # The hold ends here, the change made (or the test failed).
                    p.kill()
                    out, err = p.communicate(timeout=te.TIMEOUT)
                self.assertTrue(os.path.exists(rc_file), "ralon did not end: %r" % err)
                r = te.Result(int(te.read_text(rc_file)), out, err)
                self.assertNotIn(te.STARTED, r.stderr, r)
                self.assertNotIn(token, te.read_text(lock), r)
                if change == "unmounted":
                    st = os.stat(lock)
                    self.assertEqual((st.st_ino, st.st_nlink), (ino, 1))
                self.assertEqual(r.rc, 2, r)
                self.assertRegex(r.stderr, r"(?m)^ralon: %s changed while ralon started, after it "
                                 r"was protected; refusing to run$"
                                 % re.escape(os.path.realpath(lock)), r)
                self.assertNoLeftovers(token, r, at_once=True)


class TestChangedBeforeTheWatches(GuardBase):
    """The guard sets its watches once the command runs, and looks once
    more then: a hard link to a protected file made outside after the
    command's process made its last checks, before the watches are set,
    stops the sandbox as a change the watches see would (exit 125, the
    path named), and the command, which would write through the link a
    moment later, does not. (A link detaches no mount, so the sandbox's
    mount table, which the guard polls from before, does not show it.)

    The moment is made certain: strace holds the guard at its first
    inotify_add_watch(2) while the command has started (it says so in a
    file), and the link is made then."""

    DELAY_US = 700000

    def test_a_change_before_the_watches_stops_the_sandbox(self):
        strace = shutil.which("strace", path=te.SAFE_PATH)
        if strace is None:
            self.skipTest("needs strace to hold the guard at that moment")
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                lock = os.path.join(pr.proj, "Cargo.lock")
                ready = os.path.join(pr.tmp, "ready")
                token = "WATCH-%d-%s" % (os.getpid(), user)
                # Writes through the link a while after the guard lets go
                # of the watch.
                cmd = ('touch "$TMPDIR/ready"; sleep %s; echo %s >> src/alias'
                       % (2 * self.DELAY_US / 1e6, token))
                p = self.traced(pr, user, [
                    strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=inotify_add_watch",
                    "-e", "inject=inotify_add_watch:delay_enter=%d:when=1" % self.DELAY_US], cmd)
                self.wait_until(p, lambda: os.path.exists(ready), "the command started")
                outside(user, pr.proj, "ln Cargo.lock src/alias", pr.env())
                r = self.traced_result(p)
                self.assertStoppedFor(r, pr, "Cargo.lock")
                self.assertNotIn(token, te.read_text(lock), r)
                self.assertNoLeftovers(token, r, at_once=True)


class TestWatchLimit(GuardBase):
    """A watch the guard cannot set once the command runs (the limit of
    inotify watches, fs.inotify.max_user_watches, reached) stops the
    sandbox (exit 125), and ralon says so and what to do about that limit,
    not what to do about a change made outside, since none was. strace
    makes the guard's first inotify_add_watch(2) fail with ENOSPC, as the
    kernel does at the limit (lowering the limit itself would reach every
    process of the user on the machine)."""

    def test_the_watch_limit_stops_the_sandbox_and_says_so(self):
        strace = shutil.which("strace", path=te.SAFE_PATH)
        if strace is None:
            self.skipTest("needs strace to make the guard's watch fail")
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                lock = os.path.join(pr.proj, "Cargo.lock")
                out = os.path.join(pr.proj, "src", "after")
                token = "WLIMIT-%d-%s" % (os.getpid(), user)
                cmd = "sleep 2; echo %s > src/after; sleep 300 %s" % (token, token)
                argv = [strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=inotify_add_watch",
                        "-e", "inject=inotify_add_watch:error=ENOSPC:when=1"
                        ] + te.ralon_run("mount", cmd)
                env = dict(pr.env(), ASAN_OPTIONS="detect_leaks=0")
                p = subprocess.run(argv, cwd=pr.proj, env=env, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, errors="replace",
                                   preexec_fn=user_preexec(user), timeout=te.TIMEOUT)
                r = te.Result(p.returncode, p.stdout, p.stderr)
                self.assertEqual(r.rc, STOPPED, r)
                self.assertRegex(r.stderr, r"(?m)^ralon: the guard stopped the sandbox: the guard "
                                 r"cannot watch /\S*: the limit of inotify watches "
                                 r"\(fs\.inotify\.max_user_watches\) is reached$", r)
                self.assertIn("sysctl fs.inotify.max_user_watches", r.stderr, r)
                self.assertIn("--backend landlock", r.stderr, r)
                # Nothing changed outside: no advice about changes.
                self.assertNotIn("ralon pause", r.stderr, r)
                self.assertNotIn("changed outside", r.stderr, r)
                # The command was stopped before it wrote.
                self.assertFalse(os.path.exists(out), r)
                self.assertNotIn(token, te.read_text(lock), r)
                self.assertNoLeftovers(token, r, at_once=True)


class TestDetachSeenByTheMountCheck(GuardBase):
    """The guard learns of a protected file replaced outside twice: the
    kernel detaches the file's mount (an event on the sandbox's mount
    table) and the directory's watch reports the new name. Either must stop
    the sandbox alone. Here the guard is blind to the second: strace makes
    every inotify_add_watch(2) report success without setting a watch, so
    only the mount check can stop the racer. It asks the kernel about each
    mount by its id (statmount(2)) where it can; the second row makes the
    namespace's id unknown (every ioctl(2) fails), so that it reads the
    mount table instead. A check that misses the detached mount lets the
    agent run to its end (exit 0) with the file writable."""

    def test_a_detached_mount_stops_the_sandbox(self):
        strace = shutil.which("strace", path=te.SAFE_PATH)
        if strace is None:
            self.skipTest("needs strace to blind the guard's watches")
        ways = {
            "by mount id": [],
            "by the mount table": ["-e", "trace=inotify_add_watch,ioctl",
                                   "-e", "inject=ioctl:error=ENOTTY"],
        }
        for user in self.mount_users():
            for way, extra in ways.items():
                with self.subTest(user=user, way=way):
                    pr = self.project_as(user)
                    chown_all(pr, user)
                    token = "DETACH-%d-%s" % (os.getpid(), user)
                    ready = os.path.join(pr.tmp, "ready")
                    # Ends by itself after a while: a guard that never
                    # stops it shows as exit 0, not as a hung test.
                    script = ('touch "$TMPDIR/ready"; end=$(($(date +%%s) + 20)); '
                              'while [ "$(date +%%s)" -lt "$end" ]; do '
                              '{ echo %s >> Cargo.lock; } 2>/dev/null; done; : %s'
                              % (MARK, token))
                    trace = extra or ["-e", "trace=inotify_add_watch"]
                    p = self.traced(pr, user, [strace, "-f", "-qq", "-o", "/dev/null"] + trace
                                    + ["-e", "inject=inotify_add_watch:retval=1"], script)
                    self.wait_until(p, lambda: os.path.exists(ready), "the agent ran")
                    outside(user, pr.proj,
                            "cp Cargo.lock x.tmp && echo new >> x.tmp && mv x.tmp Cargo.lock",
                            pr.env())
                    r = self.traced_result(p)
                    self.assertStoppedFor(r, pr, "Cargo.lock")
                    self.assertNoLeftovers(token, r, at_once=True)


class TestChangedAtTheEnd(GuardBase):
    """A protected file replaced outside just as the command ends: the
    guard has read the command's end but not yet the change, and its loop
    is over. Its last look, once nothing is left in the sandbox, must
    still stop the sandbox (exit 125, the path named): the agent may have
    written the file in the moment before it ended. strace holds the guard
    at its first wait4(2), where it collects the ended command, while the
    change is made; the second row also blinds the guard's watches
    (inotify_add_watch(2) reports success without setting a watch), so
    that only the mount table can tell. A guard without the last look
    lets the run end as the agent's own (exit 0)."""

    HOLD_US = 4000000

    def test_a_change_as_the_command_ends_stops_the_sandbox(self):
        strace = shutil.which("strace", path=te.SAFE_PATH)
        if strace is None:
            self.skipTest("needs strace to hold the guard at that moment")
        ways = {
            "by the watches": ["-e", "trace=wait4"],
            "by the mount table": ["-e", "trace=wait4,inotify_add_watch",
                                   "-e", "inject=inotify_add_watch:retval=1"],
        }
        for user in self.mount_users():
            for way, trace in ways.items():
                with self.subTest(user=user, way=way):
                    pr = self.project_as(user)
                    chown_all(pr, user)
                    token = "ATEND-%d-%s" % (os.getpid(), user)
                    done = os.path.join(pr.tmp, "done")
                    script = ('touch "$TMPDIR/ready"; sleep 0.3; touch "$TMPDIR/done"; : %s'
                              % token)
                    # No -f: only the guard is traced (its first wait4 is
                    # the one that collects the command).
                    p = self.traced(pr, user, [strace, "-qq", "-o", "/dev/null"] + trace
                                    + ["-e", "inject=wait4:delay_enter=%d:when=1" % self.HOLD_US],
                                    script)
                    self.wait_until(p, lambda: os.path.exists(done), "the agent ended")
                    # The command has ended; the guard is held.
                    time.sleep(0.5)
                    outside(user, pr.proj,
                            "cp Cargo.lock x.tmp && echo new >> x.tmp && mv x.tmp Cargo.lock",
                            pr.env())
                    self.assertIsNone(p.poll(), "the guard was not held: test invalid")
                    r = self.traced_result(p)
                    self.assertStoppedFor(r, pr, "Cargo.lock")
                    self.assertNoLeftovers(token, r, at_once=True)


class TestLeftovers(GuardBase):
    """ATTACKS #74: nothing the agent started outlives it."""

    def test_nothing_outlives_the_agent(self):
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                token = "LEFTOVER-%d" % os.getpid()
                script = ("setsid sh -c 'sleep 300 %s' & "
                          "sh -c 'trap \"\" TERM HUP; exec sleep 301 %s' & "
                          "unshare -Urpf --mount-proc sh -c 'sleep 302 %s' & "
                          "sleep 0.5; exit 0" % (token, token, token))
                r = te.run(te.ralon_run("mount", script), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertNoLeftovers(token, r, at_once=True)


class TestProcessUnderTheGuard(GuardBase):
    def test_signals_from_outside_reach_the_agent(self):
        for user in self.mount_users():
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                with self.subTest(user=user, signal=sig):
                    pr = self.project_as(user)
                    s = Session(self, pr, user, "mount", 'touch "$TMPDIR/ready"; exec sleep 300')
                    s.wait_ready()
                    s.proc.send_signal(sig)
                    r = s.wait()
                    self.assertEqual(r.rc, -sig, r)

    def test_every_catchable_signal_is_relayed(self):
        # Not only the usual ones: what the command traps, it gets.
        for user in self.mount_users():
            for sig in (signal.SIGXCPU, signal.SIGUSR1, signal.SIGRTMIN + 3):
                with self.subTest(user=user, signal=sig):
                    pr = self.project_as(user)
                    s = Session(self, pr, user, "mount",
                                'trap "exit 3" %d; touch "$TMPDIR/ready"; '
                                'while :; do sleep 0.05; done' % sig)
                    s.wait_ready()
                    s.proc.send_signal(sig)
                    r = s.wait()
                    self.assertEqual(r.rc, 3, r)

    def test_the_guard_killed_ends_the_sandbox(self):
        # SIGKILL, which the guard cannot relay or outlive: PID 1 dies
        # with it (PR_SET_PDEATHSIG, and its socket to the guard hangs up),
        # and with PID 1 every process of the namespace, one in a session
        # of its own and one that ignores SIGTERM too. The racer never
        # wrote the protected file.
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                lock = os.path.join(pr.proj, "Cargo.lock")
                before = te.read_text(lock)
                token = "GUARDKILL-%d-%s" % (os.getpid(), user)
                script = ("setsid sh -c 'sleep 300; : %s' & "
                          "sh -c 'trap \"\" TERM HUP; sleep 301; : %s' & %s"
                          % (token, token, racer("Cargo.lock")))
                s = Session(self, pr, user, "mount", script)
                s.wait_ready()
                # The guard and PID 1 (ralon's command line), the agent and
                # the two it left.
                self.wait_until(s.proc, lambda: len(session_processes(token)) == 5,
                                "the agent's processes ran")
                s.proc.kill()
                r = s.wait()
                self.assertEqual(r.rc, -signal.SIGKILL, r)
                self.assertNoLeftovers(token, r)
                self.assertEqual(te.read_text(lock), before)

    def test_the_guard_cannot_be_traced_or_read(self):
        # As the same user outside: the guard is not dumpable, so its
        # /proc files are root's, and attaching to it (PTRACE_SEIZE, as
        # strace -p does) is refused, where the same attach to another
        # process of that user succeeds. Not as root, whose CAP_SYS_PTRACE
        # attaches to any process, dumpable or not.
        for user in [u for u in self.mount_users() if u != "root"]:
            with self.subTest(user=user):
                pr = self.project_as(user)
                s = Session(self, pr, user, "mount", 'touch "$TMPDIR/ready"; exec sleep 300')
                s.wait_ready()
                other = subprocess.Popen(["sleep", "300"], preexec_fn=user_preexec(user))
                self.addCleanup(lambda o=other: (o.kill(), o.wait()))
                for pid, outcome in ((other.pid, "OK"), (s.proc.pid, "EPERM")):
                    r = te.run(["python3", te.Tools.op, "ptrace", str(pid)], user, pr.proj,
                               pr.env())
                    self.assertEqual(r.stdout, "ptrace: %s\n" % outcome, r)
                self.assertEqual([os.stat("/proc/%d/%s" % (s.proc.pid, f)).st_uid
                                  for f in ("status", "mem", "environ")], [0, 0, 0])
                self.assertIsNone(s.proc.poll(), s.result())

    def test_kill_zero_sigstop_does_not_stall_the_guard(self):
        # The agent stops its own group; a process it started in another
        # group keeps trying to write. The guard is in neither group and
        # does not stop with them: an outside change is still caught.
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                script = ("setsid sh -c 'while :; do { echo %s >> Cargo.lock; } 2>/dev/null; "
                          "done' & touch \"$TMPDIR/ready\"; kill -STOP 0; exit 4" % MARK)
                s = Session(self, pr, user, "mount", script)
                s.wait_ready()
                time.sleep(0.3)
                with open("/proc/%d/stat" % s.proc.pid) as f:
                    self.assertNotEqual(f.read().rsplit(")", 1)[1].split()[0], "T",
                                        "the guard stopped with the agent")
                outside(user, pr.proj, "cp Cargo.lock x.tmp && mv x.tmp Cargo.lock", pr.env())
                r = s.wait()
                self.assertStoppedFor(r, pr, "Cargo.lock")
                self.assertNoLeftovers(MARK, r)

    def test_terminal_tricks_do_not_stall_the_guard(self):
        # Output suspended (tcflow TCOOFF) and TOSTOP: the guard still stops
        # the sandbox on an outside change, and still says why.
        tricks = {
            "tcoff": "python3 -c 'import termios; termios.tcflow(1, termios.TCOOFF)';",
            "tostop": "stty tostop;",
        }
        for user in self.mount_users():
            for trick, cmd in tricks.items():
                with self.subTest(user=user, trick=trick):
                    pr = self.project_as(user)
                    s = Session(self, pr, user, "mount", cmd + racer("Cargo.lock"), pty=True)
                    s.wait_ready()
                    outside(user, pr.proj, "sed -i s/lock/LOCK/ Cargo.lock", pr.env())
                    r = s.wait()
                    self.assertStoppedFor(r, pr, "Cargo.lock")
                    self.assertNoLeftovers(MARK, r)

    def test_the_guard_alone_asks_for_a_short_slice(self):
        # The guard wakes to stop an agent that may be writing in a loop:
        # it asks for the scheduler's shortest slice (0.1 ms, Linux 6.12's
        # EEVDF), keeping the nice value it was started with, and asks it
        # only for itself, after PID 1 and the command began: neither they
        # nor anything the agent starts inherit it.
        release = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
        if release < (6, 12) or not os.path.exists("/proc/self/sched"):
            self.skipTest("needs Linux 6.12's custom slices and /proc/PID/sched")

        def sched(pid):
            with open("/proc/%d/sched" % pid) as f:
                slice_ns = int(re.search(r"(?m)^se\.slice\s*:\s*(\d+)", f.read()).group(1))
            with open("/proc/%d/stat" % pid) as f:
                nice = int(f.read().rsplit(")", 1)[1].split()[16])
            return slice_ns, nice
        for user in self.mount_users():
            with self.subTest(user=user):
                pr = self.project_as(user)
                token = "SLICE-%d-%s" % (os.getpid(), user)
                # Started at nice 5, as `nice -n 5 ralon run` would be.
                os.setpriority(os.PRIO_PROCESS, 0, 5)
                try:
                    s = Session(self, pr, user, "mount",
                                'touch "$TMPDIR/ready"; sleep 300; : %s' % token)
                finally:
                    os.setpriority(os.PRIO_PROCESS, 0, 0)
                s.wait_ready()
                self.wait_until(s.proc, lambda: len(session_processes(token)) == 3,
                                "PID 1 and the command ran")
                # The guard asks once the command runs, as it waits.
                self.wait_until(s.proc, lambda: sched(s.proc.pid)[0] == 100000,
                                "the guard asked for a 0.1 ms slice")
                self.assertEqual(sched(s.proc.pid), (100000, 5))
                # PID 1 (ralon's command line too) and the command's shell.
                inside = [p for p in session_processes(token) if p != s.proc.pid]
                self.assertEqual(len(inside), 2, inside)
                for pid in inside:
                    slice_ns, nice = sched(pid)
                    self.assertNotEqual(slice_ns, 100000, pid)
                    self.assertEqual(nice, 5, pid)
                self.assertIsNone(s.proc.poll(), s.result())

    def test_bubblewrap_inside(self):
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            self.skipTest("bubblewrap is not installed")
        # As an ordinary user (root's agent has no CAP_SETFCAP to map uid 0
        # in a namespace of its own).
        for user in [u for u in self.mount_users() if u != "root"]:
            with self.subTest(user=user):
                pr = self.project_as(user)
                r = te.run(te.ralon_run("mount", "bwrap --unshare-all --ro-bind / / true && "
                                        "echo nested-ok"), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertIn("nested-ok", r.stdout, r)

    def test_seal_turns_nested_namespaces_off(self):
        # A nested user and mount namespace (`nest`: unshare(2) with no uid
        # map needed, which root's agent could not write): made without
        # --seal; with it, max_user_namespaces is 0 in the agent's user
        # namespace, and the kernel says ENOSPC.
        for user in self.mount_users():
            for seal, outcome in (((), "OK"), (("--seal",), "ENOSPC")):
                with self.subTest(user=user, seal=seal):
                    pr = self.project_as(user)
                    r = te.run(te.ralon_run("mount", 'python3 "$OP" nest; echo rc=$?',
                                            extra=seal), user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 0, r)
                    self.assertRegex(r.stdout, r"(?m)^nest: %s\nrc=%d$"
                                     % (outcome, outcome != "OK"), r)


def setUpModule():
    te.setUpModule()


def tearDownModule():
    te.tearDownModule()


if __name__ == "__main__":
    unittest.main()
