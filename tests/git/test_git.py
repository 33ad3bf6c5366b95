#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Git, where the kernel's restriction does not reach (issue 32), against the
real `ralon` binary and the real `git`, on real repositories: what an agent
can leave for git to run later (the audit, `run --strict`, the report at the
end of a session), and what commits change (`check --range`, `check
--staged`, the pre-receive hook, the pre-commit framework with this tree's
.pre-commit-hooks.yaml, README's GitHub Actions and GitLab CI steps).

Runs as root and, when root, again as the unprivileged user nobody: every
repository, home directory and copy of the binary is made for (and owned
by) the user that runs it. Nothing here lets git run a command of the
repository's: where a test needs to show that ralon did not, the command
would leave a file behind, and the test looks for it.

Environment: RALON_BINARY (the ralon to test), RALON_PRE_RECEIVE (the
installed pre-receive hook to test instead of data/git/pre-receive.in),
RALON_REQUIRE_PRE_COMMIT (a missing `pre-commit` fails instead of
skipping its test).
Python 3 standard library only.
"""

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from ralontest import as_user  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
RALON_SRC = os.environ.get("RALON_BINARY") or os.path.join(SRC, "build", "src", "ralon")
# The hook as installed (it runs the installed ralon), or the source with
# @RALON@ made the ralon under test.
INSTALLED_PRE_RECEIVE = os.environ.get("RALON_PRE_RECEIVE")
PRE_RECEIVE = INSTALLED_PRE_RECEIVE or os.path.join(SRC, "data", "git", "pre-receive.in")
PRE_COMMIT_HOOKS = os.path.join(SRC, ".pre-commit-hooks.yaml")

IS_ROOT = os.geteuid() == 0
NOBODY = 65534
USERS = {"root": 0, "nobody": NOBODY} if IS_ROOT else {"me": os.geteuid()}

POLICY = """version: 1
protect:
  - agent.lock
  - .git/hooks
  - .git/config
"""


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self):
        return "Result(rc=%r, out=%r, err=%r)" % (self.rc, self.out, self.err)


class Box:
    """One user's world: a home, a binary it can run, a scratch directory,
    all owned by it."""

    def __init__(self, uid):
        self.uid = uid
        self.dir = tempfile.mkdtemp(prefix="ralon-git-")
        os.chmod(self.dir, 0o755)
        bindir = os.path.join(self.dir, "bin")
        os.mkdir(bindir)
        self.ralon = os.path.join(bindir, "ralon")
        shutil.copy2(RALON_SRC, self.ralon)
        os.chmod(self.ralon, 0o755)
        self.bindir = bindir
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        os.mkdir(self.home)
        os.mkdir(self.work)
        for d in (self.home, self.work):
            os.chown(d, uid, uid)
        self.env = {
            "PATH": bindir + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": self.home,
            "LC_ALL": "C.UTF-8",
            "NO_COLOR": "1",
            "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        self.sh("git config --global init.defaultBranch main && "
                "git config --global protocol.file.allow always", self.home)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, argv, cwd, env=None, stdin=None):
        e = dict(self.env)
        if env:
            e.update(env)
        p = subprocess.run(argv, cwd=cwd, env=e, input=stdin, capture_output=True,
                           text=True, preexec_fn=as_user(self.uid), timeout=120)
        return Result(p.returncode, p.stdout, p.stderr)

    def sh(self, script, cwd):
        r = self.run(["sh", "-ec", script], cwd)
        if r.rc != 0:
            raise AssertionError("setup failed: %s\n%r" % (script, r))
        return r.out

    def ralon_(self, args, cwd, **kw):
        return self.run([self.ralon] + args, cwd, **kw)

    def project(self, name="p", policy=POLICY):
        root = os.path.join(self.work, name)
        os.mkdir(root)
        os.chown(root, self.uid, self.uid)
        self.sh("git init -q", root)
        self.write(root, "agent.lock", policy)
        self.write(root, "README", "hello\n")
        self.sh("git add -A && git commit -qm init", root)
        return root

    def write(self, root, rel, text, mode=None):
        path = os.path.join(root, rel)
        script = 'mkdir -p "$(dirname "$1")" && cat > "$1"'
        r = self.run(["sh", "-ec", script, "sh", path], root, stdin=text)
        if r.rc != 0:
            raise AssertionError("cannot write %s: %r" % (path, r))
        if mode is not None:
            self.run(["chmod", oct(mode)[2:], path], root)


def kinds(doc):
    return [(f["kind"], f["subject"]) for f in doc["findings"]]


class Base(unittest.TestCase):
    def each_user(self):
        """A Box for root and one for nobody (or one for the user running
        the tests), in turn; a failure names the user in its message."""
        for name, uid in USERS.items():
            box = Box(uid)
            self.addCleanup(box.cleanup)
            self._user = name
            yield box

    def _formatMessage(self, msg, standardMsg):
        return "[as %s] %s" % (getattr(self, "_user", "?"),
                               super()._formatMessage(msg, standardMsg))

    def status_json(self, box, root):
        r = box.ralon_(["status", "--json"], root)
        self.assertEqual(r.rc, 0, r)
        return json.loads(r.out)


class TestAudit(Base):
    """Each way out, reproduced: the audit names the file and what runs,
    and `run --strict` refuses."""

    def assert_refused(self, box, root, subject):
        r = box.ralon_(["run", "--strict", "--dry-run", "--", "true"], root)
        self.assertEqual(r.rc, 1, r)
        r = box.ralon_(["run", "--strict", "--", "sh", "-c", "echo RAN"], root)
        self.assertEqual(r.rc, 2, r)
        self.assertNotIn("RAN", r.out)
        self.assertIn("refusing to run with --strict", r.err)

    def test_nested_repository_with_fsmonitor_as_gitlink(self):
        for box in self.each_user():
            root = box.project()
            marker = os.path.join(box.work, "FSMONITOR-RAN")
            box.sh("mkdir -p src/vendor && cd src/vendor && git init -q && "
                   "git commit -q --allow-empty -m v && "
                   "git config core.fsmonitor 'touch %s'" % marker, root)
            box.sh("git update-index --add --cacheinfo "
                   "160000,$(git -C src/vendor rev-parse HEAD),src/vendor", root)
            doc = self.status_json(box, root)
            self.assertIn(("git-nested-repository", "src/vendor/.git"), kinds(doc))
            self.assertIn(("git-command-unprotected", "src/vendor/.git/config"), kinds(doc))
            f = [f for f in doc["findings"] if f["kind"] == "git-nested-repository"][0]
            self.assertIn("gitlink", f["message"])
            c = [f for f in doc["findings"] if f["kind"] == "git-command-unprotected"][0]
            self.assertIn("core.fsmonitor = touch %s" % marker, c["message"])
            r = box.ralon_(["status"], root)
            self.assertIn("ralon: warning: src/vendor/.git is a git repository", r.err)
            self.assert_refused(box, root, "src/vendor/.git")
            # Looking ran nothing of the repository's ...
            self.assertFalse(os.path.exists(marker))
            # ... though git itself does, which is the point.
            box.run(["git", "status"], root)
            self.assertTrue(os.path.exists(marker))

    def test_nested_repository_protected_is_not_reported(self):
        for box in self.each_user():
            root = box.project(policy=POLICY + "  - src/vendor/.git\n")
            box.sh("mkdir -p src/vendor && git -C src/vendor init -q", root)
            doc = self.status_json(box, root)
            self.assertNotIn("git-nested-repository", [k for k, _ in kinds(doc)])

    def test_bare_src_git_and_bare_directory(self):
        for box in self.each_user():
            root = box.project()
            box.sh("mkdir src && git init -q --bare src/.git && "
                   "git --git-dir=src/.git config core.pager 'sh -c evil' && "
                   "git init -q --bare lib/cache", root)
            doc = self.status_json(box, root)
            self.assertIn(("git-nested-repository", "src/.git"), kinds(doc))
            self.assertIn(("git-command-unprotected", "src/.git/config"), kinds(doc))
            self.assertIn(("git-bare-repository", "lib/cache"), kinds(doc))
            f = [f for f in doc["findings"] if f["kind"] == "git-bare-repository"][0]
            self.assertIn("safe.bareRepository", f["message"])
            self.assert_refused(box, root, "src/.git")

    def test_writable_included_config(self):
        for box in self.each_user():
            root = box.project()
            box.write(root, ".gitconfig", "[user]\n\tname = x\n")
            box.sh("git config include.path ../.gitconfig && git add .gitconfig && "
                   "git commit -qm cfg", root)
            doc = self.status_json(box, root)
            self.assertIn(("git-include-unprotected", ".gitconfig"), kinds(doc))
            self.assertNotIn("git-command-unprotected", [k for k, _ in kinds(doc)])
            self.assert_refused(box, root, ".gitconfig")
            # What an agent then adds there is named with what it runs.
            box.write(root, ".gitconfig", "[core]\n\tfsmonitor = ./evil\n"
                      "[alias]\n\tst = !sh -c evil\n\tci = commit\n")
            doc = self.status_json(box, root)
            details = [f["message"] for f in doc["findings"]
                       if f["kind"] == "git-command-unprotected" and f["subject"] == ".gitconfig"]
            self.assertEqual(len(details), 2, details)
            self.assertIn("core.fsmonitor = ./evil", details[0])
            self.assertIn("alias.st = !sh -c evil", details[1])
            # Protected, the include is no way out.
            box.write(root, "agent.lock", POLICY + "  - .gitconfig\n")
            doc = self.status_json(box, root)
            self.assertEqual([k for k in kinds(doc) if k[1] == ".gitconfig"], [])

    def test_include_if_outside_the_project(self):
        for box in self.each_user():
            root = box.project()
            extra = os.path.join(box.home, "extra.gitconfig")
            box.write(box.home, "extra.gitconfig", "[diff \"x\"]\n\ttextconv = evil\n")
            box.sh("git config 'includeIf.gitdir:%s/.path' %s" % (root, extra), root)
            doc = self.status_json(box, root)
            self.assertIn(("git-include-unprotected", extra), kinds(doc))
            self.assertIn(("git-command-unprotected", extra), kinds(doc))

    def test_rebase_todo_with_exec(self):
        for box in self.each_user():
            root = box.project()
            box.write(root, ".git/rebase-merge/git-rebase-todo",
                      "pick 0123456 a\nexec sh -c 'echo pwned'\nx make\n")
            doc = self.status_json(box, root)
            subjects = [f for f in doc["findings"] if f["kind"] == "git-sequencer-exec"]
            self.assertEqual([f["subject"] for f in subjects],
                             [".git/rebase-merge/git-rebase-todo"] * 2)
            self.assertIn("exec sh -c 'echo pwned'", subjects[0]["message"])
            self.assertIn("exec make", subjects[1]["message"])
            self.assert_refused(box, root, ".git/rebase-merge/git-rebase-todo")

    def test_merge_strategy_in_sequencer_state(self):
        # A rebase stopped at an `edit`: the agent names a strategy with a
        # `/` (a program of its own in the working tree), and `git rebase
        # --continue` runs it, as git-merge-x/evil from the top.
        for box in self.each_user():
            root = box.project()
            marker = os.path.join(box.work, "STRATEGY-RAN")
            box.sh("echo b > b && git add b && git commit -qm b && "
                   "echo c > c && git add c && git commit -qm c && "
                   "GIT_SEQUENCE_EDITOR='sed -i 1s/^pick/edit/' git rebase -q -i HEAD~2 && "
                   "git commit -q --amend -m b2", root)
            box.write(root, "git-merge-x/evil", "#!/bin/sh\ntouch %s\n" % marker, mode=0o755)
            box.write(root, ".git/rebase-merge/strategy", "x/evil\n")
            box.write(root, ".git/sequencer/opts", "[options]\n\tstrategy = \"y/evil\"\n")
            doc = self.status_json(box, root)
            found = [f for f in doc["findings"] if f["kind"] == "git-sequencer-exec"]
            self.assertEqual([f["subject"] for f in found],
                             [".git/rebase-merge/strategy", ".git/sequencer/opts"])
            self.assertIn("merge strategy `x/evil`", found[0]["message"])
            self.assertIn("git-merge-x/evil", found[0]["message"])
            self.assertIn("merge strategy `y/evil`", found[1]["message"])
            self.assert_refused(box, root, ".git/rebase-merge/strategy")
            self.assertFalse(os.path.exists(marker))
            # git's own strategies run nothing of the agent's.
            box.write(root, ".git/sequencer/opts", "[options]\n\tstrategy = ort\n")
            doc = self.status_json(box, root)
            self.assertEqual([f["subject"] for f in doc["findings"]
                              if f["kind"] == "git-sequencer-exec"],
                             [".git/rebase-merge/strategy"])
            # The vector is real: git runs it.
            box.run(["sh", "-c", "rm -f .git/sequencer/opts; git rebase --continue"], root)
            self.assertTrue(os.path.exists(marker))

    def test_sequencer_state_of_linked_worktrees_and_nested_repositories(self):
        # Each worktree keeps its own state in .git/worktrees/NAME, inside
        # the project wherever the worktree is; a nested repository in its
        # own git directory.
        for box in self.each_user():
            root = box.project()
            box.sh("git worktree add -q ../wt-out && git worktree add -q wt-in && "
                   "mkdir -p sub && git -C sub init -q", root)
            box.write(root, ".git/worktrees/wt-out/rebase-merge/git-rebase-todo", "exec out\n")
            box.write(root, ".git/worktrees/wt-in/rebase-merge/git-rebase-todo", "exec in\n")
            box.write(root, "sub/.git/rebase-merge/git-rebase-todo", "exec sub\n")
            doc = self.status_json(box, root)
            found = sorted((f["subject"], f["message"].split("`")[1]) for f in doc["findings"]
                           if f["kind"] == "git-sequencer-exec")
            self.assertEqual(found, [
                (".git/worktrees/wt-in/rebase-merge/git-rebase-todo", "exec in"),
                (".git/worktrees/wt-out/rebase-merge/git-rebase-todo", "exec out"),
                ("sub/.git/rebase-merge/git-rebase-todo", "exec sub")])

    def test_bare_repository_whose_objects_are_elsewhere(self):
        # git takes a directory with HEAD and a commondir file naming a
        # directory with objects/ and refs/ for a bare repository, and reads
        # its configuration there.
        for box in self.each_user():
            root = box.project()
            real = os.path.join(box.work, "real.git")
            box.sh("git init -q --bare %s && git --git-dir=%s config core.pager 'sh -c evil' && "
                   "mkdir -p lib/cache && echo 'ref: refs/heads/main' > lib/cache/HEAD && "
                   "echo %s > lib/cache/commondir" % (real, real, real), root)
            r = box.run(["git", "rev-parse", "--is-bare-repository"],
                        os.path.join(root, "lib/cache"))
            self.assertEqual(r.out.strip(), "true", r)
            doc = self.status_json(box, root)
            self.assertIn(("git-bare-repository", "lib/cache"), kinds(doc))
            self.assertIn(("git-command-unprotected", os.path.join(real, "config")), kinds(doc))

    def test_project_below_the_top_of_its_repository(self):
        # agent.lock in app/: the repository's .git is above the project,
        # found as git finds it.
        for box in self.each_user():
            top = os.path.join(box.work, "mono")
            box.sh("mkdir -p %s/app && cd %s && git init -q && "
                   "git config include.path ../shared.gitconfig && "
                   "printf '[core]\\n\\tpager = evil\\n' > shared.gitconfig && "
                   "mkdir -p .git/sequencer && echo 'exec evil' > .git/sequencer/todo"
                   % (top, top), box.work)
            box.write(os.path.join(top, "app"), "agent.lock", POLICY)
            doc = self.status_json(box, os.path.join(top, "app"))
            shared = os.path.join(top, "shared.gitconfig")
            self.assertIn(("git-include-unprotected", shared), kinds(doc))
            self.assertIn(("git-command-unprotected", shared), kinds(doc))
            self.assertIn(("git-sequencer-exec", os.path.join(top, ".git/sequencer/todo")),
                          kinds(doc))

    def test_clean_repository_says_nothing_of_git(self):
        for box in self.each_user():
            root = box.project()
            box.sh("git config alias.st status && git config core.editor vi", root)
            doc = self.status_json(box, root)
            self.assertEqual([k for k in kinds(doc) if k[0].startswith("git-")], [])


class TestGitRuns(Base):
    """The audit asks git only when a configuration file of the repository
    may hold what it looks for (a setting that runs a command, an
    include), read as git reads it; a `git` first on PATH logs each run."""

    def logging_git(self, box):
        log = os.path.join(box.home, "git-runs.log")
        wrapper = os.path.join(box.bindir, "git")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\necho "$*" >> %s\nexec /usr/bin/git "$@"\n' % log)
        os.chmod(wrapper, 0o755)
        return log

    def runs(self, log):
        if not os.path.exists(log):
            return []
        with open(log) as f:
            # ralon's runs (the tests' own git commands log too).
            return [l.strip() for l in f if l.startswith("--no-pager ")]

    def test_a_clean_repository_runs_no_git(self):
        if not os.path.exists("/usr/bin/git"):
            self.skipTest("git is not /usr/bin/git here")
        for box in self.each_user():
            root = box.project()
            box.sh("git config alias.st status && git config core.editor vi && "
                   "git remote add origin https://example.org/x.git", root)
            log = self.logging_git(box)
            self.assertEqual(box.ralon_(["status"], root).rc, 0)
            self.assertEqual(box.ralon_(["run", "--dry-run", "--", "true"], root).rc, 0)
            self.assertEqual(box.ralon_(["check"], root).rc, 0)
            self.assertEqual(self.runs(log), [])
            # A setting that runs a command, in a file the policy
            # protects: nothing to report, nothing asked.
            box.sh("git config alias.up '!sh -c evil'", root)
            doc = self.status_json(box, root)
            self.assertEqual(self.runs(log), [])
            self.assertEqual([k for k in kinds(doc) if k[0] == "git-command-unprotected"], [])
            # Unprotected: asked once, and found.
            box.write(root, "agent.lock", POLICY.replace("  - .git/config\n", ""))
            doc = self.status_json(box, root)
            self.assertEqual(len(self.runs(log)), 1, self.runs(log))
            self.assertIn("config --list", self.runs(log)[0])
            self.assertIn(("git-command-unprotected", ".git/config"), kinds(doc))
            # An include: asked whatever the policy protects.
            box.write(root, "agent.lock", POLICY)
            box.sh("git config --unset alias.up && git config include.path ../inc", root)
            box.write(root, "inc", "[core]\n\tpager = evil\n")
            doc = self.status_json(box, root)
            self.assertEqual(len(self.runs(log)), 2, self.runs(log))
            self.assertIn(("git-command-unprotected", "inc"), kinds(doc))

    def test_nested_repositories_run_git_only_for_an_include_and_the_index(self):
        # A nested repository's configuration without an include is read
        # by ralon alone; the index is listed once, and only when a nested
        # repository is reported.
        if not os.path.exists("/usr/bin/git"):
            self.skipTest("git is not /usr/bin/git here")
        for box in self.each_user():
            root = box.project(policy=POLICY + "  - prot/.git\n")
            box.sh("for d in prot a b; do mkdir -p $d && git -C $d init -q; done && "
                   "git -C prot config core.pager evil", root)
            box.sh("rm -rf a b", root)
            log = self.logging_git(box)
            doc = self.status_json(box, root)
            self.assertEqual([k for k in kinds(doc) if k[0].startswith("git-")], [])
            self.assertEqual(self.runs(log), [])
            box.sh("for d in a b; do mkdir -p $d && /usr/bin/git -C $d init -q; done && "
                   "/usr/bin/git -C a config core.pager 'sh -c evil' && "
                   "/usr/bin/git -C b config alias.up '!sh -c evil'", root)
            doc = self.status_json(box, root)
            self.assertIn(("git-command-unprotected", "a/.git/config"), kinds(doc))
            self.assertIn(("git-command-unprotected", "b/.git/config"), kinds(doc))
            runs = self.runs(log)
            self.assertEqual(len(runs), 1, runs)
            self.assertIn("ls-files --stage", runs[0])
            # An include: git follows it.
            box.sh("/usr/bin/git -C b config include.path ../../inc", root)
            box.write(root, "inc", "[core]\n\teditor = evil-editor\n")
            doc = self.status_json(box, root)
            self.assertIn(("git-command-unprotected", "inc"), kinds(doc))
            runs = self.runs(log)[1:]
            self.assertEqual(len(runs), 2, runs)
            self.assertIn("ls-files --stage", runs[0])
            self.assertIn("config --file", runs[1])

    def test_a_range_runs_git_as_often_for_many_commits_as_for_few(self):
        # `check --range` reads what every commit changes through one `git
        # diff-tree --stdin`, and a second one for merges and the range as
        # a whole when the commits are not one chain from A to B: not one
        # diff-tree per commit and per parent of a merge.
        if not os.path.exists("/usr/bin/git"):
            self.skipTest("git is not /usr/bin/git here")
        for box in self.each_user():
            root = box.project(policy=RANGE_POLICY)
            box.sh("git tag base && git checkout -qb side && echo s > s && git add s && "
                   "git commit -qm s && git checkout -q main && "
                   "for i in $(seq 1 30); do echo $i >> src.c && git add src.c && "
                   "git commit -qm c$i; done && echo x >> ci.yml && git add ci.yml && "
                   "git commit -qm ci && git tag chain && git merge -q --no-edit side && "
                   "echo y >> ci.yml && git add ci.yml && git commit -qm ci2", root)
            log = self.logging_git(box)
            counts = {}
            # 1 commit; 31 in a chain; 1 and a merge; 34 with a merge.
            for rng in ("chain~1..chain", "base..chain", "HEAD~2", "base"):
                before = len(self.runs(log))
                r = box.ralon_(["check", "--range", rng], root)
                self.assertEqual(r.rc, 1, r)
                self.assertIn("locked    ci.yml", r.out)
                runs = self.runs(log)[before:]
                diffs = [l for l in runs if " diff-tree " in " " + l]
                counts[rng] = (len(runs), len(diffs), all("--stdin" in l for l in diffs))
            self.assertEqual(counts["base..chain"], counts["chain~1..chain"], counts)
            self.assertEqual(counts["base"], counts["HEAD~2"], counts)
            self.assertLessEqual(counts["base..chain"][0], 4, counts)
            self.assertLessEqual(counts["base"][0], 5, counts)
            self.assertTrue(counts["base"][2], counts)

    def test_settings_are_found_however_they_are_written(self):
        # A nested repository's configuration, written the ways git reads
        # and a quick look might not: each is reported.
        configs = [
            ("[CORE]\r\n\tFsMonitor = \"touch x\"\r\n", "core.fsmonitor = touch x"),
            ("\ufeff[core] pager = less -R # c\n", "core.pager = less -R"),
            ("[core]\n\tsshCommand = \\\n  ssh -i k\n", "core.sshcommand = ssh -i k"),
            ("[alias]\n\tst = \"!\"sh -c evil\n", "alias.st = !sh -c evil"),
            ('[diff "a\\"b"]\n\ttextconv = evil\n', 'diff.a"b.textconv = evil'),
            ('[url "e\\xt::sh -c evil"]\n\tinsteadOf = o\n', "url.ext::sh -c evil.insteadof"),
            ("[Filter.X]\n\tclean = evil\n", "filter.x.clean = evil"),
            ("[include]\n\tpath = ../../inc\n", None),
        ]
        for box in self.each_user():
            root = box.project()
            box.write(root, "inc", "[core]\n\teditor = evil-editor\n")
            for i, (text, shown) in enumerate(configs):
                box.sh("mkdir -p n%d && git -C n%d init -q" % (i, i), root)
                box.write(root, "n%d/.git/config" % i, text)
            doc = self.status_json(box, root)
            for i, (text, shown) in enumerate(configs):
                msgs = [f["message"] for f in doc["findings"]
                        if f["kind"] == "git-command-unprotected"
                        and f["subject"] == "n%d/.git/config" % i]
                if shown is None:
                    # The include: what it includes is reported.
                    msgs = [f["message"] for f in doc["findings"]
                            if f["kind"] == "git-command-unprotected" and f["subject"] == "inc"]
                    shown = "core.editor = evil-editor"
                self.assertEqual(len(msgs), 1, (text, msgs))
                self.assertIn(shown, msgs[0])


def install_pre_receive(box):
    """A bare repository with the pre-receive hook under test."""
    server = os.path.join(box.work, "server.git")
    box.sh("git init -q --bare %s" % server, box.work)
    with open(PRE_RECEIVE, encoding="utf-8") as f:
        hook = f.read()
    if not INSTALLED_PRE_RECEIVE:
        hook = hook.replace("@RALON@", box.ralon)
    box.write(server, "hooks/pre-receive", hook)
    box.sh("chmod +x hooks/pre-receive", server)
    return server


def ci_project(box, extra=None):
    """A project with RANGE_POLICY and its protected ci.yml committed
    (and `extra`: {path: text} in the same commit)."""
    root = box.project(policy=RANGE_POLICY)
    box.write(root, "ci.yml", "ci\n")
    for rel, text in (extra or {}).items():
        box.write(root, rel, text)
    box.sh("git add -A && git commit -qm ci", root)
    return root


def mount_available(box, root):
    r = box.ralon_(["run", "--backend", "mount", "--dry-run", "--", "true"], root)
    return r.rc == 0


class TestAfterSession(Base):
    AGENT = ("mkdir -p src/x && git -C src/x init -q && "
             "git -C src/x config core.fsmonitor 'touch pwned' && "
             "mkdir -p .git/rebase-merge && echo 'exec evil' > .git/rebase-merge/git-rebase-todo && "
             "printf '[core]\\n\\tpager = sh -c evil\\n' >> inc.gitconfig && "
             "{ git config alias.up '!sh -c evil' 2>/dev/null || true; }")

    def test_mount_backend_reports_what_the_agent_added(self):
        for box in self.each_user():
            root = box.project()
            # There before: not reported at the end.
            box.sh("git init -q --bare lib/old && touch inc.gitconfig && "
                   "git config include.path ../inc.gitconfig", root)
            if not mount_available(box, root):
                self.skipTest("the mount backend is not available here")
            r = box.ralon_(["run", "--backend", "mount", "--", "sh", "-ec", self.AGENT], root)
            self.assertEqual(r.rc, 0, r)
            added = [l for l in r.err.splitlines() if "added during the session" in l]
            self.assertEqual(len(added), 4, r.err)
            # .git/config is protected: its alias could not be added.
            self.assertFalse(any("alias.up" in l for l in added), added)
            self.assertTrue(any(".git/rebase-merge/git-rebase-todo holds `exec evil`" in l
                                for l in added), added)
            self.assertTrue(any("src/x/.git is a git repository" in l for l in added), added)
            self.assertTrue(any("src/x/.git/config sets `core.fsmonitor = touch pwned`" in l
                                for l in added), added)
            self.assertTrue(any("inc.gitconfig sets `core.pager = sh -c evil`" in l
                                for l in added), added)
            self.assertFalse(any("lib/old" in l or "is read by git" in l for l in added), added)
            # The session's own lines come first; the report is the last.
            self.assertIn("added during the session", r.err.splitlines()[-1])

    def test_quiet_says_nothing(self):
        for box in self.each_user():
            root = box.project()
            box.sh("touch inc.gitconfig", root)
            if not mount_available(box, root):
                self.skipTest("the mount backend is not available here")
            r = box.ralon_(["run", "-q", "--backend", "mount", "--", "sh", "-ec", self.AGENT],
                           root)
            self.assertEqual(r.rc, 0, r)
            self.assertEqual(r.err, "")

    def test_landlock_status_finds_them_next_time(self):
        for box in self.each_user():
            root = box.project(policy=POLICY)
            box.sh("mkdir -p src", root)
            r = box.ralon_(["run", "--backend", "landlock", "--", "sh", "-ec",
                            "mkdir -p src/x && git -C src/x init -q"], root)
            if r.rc == 2 and "landlock" in r.err.lower() and "not" in r.err.lower():
                self.skipTest("Landlock is not available here")
            self.assertEqual(r.rc, 0, r)
            self.assertNotIn("added during the session", r.err)
            doc = self.status_json(box, root)
            self.assertIn(("git-nested-repository", "src/x/.git"), kinds(doc))


RANGE_POLICY = """version: 1
protect:
  - secrets/**
  - ci.yml
  - conf.txt
  - vendor
"""


class TestRange(Base):
    def repo(self, box):
        root = box.project(policy=RANGE_POLICY)
        box.write(root, "secrets/key", "k\n")
        box.write(root, "ci.yml", "ci\n")
        box.write(root, "conf.txt", "c\n")
        box.write(root, "src/main.c", "int main;\n")
        box.sh("git add -A && git commit -qm base && git tag base", root)
        return root

    def check(self, box, root, *args):
        return box.ralon_(["check"] + list(args), root)

    def changes(self, box, root, rng):
        r = self.check(box, root, "--json", "--range", rng)
        self.assertIn(r.rc, (0, 1), r)
        doc = json.loads(r.out)
        self.assertEqual(doc["locked"], r.rc == 1)
        return [(c["path"], c["change"]) for c in doc["changes"]], doc

    def test_each_kind_of_change(self):
        for box in self.each_user():
            root = self.repo(box)
            box.sh("mkdir -p public && git mv secrets/key public/key && git commit -qm mv", root)
            mv = box.sh("git rev-parse HEAD", root).strip()
            box.sh("chmod +x ci.yml && git commit -qam mode", root)
            box.sh("rm conf.txt && ln -s README conf.txt && git add -A && git commit -qm link",
                   root)
            box.sh("echo x >> src/main.c && git commit -qam unprotected", root)
            box.sh("git update-index --add --cacheinfo 160000,%s,vendor && git commit -qm sub"
                   % mv, root)
            found, doc = self.changes(box, root, "base..HEAD")
            self.assertEqual(found, [("secrets/key", "renamed-from"), ("ci.yml", "mode"),
                                     ("conf.txt", "type"), ("vendor", "added")])
            self.assertEqual(doc["commits"], 5)
            self.assertEqual([c["commit"] for c in doc["changes"]][0], mv)
            self.assertEqual(doc["changes"][0]["pattern"], "secrets/**")
            # The text: check's format, with the commit.
            r = self.check(box, root, "--range", "base")
            self.assertEqual(r.rc, 1, r)
            self.assertIn("locked    secrets/key  (matches `secrets/**`; renamed away in %s)"
                          % mv[:12], r.out.splitlines())
            # A rename into a protected directory names its new end.
            box.sh("git mv src/main.c secrets/main.c && git commit -qm in", root)
            found, _ = self.changes(box, root, "HEAD~1..HEAD")
            self.assertEqual(found, [("secrets/main.c", "renamed-to")])

    def test_policy_as_of_the_base(self):
        for box in self.each_user():
            root = self.repo(box)
            box.write(root, "agent.lock", "version: 1\nprotect: []\n")
            box.sh("git commit -qam weaken", root)
            box.write(root, "secrets/key", "forged\n")
            box.sh("git commit -qam forge", root)
            found, doc = self.changes(box, root, "base..HEAD")
            self.assertEqual(found, [("agent.lock", "modified"), ("secrets/key", "modified")])
            self.assertEqual(doc["policy"], "base:agent.lock")
            # From the weakened commit on, nothing is protected but itself.
            found, _ = self.changes(box, root, "HEAD~1..HEAD")
            self.assertEqual(found, [])

    def test_forged_blob_staged_with_plumbing(self):
        for box in self.each_user():
            root = self.repo(box)
            box.sh("blob=$(echo forged | git hash-object -w --stdin) && "
                   "git update-index --cacheinfo 100644,$blob,secrets/key", root)
            r = self.check(box, root, "--staged")
            self.assertEqual(r.rc, 1, r)
            self.assertEqual(r.out, "locked    secrets/key  (matches `secrets/**`; modified, "
                             "staged)\n")
            box.sh("git commit -qm forged", root)
            found, _ = self.changes(box, root, "base")
            self.assertEqual(found, [("secrets/key", "modified")])
            # The working tree never changed.
            with open(os.path.join(root, "secrets/key")) as f:
                self.assertEqual(f.read(), "k\n")

    def test_staged_clean(self):
        for box in self.each_user():
            root = self.repo(box)
            box.sh("echo y >> src/main.c && git add src/main.c", root)
            r = self.check(box, root, "--staged")
            self.assertEqual((r.rc, r.out), (0, ""), r)
            box.sh("git rm -q --cached secrets/key", root)
            r = self.check(box, root, "--staged", "--json")
            self.assertEqual(r.rc, 1, r)
            doc = json.loads(r.out)
            self.assertEqual([(c["path"], c["change"], c["commit"]) for c in doc["changes"]],
                             [("secrets/key", "deleted", None)])

    def test_merges(self):
        for box in self.each_user():
            root = self.repo(box)
            box.sh("git checkout -qb side && echo s >> secrets/key && git commit -qam side && "
                   "git checkout -q main && echo m >> src/main.c && git commit -qam main && "
                   "git merge -q --no-edit side", root)
            side = box.sh("git rev-parse side", root).strip()
            found, doc = self.changes(box, root, "base")
            self.assertEqual(found, [("secrets/key", "modified")])
            self.assertEqual(doc["changes"][0]["commit"], side)
            # An evil merge: the merge commit itself writes a protected file.
            box.sh("git checkout -qb side2 base && echo t >> README && git commit -qam t && "
                   "git checkout -q main && git merge -q --no-commit side2 && "
                   "echo evil > ci.yml && git add ci.yml && git commit -qm merge2", root)
            merge = box.sh("git rev-parse HEAD", root).strip()
            found, doc = self.changes(box, root, "HEAD~1..HEAD")
            self.assertEqual(found, [("ci.yml", "merge")])
            self.assertEqual(doc["changes"][0]["commit"], merge)
            # A clean merge of a clean branch: nothing.
            box.sh("git checkout -qb side3 && echo u >> README && git commit -qam u && "
                   "git checkout -q main && git merge -q --no-ff --no-edit side3", root)
            found, _ = self.changes(box, root, "HEAD~1..HEAD")
            self.assertEqual(found, [])

    def test_what_the_range_does_as_a_whole(self):
        # A merge whose second parent is a commit the base already has
        # takes that parent's older version of a protected file: the merge
        # differs from neither parent there, and no commit of the range
        # changes it, but the branch's file goes back.
        for box in self.each_user():
            root = self.repo(box)
            box.sh("echo v2 >> ci.yml && git commit -qam v2 && git tag a", root)
            box.sh("echo f >> README && git commit -qam feature", root)
            merge = box.sh("git commit-tree -p HEAD -p a~1 -m merge "
                           "$(git rev-parse a~1^{tree})", root).strip()
            found, doc = self.changes(box, root, "a.." + merge)
            self.assertEqual(found, [("ci.yml", "net")])
            self.assertEqual(doc["changes"][0]["commit"], merge)
            # A tip that does not descend from the base (a rewound branch):
            # the one commit of the range leaves ci.yml alone, the range
            # takes it back to what it was before the base.
            box.sh("git checkout -q a~1 && echo g >> README && git commit -qam g", root)
            found, _ = self.changes(box, root, "a..HEAD")
            self.assertEqual(found, [("ci.yml", "net")])
            r = self.check(box, root, "--range", "a..HEAD")
            self.assertEqual(r.rc, 1, r)
            self.assertIn("no commit in it changes it", r.out)
            # A change and its revert inside the range: each commit is
            # reported, and nothing as a whole.
            box.sh("git checkout -q a && echo z >> ci.yml && git commit -qam z && "
                   "git revert --no-edit HEAD >/dev/null", root)
            found, _ = self.changes(box, root, "a..HEAD")
            self.assertEqual(found, [("ci.yml", "modified"), ("ci.yml", "modified")])

    def test_clean_range_and_errors(self):
        for box in self.each_user():
            root = self.repo(box)
            box.sh("echo y >> src/main.c && git commit -qam clean", root)
            r = self.check(box, root, "--range", "base..HEAD")
            self.assertEqual((r.rc, r.out), (0, ""), r)
            r = self.check(box, root, "--range", "nosuch..HEAD")
            self.assertEqual(r.rc, 2, r)
            self.assertIn("unknown revision `nosuch`", r.err)
            r = self.check(box, root, "--range", "base..nosuch")
            self.assertEqual(r.rc, 2, r)
            self.assertIn("unknown revision `nosuch`", r.err)
            r = self.check(box, root, "--range", "base", "ci.yml")
            self.assertEqual(r.rc, 2, r)
            r = self.check(box, root, "--range", "base", "--staged")
            self.assertEqual(r.rc, 2, r)
            # A policy git would not parse at A.
            box.sh("git checkout -q -b broken main && printf 'version: 9\\n' > agent.lock && "
                   "git commit -qam broken && git checkout -q main", root)
            r = self.check(box, root, "--range", "broken..main")
            self.assertEqual(r.rc, 2, r)
            self.assertIn("broken:agent.lock", r.err)
            # Not a repository.
            plain = os.path.join(box.work, "plain")
            box.sh("mkdir -p %s" % plain, box.work)
            r = self.check(box, plain, "--range", "HEAD")
            self.assertEqual(r.rc, 2, r)
            self.assertIn("not in a git repository", r.err)

    def test_policy_in_a_subdirectory(self):
        for box in self.each_user():
            top = os.path.join(box.work, "mono")
            box.sh("mkdir -p %s && cd %s && git init -q && mkdir app && "
                   "printf 'version: 1\\nprotect:\\n  - secret\\n' > app/agent.lock && "
                   "echo s > app/secret && echo s > secret && git add -A && "
                   "git commit -qm base && git tag base && echo t >> app/secret && "
                   "echo t >> secret && git commit -qam t" % (top, top), box.work)
            # Paths are named from the top of the repository, wherever
            # the check runs, with the agent.lock whose pattern matched.
            head = box.sh("git rev-parse --short=12 HEAD", top).strip()
            for cwd in (os.path.join(top, "app"), top):
                r = box.ralon_(["check", "--range", "base"], cwd)
                self.assertEqual(r.rc, 1, r)
                self.assertEqual(r.out, "locked    app/secret  (matches `secret` in "
                                 "app/agent.lock; modified in %s)\n" % head)


NESTED_TOP = """version: 1
protect:
  - top.txt
  - app/conf.txt
"""

APP_POLICY = """version: 1
protect:
  - secret.txt
  - keys/**
"""


class TestNestedPolicies(Base):
    """Each path a range changes is judged by every agent.lock of the base
    at or above it, with its patterns relative to its own directory, as
    `hook check` judges an edit: an agent.lock in app/ protects app's
    files from the top of the repository, and one the range brings
    protects nothing before it is in the base."""

    def repo(self, box, top=NESTED_TOP, app=APP_POLICY):
        root = box.project(policy=top)
        if app is not None:
            box.write(root, "app/agent.lock", app)
        for f in ("top.txt", "free.txt", "app/conf.txt", "app/secret.txt", "app/keys/k",
                  "app/free.txt"):
            box.write(root, f, f + "\n")
        box.sh("git add -A && git commit -qm base && git tag base", root)
        return root

    def changes(self, box, cwd, *args):
        r = box.ralon_(["check", "--json"] + list(args), cwd)
        self.assertIn(r.rc, (0, 1), r)
        doc = json.loads(r.out)
        self.assertEqual(doc["locked"], r.rc == 1)
        return [(c["path"], c["change"], c["policy"]) for c in doc["changes"]], doc

    def test_a_nested_policy_protects_from_the_top(self):
        for box in self.each_user():
            root = self.repo(box)
            box.sh("echo x >> app/secret.txt && echo x >> app/keys/k && "
                   "echo x >> app/free.txt && echo x >> free.txt && git commit -qam c", root)
            head = box.sh("git rev-parse HEAD", root).strip()
            found, doc = self.changes(box, root, "--range", "base")
            self.assertEqual(found, [("app/keys/k", "modified", "base:app/agent.lock"),
                                     ("app/secret.txt", "modified", "base:app/agent.lock")])
            self.assertEqual(doc["policy"], "base:agent.lock")
            self.assertEqual(doc["policies"], ["base:agent.lock", "base:app/agent.lock"])
            self.assertEqual(doc["changes"][1]["pattern"], "secret.txt")
            r = box.ralon_(["check", "--range", "base"], root)
            self.assertEqual(r.rc, 1, r)
            self.assertEqual(r.out.splitlines(), [
                "locked    app/keys/k  (matches `keys/**` in app/agent.lock; modified in %s)"
                % head[:12],
                "locked    app/secret.txt  (matches `secret.txt` in app/agent.lock; modified "
                "in %s)" % head[:12]])
            # From a directory without one, and from app/: the same.
            for cwd in ("free-dir", "app"):
                box.sh("mkdir -p free-dir", root)
                again, _ = self.changes(box, os.path.join(root, cwd), "--range", "base")
                self.assertEqual(again, found)

    def test_a_nested_policy_does_not_hide_what_one_above_protects(self):
        # app/agent.lock does not list conf.txt; the top one protects
        # app/conf.txt: protected, also when checked from app/.
        for box in self.each_user():
            root = self.repo(box)
            box.sh("echo x >> app/conf.txt && git commit -qam c", root)
            for cwd in (root, os.path.join(root, "app")):
                found, _ = self.changes(box, cwd, "--range", "base")
                self.assertEqual(found, [("app/conf.txt", "modified", "base:agent.lock")])

    def test_a_policy_the_range_brings_protects_nothing_and_unprotects_nothing(self):
        for box in self.each_user():
            root = self.repo(box, app=None)
            # The range brings lib/agent.lock and app/agent.lock (which
            # lists nothing of what the top one protects there), then
            # changes what they name and what the top one protects.
            box.write(root, "app/agent.lock", "version: 1\nprotect: [other.txt]\n")
            box.write(root, "lib/agent.lock", "version: 1\nprotect: [lib.txt]\n")
            box.sh("git add -A && git commit -qm policies && git tag policies", root)
            box.sh("echo x > app/other.txt && echo x > lib/lib.txt && "
                   "echo x >> app/conf.txt && git add -A && git commit -qm c", root)
            found, _ = self.changes(box, root, "--range", "base")
            self.assertEqual(found, [("app/conf.txt", "modified", "base:agent.lock")])
            # From a base that has them, they protect.
            found, _ = self.changes(box, root, "--range", "policies")
            self.assertEqual(sorted(found), [
                ("app/conf.txt", "modified", "policies:agent.lock"),
                ("app/other.txt", "added", "policies:app/agent.lock"),
                ("lib/lib.txt", "added", "policies:lib/agent.lock")])

    def test_editing_or_deleting_a_nested_policy_is_reported(self):
        for box in self.each_user():
            root = self.repo(box)
            box.write(root, "app/agent.lock", "version: 1\nprotect: []\n")
            box.sh("git commit -qam weaken && echo forged > app/secret.txt && "
                   "git commit -qam forge && git rm -q app/agent.lock && git commit -qm rm", root)
            found, _ = self.changes(box, root, "--range", "base")
            self.assertEqual(found, [("app/agent.lock", "modified", "base:app/agent.lock"),
                                     ("app/secret.txt", "modified", "base:app/agent.lock"),
                                     ("app/agent.lock", "deleted", "base:app/agent.lock")])
            # Removing the whole directory, policy and all, in one commit.
            box.sh("git checkout -q -b gone base && git rm -rq app && git commit -qm gone", root)
            found, _ = self.changes(box, root, "--range", "base..gone")
            self.assertEqual(sorted(p for p, _, _ in found), [
                "app/agent.lock", "app/conf.txt", "app/keys/k", "app/secret.txt"])

    def test_moves_across_policies(self):
        for box in self.each_user():
            root = self.repo(box)
            # Out of app/ (app's policy protects it) to the top, and from
            # the top (the top's) into app/ where app's does not.
            box.sh("git mv app/keys/k k && git commit -qm out && "
                   "git mv top.txt app/top.txt && git commit -qm in", root)
            found, _ = self.changes(box, root, "--range", "base")
            self.assertEqual(found, [("app/keys/k", "renamed-from", "base:app/agent.lock"),
                                     ("top.txt", "renamed-from", "base:agent.lock")])
            # Into app/ onto a name app's policy protects.
            box.sh("git rm -q app/secret.txt && git commit -qm rm && "
                   "git mv free.txt app/secret.txt && git commit -qm onto", root)
            found, _ = self.changes(box, root, "--range", "HEAD~1")
            self.assertEqual(found, [("app/secret.txt", "renamed-to", "HEAD~1:app/agent.lock")])

    def test_a_nested_policy_that_cannot_be_judged_by(self):
        for box in self.each_user():
            root = self.repo(box, app=None)
            box.sh("mkdir -p app && ln -s ../agent.lock app/agent.lock && "
                   "mkdir -p bad && printf 'version: 9\\n' > bad/agent.lock && "
                   "git add -A && git commit -qm odd && git tag odd && "
                   "echo x >> app/free.txt && git commit -qam a && git tag a && "
                   "echo x > bad/y && git add -A && git commit -qm b && git tag b && "
                   "echo x >> free.txt && git commit -qam c", root)
            r = box.ralon_(["check", "--range", "odd..a"], root)
            self.assertEqual(r.rc, 2, r)
            self.assertIn("odd:app/agent.lock is not a regular file", r.err)
            r = box.ralon_(["check", "--range", "a..b"], root)
            self.assertEqual(r.rc, 2, r)
            self.assertIn("a:bad/agent.lock", r.err)
            # Not on the way of what changes: not read.
            r = box.ralon_(["check", "--range", "b"], root)
            self.assertEqual((r.rc, r.out), (0, ""), r)

    def test_staged(self):
        for box in self.each_user():
            root = self.repo(box)
            box.sh("blob=$(echo forged | git hash-object -w --stdin) && "
                   "git update-index --cacheinfo 100644,$blob,app/keys/k", root)
            r = box.ralon_(["check", "--staged"], root)
            self.assertEqual(r.rc, 1, r)
            self.assertEqual(r.out, "locked    app/keys/k  (matches `keys/**` in app/agent.lock; "
                             "modified, staged)\n")
            found, doc = self.changes(box, os.path.join(root, "app"), "--staged")
            self.assertEqual(found, [("app/keys/k", "modified", "HEAD:app/agent.lock")])
            self.assertEqual(doc["policy"], "HEAD:app/agent.lock")
            # A policy staged in the same commit protects nothing yet.
            box.sh("git reset -q && echo z > app/z && git add app/z && "
                   "printf 'version: 1\\nprotect: [z]\\n' > app/agent.lock && git add app/agent.lock",
                   root)
            found, _ = self.changes(box, root, "--staged")
            self.assertEqual(found, [("app/agent.lock", "modified", "HEAD:app/agent.lock")])

    def test_staged_before_the_first_commit(self):
        # No HEAD: the agent.locks on disk, each in its directory.
        for box in self.each_user():
            root = os.path.join(box.work, "fresh")
            box.sh("mkdir -p %s/app && cd %s && git init -q && "
                   "printf 'version: 1\\nprotect: [secret.txt]\\n' > app/agent.lock && "
                   "echo s > app/secret.txt && echo f > free.txt && git add -A" % (root, root),
                   box.work)
            found, doc = self.changes(box, root, "--staged")
            policy = os.path.join(os.path.realpath(root), "app", "agent.lock")
            self.assertEqual(found, [("app/agent.lock", "added", policy),
                                     ("app/secret.txt", "added", policy)])
            self.assertIsNone(doc["base"])

    def test_pre_receive(self):
        for box in self.each_user():
            root = self.repo(box)
            server = install_pre_receive(box)
            box.sh("git push -q %s main" % server, root)
            box.sh("echo evil >> app/secret.txt && git commit -qam evil", root)
            r = box.run(["git", "push", server, "main"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("locked    app/secret.txt  (matches `secret.txt` in app/agent.lock; "
                          "modified in", r.err)
            refs = box.sh("git --git-dir=%s rev-parse main" % server, box.work).strip()
            self.assertEqual(refs, box.sh("git rev-parse base", root).strip())
            box.sh("git reset -q --hard base && echo ok >> app/free.txt && git commit -qam ok",
                   root)
            r = box.run(["git", "push", server, "main"], root)
            self.assertEqual(r.rc, 0, r)


class TestNoPolicyAtTheBase(Base):
    """Nothing was protected where the range starts: it passes, and says
    so; a range that deletes the policy the base has does not."""

    def test_a_range_that_brings_the_first_policy(self):
        for box in self.each_user():
            root = os.path.join(box.work, "p")
            box.sh("mkdir -p %s && cd %s && git init -q && echo a > a && git add a && "
                   "git commit -qm a && git tag before && echo a >> a && "
                   "printf 'version: 1\\nprotect: [a]\\n' > agent.lock && git add -A && "
                   "git commit -qm policy && git tag after" % (root, root), box.work)
            r = box.ralon_(["check", "--range", "before..after"], root)
            self.assertEqual((r.rc, r.out), (0, ""), r)
            self.assertIn("ralon: no agent.lock in before at or above the paths this range "
                          "changes: nothing was protected there", r.err)
            self.assertIn("the agent.lock it brings protects from the first range", r.err)
            r = box.ralon_(["check", "--json", "--range", "before..after"], root)
            self.assertEqual(r.rc, 0, r)
            doc = json.loads(r.out)
            self.assertEqual((doc["policy"], doc["policies"], doc["changes"]), (None, [], []))
            # Deleting it again is a change to a protected path.
            box.sh("git rm -q agent.lock && echo b >> a && git commit -qam rm", root)
            r = box.ralon_(["check", "--range", "after"], root)
            self.assertEqual(r.rc, 1, r)
            self.assertIn("locked    agent.lock  (matches `agent.lock`; deleted in", r.out)
            self.assertIn("locked    a  (matches `a`; modified in", r.out)
            self.assertNotIn("no agent.lock", r.err)
            # An empty range says nothing.
            r = box.ralon_(["check", "--range", "before..before"], root)
            self.assertEqual((r.rc, r.out, r.err), (0, "", ""), r)

    def test_staged_first_policy(self):
        for box in self.each_user():
            root = os.path.join(box.work, "p")
            box.sh("mkdir -p %s && cd %s && git init -q && echo a > a && git add a && "
                   "git commit -qm a && printf 'version: 1\\nprotect: [a]\\n' > agent.lock && "
                   "echo b >> a && git add -A" % (root, root), box.work)
            r = box.ralon_(["check", "--staged"], root)
            self.assertEqual((r.rc, r.out), (0, ""), r)
            self.assertIn("no agent.lock in HEAD at or above the staged paths", r.err)
            box.sh("git commit -qm p && git rm -q --cached agent.lock", root)
            r = box.ralon_(["check", "--staged"], root)
            self.assertEqual(r.rc, 1, r)
            self.assertIn("locked    agent.lock", r.out)

    def test_pre_receive_accepts_the_first_policy_and_refuses_its_removal(self):
        for box in self.each_user():
            root = os.path.join(box.work, "p")
            box.sh("mkdir -p %s && cd %s && git init -q && echo a > a && git add a && "
                   "git commit -qm a" % (root, root), box.work)
            server = install_pre_receive(box)
            box.sh("git push -q %s main" % server, root)
            box.sh("printf 'version: 1\\nprotect: [a]\\n' > agent.lock && git add -A && "
                   "git commit -qm policy", root)
            r = box.run(["git", "push", server, "main"], root)
            self.assertEqual(r.rc, 0, r)
            self.assertIn("ralon: refs/heads/main: no agent.lock in ", r.err)
            box.sh("git rm -q agent.lock && git commit -qm rm", root)
            r = box.run(["git", "push", server, "main"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("locked    agent.lock  (matches `agent.lock`; deleted in", r.err)


class TestPreReceive(Base):
    def test_push_refused_with_paths_and_clean_push_accepted(self):
        for box in self.each_user():
            root = ci_project(box)
            server = install_pre_receive(box)
            box.sh("git push -q %s main" % server, root)
            box.sh("echo evil >> ci.yml && echo ok >> README && git commit -qam evil", root)
            r = box.run(["git", "push", server, "main"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("locked    ci.yml  (matches `ci.yml`; modified in", r.err)
            self.assertIn("refs/heads/main", r.err)
            box.sh("git reset -q --hard HEAD~1 && echo ok >> README && git commit -qam ok", root)
            r = box.run(["git", "push", server, "main"], root)
            self.assertEqual(r.rc, 0, r)
            # A new branch is judged against the default branch.
            box.sh("git checkout -qb feature && mkdir -p secrets && echo k > secrets/k && git add -A && "
                   "git commit -qm k", root)
            r = box.run(["git", "push", server, "feature"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("locked    secrets/k  (matches `secrets/**`; added in", r.err)
            refs = box.sh("git --git-dir=%s for-each-ref --format='%%(refname)'" % server,
                          box.work)
            self.assertEqual(refs.split(), ["refs/heads/main"])
            # A branch with no history in common with HEAD cannot be
            # judged by an agent.lock: refused.
            box.sh("git checkout -q --orphan evil && git rm -rq --cached . && "
                   "echo e > ci.yml && git add ci.yml && git commit -qm e", root)
            r = box.run(["git", "push", server, "evil"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("shares no history with HEAD", r.err)
            # A force push that rewinds main to before a protected change
            # (one the server's owner let in, with the hook off).
            box.sh("chmod -x hooks/pre-receive", server)
            box.sh("git checkout -qf main && echo v2 >> ci.yml && git commit -qam v2 && "
                   "git push -q %s main" % server, root)
            box.sh("chmod +x hooks/pre-receive", server)
            box.sh("git reset -q --hard HEAD~1 && echo r >> README && git commit -qam rewound",
                   root)
            r = box.run(["git", "push", "-f", server, "main"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("locked    ci.yml", r.err)
            refs = box.sh("git --git-dir=%s for-each-ref --format='%%(refname)'" % server,
                          box.work)
            self.assertEqual(refs.split(), ["refs/heads/main"])


class TestPreReceiveRefsThatAreNotCommits(Base):
    def test_a_tag_of_a_tree_or_a_blob_is_refused_and_a_tag_of_a_commit_judged(self):
        for box in self.each_user():
            root = ci_project(box)
            server = install_pre_receive(box)
            box.sh("git push -q %s main" % server, root)
            # A tag of a clean commit is judged, and passes.
            box.sh("echo ok >> README && git commit -qam ok && git tag v1", root)
            r = box.run(["git", "push", server, "main", "v1"], root)
            self.assertEqual(r.rc, 0, r)
            # The tag moved to a tree whose ci.yml is forged: `git archive
            # v1` would ship it, and no commit says what changed.
            box.sh("git checkout -q -b forged && echo evil > ci.yml && git add ci.yml && "
                   "git commit -qm forged && git tag -f v1 'HEAD^{tree}' && "
                   "git checkout -q main", root)
            r = box.run(["git", "push", "-f", server, "v1"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("refs/tags/v1: points at a tree, not a", r.err)
            self.assertEqual(
                box.sh("git --git-dir=%s cat-file -t v1" % server, box.work).strip(), "commit")
            # A new tag of a blob.
            blob = box.sh("git rev-parse HEAD:ci.yml", root).strip()
            box.sh("git tag blobtag %s" % blob, root)
            r = box.run(["git", "push", server, "blobtag"], root)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("refs/tags/blobtag: points at a blob, not a", r.err)
            refs = box.sh("git --git-dir=%s for-each-ref --format='%%(refname)'" % server,
                          box.work)
            self.assertEqual(sorted(refs.split()), ["refs/heads/main", "refs/tags/v1"])


README = os.path.join(SRC, "README.md")


class TestPreCommitFramework(Base):
    """.pre-commit-hooks.yaml as the pre-commit framework uses it: a
    repository of hooks at a commit, named in a project's
    .pre-commit-config.yaml, run by `git commit` once `pre-commit install`
    has put pre-commit's hook in place."""

    def setUp(self):
        self.pre_commit = shutil.which("pre-commit")
        if self.pre_commit is None:
            if os.environ.get("RALON_REQUIRE_PRE_COMMIT"):
                self.fail("RALON_REQUIRE_PRE_COMMIT is set, and pre-commit is not installed")
            self.skipTest("pre-commit is not installed (scripts/bootstrap installs it)")

    def test_commit_refused_when_staged_changes_touch_protected_paths(self):
        for box in self.each_user():
            # The hook repository: this tree's definition, at a commit.
            hooks = os.path.join(box.work, "hooks")
            os.mkdir(hooks)
            os.chown(hooks, box.uid, box.uid)
            with open(PRE_COMMIT_HOOKS, encoding="utf-8") as f:
                box.write(hooks, ".pre-commit-hooks.yaml", f.read())
            box.sh("git init -q && git add -A && git commit -qm hooks", hooks)
            rev = box.sh("git rev-parse HEAD", hooks).strip()
            root = ci_project(box, {".pre-commit-config.yaml":
                                    "repos:\n  - repo: %s\n    rev: %s\n    hooks:\n"
                                    "      - id: ralon-check\n" % (hooks, rev)})
            env = {"PRE_COMMIT_HOME": os.path.join(box.home, "pre-commit")}
            r = box.run([self.pre_commit, "install"], root, env=env)
            self.assertEqual(r.rc, 0, r)
            head = box.sh("git rev-parse HEAD", root)
            box.sh("echo evil >> ci.yml && echo ok >> README && git add -A", root)
            r = box.run(["git", "commit", "-qm", "evil"], root, env=env)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("locked    ci.yml  (matches `ci.yml`; modified, staged)", r.out + r.err)
            self.assertEqual(box.sh("git rev-parse HEAD", root), head)
            # A deletion and both ends of a rename count too.
            box.sh("git reset -q --hard && git mv ci.yml ci-old.yml", root)
            r = box.run(["git", "commit", "-qm", "moved"], root, env=env)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("locked    ci.yml", r.out + r.err)
            self.assertEqual(box.sh("git rev-parse HEAD", root), head)
            # What agent.lock does not protect is committed.
            box.sh("git reset -q --hard && echo ok >> README && git add README", root)
            r = box.run(["git", "commit", "-qm", "ok"], root, env=env)
            self.assertEqual(r.rc, 0, r)
            self.assertNotEqual(box.sh("git rev-parse HEAD", root), head)


def readme_block(heading):
    """The first ```yaml block after the README line that starts with
    `heading`."""
    with open(README, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(heading))
    begin = next(i for i in range(start, len(lines)) if lines[i].strip() == "```yaml")
    end = next(i for i in range(begin + 1, len(lines)) if lines[i].strip() == "```")
    return [line.strip() for line in lines[begin + 1:end]]


class TestCISnippets(Base):
    """README's GitHub Actions and GitLab CI steps, run as their runners
    would run them: in a fresh full clone of the project, on a branch with
    the pull request's commits, with the variables the runner sets."""

    def setUp(self):
        run = [line[len("- run: "):] for line in readme_block("- **GitHub Actions**")
               if line.startswith("- run: ")]
        self.assertEqual(len(run), 1, "README's GitHub Actions snippet has one `run:` step")
        self.github = run[0].replace("${{ github.base_ref }}", "main")
        self.assertNotIn("${{", self.github)
        block = readme_block("- **GitLab CI**")
        script = block[block.index("script:") + 1:]
        self.gitlab = [line[2:] for line in script if line.startswith("- ")]
        self.assertGreaterEqual(len(self.gitlab), 1)

    def clone(self, box, upstream, branch):
        """A full clone at the pull request's commit, detached, with no
        local branch: the base is only there as origin's."""
        name = "clone-%d" % len(os.listdir(box.work))
        box.sh("git clone -q %s %s && cd %s && git checkout -q --detach origin/%s && "
               "git for-each-ref --format='delete %%(refname)' refs/heads | git update-ref --stdin"
               % (upstream, name, name, branch), box.work)
        return os.path.join(box.work, name)

    def run_github(self, box, upstream, branch):
        return box.run(["sh", "-ec", self.github], self.clone(box, upstream, branch))

    def run_gitlab(self, box, upstream, branch):
        clone = self.clone(box, upstream, branch)
        base = box.sh("git merge-base origin/main HEAD", clone).strip()
        env = {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
               "CI_MERGE_REQUEST_DIFF_BASE_SHA": base}
        return box.run(["sh", "-ec", "\n".join(self.gitlab)], clone, env=env)

    def test_snippets_fail_a_pull_request_touching_protected_paths(self):
        for box in self.each_user():
            upstream = ci_project(box)
            box.sh("git checkout -qb evil && echo evil >> ci.yml && git commit -qam evil && "
                   "git checkout -qb clean main && echo ok >> README && git commit -qam ok && "
                   "git checkout -q main", upstream)
            for name, run in (("github", self.run_github), ("gitlab", self.run_gitlab)):
                with self.subTest(ci=name):
                    r = run(box, upstream, "evil")
                    self.assertEqual(r.rc, 1, r)
                    self.assertIn("locked    ci.yml  (matches `ci.yml`; modified in", r.out)
                    r = run(box, upstream, "clean")
                    self.assertEqual(r.rc, 0, r)

    def test_snippets_pass_the_pull_request_that_brings_the_first_policy(self):
        for box in self.each_user():
            upstream = os.path.join(box.work, "up")
            os.mkdir(upstream)
            os.chown(upstream, box.uid, box.uid)
            box.sh("git init -q && echo r > README && git add -A && git commit -qm init && "
                   "git checkout -qb first && printf 'protect: [README]\\n' > agent.lock && "
                   "git add -A && git commit -qm policy && git checkout -q main", upstream)
            for name, run in (("github", self.run_github), ("gitlab", self.run_gitlab)):
                with self.subTest(ci=name):
                    r = run(box, upstream, "first")
                    self.assertEqual(r.rc, 0, r)
                    self.assertIn("agent.lock", r.err)


class TestPreCommitDefinition(unittest.TestCase):
    def test_hook_runs_check_staged(self):
        with open(PRE_COMMIT_HOOKS, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("- id: ralon-check", text)
        self.assertIn("entry: ralon check --staged", text)
        self.assertIn("pass_filenames: false", text)
        self.assertIn("language: system", text)
        self.assertIn("always_run: true", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
