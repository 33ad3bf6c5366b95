#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ralon hook check`: which paths a call reaches, through the real binary.

test_hook.py pins every agent's payloads and answers; this file pins how the
paths they name are decided: names with `*`, `?` or `[` in them, symbolic
links (also under shell globs and `rm -r`), ancestors of the project root,
nested and foreign agent.lock files, Gemini's path "correction", the keys an
unknown tool's paths are found under, which tool names only read, globs
that would wrongly reach below a protected file, and what find's actions
(-delete, -exec, -execdir, -fprint) reach. Each test builds its own
temporary projects.

The binary is $RALON_BINARY, else build/src/ralon in the source tree. Python 3
standard library only. Run: RALON_BINARY=… python3 tests/hook/test_hook_paths.py -v
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

from hookutil import Result, clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
RALON = os.environ.get("RALON_BINARY") or os.path.normpath(
    os.path.join(HERE, "..", "..", "build", "src", "ralon"))

POLICY = ("version: 1\n"
          "protect: [tests/golden/**, Cargo.lock, .github/workflows, \"docs/*.md\"]\n")
GOLDEN = "tests/golden/**"
CARGO = "Cargo.lock"
WORKFLOWS = ".github/workflows"
LOCK = "agent.lock"  # the implicit pattern zero

# The wording of the reasons (as in test_hook.py).
PROTECTED_ONE = "`{shown}` is protected by agent.lock (pattern `{pattern}`, {policy})"
PROTECTED_TAIL = (": this call was refused and changed nothing. Edit other files, or ask "
                  "the user to change agent.lock; you cannot, and renaming, copying over "
                  "or writing it from the shell is refused too.")
AMBIGUOUS = ("`{path}` does not exist, and `{tool}` would then change whichever file in "
             "the workspace has a path ending with it, which may be one agent.lock "
             "protects: this call was refused and changed nothing. Give the file's "
             "absolute path.")


UNREAD = ("which files this command changes is known only when it runs (names xargs reads, "
          "files find finds, words the shell expands), so they may be any below `{shown}`, "
          "where agent.lock protects paths (pattern `{pattern}`, {policy}): this call was "
          "refused and changed nothing. Name the files explicitly, leaving out the protected "
          "ones.")

SOMEWHERE = ("`{path}` is written in the directory a `cd` leads to that is known only when the "
             "command runs, and it may be a path agent.lock protects (pattern `{pattern}`, "
             "{policy}): this call was refused and changed nothing. Name the file by its full "
             "path, or `cd` to a directory written out.")


TOO_MANY_NAMES = ("this command makes more links and renames than ralon follows before it runs, "
                  "and a name written through one of them may be a file agent.lock protects: it "
                  "was refused and changed nothing. Run it as several shorter commands.")


def protected(shown, pattern, policy):
    return PROTECTED_ONE.format(shown=shown, pattern=pattern, policy=policy) + PROTECTED_TAIL


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make_project(root, policy=POLICY, files=("Cargo.lock", "tests/golden/a.txt", "docs/r.md",
                                             ".github/workflows/ci.yml", "src/main.c")):
    for rel in files:
        write(os.path.join(root, rel), "x\n")
    write(os.path.join(root, "agent.lock"), policy)


def claude_write(root, path):
    return {"hook_event_name": "PreToolUse", "tool_name": "Write", "session_id": "s",
            "cwd": root, "tool_input": {"file_path": path, "content": "x"}}


def claude_bash(cwd, command):
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "session_id": "s",
            "cwd": cwd, "tool_input": {"command": command}}


def gemini_replace(cwd, path):
    return {"hook_event_name": "BeforeTool", "tool_name": "replace", "session_id": "s",
            "cwd": cwd, "tool_input": {"file_path": path, "old_string": "x",
                                       "new_string": "y", "instruction": "fix"}}


class ProjectTest(unittest.TestCase):
    """A project governed by POLICY in a temporary directory, and ralon run
    on it."""
    maxDiff = None

    def setUp(self):
        if not os.access(RALON, os.X_OK):
            raise unittest.SkipTest("no ralon binary at %s (set RALON_BINARY)" % RALON)
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="ralon-hook-paths-"))
        self.addCleanup(shutil.rmtree, self.base, True)
        d = self.base
        while d != "/":
            d = os.path.dirname(d)
            if os.path.lexists(os.path.join(d, "agent.lock")):
                raise unittest.SkipTest("%s/agent.lock would govern the test projects" % d)
        self.root = os.path.join(self.base, "proj")
        self.policy = os.path.join(self.root, "agent.lock")
        make_project(self.root)
        src = os.path.join(self.root, "src")
        os.symlink("../tests", os.path.join(src, "ldir"))
        for name in ("l[x]", "what?", "lnk"):
            os.symlink("../Cargo.lock", os.path.join(src, name))
        self.home = os.path.join(self.base, "home")
        os.makedirs(self.home)
        self.env = clean_env(self.home)

    # -- running ralon --------------------------------------------------------------

    def hook(self, payload, args=(), cwd=None):
        if not isinstance(payload, str):
            payload = json.dumps(payload)
        p = subprocess.run([RALON, "hook", "check"] + list(args), input=payload.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=cwd or self.root, env=self.env, timeout=60)
        return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                      p.stderr.decode("utf-8", "replace"))

    def assertClaude(self, res, reason):
        """Claude Code's answer: reason None is consent (nothing, exit 0)."""
        if reason is None:
            self.assertEqual((res.rc, res.out, res.err), (0, "", ""), res)
            return
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(json.loads(res.out), {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": reason}}, res)
        self.assertEqual(res.err, "ralon: %s\n" % reason, res)

    def assertExit2(self, res, reason):
        """Unknown callers: the reason on stderr and exit 2, stdout empty."""
        if reason is None:
            self.assertEqual((res.rc, res.out, res.err), (0, "", ""), res)
        else:
            self.assertEqual((res.rc, res.out, res.err), (2, "", "ralon: %s\n" % reason), res)

    def assertGemini(self, res, reason):
        if reason is None:
            self.assertEqual((res.rc, res.out, res.err), (0, "", ""), res)
        else:
            self.assertEqual(res.rc, 0, res)
            self.assertEqual(json.loads(res.out), {"decision": "deny", "reason": reason}, res)

    def bash(self, command, reason, cwd=None):
        with self.subTest(command=command):
            self.assertClaude(self.hook(claude_bash(cwd or self.root, command)), reason)

    def unread(self, shown, pattern=LOCK):
        return UNREAD.format(shown=shown, pattern=pattern, policy=self.policy)


class HookPathsTest(ProjectTest):
    # -- 1: `*`, `?` and `[` in a file's name -------------------------------------------

    def test_edit_tool_name_with_wildcards_is_a_literal_path(self):
        """A file named `l[x]` or `what?` given to an edit tool is that file:
        through a symbolic link it is decided by where it leads."""
        for name in ("l[x]", "what?"):
            with self.subTest(name=name):
                res = self.hook(claude_write(self.root, os.path.join(self.root, "src", name)))
                self.assertClaude(res, protected("src/" + name, CARGO, self.policy))
        res = self.hook(claude_write(self.root, "src/new[1].c"))
        self.assertClaude(res, None)

    def test_patch_name_with_wildcards_is_a_literal_path(self):
        patch = "*** Begin Patch\n*** Update File: src/l[x]\n@@\n-x\n+y\n*** End Patch\n"
        payload = {"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                   "session_id": "s", "turn_id": "t", "cwd": self.root,
                   "tool_input": {"command": patch}}
        res = self.hook(payload, ["--agent", "codex"])
        self.assertExit2(res, protected("src/l[x]", CARGO, self.policy))

    def test_shell_glob_through_a_symlinked_directory(self):
        """`rm src/ldir/golden/*` with src/ldir -> ../tests removes
        tests/golden/*: the directory before the wildcard is resolved."""
        self.bash("rm src/ldir/golden/*", protected("src/ldir/golden/*", GOLDEN, self.policy))
        self.bash("rm src/ldir/gold*/a.txt",
                  protected("src/ldir/gold*/a.txt", GOLDEN, self.policy))
        self.bash("rm src/ldir/other/*", None)

    def test_shell_glob_matching_a_link(self):
        """A wildcard the shell expands to a symbolic link reaches where the
        link leads: the patterns, matched against the glob as written,
        cannot see that (src/lnk -> ../Cargo.lock, src/ldir -> ../tests)."""
        src = os.path.join(self.root, "src")
        cargo = protected("src/lnk", CARGO, self.policy)
        self.bash("echo x > ln?", cargo, cwd=src)
        self.bash("cp /etc/hostname [l]nk", cargo, cwd=src)
        self.bash("rm -f l?ir/golden/a.txt",
                  protected("src/ldir/golden/a.txt", GOLDEN, self.policy), cwd=src)
        self.bash("rm -f */golden/a.txt",
                  protected("src/ldir/golden/a.txt", GOLDEN, self.policy), cwd=src)
        # `..` after the link: the file it names is the resolved one.
        self.bash("echo x > ld*/../Cargo.lock", protected("Cargo.lock", CARGO, self.policy),
                  cwd=src)
        # What the links lead to and no protected file: allowed.
        os.makedirs(os.path.join(self.root, "tests/other"))
        self.bash("rm -f l?ir/other/*.o", None, cwd=src)
        self.bash("rm -f *.o ../src/*.o", None, cwd=src)

    def test_shell_glob_word_is_also_a_literal_name(self):
        """Quoted (or matching nothing) the shell passes the word on as a
        name: `src/l[x]` is the link to Cargo.lock. Written through, it is
        Cargo.lock; removed, only the link goes."""
        self.bash("cp /etc/hostname 'src/l[x]'", protected("src/l[x]", CARGO, self.policy))
        self.bash("echo x > 'src/what?'", protected("src/what?", CARGO, self.policy))
        self.bash("rm 'src/l[x]'", None)
        self.bash("rm src/*.o", None)

    def test_link_removed_or_renamed_as_itself(self):
        """rm, unlink and mv's sources take a symbolic link itself, not
        what it leads to: `rm src/lnk` leaves Cargo.lock as it was, and `rm
        -r` does not follow a link (src/ldir -> ../tests). Written through,
        followed by a trailing `/`, or a directory on the way, the link
        reaches the protected files."""
        for command in ("rm src/lnk", "rm -f src/lnk src/main.c", "unlink src/lnk",
                        "rm -rf src/ldir", "rm -r src/ldir src/lnk", "mv src/lnk src/old",
                        "mv -t /tmp src/ldir", "cd src && rm lnk", "rm src/ln?"):
            self.bash(command, None)
        cargo = protected("src/lnk", CARGO, self.policy)
        self.bash("echo x > src/lnk", cargo)
        self.bash("cp /etc/hostname src/lnk", cargo)
        self.bash("chmod 600 src/lnk", cargo)
        self.bash("truncate -s 0 src/lnk", cargo)
        self.bash("rm -rf src/ldir/", protected("src/ldir/", GOLDEN, self.policy))
        self.bash("rm -f src/ldir/golden/a.txt",
                  protected("src/ldir/golden/a.txt", GOLDEN, self.policy))
        self.bash("mv src/ldir/golden src/g", protected("src/ldir/golden", GOLDEN, self.policy))
        # A link the policy protects by its own name goes nowhere either.
        os.symlink("../../src/main.c", os.path.join(self.root, ".github/workflows/ln"))
        self.bash("rm .github/workflows/ln", protected(".github/workflows/ln", WORKFLOWS,
                                                       self.policy))
        # Not a link: as before.
        self.bash("rm Cargo.lock", protected("Cargo.lock", CARGO, self.policy))
        self.bash("rm -r tests", protected("tests/", GOLDEN, self.policy))

    def test_xargs_written_operands(self):
        """Under xargs the words written still count: mv's sources go, and
        with no input GNU xargs runs the command once, its last word the
        destination."""
        src = os.path.join(self.root, "src")
        cargo = protected("Cargo.lock", CARGO, self.policy)
        self.bash("echo x | xargs mv -t /tmp/outx ../Cargo.lock", cargo, cwd=src)
        self.bash("echo x | xargs mv ../Cargo.lock", cargo, cwd=src)
        self.bash("printf '' | xargs cp /etc/hostname ../Cargo.lock", cargo, cwd=src)
        self.bash("echo | xargs -I{} mv Cargo.lock /tmp/outx/{}", cargo)
        self.bash("echo | xargs mv Cargo.lock /tmp/outx/", cargo)
        # The sources it reads go too: any below where it runs.
        self.bash("find tests | xargs mv -t /tmp/outx", UNREAD.format(
            shown="./", pattern=LOCK, policy=self.policy))
        self.bash("echo x | xargs mv -t /tmp/outx", None, cwd=src)
        self.bash("echo x | xargs cp -t /tmp/outx", None, cwd=src)
        self.bash("ls | xargs cp -t /tmp/outx", None)

    def test_rm_r_of_an_expanded_word(self):
        """rm -r of a word the shell expands ($X, $(…), `…`) may remove any
        tree below the directory written before it; variables the
        environment holds are expanded. rm without -r, and other writes,
        are left to the kernel (`rm -f "$tmp"` is everywhere)."""
        def unread(shown, pattern=LOCK):
            return UNREAD.format(shown=shown, pattern=pattern, policy=self.policy)
        self.bash("rm -rf $(echo tests)", unread("./"))
        self.bash("rm -rf `echo Cargo.lock`", unread("./"))
        # A value the command sets itself is that value.
        self.bash("X=tests; rm -rf \"$X\"", protected("tests/", GOLDEN, self.policy))
        self.bash("X=src; rm -rf \"$X\"", None)
        self.bash("X=$(pwd); rm -rf \"$X\"", unread("./"))
        self.bash("rm -Rf tests/$X/", unread("tests/", GOLDEN))
        self.bash("rm -r -- ${X}", unread("./"))
        self.bash("rm -rf src/$X", None)
        self.bash("rm -rf \"$HOME/.cache/$X\"", None)
        self.bash("rm -f \"$tmp\"", None)
        self.bash("echo hi > \"$out\"", None)
        # $HOME is the environment's: the test's home, holding nothing.
        self.bash("rm -rf $HOME/x", None)
        # A command substitution inside a word still runs.
        self.bash("echo $(echo x > Cargo.lock)", protected("Cargo.lock", CARGO, self.policy))

    # -- 2: trees through symbolic links -----------------------------------------------

    def test_tree_through_symlink(self):
        """rm -rf src/ldir/ empties tests/, where tests/golden/** lies."""
        self.bash("rm -rf src/ldir/", protected("src/ldir/", GOLDEN, self.policy))
        self.bash("rm -rf src/ldir/*", protected("src/ldir/*", GOLDEN, self.policy))
        self.bash("mv src/ldir/ /tmp/elsewhere", protected("src/ldir/", GOLDEN, self.policy))
        os.makedirs(os.path.join(self.root, "build/x"))
        os.symlink("../build", os.path.join(self.root, "src/lbuild"))
        self.bash("rm -rf src/lbuild/", None)

    # -- 3: ancestors of the project root ----------------------------------------------

    def test_ancestor_of_root_as_tree(self):
        """Removing or moving a directory holding the project takes every
        protected file with it, agent.lock first."""
        up = self.base + "/"
        self.bash("rm -rf ..", protected(up, LOCK, self.policy))
        self.bash("mv .. /tmp/x", protected(up, LOCK, self.policy))
        self.bash("mv %s /tmp/x" % self.base, protected(up, LOCK, self.policy))
        self.bash("rm -rf /", protected("/", LOCK, self.policy))
        self.bash("cd src && rm -rf ../..", protected(up, LOCK, self.policy))
        os.makedirs(os.path.join(self.base, "other"))
        self.bash("rm -rf ../other", None)

    def test_ancestor_of_root_through_symlink(self):
        """A link to a directory holding the project is that directory."""
        os.symlink(self.base, os.path.join(self.home, "up"))
        link = os.path.join(self.home, "up")
        self.bash("rm -rf %s/" % link, protected(link + "/", LOCK, self.policy))

    def test_glob_naming_the_root_or_above(self):
        self.bash("rm -rf ../proj*", protected(self.root + "*", LOCK, self.policy))
        self.bash("rm -rf %s/*" % self.base, protected(self.base + "/*", LOCK, self.policy))
        self.bash("rm -rf /*", protected("/*", LOCK, self.policy))
        self.bash("rm -rf ../other*", None)

    def test_glob_from_above_the_root_reaching_inside(self):
        """A glob that starts above the root and names a protected file."""
        self.bash("rm ../pro*/Cargo.lock", protected("Cargo.lock", CARGO, self.policy))
        self.bash("rm %s/*/docs/r.md" % self.base, protected("docs/r.md", "docs/*.md",
                                                             self.policy))
        self.bash("rm ../pro*/src/main.c", None)

    # -- 10: Gemini's replace "corrects" relative paths ----------------------------------

    def test_git_writes_the_paths_it_is_given(self):
        """git rm, mv (both ends), checkout -- PATH, restore, clean write the
        working tree's files they name; reset --hard all of it. The index,
        branches and dry runs write nothing."""
        cargo = protected("Cargo.lock", CARGO, self.policy)
        a_txt = protected("tests/golden/a.txt", GOLDEN, self.policy)
        for command, reason in (
                ("git rm Cargo.lock", cargo),
                ("git rm -f -- tests/golden/a.txt", a_txt),
                ("git rm -r tests", protected("tests/", GOLDEN, self.policy)),
                ("git -C tests rm golden/a.txt", a_txt),
                ("git mv tests/golden/a.txt src/a.txt", a_txt),
                ("git mv src/main.c Cargo.lock", cargo),
                ("git mv -f src/main.c tests/golden/", protected("tests/golden/main.c", GOLDEN,
                                                                 self.policy)),
                ("git checkout -- Cargo.lock", cargo),
                ("git checkout HEAD~1 -- Cargo.lock", cargo),
                ("git checkout Cargo.lock", cargo),
                ("git checkout main Cargo.lock", cargo),
                ("git restore Cargo.lock", cargo),
                ("git restore --staged --worktree Cargo.lock", cargo),
                ("git restore -s HEAD~1 tests/golden/a.txt", a_txt),
                ("git clean -fdx tests", protected("tests/", GOLDEN, self.policy)),
                ("cd tests && git clean -fd", protected("tests/", GOLDEN, self.policy)),
                ("git reset --hard HEAD~1", protected("./", LOCK, self.policy)),
                ("xargs git rm < list", self.unread("./")),
                # Nothing of the working tree.
                ("git rm --cached Cargo.lock", None),
                ("git rm -n Cargo.lock", None),
                ("git mv -n Cargo.lock x", None),
                ("git mv src/main.c src/b.c", None),
                ("git checkout main", None),
                ("git checkout -b Cargo.lock", None),
                ("git restore --staged Cargo.lock", None),
                ("git reset HEAD~1", None),
                ("git reset --soft HEAD~1", None),
                ("git clean -n", None),
                ("cd src && git clean -fd", None),
                ("git add Cargo.lock && git commit -m x", None),
                ("git status && git diff Cargo.lock", None)):
            self.bash(command, reason)

    def test_names_the_command_sets_itself(self):
        """A path in a variable the command assigns, "$PWD/…", ${PWD} and
        ~+ (after any `cd`), and brace expansion, in redirection targets and
        operands; a value only known when it runs is left as before."""
        cargo = protected("Cargo.lock", CARGO, self.policy)
        a_txt = protected("tests/golden/a.txt", GOLDEN, self.policy)
        src = os.path.join(self.root, "src")
        for command, reason in (
                ('f=tests/golden/a.txt; echo x > "$f"', a_txt),
                ('f=Cargo.lock && rm -f "$f"', cargo),
                ('d=tests; cp src/main.c "$d/golden/a.txt"', a_txt),
                ('f=a.txt; cd tests/golden && echo x >> ${f}', a_txt),
                ('echo x > "$PWD/Cargo.lock"', cargo),
                ("cd tests && echo x > ${PWD}/golden/a.txt", a_txt),
                ("cd tests/golden && rm ~+/a.txt", a_txt),
                ("echo x > ~+/Cargo.lock", cargo),
                ('cd .. && mv "$PWD/Cargo.lock" /tmp/', cargo),
                ("echo x > Cargo.{lock,toml}", cargo),
                ("echo x > {src,tests/golden}/a.txt", a_txt),
                ("touch .github/{workflows,x}", protected(".github/workflows", WORKFLOWS,
                                                         self.policy)),
                # Known only when it runs: the kernel's, as before.
                ('f=$(mktemp); echo x > "$f"', None),
                ('echo x > "$OUT"', None),
                ('f=src/x.c; echo x > "$f"', None),
                ('echo x > "$PWD/src/x.c"', None),
                ("echo x > src/{a,b}.c", None),
                ("touch src/f{1..3}.c", None)):
            cwd = src if command.startswith("cd ..") else self.root
            self.bash(command, reason, cwd=cwd)

    def test_cd_the_hook_cannot_follow(self):
        """After `cd "$X"`, `cd -` or the like, relative names are written
        where only running the command tells: refused when a pattern
        spells a path that may end with one (more than `**` does), or when
        it is protected from the working directory, where the `cd` may
        lead. `$(git rev-parse --show-toplevel)` is the working tree, and
        variables the environment holds are expanded."""
        os.mkdir(os.path.join(self.root, ".git"))
        src = os.path.join(self.root, "src")

        def somewhere(path, pattern):
            return SOMEWHERE.format(path=path, pattern=pattern, policy=self.policy)

        for command, reason in (
                ('cd "$X" && rm -f Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd "$X"; echo x > Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd "$X" && rm golden/a.txt', somewhere("golden/a.txt", GOLDEN)),
                ('cd "$X"/tests && rm golden/a.txt', somewhere("tests/golden/a.txt", GOLDEN)),
                ('cd "$X" && cd .. && rm Cargo.lock', somewhere("../Cargo.lock", CARGO)),
                ("cd - && rm Cargo.lock", somewhere("Cargo.lock", CARGO)),
                ('pushd "$X" && rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('env -C "$X" rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd "$(mktemp -d)" && rm -rf ..', somewhere("..", LOCK)),
                # Expansions with a `/` inside or after them.
                ('cd "${BASH_SOURCE%/*}" && rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd "${X:-/a/b}" && rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd "$X/$Y" && rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd "$X/tests/$Y" && rm -rf golden', somewhere("golden", GOLDEN)),
                # A tree that may be the project, or hold it.
                ('cd "$X" && rm -rf proj', somewhere("proj", LOCK)),
                ('cd "$X" && rm -rf ../p*', somewhere("../p*", "docs/*.md")),
                # Which of two directories, after `||`; a stack that forgot.
                ('cd "$X" || cd /tmp; rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ("pushd /tmp; " + "pushd /tmp; " * 70 + "popd; " * 71 + "rm Cargo.lock",
                 somewhere("Cargo.lock", CARGO)),
                # What the command sets is not the environment's.
                ('D=/tmp; D=$(pwd); cd "$D" && rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd tests && cd "$OLDPWD" && rm Cargo.lock', somewhere("Cargo.lock", CARGO)),
                ('cd "$X" && rm -rf workflows', somewhere("workflows", WORKFLOWS)),
                ('cd "$(git rev-parse --show-toplevel)" && rm Cargo.lock',
                 protected("Cargo.lock", CARGO, self.policy)),
                ("cd `git rev-parse --show-toplevel`/tests && echo x > golden/a.txt",
                 protected("tests/golden/a.txt", GOLDEN, self.policy)),
                ('cd "$PROJ" && rm Cargo.lock', protected("Cargo.lock", CARGO, self.policy)),
                ('PROJ=/tmp; cd "$PROJ" && rm Cargo.lock', None),
                ('D=../tests; cd "$D" && rm -rf golden',
                 protected("tests/golden", GOLDEN, self.policy)),
                ('cd "$PWD/../tests" && rm -rf golden',
                 protected("tests/golden", GOLDEN, self.policy)),
                ('pushd "$X" && popd && rm ../Cargo.lock',
                 protected("Cargo.lock", CARGO, self.policy)),
                # Allowed: no pattern spells these, or the `cd` is known.
                ('cd "$X" && rm -f build/x.o', None),
                ('cd "$X" && rm a.txt', None),
                ('cd "$X" && rm -rf build', None),
                ('(cd "$X" && make) && rm -f main.o', None),
                ('cd "$X" && cd /tmp && rm Cargo.lock', None),
                ('cd "$(git rev-parse --show-toplevel)" && rm src/main.o', None),
                ('pushd "$X" && popd && rm -f main.o', None),
                ('cd "$X" && rm -f *.o', None),
                ('cd "$X" || exit 1; rm -f main.o', None),
                ('cd "$X" && rm -rf build', None)):
            self.env["PROJ"] = self.root
            self.env["PWD"] = self.root  # the hook's, not where the call runs
            self.bash(command, reason, cwd=src)
        # Globs, from a directory with no links to expand them through.
        work = os.path.join(self.root, "work")
        os.mkdir(work)
        for command, reason in (('cd "$X" && rm -f *.lock', somewhere("*.lock", LOCK)),
                                ('cd "$X" && rm -rf */golden', somewhere("*/golden", LOCK)),
                                ('cd "$X" && rm -rf *', somewhere("*", LOCK)),
                                ('cd "$X" && rm -f *.o', None)):
            self.bash(command, reason, cwd=work)
        # The `cd` may lead nowhere: from inside a protected directory, a
        # name there is protected whatever a pattern spells.
        self.bash('cd "$X" && rm a.txt', SOMEWHERE.format(path="a.txt", pattern=GOLDEN,
                                                         policy=self.policy),
                  cwd=os.path.join(self.root, "tests/golden"))

    def test_quoted_dollar_is_literal(self):
        """A `$` the shell takes as it is ('…', $'…', an escape, a value it
        substituted) names a directory called `$HOME`, not the home
        directory: `..` from there is the project. Where the shell does
        expand, it still counts; and a script run by sh -c, eval or a
        heredoc's delimiter read with its `$`."""
        self.env["Q"] = "$HOME"  # a value is expanded once, never again
        cargo = protected("Cargo.lock", CARGO, self.policy)
        golden = protected("tests/golden", GOLDEN, self.policy)
        pid = SOMEWHERE.format(path="../Cargo.lock", pattern=CARGO, policy=self.policy)
        for command, reason in (
                ("cd '$HOME' && rm ../Cargo.lock", cargo),
                ("cd \\$HOME && rm ../Cargo.lock", cargo),
                ('cd "\\$HOME" && rm ../Cargo.lock', cargo),
                ("cd $'\\x24HOME' && rm ../Cargo.lock", cargo),
                ("cd $'$HOME' && rm ../Cargo.lock", cargo),
                ("cd '${HOME}'/x && rm ../../Cargo.lock", cargo),
                ("rm -rf '$HOME'/../tests/golden", golden),
                ('cd "$Q" && rm ../Cargo.lock', cargo),
                ('D=\'$HOME\'; cd "$D" && rm ../Cargo.lock', cargo),
                ("sh -c 'cd \"$HOME\" && rm ../proj/Cargo.lock'", cargo),
                ("eval 'cd $HOME' '&& rm ../proj/Cargo.lock'", cargo),
                ("cat > notes.txt <<'$E'\nhello\n$E\nrm Cargo.lock", cargo),
                # A `$` before what starts no expansion is itself.
                ('mkdir "$"HOME && cd "$"HOME && rm ../Cargo.lock', cargo),
                ("cd $\\HOME && rm ../Cargo.lock", cargo),
                ("cd \"a$\"'{HOME}' && rm ../Cargo.lock", cargo),
                # Allowed: the shell expands these, or the name is not protected.
                ('cd "$HOME" && rm ../Cargo.lock', None),
                # $$ is one expansion: a directory only running it tells.
                ('cd "$$" && rm ../Cargo.lock', pid),
                ("cd $$ && rm ../Cargo.lock", pid),
                ("cd $HOME && rm ../Cargo.lock", None),
                ("sh -c 'cd $HOME && rm ../Cargo.lock'", None),
                ("cd '$HOME' && rm ../notes.txt", None),
                ("cat > notes.txt <<'$E'\nrm Cargo.lock\n$E\necho done", None)):
            self.bash(command, reason)
        # xargs -I's string, quoted, is the same bare in the words.
        for command in ("echo ../Cargo.lock | xargs -I'@$' cp /dev/null src/@$",
                        "echo ../Cargo.lock | xargs -I@$ cp /dev/null 'src/@$'"):
            self.bash(command, UNREAD.format(shown="./", pattern=LOCK, policy=self.policy))

    def test_names_made_in_the_command(self):
        """A link ln makes, another name for a file, the new name of what mv
        moves: the file system knows none of them before the command
        runs, so a name written through one is judged where it leads. The
        name itself removed takes nothing with it."""
        cargo = self.root + "/Cargo.lock"
        for command, shown, pattern in (
                ("ln -s ../Cargo.lock src/x && echo y > src/x", "Cargo.lock", CARGO),
                ("ln -sf %s x; echo y >> x" % cargo, "Cargo.lock", CARGO),
                ("ln -s --force ../Cargo.lock src/ && truncate -s0 src/Cargo.lock",
                 "Cargo.lock", CARGO),
                ("ln -s tests t && rm -rf t/golden", "tests/golden", GOLDEN),
                ("ln -sr tests/golden src/g && echo y > src/g/a.txt", "tests/golden/a.txt",
                 GOLDEN),
                ("ln -rs tests src/t && cd src && rm -rf t/", "tests/", GOLDEN),
                ("ln Cargo.lock hard && echo y > hard", "Cargo.lock", CARGO),
                ("ln -s Cargo.lock a && ln -s a b && echo y > b", "Cargo.lock", CARGO),
                ("mv src/lnk src/x && echo y > src/x", "Cargo.lock", CARGO),
                ("mv src/ldir src/d && rm -rf src/d/", "tests/", GOLDEN),
                ("mkdir -p w && mv src/lnk w/ && sed -i s/x/y/ w/lnk", "Cargo.lock", CARGO),
                ("sh -c 'ln -s ../tests src/t' && rm -rf src/t/golden", "tests/golden", GOLDEN),
                # -n: DEST, a link to a directory, is replaced, not gone into.
                ("ln -sfn ../Cargo.lock src/ldir && echo y > src/ldir", "Cargo.lock", CARGO),
                # A relative text leads on from where the link really is:
                # src/ldir is tests/, s is src/a.
                ("ln -s ../Cargo.lock src/ldir/x && echo y > src/ldir/x", "Cargo.lock", CARGO),
                ("ln -s ../Cargo.lock src/ldir && echo y > src/ldir/Cargo.lock", "Cargo.lock",
                 CARGO),
                ("mkdir -p src/a && ln -s src/a s && ln -s ../../Cargo.lock s/x && echo y > s/x",
                 "Cargo.lock", CARGO),
                # A link moved or hard-linked keeps its text, read from its new place.
                ("mkdir -p src/a && ln -s ../Cargo.lock src/a/l && mv src/a/l src/ && "
                 "echo y > src/l", "Cargo.lock", CARGO),
                ("mkdir -p src/a && ln -s ../Cargo.lock src/a/l && ln src/a/l src/h && "
                 "echo y > src/h", "Cargo.lock", CARGO),
                # A directory made first: DEST may be either.
                ("mkdir d && ln -s ../Cargo.lock d && echo y > d/Cargo.lock", "Cargo.lock", CARGO),
                ("mv src s2/ && echo y > s2/lnk", "src/lnk", CARGO),
                # `..` after a link made climbs from where it leads.
                ("ln -s tests/golden g && echo y > g/../golden/a.txt", "tests/golden/a.txt",
                 GOLDEN),
                ("ln -s . a; ln -s . b; echo y > a/b/a/b/a/b/a/b/a/b/Cargo.lock", "Cargo.lock",
                 CARGO),
                # The other makers of links: cp -s, cp -l, link.
                ("cp -s Cargo.lock x; echo y > x", "Cargo.lock", CARGO),
                ("cp -l Cargo.lock x && echo y > x", "Cargo.lock", CARGO),
                ("cp -rl tests t2 && echo y > t2/golden/a.txt", "tests/golden/a.txt", GOLDEN),
                ("link Cargo.lock h && echo y > h", "Cargo.lock", CARGO),
                # Allowed: the link itself goes, or nothing protected is reached.
                ("ln -s ../Cargo.lock src/x && rm src/x", None, None),
                ("ln -s ../Cargo.lock src/x && cat src/x", None, None),
                ("ln -s ../Cargo.lock x && echo y > x", None, None),  # leads above the root
                ("mv src/lnk x && rm x", None, None),
                # src/lnk's text, ../Cargo.lock, leads above the root from there.
                ("mv src/lnk x && echo y > x", None, None),
                ("mv src/ldir d && rm -rf d/", None, None),
                ("ln -s src s && echo y > s/new.c", None, None),
                ("cp Cargo.lock /tmp/c && echo y > /tmp/c", None, None),
                ("mv notes.txt n2 && echo y > n2", None, None),
                # Without -n, src/ldir is gone into: echo fails on a directory.
                ("ln -sf ../Cargo.lock src/ldir && echo y > src/ldir", None, None),
                ("cp -s src/main.c m && echo y > m", None, None),
                ("link notes.txt h && echo y > h", None, None),
                ('cd "$X" && mv a b && echo y > b', None, None),
                # Cycles end: each name is followed once.
                ("ln -s b a; ln -s a b; echo y > a", None, None),
                ("; ".join(["mv x x"] * 24) + "; echo y > x", None, None)):
            self.bash(command, pattern and protected(shown, pattern, self.policy))
        # Names that only running the command tells: any below where they lead.
        for command, shown in (("ln -s tests t && find t/golden -delete", "tests/golden"),
                               ("ln -s tests t && cd t && find . -delete", "tests/"),
                               ("ln -s tests t && rm -rf t/golden/$X", "tests/golden")):
            self.bash(command, UNREAD.format(shown=shown, pattern=GOLDEN, policy=self.policy))
        self.bash('cd "$X" && ln -s ../Cargo.lock x && echo y > x',
                  SOMEWHERE.format(path="../Cargo.lock", pattern=CARGO, policy=self.policy))

    def test_names_made_past_the_limits(self):
        """More names made than the reader keeps, or a link that leads into
        itself (followed without end), may lead anywhere: refused where
        agent.lock governs, with its own explanation; elsewhere allowed."""
        # Each `ln -s src dN` is one name; the reader keeps 128.
        many = "; ".join("ln -s src d%d" % i for i in range(129))
        for command in (many + "; ln -s ../Cargo.lock src/x && echo y > src/x",
                        many + "; echo y > d1/new",
                        "ln -s a/b a && echo y > a/c"):
            self.bash(command, TOO_MANY_NAMES)
        self.bash(many + "; echo y > d1/new", None, cwd=self.base)
        # Below the limit, the same command is read whole.
        self.bash("; ".join("ln -s src d%d" % i for i in range(128)) + "; echo y > d1/new", None)

    def test_gemini_replace_relative_missing_path_refused(self):
        """`expected.txt` may be corrected to tests/golden/expected.txt, which
        `tests/golden` protects: no pattern needs to end like the name."""
        root = os.path.join(self.base, "proj2")
        make_project(root, "version: 1\nprotect: [.github/workflows, Cargo.lock, tests/golden]\n",
                     files=("tests/golden/expected.txt", ".github/workflows/ci.yml",
                            "src/main.c"))
        for name in ("expected.txt", "ci.yml", "src/new.c"):
            with self.subTest(name=name):
                res = self.hook(gemini_replace(root, name), cwd=root)
                self.assertGemini(res, AMBIGUOUS.format(path=name, tool="replace"))
        self.assertGemini(self.hook(gemini_replace(root, "src/main.c"), cwd=root), None)
        self.assertGemini(self.hook(gemini_replace(root, root + "/src/new.c"), cwd=root), None)
        # Where no agent.lock governs, nothing is refused.
        nolock = os.path.join(self.base, "nolock")
        os.makedirs(nolock)
        self.assertGemini(self.hook(gemini_replace(nolock, "expected.txt"), cwd=nolock), None)

    # -- 11: which agent.lock governs ---------------------------------------------------

    def test_nested_policy_cannot_shadow_the_project(self):
        """An agent.lock the agent writes below the root does not unprotect
        what the root's agent.lock protects."""
        root = os.path.join(self.base, "proj3")
        make_project(root, "version: 1\nprotect: [Cargo.lock, vendor/lib/generated.c]\n",
                     files=("Cargo.lock", "vendor/lib/generated.c"))
        policy = os.path.join(root, "agent.lock")
        target = os.path.join(root, "vendor/lib/generated.c")
        reason = protected("vendor/lib/generated.c", "vendor/lib/generated.c", policy)
        self.assertClaude(self.hook(claude_write(root, target), cwd=root), reason)
        nested = os.path.join(root, "vendor/lib/agent.lock")
        self.assertClaude(self.hook(claude_write(root, nested), cwd=root), None)
        write(nested, "version: 1\nprotect: [nothing]\n")
        self.assertClaude(self.hook(claude_write(root, target), cwd=root), reason)
        self.assertClaude(self.hook(claude_bash(root, "rm vendor/lib/generated.c"), cwd=root),
                          reason)
        # The nested policy still protects what it names.
        write(os.path.join(root, "vendor/lib/nothing"), "x")
        self.assertClaude(self.hook(claude_write(root, "vendor/lib/nothing"), cwd=root),
                          protected("nothing", "nothing", nested))

    def test_nested_policy_cannot_shadow_from_below(self):
        """Nor when the agent works below that agent.lock (Cursor's shell
        cwd, Claude's after a `cd`): every agent.lock up to `/` counts."""
        root = os.path.join(self.base, "proj3")
        make_project(root, "version: 1\nprotect: [tests/golden/**, Cargo.lock]\n",
                     files=("Cargo.lock", "tests/golden/a.txt", "tests/unit/t.c"))
        policy = os.path.join(root, "agent.lock")
        tests = os.path.join(root, "tests")
        write(os.path.join(tests, "agent.lock"), "version: 1\nprotect: [nothing]\n")
        golden = protected("tests/golden/a.txt", GOLDEN, policy)
        target = os.path.join(tests, "golden/a.txt")
        self.assertClaude(self.hook(claude_write(tests, target), cwd=tests), golden)
        self.assertClaude(self.hook(claude_write(tests, "golden/a.txt"), cwd=tests), golden)
        self.assertClaude(self.hook(claude_bash(tests, "echo hi > golden/a.txt"), cwd=tests),
                          golden)
        self.assertClaude(self.hook(claude_bash(tests, "rm -rf golden"), cwd=tests),
                          protected("tests/golden", GOLDEN, policy))
        self.assertClaude(self.hook(claude_bash(tests, "echo x > ../Cargo.lock"), cwd=tests),
                          protected("Cargo.lock", CARGO, policy))
        self.assertClaude(self.hook(claude_bash(tests, "echo hi > unit/t.c"), cwd=tests), None)
        # With -C naming the subdirectory too.
        res = self.hook(claude_write(tests, target), ["-C", tests], cwd=tests)
        self.assertClaude(res, golden)

    def test_link_into_another_project(self):
        """A link from one project to another's protected file is judged by
        the other's agent.lock."""
        root = os.path.join(self.base, "proj2")
        make_project(root, "version: 1\nprotect: [tests/golden]\n", files=("src/main.c",))
        link = os.path.join(root, "src/other")
        os.symlink(os.path.join(self.root, "Cargo.lock"), link)
        self.assertClaude(self.hook(claude_write(root, link), cwd=root),
                          protected("Cargo.lock", CARGO, self.policy))
        self.assertClaude(self.hook(claude_bash(root, "echo x > src/other"), cwd=root),
                          protected("Cargo.lock", CARGO, self.policy))

    def test_start_policy_counts(self):
        """-C names the project `ralon run` enforces: a path is decided
        against it too, whatever agent.lock lies nearer."""
        root = os.path.join(self.base, "proj3")
        make_project(root, "version: 1\nprotect: [sub]\n", files=("sub/x",))
        write(os.path.join(root, "sub/agent.lock"), "version: 1\nprotect: [y]\n")
        target = os.path.join(root, "sub/x")
        res = self.hook(claude_write(self.root, target), ["-C", root], cwd=self.root)
        self.assertClaude(res, protected("sub/x", "sub", os.path.join(root, "agent.lock")))
        # Without -C, the payload's cwd is where the agent runs.
        self.assertClaude(self.hook(claude_write(root, target), cwd=self.root),
                          protected("sub/x", "sub", os.path.join(root, "agent.lock")))

    # -- 12: path keys of unknown (MCP) tools -------------------------------------------

    def test_mcp_path_keys(self):
        cargo = os.path.join(self.root, "Cargo.lock")
        reason = protected("Cargo.lock", CARGO, self.policy)
        for args in ({"source": cargo, "destination": self.root + "/src/x"},
                     {"src": cargo, "dest": "/tmp/x"},
                     {"from": "/tmp/x", "to": cargo},
                     {"target": cargo},
                     {"destPath": cargo},
                     {"old_file_path": cargo, "new_file_path": "/tmp/x"},
                     {"uri": "file://" + cargo},
                     {"uri": "file://localhost" + self.root + "/Cargo%2Elock"},
                     {"uri": "file:" + cargo},
                     {"uri": "file://" + cargo + "#L3"},
                     {"edits": [{"newFilePath": cargo}]},
                     {"output_path": cargo},
                     {"outputFile": cargo},
                     {"outfile": cargo}):
            with self.subTest(args=args):
                payload = {"hook_event_name": "PreToolUse", "session_id": "s",
                           "tool_name": "mcp__filesystem__move_file", "cwd": self.root,
                           "tool_input": args}
                self.assertClaude(self.hook(payload), reason)
        payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": self.root,
                   "tool_name": "mcp__filesystem__move_file",
                   "tool_input": {"source": self.root + "/src/a", "destination": "/tmp/b",
                                  "uri": "https://example.com/Cargo.lock", "to": "v2"}}
        self.assertClaude(self.hook(payload), None)
        # An escaped `?` is part of the name: src/what? links to Cargo.lock.
        payload["tool_input"] = {"uri": "file://%s/src/what%%3F" % self.root}
        self.assertClaude(self.hook(payload), protected("src/what?", CARGO, self.policy))
        # Code under `source` is no path: no file has a 300-byte name.
        payload["tool_input"] = {"source": "import os\n" + "x" * 300 + "\nprint(1)\n"}
        self.assertClaude(self.hook(payload), None)

    # -- 13: which tool names only read ---------------------------------------------------

    def test_read_verbs_are_whole_words(self):
        cargo = os.path.join(self.root, "Cargo.lock")
        reason = protected("Cargo.lock", CARGO, self.policy)
        res = self.hook({"tool_name": "relocate_file",
                         "tool_input": {"path": cargo, "new_path": "/tmp/x"}},
                        ["--agent", "antigravity"])
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(json.loads(res.out), {"decision": "deny", "reason": reason})
        for tool in ("duplicate_file", "duplicateFile", "concatenate", "openai_tool",
                     "listen", "lsof_kill", "read_" + "x" * 130 + "_write"):
            with self.subTest(tool=tool):
                res = self.hook({"tool_name": tool,
                                 "tool_input": {"path": "/tmp/x", "destination": cargo}})
                self.assertExit2(res, reason)
        # A verb that writes, as a word of its own, wins over a read verb.
        for tool in ("list_then_mv", "read_then_chmod", "list_and_unlink", "readAndCopy",
                     "view_or_set", "cat-rm"):
            with self.subTest(tool=tool):
                res = self.hook({"tool_name": tool, "tool_input": {"file": cargo}})
                self.assertExit2(res, reason)
        for tool in ("read_file", "readFile", "ReadFile", "view", "file.cat", "list-dir",
                     "HTMLView", "mcp__fs__search_files", "grep", "read_format",
                     "list_scp_hosts", "view_settings"):
            with self.subTest(tool=tool):
                res = self.hook({"tool_name": tool, "tool_input": {"path": cargo}})
                self.assertExit2(res, None)

    # -- 14: a glob below a protected file -------------------------------------------------

    def test_glob_below_a_file_is_not_refused(self):
        """Nothing lies below agent.lock or Cargo.lock, so `*` standing for
        them reaches nothing protected."""
        os.makedirs(os.path.join(self.root, "build/node_modules"))
        self.bash("rm -f */*.o", None)
        self.bash("rm -rf */node_modules", None)
        self.bash("rm -f Cargo.*/x", None)
        # Directories a literal pattern names are another matter.
        self.bash("rm -f .*/workflows/*.yml",
                  protected(".*/workflows/*.yml", WORKFLOWS, self.policy))
        self.bash("rm -f */*/a.txt", protected("*/*/a.txt", GOLDEN, self.policy))
        self.bash("rm -rf */golden", protected("*/golden", GOLDEN, self.policy))
        self.bash("rm -f */r.md", protected("*/r.md", "docs/*.md", self.policy))
        # A literal pattern naming a link to a directory: that directory.
        shutil.rmtree(os.path.join(self.root, ".github/workflows"))
        os.symlink("../src", os.path.join(self.root, ".github/workflows"))
        self.bash("rm -f .*/workflows/*.c",
                  protected(".*/workflows/*.c", WORKFLOWS, self.policy))


class FindTest(ProjectTest):
    """find: -delete removes what it finds below its start points, -exec
    CMD {} (and -execdir, -ok, -okdir) runs CMD on it, read as xargs -I{}
    would be; -fprint FILE and the like write FILE. Tests and the other
    actions change nothing."""

    def setUp(self):
        super().setUp()
        for d in ("tests/unit", "src/a/b"):
            os.makedirs(os.path.join(self.root, d))
        self.cargo = protected("Cargo.lock", CARGO, self.policy)

    def test_delete(self):
        """Anything below each start point, and the point itself, may go."""
        self.bash("find tests/golden -delete", self.unread("tests/golden", GOLDEN))
        self.bash("find . -name '*.o' -delete", self.unread("./"))
        self.bash("find -L -O2 -name '*.o' -delete", self.unread("./"))
        self.bash("cd tests && find . -delete", self.unread("tests/", GOLDEN))
        self.bash("find .. -name x -delete", self.unread(self.base + "/"))
        self.bash("find src tests/unit -name '*.o' -delete", None)
        self.bash("find src -name '*.o' -delete", None)
        # A start point the shell expands: any below what is written before.
        self.bash("find \"$D\" -name '*.o' -delete", self.unread("./"))
        self.bash("find $(echo tests) -delete", self.unread("./"))
        self.bash("find src/$D -delete", None)
        # Start points read from a file may be any path.
        self.bash("find -files0-from list -delete", self.unread("/"))
        self.bash("cd src && find -files0-from list -exec rm {} +", self.unread("/"))
        self.bash("find -files0-from list -print", None)

    def test_exec(self):
        """What `{}` stands for lies below the start points; a read-only
        command writes nothing, a fixed name written is named."""
        self.bash("find . -exec rm {} +", self.unread("./"))
        self.bash("find tests -name '*.txt' -exec sed -i s/a/b/ {} \\;",
                  self.unread("tests/", GOLDEN))
        self.bash("find tests -ok rm {} \\;", self.unread("tests/", GOLDEN))
        self.bash("find src -exec rm -f {} \\;", None)
        self.bash("find . -exec grep -l x {} +", None)
        self.bash("find . -name '*.c' -exec wc -l {} \\; -print", None)
        self.bash("find tests -exec cat {} + -exec head -n1 {} \\;", None)
        self.bash("find . -exec cp {} Cargo.lock \\;", self.cargo)
        self.bash("find src -exec mv {} {}.bak \\;", None)

    def test_fprint(self):
        self.bash("find . -fprint Cargo.lock", self.cargo)
        self.bash("find . -fprint0 Cargo.lock", self.cargo)
        self.bash("find . -fls Cargo.lock", self.cargo)
        self.bash("find . -fprintf Cargo.lock '%p'", self.cargo)
        self.bash("find . -fprintf /tmp/list '%p'", None)

    def test_read_only(self):
        """A test's value is no action, whatever it looks like."""
        self.bash("find tests -name x", None)
        self.bash("find . -name '*.c' -print", None)
        self.bash("find tests -name x -ls", None)
        self.bash("find tests -name -delete -print", None)
        self.bash("find . -newermt -delete -print", None)

    def test_execdir(self):
        """-execdir runs in each found file's directory: the start point's
        own for the point itself, the point, and any below it."""
        self.bash("find tests -execdir rm {} +", self.unread("tests/", GOLDEN))
        self.bash("cd tests && find golden -okdir rm {} \\;",
                  self.unread("tests/golden", GOLDEN))
        self.bash("find src -execdir rm {} +", None)
        # A fixed name is written in each of those directories.
        self.bash("find tests -execdir touch stamp \\;", self.unread("tests/", GOLDEN))
        self.bash("find src -execdir touch stamp \\;", None)
        self.bash("find src -execdir cp {} ../Cargo.lock \\;", self.cargo)
        self.bash("find src/a -execdir cp {} ../../../Cargo.lock \\;", self.cargo)
        self.bash("find . -execdir cp {} Cargo.lock \\;", self.cargo)

    def test_exec_script(self):
        """A script find -exec or xargs runs gets the names as its
        arguments ($1, $@) and as `{}` in its text."""
        self.bash("find . -exec sh -c 'rm \"$@\"' sh {} +", self.unread("./"))
        self.bash("find . -exec sh -c 'rm {}' \\;", self.unread("./"))
        self.bash("find tests -exec bash -c 'for f; do mv \"$f\" \"$f.bak\"; done' _ {} +",
                  self.unread("tests/", GOLDEN))
        self.bash("find tests -type d -exec sh -c 'cd \"$1\" && rm -f x' _ {} \\;",
                  self.unread("tests/", GOLDEN))
        self.bash("find . -exec sh -c 'cp \"$1\" Cargo.lock' _ {} \\;", self.cargo)
        self.bash("find src -exec sh -c 'rm \"$1\"' _ {} \\;", None)
        self.bash("find src -exec sh -c 'echo x > \"$1.out\"' _ {} \\;", None)
        self.bash("find . -exec sh -c 'grep -q x \"$1\" && echo \"$1\" >> /tmp/l' _ {} \\;",
                  None)
        self.bash("ls | xargs sh -c 'rm \"$@\"' sh", self.unread("./"))
        self.bash("ls | xargs -I{} sh -c 'rm {}'", self.unread("./"))
        self.bash("ls | xargs -I{} rm tests/golden/{}", self.unread("tests/golden", GOLDEN))
        # What xargs reads may hold `..`: not only below src.
        self.bash("ls | xargs -I{} rm src/{}", self.unread("./"))
        self.bash("ls | xargs -I{} rm src/{}", None, cwd=os.path.join(self.root, "src"))

    def test_find_run_by_others(self):
        """find run by xargs, by another find's -exec or by a wrapper."""
        self.bash("find . -exec find {} -delete \\;", self.unread("./"))
        self.bash("find src -exec find {} -delete \\;", None)
        self.bash("ls | xargs -I{} find {} -delete", self.unread("./"))
        self.bash("printf '' | xargs find tests -delete", self.unread("tests/", GOLDEN))
        self.bash("ls | xargs find . -name x", None)
        self.bash("sudo -u nobody find tests -delete", self.unread("tests/", GOLDEN))
        self.bash("env -C tests find . -exec rm {} +", self.unread("tests/", GOLDEN))
        self.bash("timeout 10 find src -delete", None)


if __name__ == "__main__":
    unittest.main()
