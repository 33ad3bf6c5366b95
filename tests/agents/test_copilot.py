#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GitHub Copilot CLI, the real CLI, with its own model provider (BYOK,
Chat Completions) pointed at the mock: create, edit and bash on protected
and unprotected paths, with ralon's hook at project and at user level,
with ralon missing and with a ralon that fails silently. See agentutil.py
for what a row checks."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentutil  # noqa: E402
import mock_openai  # noqa: E402
from agentutil import SAME, Row  # noqa: E402

VERSION = "1.0.102"
ROOT = "@ROOT@"



def rows():
    out = [
        Row("create-protected", "refused",
            [("create", {"path": ROOT + "/migrations/002_new.sql", "file_text": "x\n"})],
            after={"migrations/002_new.sql": SAME}, fixture="create-protected"),
        Row("create-allowed", "allowed",
            [("create", {"path": ROOT + "/src/c2.txt", "file_text": "x\n"})],
            after={"src/c2.txt": "x\n"}, fixture="create-allowed"),
        Row("edit-protected", "refused",
            [("edit", {"path": ROOT + "/src/auth.c", "old_str": "int auth;",
                       "new_str": "int auth = 1;"})],
            after={"src/auth.c": SAME}, fixture="edit-protected"),
        Row("edit-allowed", "allowed",
            [("edit", {"path": ROOT + "/src/e2.c", "old_str": "e2", "new_str": "changed"})],
            files={"src/e2.c": "e2\n"}, after={"src/e2.c": "changed\n"}),
        Row("bash-append-protected", "refused",
            [("bash", {"command": "echo x >> tests/golden/b1.txt", "description": "append"})],
            files={"tests/golden/b1.txt": "b1\n"}, fixture="bash-protected"),
        Row("bash-append-allowed", "allowed",
            [("bash", {"command": "echo x >> src/b2.txt", "description": "append"})],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"}),
        Row("bash-mv-into-protected", "refused",
            [("bash", {"command": "mv src/m1.txt tests/golden/m1.txt", "description": "mv"})],
            files={"src/m1.txt": "m1\n"},
            after={"src/m1.txt": SAME, "tests/golden/m1.txt": SAME}),
        Row("bash-mv-out-of-protected", "refused",
            [("bash", {"command": "mv tests/golden/m2.txt src/m2.txt", "description": "mv"})],
            files={"tests/golden/m2.txt": "m2\n"},
            after={"tests/golden/m2.txt": SAME, "src/m2.txt": SAME}),
    ]
    for r in out:
        r.modes = ("project", "user", "missing", "crashed")
    return out


class Copilot:
    AGENT = "copilot"
    PACKAGE = "@github/copilot"
    VERSION = VERSION
    BINARY = "copilot"
    DIALECT = mock_openai
    MODES = ("project", "user", "missing", "crashed")
    MODEL = "gpt-4.1"

    def prepare(self, s, env, mode):
        # Copilot's own model provider ("bring your own key"), offline: no
        # GitHub sign-in, no other server.
        env.update({"COPILOT_PROVIDER_BASE_URL": s.url + "/v1",
                    "COPILOT_PROVIDER_TYPE": "openai",
                    "COPILOT_PROVIDER_API_KEY": "sk-mock",
                    "COPILOT_MODEL": self.MODEL,
                    "COPILOT_OFFLINE": "true",
                    "COPILOT_AUTO_UPDATE": "false",
                    # The binary unpacks itself on first start: once, into
                    # the suite's cache, not into every test's HOME.
                    "COPILOT_PKG_CACHE_HOME": os.path.join(agentutil.CACHE, "copilot-pkg")})
        d = os.path.join(s.home, ".copilot")
        os.makedirs(d, exist_ok=True)
        # Copilot's trust step: the folders it trusts, kept in its config.json
        # (what answering "Yes, and remember this folder" writes); in -p mode
        # it ignores .github/hooks/ of a folder not trusted.
        agentutil.edit_json(os.path.join(d, "config.json"),
                            lambda c: c.setdefault("trusted_folders", []).append(s.root))

    def command(self, s, env, prompt):
        return [self.exe, "-p", prompt, "--allow-all-tools", "--no-color"]


@agentutil.add_row_tests
class CopilotCLI(Copilot, agentutil.AgentTest):
    ROWS = rows()


if __name__ == "__main__":
    agentutil.main()
