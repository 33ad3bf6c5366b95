#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark 5's inputs and verdicts: `ralon hook check` on each agent's
payloads and on shell commands of growing size.

    hook.py payloads DIR      make the project and the payloads in DIR
    hook.py growth FILE       per-KiB cost between the shell sizes in FILE
                              (results.txt), with a verdict and the cap
    hook.py instructions RALON DIR
                              callgrind's instruction count for each shell
                              payload (load-independent), if valgrind is here,
                              and for write-4m.json: an edit tool's content
                              just under the 4 MiB limit, no shell at all
                              (what parsing the payload alone costs at the
                              limit); each written into a pipe, as an agent
                              does

The agents' payloads are the test fixtures (tests/hook/fixtures/), with
@ROOT@ the bench project: for each agent, one edit allowed and one refused.
The shell commands are a script of ordinary lines (echo, cp, a redirection,
quotes, a comment) repeated so that the payload is 1 KiB, 100 KiB, 1 MiB,
4 MiB less 4 KiB (just under hook check's 4 MiB limit) and 16 MiB (over it:
refused unread, the rest of the pipe drained).
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import read_rows  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "tests", "hook", "fixtures")

# agent: (allowed fixture, refused fixture, extra arguments)
AGENTS = {
    "claude": ("write_allowed", "write_abs", []),
    "qwen": ("write_file_allowed", "write_file", []),
    "gemini": ("write_file_allowed", "write_file_abs", []),
    "codex": ("apply_patch_allowed", "apply_patch_several", []),
    "copilot": ("create_allowed", "create_object", []),
    "cursor": ("write_allowed", "write_path", []),
    "windsurf": ("pre_write_code_allowed", "pre_write_code", []),
    "cline": ("editor_allowed", "editor", []),
    "opencode": ("write_allowed", "write", []),
    "antigravity": ("write_to_file_allowed", "write_to_file", ["--agent", "antigravity"]),
}

SIZES = [("1k", 1024), ("100k", 100 * 1024), ("1m", 1024 * 1024),
         ("4m", 4 * 1024 * 1024 - 4096), ("16m", 16 * 1024 * 1024)]
# Over hook check's limit: what these cost is the refusal, not reading.
REFUSED = {"16m"}

LINE = ("echo \"step: building module\" && cp src/main.c build/main.c "
        "> build/log.txt 2>&1 # the usual\n")

POLICY = "version: 1\nprotect: [tests/golden/**, Cargo.lock, .github/workflows]\n"


def make_project(root):
    for d in ("tests/golden", "src", ".github/workflows", "build"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for rel, text in (("tests/golden/a.txt", "a\n"), ("src/main.c", "int main;\n"),
                      ("Cargo.lock", "# cargo\n"), (".github/workflows/ci.yml", "on: push\n"),
                      ("agent.lock", POLICY)):
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    for name, to in (("src/link", "../tests/golden/a.txt"),
                     ("src/newlink", "../tests/golden/new.txt")):
        p = os.path.join(root, name)
        if not os.path.lexists(p):
            os.symlink(to, p)


def cmd_payloads(d):
    root = os.path.join(d, "project")
    make_project(root)
    for agent, (allowed, refused, args) in AGENTS.items():
        for kind, fixture in (("allowed", allowed), ("refused", refused)):
            with open(os.path.join(FIXTURES, agent, fixture + ".json")) as f:
                text = f.read().replace("@ROOT@", root)
            with open(os.path.join(d, "agent-%s-%s.json" % (agent, kind)), "w") as f:
                f.write(text)
        with open(os.path.join(d, "agent-%s.args" % agent), "w") as f:
            f.write(" ".join(shlex.quote(a) for a in args))
    for name, size in SIZES:
        # The payload (the command JSON-escaped) of about `size` bytes.
        command = (LINE * (size // len(LINE) + 1))[:size]
        while True:
            payload = {"session_id": "bench", "cwd": root, "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command}}
            text = json.dumps(payload)
            if len(text) <= size:
                break
            command = command[:len(command) - (len(text) - size) - 16]
        with open(os.path.join(d, "shell-%s.json" % name), "w") as f:
            f.write(text)
    # Just under the limit as content for an edit tool: JSON, no shell.
    size = dict(SIZES)["4m"]
    line = "x" * 79 + "\n"
    content = line * (size // len(line))
    while True:
        payload = {"session_id": "bench", "cwd": root, "hook_event_name": "PreToolUse",
                   "tool_name": "Write",
                   "tool_input": {"file_path": root + "/src/big.c", "content": content}}
        text = json.dumps(payload)
        if len(text) <= size:
            break
        content = content[:len(content) - (len(text) - size) - 16]
    with open(os.path.join(d, "write-4m.json"), "w") as f:
        f.write(text)
    print(" ".join(a for a in AGENTS))


def cmd_growth(path):
    """Linear means each step's cost per KiB is no more than the step
    before it (with 50 % and 0.5 ms of slack for the noise), over the sizes
    that are read; the cap is 100 ms of hook check itself (A-B) at every
    size, refused ones too."""
    sizes = dict(SIZES)
    points, everything = [], []
    for r in read_rows(path):
        m = re.fullmatch(r"hook-shell-(\w+)", r["bench"])
        if m and m.group(1) in sizes:
            everything.append((sizes[m.group(1)], m.group(1), float(r["delta_ms"])))
            if m.group(1) not in REFUSED:
                points.append(everything[-1])
    points.sort()
    if len(points) < 2:
        print("  (no shell sizes to compare)")
        return
    last = None
    for (s1, n1, t1), (s2, n2, t2) in zip(points, points[1:]):
        per = (t2 - t1) / ((s2 - s1) / 1024)
        verdict = ""
        if last is not None:
            bound = max(last, 0.0) * 1.5 + 0.5 / ((s2 - s1) / 1024)
            verdict = "  -> " + ("at most linear" if per <= bound else "GROWS FASTER THAN LINEAR")
        print("  %s -> %s: %.4f ms per KiB%s" % (n1, n2, per, verdict))
        last = per
    worst = max(t for _, _, t in everything)
    print("  cap: the slowest size costs %.1f ms over /bin/true -> %s"
          % (worst, "ok" if worst <= 100 else "MISSED (100 ms)"))


def cmd_instructions(ralon, d):
    if shutil.which("valgrind") is None:
        print("  (valgrind is not installed: no instruction counts)")
        return
    for name in [n for n, _ in SIZES] + ["write-4m"]:
        path = os.path.join(d, name + ".json" if name.startswith("write") else
                            "shell-%s.json" % name)
        # Through a pipe, as an agent writes it (a file over the limit is
        # refused by its size, unread).
        with open(path, "rb") as f:
            data = f.read()
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                            ralon, "hook", "check"], input=data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        m = re.search(r"Collected : (\d+)", p.stderr.decode())
        verdict = "refused" if p.returncode == 2 or b"deny" in p.stdout else "allowed"
        if m:
            ir = int(m.group(1))
            label = name if name.startswith("write") else "shell-" + name
            print("  %-11s %12d instructions, %6.1f per byte (%s)"
                  % (label, ir, ir / os.path.getsize(path), verdict))
            with open(os.environ.get("RALON_BENCH_RESULTS", os.devnull), "a") as f:
                f.write("# hook-%s instructions=%d bytes=%d answer=%s\n"
                        % (label, ir, os.path.getsize(path), verdict))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "payloads":
        cmd_payloads(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "growth":
        cmd_growth(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "instructions":
        cmd_instructions(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
