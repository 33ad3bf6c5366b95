#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Shell completion for ralon, for real.

usage: test_completion.py MODE --bash FILE --zsh FILE --fish FILE
                          [--zsh-driver FILE]

MODE is one of:

  bash         an interactive bash (--norc, in a pseudo-terminal) with
               bash-completion loaded sources the bash completion; each
               line is typed with a Tab, readline itself splits the words
               and calls the completion function, and what it put in
               COMPREPLY is compared with what the line must offer
  fish         `fish --no-config`, sourcing the fish completion, answers
               `complete -C LINE` for each line
  zsh          an interactive `zsh -f` in a zpty, with the zsh completion
               first in $fpath and compinit run, completes each line
               (zsh-complete.zsh)
  consistency  every command, option, backend, agent and hook action
               the built ralon prints in `ralon --help` and `ralon COMMAND
               --help` appears in each of the three completion files; each
               agent's name for people (`ralon hook list --json`) beside
               it in zsh's and fish's

What a line must offer is worked out from the built binary's help
($RALON_BINARY, run with LC_ALL=C.UTF-8 so it is untranslated), not
written out here, so an option added to ralon without its completion makes
these tests fail. Python 3 standard library only.

Exit status: 0 pass, 1 fail (every failure is printed), 77 skip (the
shell, or bash-completion, is not installed).
"""

import argparse
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
BASH_COMPLETION_SCRIPTS = [
    "/usr/share/bash-completion/bash_completion",
    "/usr/local/share/bash-completion/bash_completion",
    "/etc/bash_completion",
]


def env_for_tools(home, path_prefix=None):
    env = {}
    for k, v in os.environ.items():
        if k.startswith(("LC_", "XDG_", "BASH_", "ZDOTDIR", "fish_")) or k in (
                "LANG", "LANGUAGE", "INPUTRC", "HISTFILE", "PROMPT_COMMAND", "ENV",
                "CDPATH", "FPATH", "TERM"):
            continue
        env[k] = v
    env["LC_ALL"] = "C.UTF-8"
    env["HOME"] = home
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    env["XDG_DATA_HOME"] = os.path.join(home, ".local", "share")
    env["XDG_CACHE_HOME"] = os.path.join(home, ".cache")
    env["INPUTRC"] = "/dev/null"
    env["TERM"] = "dumb"
    if path_prefix:
        env["PATH"] = path_prefix + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    return env


# ---------------------------------------------------------------- the help


class Facts:
    """What the built ralon says about itself in its --help."""

    def __init__(self, binary):
        self.binary = binary
        self.problems = []
        top = self.top = self.help([])
        self.commands = self.section_words(top, "Commands:")
        self.global_opts = self.declared_options(top)
        # Every long option any help mentions, descriptions included.
        self.mentioned_opts = set(self.long_options(top))
        self.command_opts = {}
        self.command_help = {}
        for c in self.commands:
            text = self.help([c])
            self.command_help[c] = text
            self.command_opts[c] = self.declared_options(text)
            self.mentioned_opts |= set(self.long_options(text))
        hook = self.command_help.get("hook", "")
        run = self.command_help.get("run", "")
        # Usage lines: "ralon hook ACTION [OPTIONS]".
        self.hook_actions = []
        self.hook_action_opts = {}
        for m in re.finditer(r"^\s*(?:Usage:)?\s*ralon hook ([a-z]+)(.*)$", hook, re.M):
            self.hook_actions.append(m.group(1))
            self.hook_action_opts[m.group(1)] = self.long_options(m.group(2))
        # "Agents: claude, cursor, ..., qwen. auto: ..."
        m = re.search(r"Agents:(.*?)\.\s*auto:", hook, re.S)
        self.agents = re.findall(r"[a-z][a-z0-9_-]*", m.group(1)) if m else []
        # "--backend B  auto (default), mount or landlock"
        m = re.search(r"--backend \S+\s+(.*)", run)
        self.backends = []
        if m:
            text = re.sub(r"\([^)]*\)", "", m.group(1))
            self.backends = [w for w in re.findall(r"[a-z]+", text) if w != "or"]
        self.agent_names = self.display_names()
        for name in ("commands", "global_opts", "hook_actions", "agents", "backends"):
            if not getattr(self, name):
                self.problems.append("found no %s in ralon's --help; has its format changed?"
                                     % name.replace("_", " "))

    def display_names(self):
        """Each agent's name for people, as `ralon hook list --json` gives
        it (zsh and fish show it beside the agent)."""
        with tempfile.TemporaryDirectory(prefix="ralon-completion-") as d:
            env = env_for_tools(d)
            r = subprocess.run([self.binary, "hook", "list", "--json"], cwd=d, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            hooks = json.loads(r.stdout)["hooks"]
        except (ValueError, KeyError):
            self.problems.append("`ralon hook list --json` gave no hooks: %r" % (r,))
            return {}
        return {h["agent"]: h["name"] for h in hooks}

    def help(self, args):
        env = env_for_tools(os.environ.get("HOME", "/tmp"))
        env.pop("LANGUAGE", None)
        r = subprocess.run([self.binary] + args + ["--help"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            self.problems.append("`ralon %s --help` exited %d: %s"
                                 % (" ".join(args), r.returncode, r.stderr.strip()))
        return r.stdout

    @staticmethod
    def section(text, title):
        lines = text.splitlines()
        out = []
        inside = False
        for line in lines:
            if line.strip() == title:
                inside = True
                continue
            if inside:
                if not line.strip():
                    break
                out.append(line)
        return "\n".join(out)

    def section_words(self, text, title):
        return [line.split()[0] for line in self.section(text, title).splitlines()]

    def declared_options(self, text):
        """The long options a help declares: in its usage lines, and at the
        head of each line of its Options: section (not those mentioned in
        a description)."""
        usage = [line for line in text.splitlines()
                 if re.match(r"\s*(Usage:\s*)?ralon\b", line)]
        heads = [re.sub(r"\s{2,}.*", "", line.strip())
                 for line in self.section(text, "Options:").splitlines()
                 if line.lstrip().startswith("-")]
        return self.long_options("\n".join(usage + heads))

    def short_options(self, texts=None):
        """Every short option an Options: section declares (`-q, --quiet`),
        in the helps `texts` (by default all of them)."""
        if texts is None:
            texts = [self.top] + list(self.command_help.values())
        out = set()
        for text in texts:
            for line in self.section(text, "Options:").splitlines():
                m = re.match(r"\s*(-[A-Za-z]),", line)
                if m:
                    out.add(m.group(1))
        return sorted(out)

    def short_options_of(self, command):
        """The short options `ralon COMMAND -` may offer: the command's and
        the global ones."""
        return self.short_options([self.top, self.command_help.get(command, "")])

    @staticmethod
    def long_options(text):
        seen = []
        for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text):
            if o not in seen:
                seen.append(o)
        return seen

    def options_of(self, command, action=None):
        """The long options `ralon COMMAND [ACTION] --` may offer: the
        command's (or the hook action's) and the global ones, which every
        command accepts."""
        if command == "hook" and action is not None:
            own = self.hook_action_opts.get(action, [])
        else:
            own = self.command_opts.get(command, [])
        return set(own) | set(self.global_opts)


# ---------------------------------------------------------------- fixture


class Fixture:
    """A working directory with two files and a directory, a home, and a
    bin directory holding `fakecmd`, whose completion each shell defines
    as alpha, beta and --bravo."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="ralon-completion-")
        self.work = os.path.join(self.tmp, "work")
        self.home = os.path.join(self.tmp, "home")
        self.bin = os.path.join(self.tmp, "bin")
        for d in (self.work, self.home, self.bin, os.path.join(self.work, "subdir")):
            os.makedirs(d, exist_ok=True)
        for f in ("alpha.txt", "beta.txt"):
            with open(os.path.join(self.work, f), "w") as fh:
                fh.write("x\n")
        fake = os.path.join(self.bin, "fakecmd")
        with open(fake, "w") as fh:
            fh.write("#!/bin/sh\nexit 0\n")
        os.chmod(fake, 0o755)
        self.env = env_for_tools(self.home, self.bin)

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---------------------------------------------------------------- drivers


class BashDriver:
    """An interactive bash in a pseudo-terminal; readline splits each line
    and calls the completion, a wrapper records COMPREPLY."""

    name = "bash"
    full_words = True  # a completed list item keeps its `claude,` head

    SETUP = r"""
PS1='$ '
PS2=''
PROMPT_COMMAND=''
HISTFILE=/dev/null
bind 'set bell-style none' 2>/dev/null
bind 'set enable-bracketed-paste off' 2>/dev/null
bind 'set horizontal-scroll-mode on' 2>/dev/null
. "$RALON_TEST_BASH_COMPLETION" || exit 3
. "$RALON_TEST_FILE" || exit 4
complete -p ralon >"$RALON_TEST_OUT.spec" 2>&1
# Call the completion function registered for ralon, and record what it
# offered.
__ralon_test_func=$(complete -p ralon 2>/dev/null | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
_ralon_test_wrap() {
    "$__ralon_test_func" "$@"
    local rc=$?
    {
        ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
        printf '## done\n'
    } >>"$RALON_TEST_OUT"
    return $rc
}
complete -F _ralon_test_wrap ralon
# fakecmd completes its options when the word begins with -, else alpha
# and beta: what `ralon run -- fakecmd ...` must hand on to it.
_fakecmd() {
    local IFS=$'\n' words='alpha beta'
    [[ $2 == -* ]] && words='--bravo'
    mapfile -t COMPREPLY < <(IFS=' '; compgen -W "$words" -- "$2")
}
complete -F _fakecmd fakecmd
printf '## ready\n' >>"$RALON_TEST_OUT"
"""

    def __init__(self, completion_file, fixture):
        self.file = completion_file
        self.fx = fixture
        self.bash_completion = next((p for p in BASH_COMPLETION_SCRIPTS if os.path.exists(p)),
                                    None)

    def available(self):
        if shutil.which("bash") is None:
            return "bash is not installed"
        if self.bash_completion is None:
            return "bash-completion is not installed (%s)" % ", ".join(BASH_COMPLETION_SCRIPTS)
        return None

    def complete(self, lines):
        out = os.path.join(self.fx.tmp, "bash.out")
        rc = os.path.join(self.fx.tmp, "bash.rc")
        with open(rc, "w") as f:
            f.write(self.SETUP)
        open(out, "w").close()
        env = dict(self.fx.env)
        env.update({
            "RALON_TEST_OUT": out,
            "RALON_TEST_FILE": self.file,
            "RALON_TEST_BASH_COMPLETION": self.bash_completion,
        })
        master, slave = pty.openpty()
        proc = subprocess.Popen(["bash", "--noprofile", "--rcfile", rc, "-i"],
                                stdin=slave, stdout=slave, stderr=slave, cwd=self.fx.work,
                                env=env, start_new_session=True, close_fds=True)
        os.close(slave)
        screen = []

        def drain(timeout):
            r, _, _ = select.select([master], [], [], timeout)
            if r:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    data = b""
                screen.append(data.decode("utf-8", "replace"))

        def wait_for(marker, what):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                with open(out, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                if marker in text:
                    return text
                if proc.poll() is not None:
                    break
                drain(0.05)
            raise RuntimeError("bash did not %s; the terminal showed:\n%s"
                               % (what, "".join(screen)[-3000:]))

        results = {}
        try:
            wait_for("## ready", "start (bash-completion and the completion sourced)")
            with open(out + ".spec", encoding="utf-8", errors="replace") as f:
                self.spec = f.read().strip()
            for line in lines:
                open(out, "w").close()
                os.write(master, line.encode() + b"\t")
                text = wait_for("## done", "complete %r" % line)
                results[line] = [w for w in text.split("\n")
                                 if w and w != "## done"]
                # Clear the line: beginning of line, kill to its end.
                os.write(master, b"\x01\x0b")
                drain(0.01)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            os.close(master)
        return results

    def extra_checks(self, check):
        check(re.search(r"(^|\s)-F\s+_ralon\s+ralon$", self.spec) is not None,
              "sourcing the bash completion must register `complete -F _ralon ralon`, "
              "got %r" % self.spec)


class FishDriver:
    name = "fish"
    full_words = True

    def __init__(self, completion_file, fixture):
        self.file = completion_file
        self.fx = fixture

    def available(self):
        return None if shutil.which("fish") else "fish is not installed"

    def complete(self, lines):
        script = (
            "source $argv[1]; or exit 3\n"
            "function fakecmd; end\n"
            "complete -c fakecmd -f -a 'alpha beta'\n"
            "complete -c fakecmd -l bravo\n"
            "for line in $argv[2..-1]\n"
            "    complete -C $line\n"
            "    echo '## end'\n"
            "end\n")
        r = subprocess.run(["fish", "--no-config", "-c", script, self.file] + list(lines),
                           cwd=self.fx.work, env=self.fx.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        if r.returncode != 0 or r.stderr.strip():
            raise RuntimeError("fish exited %d:\n%s" % (r.returncode, r.stderr))
        return split_batches(lines, r.stdout, lambda w: w.split("\t", 1)[0])

    def extra_checks(self, check):
        pass


class ZshDriver:
    name = "zsh"
    full_words = False  # zsh keeps a list's head in IPREFIX, not in the match

    EXTRA = r"""
_fakecmd() { _arguments '--bravo[b]' '*:word:(alpha beta)' }
compdef _fakecmd fakecmd
"""

    def __init__(self, completion_file, fixture, driver):
        self.file = completion_file
        self.fx = fixture
        self.driver = driver

    def available(self):
        if shutil.which("zsh") is None:
            return "zsh is not installed"
        r = subprocess.run(["zsh", "-f", "-c", "zmodload zsh/zpty"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return "zsh has no zsh/zpty module"
        return None

    def complete(self, lines):
        # compinit needs a directory holding the file named _ralon.
        fdir = os.path.join(self.fx.tmp, "zsh-fpath")
        os.makedirs(fdir, exist_ok=True)
        shutil.copyfile(self.file, os.path.join(fdir, "_ralon"))
        work = os.path.join(self.fx.tmp, "zsh-work")
        os.makedirs(work, exist_ok=True)
        extra = os.path.join(self.fx.tmp, "zsh-extra.zsh")
        with open(extra, "w") as f:
            f.write(self.EXTRA)
        r = subprocess.run(["zsh", "-f", self.driver, fdir, work, extra] + list(lines),
                           cwd=self.fx.work, env=self.fx.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError("zsh-complete.zsh exited %d:\n%s" % (r.returncode, r.stderr))
        return split_batches(lines, r.stdout, lambda w: w)

    def extra_checks(self, check):
        pass


def split_batches(lines, text, word):
    """Output of one shell run: each line's candidates, then `## end`."""
    batches = [[]]
    for w in text.split("\n"):
        if w == "## end":
            batches.append([])
        elif w:
            batches[-1].append(word(w))
    if len(batches) != len(lines) + 1:
        raise RuntimeError("expected %d answers, got %d:\n%s"
                           % (len(lines), len(batches) - 1, text))
    return dict(zip(lines, batches))


# ---------------------------------------------------------------- cases


def cases(facts, full_words):
    """(line, normalise, check, description) for every line to complete.
    `check` takes the set of normalised candidates and returns a problem
    or None."""

    def exact(want):
        want = set(want)

        def check(got):
            if got != want:
                return "offered %s, want exactly %s" % (sorted(got), sorted(want))
            return None
        return check

    def between(at_least, at_most=None, none_of=()):
        at_least = set(at_least)

        def check(got):
            missing = at_least - got
            if missing:
                return "offered %s, missing %s" % (sorted(got), sorted(missing))
            if at_most is not None:
                extra = {w for w in got if w.startswith("--")} - set(at_most)
                if extra:
                    return "offered %s, which %s does not accept" % (sorted(extra), "ralon")
            bad = set(none_of) & got
            if bad:
                return "offered %s, must not offer %s" % (sorted(got), sorted(bad))
            return None
        return check

    def plain(w):
        return w.rstrip("/")

    def after(prefix):
        return lambda w: w[len(prefix):] if w.startswith(prefix) else w

    def list_item(w):
        return w.rsplit(",", 1)[-1]

    cmds = facts.commands
    all_agents = ["auto", "all"] + facts.agents
    out = [
        ("ralon ru", plain, exact(["run"])),
        ("ralon ", plain, exact(cmds)),
        ("ralon --", plain, exact(facts.global_opts)),
        ("ralon -C subdir ru", plain, exact(["run"])),
        ("ralon --dir subdir ", plain, exact(cmds)),
        ("ralon --json ", plain, exact(cmds)),
        ("ralon help ", plain, exact(cmds)),
        ("ralon run --backend ", plain, exact(facts.backends)),
        ("ralon run --backend=", after("--backend="), exact(facts.backends)),
        ("ralon run --backend l", plain,
         exact([b for b in facts.backends if b.startswith("l")])),
        ("ralon hook ", plain, exact(facts.hook_actions)),
        ("ralon hook install --agent ", plain, exact(all_agents)),
        ("ralon hook uninstall --agent ", plain, exact(all_agents)),
        ("ralon hook --agent ", plain, exact(all_agents)),
        ("ralon hook --json install --agent ", plain, exact(all_agents)),
        ("ralon hook check --agent ", plain, exact(facts.agents)),
        ("ralon hook install --agent=cl", after("--agent="),
         exact([a for a in all_agents if a.startswith("cl")])),
        ("ralon hook install --agent claude,co", list_item,
         exact([a for a in all_agents if a.startswith("co")])),
        # A name already in the list is not offered again.
        ("ralon hook install --agent claude,", list_item,
         exact([a for a in all_agents if a != "claude"])),
        ("ralon hook install --agent claude,cl", list_item, exact(["cline"])),
        ("ralon check ", plain, between(["alpha.txt", "beta.txt", "subdir"])),
        ("ralon check al", plain, exact(["alpha.txt"])),
        ("ralon check --json b", plain, exact(["beta.txt"])),
        ("ralon -C ", plain, between(["subdir"], none_of=["alpha.txt", "beta.txt"])),
        ("ralon status --dir ", plain, between(["subdir"], none_of=["alpha.txt", "beta.txt"])),
        ("ralon run --backend mount --seal fakecmd ", plain, exact(["alpha", "beta"])),
        ("ralon run --backend=mount -- fakecmd ", plain, exact(["alpha", "beta"])),
        ("ralon --dir=subdir run --backend=landlock fakecmd b", plain, exact(["beta"])),
        ("ralon run --backend mount fakec", plain, between(["fakecmd"], none_of=facts.backends)),
        ("ralon -C subdir run -q -- fakecmd a", plain, exact(["alpha"])),
        # init takes no arguments (zsh lists the options there).
        ("ralon init ", plain, lambda got: (
            None if all(w.startswith("-") for w in got)
            else "offered %s, want no argument" % sorted(got))),
    ]
    # run and pause stop at the command they run: after `--`, or at the
    # first word that is not one of their options, its name, then its own
    # completion.
    for c in ("run", "pause"):
        out += [
            ("ralon %s -- fakec" % c, plain, between(["fakecmd"])),
            ("ralon %s -- fakecmd " % c, plain, exact(["alpha", "beta"])),
            ("ralon %s -- fakecmd --" % c, plain, exact(["--bravo"])),
            ("ralon %s fakecmd --" % c, plain, exact(["--bravo"])),
            ("ralon -C subdir %s -- fakec" % c, plain, between(["fakecmd"])),
            # Options every command accepts, after the command's name.
            ("ralon %s -C subdir fakec" % c, plain, between(["fakecmd"])),
            ("ralon %s --json --dir subdir fakecmd b" % c, plain, exact(["beta"])),
        ]
    out += [
        ("ralon pa", plain, exact(["pause"])),
        ("ralon re", plain, exact(["resume"])),
        # --minutes takes a number: nothing to offer, and the number is
        # not the command to run.
        ("ralon pause --minutes ", plain, exact([])),
        ("ralon pause --minutes=", after("--minutes="), exact([])),
        ("ralon pause --minutes 5 fakec", plain, between(["fakecmd"])),
        ("ralon pause --minutes 5 -- fakecmd ", plain, exact(["alpha", "beta"])),
        ("ralon pause --minutes=5 -- fakecmd b", plain, exact(["beta"])),
        ("ralon pause --indefinitely fakecmd a", plain, exact(["alpha"])),
    ]
    # Short options too, for the commands that have no other case.
    for c in ("pause", "resume"):
        allowed = facts.options_of(c)
        out.append(("ralon %s -" % c, plain,
                    between(allowed | set(facts.short_options_of(c)), at_most=allowed)))
    if full_words:
        out.append(("ralon hook install --agent claude,co", lambda w: w,
                    exact(["claude," + a for a in all_agents if a.startswith("co")])))
    # Every command's options, and nothing it does not accept.
    for c in cmds:
        allowed = facts.options_of(c)
        out.append(("ralon %s --" % c, plain, between(allowed, at_most=allowed)))
    for a in facts.hook_actions:
        allowed = facts.options_of("hook", a)
        out.append(("ralon hook %s --" % a, plain, between(allowed, at_most=allowed)))
    return out


def run_shell(driver, facts):
    why = driver.available()
    if why:
        print("SKIP: " + why)
        return SKIP
    todo = cases(facts, driver.full_words)
    lines = []
    for line, _, _ in todo:
        if line not in lines:
            lines.append(line)
    try:
        answers = driver.complete(lines)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print("FAIL: %s: %s" % (driver.name, e))
        return 1
    failures = []

    def check(ok, msg):
        if not ok:
            failures.append(msg)

    driver.extra_checks(check)
    for line, normalise, verdict in todo:
        got = {normalise(w) for w in answers[line]}
        problem = verdict(got)
        if problem:
            failures.append("%s: `%s<Tab>` %s" % (driver.name, line, problem))
        else:
            print("ok: %s: `%s<Tab>`" % (driver.name, line))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


# ---------------------------------------------------------------- consistency


# Words an option's description in zsh's and fish's files must hold, where
# its --help may put them otherwise: --seal allows no mounts, nor user
# namespaces (so it stops an agent's own sandbox, such as bwrap), and scopes
# signals and abstract sockets.
DESCRIPTION_WORDS = {
    "--seal": ["mounts", "user namespaces", "signals", "sockets"],
}


def descriptions(shell, text, option):
    """The descriptions of a long option in zsh's `--opt[...]` or fish's
    `-l opt ... -d '...'`."""
    if shell == "zsh":
        return re.findall(r"%s=?\[([^]]*)\]" % re.escape(option), text)
    return [m.group(2) for line in text.splitlines()
            if re.search(r"(?<![\w-])-l %s(?![\w-])" % re.escape(option[2:]), line)
            for m in [re.search(r"-d (['\"])(.*?)\1", line)] if m]


def word_in(text, w):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(w), text) is not None


def consistency(facts, files):
    failures = []
    options = set(facts.mentioned_opts)
    words = {
        "command": facts.commands,
        "hook action": facts.hook_actions,
        "agent": facts.agents,
        "backend": facts.backends,
    }
    for shell, path in files.items():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        first = text.splitlines()[:2]
        want_spdx = "# SPDX-License-Identifier: Apache-2.0"
        if shell == "zsh":
            if first != ["#compdef ralon", want_spdx]:
                failures.append("%s: must begin `#compdef ralon` then `%s`" % (path, want_spdx))
        elif first[0] != want_spdx:
            failures.append("%s: must begin `%s`" % (path, want_spdx))
        if shell == "fish":
            # fish puts each description in parentheses itself.
            for n, line in enumerate(text.splitlines(), 1):
                if re.search(r"""(-d|--description)[ =]['"]\(""", line):
                    failures.append("%s:%d: a description in parentheses shows as ((…))"
                                    % (path, n))
        for o in sorted(options):
            name = o[2:]
            if shell == "fish":
                found = re.search(r"(?<![\w-])(-l|--long-option)[ =]%s(?![\w-])"
                                  % re.escape(name), text) is not None
            else:
                found = word_in(text, o)
            if found:
                print("ok: %s: option %s" % (shell, o))
            else:
                failures.append("%s: option %s (from ralon's --help) is not completed"
                                % (path, o))
        for o in facts.short_options():
            if shell == "fish":
                found = re.search(r"(?<![\w-])(-s|--short-option)[ =]%s(?![\w-])"
                                  % re.escape(o[1:]), text) is not None
            else:
                found = word_in(text, o)
            if found:
                print("ok: %s: option %s" % (shell, o))
            else:
                failures.append("%s: option %s (from ralon's --help) is not completed"
                                % (path, o))
        for what, ws in words.items():
            for w in ws:
                if word_in(text, w):
                    print("ok: %s: %s %s" % (shell, what, w))
                else:
                    failures.append("%s: %s `%s` (from ralon's --help) is not completed"
                                    % (path, what, w))
        for o, want in DESCRIPTION_WORDS.items() if shell in ("zsh", "fish") else ():
            found = descriptions(shell, text, o)
            if not found:
                failures.append("%s: no description of %s" % (path, o))
            for d in found:
                missing = [w for w in want if w not in d]
                if missing:
                    failures.append("%s: the description of %s, `%s`, must say %s"
                                    % (path, o, d, ", ".join(missing)))
                else:
                    print("ok: %s: %s is described as %s" % (shell, o, d))
        # zsh's 'NAME:Display' and fish's `case NAME` / `echo Display`,
        # single-quoted as each shell quotes (a `'` is '\'' in zsh, \' in
        # fish).
        for a in facts.agents:
            display = facts.agent_names.get(a)
            if shell == "zsh":
                found = "'%s:%s'" % (a, display.replace("'", "'\\''")) in text
            elif shell == "fish":
                quoted = re.escape(display.replace("\\", "\\\\").replace("'", "\\'"))
                found = re.search(r"case %s\n\s*echo (%s|'%s')\n"
                                  % (re.escape(a), re.escape(display), quoted),
                                  text) is not None
            else:
                continue
            if found:
                print("ok: %s: agent %s is described as %s" % (shell, a, display))
            else:
                failures.append("%s: agent `%s` is not described as `%s` (from `ralon hook "
                                "list --json`)" % (path, a, display))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["bash", "fish", "zsh", "consistency"])
    ap.add_argument("--bash", required=True)
    ap.add_argument("--zsh", required=True)
    ap.add_argument("--fish", required=True)
    ap.add_argument("--zsh-driver", default=os.path.join(HERE, "zsh-complete.zsh"))
    args = ap.parse_args()
    binary = os.environ.get("RALON_BINARY")
    if not binary:
        print("FAIL: RALON_BINARY is not set")
        return 1
    facts = Facts(binary)
    if facts.problems:
        for p in facts.problems:
            print("FAIL: " + p)
        return 1
    print("ralon's help: commands %s; global options %s; backends %s; agents %s; hook actions %s"
          % (facts.commands, facts.global_opts, facts.backends, facts.agents,
             facts.hook_actions))
    files = {"bash": os.path.abspath(args.bash), "zsh": os.path.abspath(args.zsh),
             "fish": os.path.abspath(args.fish)}
    if args.mode == "consistency":
        return consistency(facts, files)
    fx = Fixture()
    try:
        if args.mode == "bash":
            driver = BashDriver(files["bash"], fx)
        elif args.mode == "fish":
            driver = FishDriver(files["fish"], fx)
        else:
            driver = ZshDriver(files["zsh"], fx, os.path.abspath(args.zsh_driver))
        return run_shell(driver, facts)
    finally:
        fx.cleanup()


if __name__ == "__main__":
    sys.exit(main())
