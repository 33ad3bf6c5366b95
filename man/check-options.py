# SPDX-License-Identifier: Apache-2.0
"""Fail when ralon(1) does not describe what `ralon --help` offers.

    check-options.py RALON PAGE

Runs the built RALON's `--help` and `COMMAND --help` for every command the
top-level help lists, and checks the mdoc source PAGE:

- every command has a subsection of its own (`.Ss ralon COMMAND`);
- every option a command's help prints, long (`--name`) and short (`-x`),
  appears as an `Fl` argument in that command's subsection, or in the
  OPTIONS section for those every command takes;
- every action in a `Usage:` line (`ralon hook install`) appears as `Cm`.

The page is read as source, so no formatter is needed.
"""

import os
import re
import subprocess
import sys


def run_help(ralon, args):
    env = dict(os.environ, LC_ALL="C", LANGUAGE="", NO_COLOR="1")
    p = subprocess.run([ralon, *args, "--help"], env=env, capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"`{ralon} {' '.join(args)} --help` exited {p.returncode}:\n"
                 f"{p.stderr}")
    return p.stdout


def commands_of(top_help):
    """The names in the `Commands:` block of `ralon --help`."""
    names, inside = [], False
    for line in top_help.splitlines():
        if line.strip() == "Commands:":
            inside = True
            continue
        if inside:
            m = re.match(r"^  ([a-z][a-z0-9-]*)\s", line)
            if not m:
                break
            names.append(m.group(1))
    if not names:
        sys.exit("found no `Commands:` block in `ralon --help`")
    return names


def options_of(text):
    """Long and short options a help text mentions, e.g. {'--dry-run', '-q'}."""
    opts = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
    # Short options only where a help text introduces them: "  -q, --quiet",
    # and in usage lines: "[-C DIR]".
    opts |= set(re.findall(r"^\s+(-[A-Za-z]),\s", text, re.M))
    opts |= set(re.findall(r"\[(-[A-Za-z])[\s\]|]", text))
    return opts


def actions_of(text):
    """Second words of `ralon COMMAND ACTION` in usage lines."""
    return set(re.findall(r"^(?:Usage:|\s+)\s*ralon [a-z]+ ([a-z]+)\b", text, re.M))


def sections(page):
    """Map a section name ('OPTIONS', 'ralon run', …) to its source lines."""
    out, current = {}, None
    for line in page.splitlines():
        m = re.match(r"^\.(Sh|Ss)\s+(.*?)\s*$", line)
        if m:
            current = m.group(2).strip('"')
            out.setdefault(current, [])
            continue
        if current is not None:
            out[current].append(line)
    return out


def has_flag(lines, opt):
    """Whether `opt` is an `Fl` argument in the mdoc source `lines`."""
    name = opt[1:]  # `Fl -dry-run` prints --dry-run, `Fl q` prints -q
    for line in lines:
        if not line.startswith("."):
            continue
        # Every word after an `Fl`, up to the next macro, is a flag.
        flag = False
        for w in line[1:].split():
            if w == "Fl":
                flag = True
            elif re.fullmatch(r"[A-Z][a-z][a-z]?", w):
                flag = False  # another macro: Ar, Op, Ns, …
            elif flag:
                text = w.replace("\\-", "-").rstrip(",.;:)")
                if text == name:
                    return True
    return False


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ralon, page_path = sys.argv[1], sys.argv[2]
    with open(page_path, encoding="utf-8") as f:
        page = f.read()
    secs = sections(page)
    common = secs.get("OPTIONS")
    problems = []
    if common is None:
        problems.append("no OPTIONS section for the options every command takes")
        common = []

    top = run_help(ralon, [])
    for opt in sorted(options_of(top)):
        if not has_flag(common, opt):
            problems.append(f"`ralon --help` offers {opt}, but OPTIONS does not "
                            f"describe it")

    checked = 0
    for cmd in commands_of(top):
        text = run_help(ralon, [cmd])
        sec = secs.get(f"ralon {cmd}")
        if sec is None:
            problems.append(f"command `{cmd}` has no subsection `.Ss ralon {cmd}`")
            continue
        for opt in sorted(options_of(text)):
            checked += 1
            if not has_flag(sec, opt) and not has_flag(common, opt):
                problems.append(f"`ralon {cmd} --help` offers {opt}, but neither "
                                f"`.Ss ralon {cmd}` nor OPTIONS describes it")
        for action in sorted(actions_of(text)):
            if not any(re.search(rf"(?:^\.|\s)Cm\s+(?:\S+\s+)*?{action}\b", l)
                       for l in sec if l.startswith(".")):
                problems.append(f"`ralon {cmd} {action}` is not named (Cm) in "
                                f"`.Ss ralon {cmd}`")

    if problems:
        print(f"{page_path} does not match the built ralon's --help:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"{page_path}: {checked} command options, all described")
    return 0


if __name__ == "__main__":
    sys.exit(main())
