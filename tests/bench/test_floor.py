#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/floor.c, the measuring stick bench/run holds ralon against: each
mode must do the work it stands for (a floor that protected nothing, or
loaded no library, would flatter the targets it is compared with), checked
from outside. No timing here."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FLOOR = os.path.join(HERE, "..", "..", "bench", "floor.c")
CC = os.environ.get("CC", "cc")


def have_libyaml():
    return shutil.which("pkg-config") is not None and subprocess.run(
        ["pkg-config", "--exists", "yaml-0.1"]).returncode == 0


def namespaces_work():
    r = subprocess.run(["unshare", "--user", "--mount", "true"], capture_output=True)
    return r.returncode == 0


@unittest.skipUnless(shutil.which(CC), "no C compiler")
class Floor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ralon-floor-")
        cls.floor = os.path.join(cls.tmp, "floor")
        subprocess.run([CC, "-O2", "-Wall", "-Wextra", "-Werror", "-o", cls.floor, FLOOR],
                       check=True)
        cls.libs = None
        if have_libyaml():
            cls.libs = os.path.join(cls.tmp, "floor-libs")
            flags = subprocess.run(["pkg-config", "--cflags", "--libs", "yaml-0.1"],
                                   check=True, capture_output=True, text=True).stdout.split()
            subprocess.run([CC, "-O2", "-Wall", "-Wextra", "-Werror", "-DFLOOR_LIBS", "-o",
                            cls.libs, FLOOR] + flags + ["-ldl"], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def project(self):
        d = os.path.realpath(tempfile.mkdtemp(dir=self.tmp))
        locked = os.path.join(d, "locked.txt")
        with open(locked, "w") as f:
            f.write("kept\n")
        return d, locked

    def check_protects(self, mode):
        d, locked = self.project()
        # Present already: a new name beside the protected file is not
        # what Landlock's floor grants.
        free = os.path.join(d, "free.txt")
        with open(free, "w") as f:
            f.write("old\n")
        script = 'echo x >> "$1"; a=$?; echo y > "$2"; echo "$a $? $$"'
        r = subprocess.run([self.floor, mode, locked, "--", "sh", "-c", script, "sh", locked,
                            free], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        blocked, wrote, pid = r.stdout.split()
        self.assertNotEqual(blocked, "0", "the protected file was writable")
        self.assertEqual(wrote, "0", "the unprotected file was not writable")
        with open(locked) as f:
            self.assertEqual(f.read(), "kept\n")
        with open(free) as f:
            self.assertEqual(f.read(), "y\n")
        return int(pid)

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_mount_protects(self):
        self.check_protects("mount")

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_guarded_protects_in_a_pid_namespace_with_its_proc(self):
        # The command is PID 2 there (PID 1 is the floor's own), and the
        # /proc it sees is that namespace's: PID 1 and itself (the shell
        # expands the glob without starting anything).
        self.assertEqual(self.check_protects("guarded"), 2)
        d, locked = self.project()
        r = subprocess.run([self.floor, "guarded", locked, "--", "sh", "-c", "echo /proc/[0-9]*"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["/proc/1", "/proc/2"])

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_watched_protects_in_a_pid_namespace_pinning_each_directory(self):
        self.assertEqual(self.check_protects("watched"), 2)
        d, locked = self.project()
        # Every directory from below / down to the path is a mount point
        # there (pinned), and the command's working directory is resolved
        # again past the binds: a relative path reaches the read-only file.
        script = ('cut -d" " -f5 /proc/self/mountinfo; echo x >> locked.txt && echo wrote; '
                  'echo /proc/[0-9]*')
        r = subprocess.run([self.floor, "watched", locked, "--", "sh", "-c", script], cwd=d,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        points = set(r.stdout.split())
        pins = []
        p = os.path.dirname(locked)
        while p != "/":
            pins.append(p)
            p = os.path.dirname(p)
        self.assertTrue(pins)
        for p in pins + [locked]:
            self.assertIn(p, points)
        self.assertNotIn("wrote", r.stdout)
        self.assertIn("/proc/1", points)
        with open(locked) as f:
            self.assertEqual(f.read(), "kept\n")

    def watched_running(self, locked, extra=()):
        """The floor in watched mode around `sleep 30`, once its watches
        are set (counted from outside): (process, its inotify fdinfo)."""
        p = subprocess.Popen([self.floor, "watched", locked] + list(extra) +
                             ["--", "sleep", "30"], stderr=subprocess.PIPE, text=True)
        # The directories holding an object (/ included) and each path.
        paths = [locked] + list(extra)
        dirs = set()
        for q in paths:
            while q != "/":
                q = os.path.dirname(q)
                dirs.add(q)
        want = len(dirs) + len(paths)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for fd in os.listdir("/proc/%d/fd" % p.pid):
                try:
                    with open("/proc/%d/fdinfo/%s" % (p.pid, fd)) as f:
                        info = f.read()
                except OSError:
                    continue
                if info.count("inotify wd:") == want:
                    return p, info
            time.sleep(0.01)
        p.kill()
        p.communicate()
        self.fail("the floor never held %d watches" % want)

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_watched_holds_its_watches_socket_and_the_sandbox_table(self):
        d, locked = self.project()
        other = os.path.join(d, "other.txt")
        with open(other, "w") as f:
            f.write("kept\n")
        p, _ = self.watched_running(locked, [other])
        try:
            links = []
            for fd in os.listdir("/proc/%d/fd" % p.pid):
                try:
                    links.append(os.readlink("/proc/%d/fd/%s" % (p.pid, fd)))
                except OSError:
                    pass
            # The sandbox's mount table, sent by the command's process.
            self.assertTrue([l for l in links if l.endswith("/mountinfo")], links)
            # A listening socket (flags __SO_ACCEPTCON) at its name.
            with open("/proc/net/unix") as f:
                rows = [l.split() for l in f.read().splitlines()[1:]]
            name = "@ralon-floor/%d" % p.pid
            listening = [r for r in rows if len(r) > 7 and r[7] == name]
            self.assertTrue(listening, name)
            self.assertEqual(int(listening[0][3], 16) & 0x10000, 0x10000)
        finally:
            p.kill()
            p.communicate()

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_watched_counts_a_change_made_outside_and_only_then(self):
        d, locked = self.project()
        # Nothing changed: no count. A new name beside the path is no change.
        p, _ = self.watched_running(locked)
        with open(os.path.join(d, "free.txt"), "w") as f:
            f.write("x\n")
        subprocess.run(["pkill", "-x", "-P", str(p.pid), "sleep"])
        out = p.communicate(timeout=30)[1]
        self.assertNotIn("changed", out)
        # While the command runs: the file's mode changed (only its watch
        # can tell), then the file replaced by a rename (the mount table
        # tells too).
        def chmod():
            os.chmod(locked, 0o600)

        def rename():
            new = os.path.join(d, "new.txt")
            with open(new, "w") as f:
                f.write("new\n")
            os.rename(new, locked)

        for change in (chmod, rename):
            with self.subTest(change=change.__name__):
                p, _ = self.watched_running(locked)
                change()
                time.sleep(0.2)
                subprocess.run(["pkill", "-x", "-P", str(p.pid), "sleep"])
                out = p.communicate(timeout=30)[1]
                self.assertRegex(out, r"floor: [1-9][0-9]* changed")

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_namespace_modes_keep_the_callers_ids(self):
        # The locking copy maps the caller's uid and gid, as ralon's must
        # (unmapped, the command would be the overflow uid): writing the
        # maps is part of the floor's cost.
        for mode in ("mount", "guarded", "watched"):
            with self.subTest(mode=mode):
                d, locked = self.project()
                r = subprocess.run([self.floor, mode, locked, "--", "sh", "-c", "id -u; id -g"],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout.split(), [str(os.getuid()), str(os.getgid())])

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_guarded_pid1_shares_the_floors_memory(self):
        # As ralon's guard starts its PID 1 (clone(CLONE_VM)): a forked
        # PID 1 would make every page the floor writes afterwards a copy,
        # a cost ralon does not pay. kcmp(KCMP_VM) from outside says
        # whether two processes share one address space.
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        SYS_kcmp, KCMP_VM = 312, 1
        if os.uname().machine != "x86_64":
            self.skipTest("kcmp's number is x86-64's here")
        d, locked = self.project()
        # The command sleeps until the test ends it; meanwhile the floor has
        # its two children: PID 1 and the command, past its execve.
        p = subprocess.Popen([self.floor, "guarded", locked, "--", "sleep", "30"])
        try:
            def comm(pid):
                try:
                    with open("/proc/%d/comm" % pid) as f:
                        return f.read().strip()
                except OSError:
                    return None

            children = []
            deadline = time.monotonic() + 20
            # Until the command has executed sleep: before its execve it
            # shares the floor's memory too.
            while p.poll() is None and time.monotonic() < deadline:
                with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
                    children = [int(c) for c in f.read().split()]
                if len(children) == 2 and "sleep" in [comm(c) for c in children]:
                    break
                time.sleep(0.02)
            self.assertEqual(len(children), 2, children)
            shared = []
            for c in children:
                r = libc.syscall(SYS_kcmp, p.pid, c, KCMP_VM, 0, 0)
                self.assertGreaterEqual(r, 0, os.strerror(ctypes.get_errno()))
                shared.append(r == 0)
            # PID 1 shares it; the command, past its execve, does not.
            self.assertEqual(sorted(shared), [False, True], children)
        finally:
            p.kill()
            p.wait(timeout=30)

    @unittest.skipUnless(namespaces_work(), "no user namespaces")
    def test_guarded_passes_the_status_on(self):
        for mode in ("guarded", "watched"):
            with self.subTest(mode=mode):
                d, locked = self.project()
                r = subprocess.run([self.floor, mode, locked, "--", "sh", "-c", "exit 7"])
                self.assertEqual(r.returncode, 7)

    def test_landlock_protects(self):
        d, locked = self.project()
        probe = subprocess.run([self.floor, "landlock", locked, "--", "true"],
                               capture_output=True, text=True)
        if "landlock_create_ruleset" in probe.stderr:
            self.skipTest("no Landlock")
        self.check_protects("landlock")

    def test_libs_build_loads_libyaml_and_libcap(self):
        if self.libs is None:
            self.skipTest("no libyaml headers")
        needed = subprocess.run(["readelf", "-d", self.libs], check=True, capture_output=True,
                                text=True).stdout
        self.assertIn("libyaml-0.so.2", needed)
        # Every backend mode loads libcap first, before reading its
        # arguments (here: none, so it then refuses).
        r = subprocess.run(["sh", "-c", 'LD_DEBUG=files "$0" landlock 2>&1', self.libs],
                           capture_output=True, text=True)
        self.assertIn("libcap.so.2", r.stdout)
        self.assertIn("usage: floor", r.stdout)

    def test_libs_hook_parses_the_payload(self):
        if self.libs is None:
            self.skipTest("no libyaml headers")
        ok = subprocess.run([self.libs, "hook"], input='{"tool_name":"Edit"}',
                            capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        bad = subprocess.run([self.libs, "hook"], input='{"tool_name":', capture_output=True,
                             text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("not JSON", bad.stderr)
        r = subprocess.run(["sh", "-c", 'echo "{}" | LD_DEBUG=files "$0" hook 2>&1 >/dev/null',
                            self.libs], capture_output=True, text=True)
        self.assertIn("libjson-c.so.5", r.stdout)
        self.assertNotIn("libcap.so.2", r.stdout)

    def test_libs_yaml_parses_the_whole_file(self):
        if self.libs is None:
            self.skipTest("no libyaml headers")
        good = os.path.join(self.tmp, "good.yaml")
        bad = os.path.join(self.tmp, "bad.yaml")
        with open(good, "w") as f:
            f.write("protect:\n" + "".join("  - src/f%d.c\n" % i for i in range(1000)))
        with open(bad, "w") as f:
            # Valid up to its last line: a parser that stopped early passes.
            f.write("protect:\n" + "".join("  - src/f%d.c\n" % i for i in range(1000)) +
                    "  - [unclosed\n")
        self.assertEqual(subprocess.run([self.libs, "yaml", good]).returncode, 0)
        r = subprocess.run([self.libs, "yaml", bad], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn(bad, r.stderr)

    def test_libs_policy_is_read_before_the_backend(self):
        if self.libs is None:
            self.skipTest("no libyaml headers")
        d, locked = self.project()
        probe = subprocess.run([self.libs, "landlock", locked, "--", "true"],
                               capture_output=True, text=True)
        if "landlock_create_ruleset" in probe.stderr:
            self.skipTest("no Landlock")
        policy = os.path.join(d, "agent.lock")
        with open(policy, "w") as f:
            f.write("protect:\n  - locked.txt\n")
        script = 'echo x >> "$1"; echo $?'
        modes = ["landlock"] + (["guarded", "watched"] if namespaces_work() else [])
        for mode in modes:
            with self.subTest(mode=mode):
                r = subprocess.run([self.libs, mode, "--policy", policy, locked, "--", "sh", "-c",
                                    script, "sh", locked], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotEqual(r.stdout.strip(), "0", "the protected file was writable")
                # The whole policy is read: an error on its last line stops
                # the floor before the command runs.
                with open(policy, "a") as f:
                    f.write("  - [unclosed\n")
                r = subprocess.run([self.libs, mode, "--policy", policy, locked, "--", "sh", "-c",
                                    "echo ran"], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2)
                self.assertIn(policy, r.stderr)
                self.assertNotIn("ran", r.stdout)
                with open(policy, "w") as f:
                    f.write("protect:\n  - locked.txt\n")
        with open(locked) as f:
            self.assertEqual(f.read(), "kept\n")


if __name__ == "__main__":
    unittest.main()
