# SPDX-License-Identifier: Apache-2.0
"""What test_hook.py and test_hook_paths.py share: a run's result, and the
environment ralon runs in (no agent's or ralon's own variables, a home of
the test's)."""

import os


class Result:
    def __init__(self, rc, out, err):
        self.rc = rc
        self.out = out
        self.err = err

    def __repr__(self):
        return "Result(rc=%r, out=%r, err=%r)" % (self.rc, self.out, self.err)


def clean_env(home):
    env = {}
    for k, v in os.environ.items():
        if k.startswith(("RALON_", "LC_", "XDG_", "CLAUDE_", "GEMINI_", "CURSOR_", "QWEN_",
                         "CODEX_", "COPILOT_")) or k in ("LANG", "LANGUAGE"):
            continue
        env[k] = v
    env["LC_ALL"] = "C.UTF-8"
    env["HOME"] = home
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    return env
