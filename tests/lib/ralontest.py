# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the Python test suites."""

import os


def as_user(uid):
    """A subprocess preexec_fn that becomes `uid` (its own group, no
    supplementary groups), or None to stay who we are (uid None or 0)."""
    if not uid:
        return None

    def pre():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return pre
