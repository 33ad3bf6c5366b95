#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An agent wrapper end to end (data/wrappers, ralon(1) WRAPPERS).

A fake agent package: the "real" agent is a script that writes to a
protected and an unprotected file and reports its user namespace; the
wrapper in front of it is the one line wrapper.sh shows, calling the
ralon-wrap helper built for this tree. Verified from outside: in a project
with an agent.lock the protected file is unchanged and the other one is
written; without a policy both are written and ralon says nothing; inside a
`ralon run` of the same project the wrapper does not wrap again (same user
namespace), in another project it does. Arguments and the exit status pass
through unchanged.

Environment: RALON_BINARY, RALON_WRAP (the ralon-wrap built for this tree),
RALON_TEST_TMPDIR. Runs as root and, when root, also as nobody.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from ralontest import as_user  # noqa: E402

RALON = os.environ.get("RALON_BINARY", "build/src/ralon")
WRAP = os.environ.get("RALON_WRAP", "build/data/wrappers/ralon-wrap-test")
TMP_ROOT = os.environ.get("RALON_TEST_TMPDIR") or "/tmp"
NOBODY = 65534

AGENT = """#!/bin/sh
# The "real" agent: tries both files, then reports.
for f in secret.txt notes.txt; do
  if { printf 'agent\\n' > "$f"; } 2>/dev/null; then echo "wrote $f"; else echo "blocked $f"; fi
done
echo "userns $(readlink /proc/self/ns/user)"
echo "args $#:$*"
exit 7
"""


def available_backend():
    """Whether `ralon run` can enforce here at all."""
    d = tempfile.mkdtemp(dir=TMP_ROOT)
    try:
        with open(os.path.join(d, "agent.lock"), "w") as f:
            f.write("version: 1\nprotect:\n  - x\n")
        r = subprocess.run([RALON, "-C", d, "run", "--dry-run", "--", "true"],
                           capture_output=True)
        return r.returncode == 0
    finally:
        shutil.rmtree(d)


class Fixture:
    def __init__(self, uid):
        self.uid = uid
        self.top = tempfile.mkdtemp(prefix="ralon-wrapper-", dir=TMP_ROOT)
        os.chmod(self.top, 0o755)
        # The agent's package: the real program and the wrapper in front.
        lib = os.path.join(self.top, "usr/lib/agent")
        bindir = os.path.join(self.top, "usr/bin")
        os.makedirs(lib)
        os.makedirs(bindir)
        shutil.copy2(RALON, os.path.join(self.top, "ralon"))
        with open(WRAP) as f:
            wrap = f.read().replace(os.path.abspath(RALON), os.path.join(self.top, "ralon"))
        self.write(os.path.join(self.top, "ralon-wrap"), wrap, 0o755)
        self.write(os.path.join(lib, "agent"), AGENT, 0o755)
        self.wrapper = os.path.join(bindir, "agent")
        self.write(self.wrapper, '#!/bin/sh\nexec %s %s "$@"\n'
                   % (os.path.join(self.top, "ralon-wrap"), os.path.join(lib, "agent")), 0o755)
        self.projects = {}
        for name, policy in (("locked", "version: 1\nprotect:\n  - secret.txt\n"),
                             ("other", "version: 1\nprotect:\n  - secret.txt\n"),
                             ("plain", None)):
            d = os.path.join(self.top, name)
            os.makedirs(d)
            if policy:
                self.write(os.path.join(d, "agent.lock"), policy, 0o644)
            self.write(os.path.join(d, "secret.txt"), "secret\n", 0o644)
            self.write(os.path.join(d, "notes.txt"), "notes\n", 0o644)
            self.projects[name] = os.path.realpath(d)
        if uid:
            for dirpath, dirnames, filenames in os.walk(self.top):
                for n in dirnames + filenames:
                    os.chown(os.path.join(dirpath, n), uid, uid)
            os.chown(self.top, uid, uid)

    @staticmethod
    def write(path, text, mode):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)

    def run(self, argv, cwd):
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": cwd, "NO_COLOR": "1"}
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              preexec_fn=as_user(self.uid), timeout=60)

    def content(self, project, rel):
        with open(os.path.join(self.projects[project], rel)) as f:
            return f.read()

    def cleanup(self):
        shutil.rmtree(self.top, ignore_errors=True)


def field(out, key):
    for line in out.splitlines():
        if line.startswith(key + " "):
            return line[len(key) + 1:]
    raise AssertionError("no %r line in %r" % (key, out))


class WrapperTest:
    uid = 0

    def setUp(self):
        self.fx = Fixture(self.uid)
        self.addCleanup(self.fx.cleanup)

    def test_project_with_policy_is_confined(self):
        r = self.fx.run([self.fx.wrapper, "a b", "c"], self.fx.projects["locked"])
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertIn("blocked secret.txt", r.stdout)
        self.assertIn("wrote notes.txt", r.stdout)
        self.assertEqual(field(r.stdout, "args"), "2:a b c")
        self.assertRegex(r.stderr, r"ralon: .*locked")
        # From outside.
        self.assertEqual(self.fx.content("locked", "secret.txt"), "secret\n")
        self.assertEqual(self.fx.content("locked", "notes.txt"), "agent\n")

    def test_no_policy_runs_unchanged(self):
        r = self.fx.run([self.fx.wrapper, "x"], self.fx.projects["plain"])
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("wrote secret.txt", r.stdout)
        self.assertEqual(field(r.stdout, "args"), "1:x")
        self.assertEqual(self.fx.content("plain", "secret.txt"), "agent\n")
        # Not even a user namespace of its own.
        self.assertEqual(field(r.stdout, "userns"), os.readlink("/proc/self/ns/user"))

    def test_no_double_wrapping_in_same_project(self):
        root = self.fx.projects["locked"]
        script = 'echo "outer $(readlink /proc/self/ns/user)"; exec "%s" inner' % self.fx.wrapper
        r = self.fx.run([os.path.join(self.fx.top, "ralon"), "run", "-q", "--", "sh", "-c",
                         script], root)
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(field(r.stdout, "userns"), field(r.stdout, "outer"))
        self.assertIn("blocked secret.txt", r.stdout)
        self.assertEqual(r.stderr, "")
        self.assertEqual(self.fx.content("locked", "secret.txt"), "secret\n")

    def test_wraps_again_in_another_project(self):
        other = self.fx.projects["other"]
        script = ('echo "outer $(readlink /proc/self/ns/user)"; cd "%s" && exec "%s"'
                  % (other, self.fx.wrapper))
        r = self.fx.run([os.path.join(self.fx.top, "ralon"), "run", "-q", "--", "sh", "-c",
                         script], self.fx.projects["locked"])
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertIn("blocked secret.txt", r.stdout)
        self.assertEqual(self.fx.content("other", "secret.txt"), "secret\n")
        self.assertRegex(r.stderr, r"ralon: .*locked")

    def test_usage(self):
        r = self.fx.run([os.path.join(self.fx.top, "ralon-wrap")], self.fx.projects["plain"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: ralon-wrap", r.stderr)


class AsRoot(WrapperTest, unittest.TestCase):
    uid = 0


class AsNobody(WrapperTest, unittest.TestCase):
    uid = NOBODY


def main():
    if not os.access(RALON, os.X_OK) or not os.path.exists(WRAP):
        print("SKIP: no ralon or ralon-wrap built (RALON_BINARY, RALON_WRAP)")
        sys.exit(77)
    if not available_backend():
        if os.environ.get("RALON_REQUIRE_BACKENDS"):
            print("FAIL: no backend can enforce here (RALON_REQUIRE_BACKENDS is set)")
            sys.exit(1)
        print("SKIP: no backend can enforce here")
        sys.exit(77)
    cases = [AsRoot, AsNobody] if os.geteuid() == 0 else [AsRoot]
    if os.geteuid() != 0:
        AsRoot.uid = 0  # runs as the invoking user
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in cases)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
