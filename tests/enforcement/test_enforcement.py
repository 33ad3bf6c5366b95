#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Enforcement suite: attacks on protected paths, run for real.

One table (ROWS) of shell commands. Each runs as

    ralon run --backend B -q -- sh -c CMD

with the project root as working directory, against every backend the
kernel offers, as root and as the unprivileged user nobody, each time in a
fresh project. Afterwards everything protected is compared, from OUTSIDE
the sandbox, with a snapshot taken before: content hash, directory listing,
device and inode, mode, owner, times, link count, extended attributes, and
that every path and its ancestors still lead to the same inode.

Expected outcomes, per backend:

  BLOCKED        the command ran (it prints a marker first, so ralon
                 failing to start does not count), failed (non-zero exit)
                 with the kernel's refusal in its output (EACCES, EROFS,
                 EBUSY, EPERM, EXDEV, EINVAL; not a missing file or tool),
                 and nothing protected changed
  SHADOWED(op)   nothing protected changed on disk, and the shadowing
                 operation op succeeded; the exit status is ignored
                 (shadowing in a nested namespace only changes the agent's
                 own view)
  ALLOWED(check) exit 0, and `check` sees the intended effect from outside
  GAP(path, check)
                 the documented Landlock metadata gap: exit 0, the metadata
                 of `path` changed as `check` expects, its content did not,
                 and nothing else changed
  REFUSED(regex) ralon itself refuses to start (exit 2, message matching
                 regex), the command never runs, nothing changed

Adding a case is one line in ROWS. Test names are
test_<row>__<backend>__<user>.

Environment:
  RALON_BINARY            the ralon to test (default: build/src/ralon)
  RALON_DENY_USERNS       the deny-userns helper (auto-fallback tests)
  RALON_REQUIRE_BACKENDS  comma list (mount,landlock): an unavailable backend
                          is a failure instead of a skip
  RALON_TEST_TMPDIR       where projects are made (default /tmp; it must be
                          reachable by nobody)

Python 3 standard library only. Needs root for the nobody column; run
unprivileged, the root column is skipped and the nobody column runs as the
invoking user.
"""

import ctypes
import errno
import hashlib
import itertools
import json
import os
import pty as pty_module
import re
import select
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RALON_SRC = os.environ.get("RALON_BINARY") or os.path.normpath(
    os.path.join(HERE, "..", "..", "build", "src", "ralon"))
DENY_SRC = os.environ.get("RALON_DENY_USERNS") or ""
URING_SRC = os.environ.get("RALON_URING_OP") or os.path.normpath(
    os.path.join(HERE, "..", "..", "build", "tests", "enforcement", "uring-op"))
TMP_ROOT = os.environ.get("RALON_TEST_TMPDIR") or "/tmp"
REQUIRED = {b.strip() for b in os.environ.get("RALON_REQUIRE_BACKENDS", "").split(",")
            if b.strip()}

BACKENDS = ("mount", "landlock")
NOBODY = 65534
IS_ROOT = os.geteuid() == 0
# user name -> uid to switch to (None: stay who we are)
USERS = {"root": None, "nobody": NOBODY} if IS_ROOT else {"nobody": None}
ALL_USERS = ("root", "nobody")
# Who runs the tests outside the table that need only one user.
ME = "root" if IS_ROOT else "nobody"

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
STARTED = "ralon-enf: command started"
TIMEOUT = 120

POLICY = "protect: [tests/golden/**, conf/secret.yml, .github/workflows, Cargo.lock]\n"
PROTECTED = ("agent.lock", "tests/golden", "conf/secret.yml", ".github/workflows",
             "Cargo.lock")
HELLO_C = """#include <stdio.h>

int main(void) {
  puts("hello, world");
  return 0;
}
"""
FILES = {
    "agent.lock": POLICY,
    "tests/golden/a.txt": "golden output\n",
    "tests/unit.c": "/* unit test */\n",
    "conf/secret.yml": "token: s3cr3t\n",
    "conf/other.yml": "debug: false\n",
    ".github/workflows/ci.yml": "on: push\n",
    "Cargo.lock": "# lock file\n",
    "src/main.c": HELLO_C,
    "docs/notes.md": "notes\n",
    "README.md": "# Demo project\n",
}

# Run by rows as `python3 "$OP" OP ARGS [OP ARGS...]`: performs each
# operation with the raw system call, prints "NAME: OK" or "NAME: ERRNO-NAME"
# and stops with exit 1 at the first failure. `nest` enters a new user and
# mount namespace (where the caller has every capability again) for the
# operations after it.
OP_PY = r'''
import ctypes, errno, mmap, os, sys, termios

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_void_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint]
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME, MS_MOVE = 16384, 1 << 18, 1 << 21, 8192
MNT_DETACH = 2


def check(r):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def b(path):
    return path.encode() if path is not None else None


def mount(src, dst, fstype, flags):
    check(libc.mount(b(src), b(dst), b(fstype), flags, None))


def kept_flags(path):
    # What a less privileged namespace may not clear: repeat it, so that
    # read-only is the only thing the remount asks to change.
    f = os.statvfs(path).f_flag
    pairs = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
             (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
             (os.ST_RELATIME, MS_RELATIME))
    return sum(m for s, m in pairs if f & s)


def nest():
    uid, gid = os.geteuid(), os.getegid()
    check(libc.unshare(0x10000000 | 0x00020000))  # CLONE_NEWUSER | CLONE_NEWNS
    # Map ourselves to root where that is allowed (an ordinary user may; a
    # root caller without CAP_SETFCAP may not, and needs no mapping: a new
    # user namespace has every capability anyway).
    for f, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % uid),
                    ("gid_map", "0 %d 1" % gid)):
        try:
            with open("/proc/self/" + f, "w") as fh:
                fh.write(text)
        except OSError:
            pass
    # Keep what follows out of the parent's view, where allowed (Landlock
    # refuses every mount; the operation that follows still gets tried).
    try:
        mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError:
        pass


def ioctl(name):
    # ctypes, not fcntl.ioctl: the request must reach the kernel as a full
    # unsigned long so bit 32 survives (CVE-2019-10063).
    req = {"TIOCSTI": termios.TIOCSTI, "TIOCLINUX": 0x541C,
           "TIOCSTI_HIGH": termios.TIOCSTI | (1 << 32)}[name]
    buf = ctypes.create_string_buffer(b"\x06" if name == "TIOCLINUX" else b"x")
    check(libc.ioctl(0, req, ctypes.cast(buf, ctypes.c_void_p)))


def otrunc(p):
    os.close(os.open(p, os.O_RDONLY | os.O_TRUNC))


def reopen(p):
    fd = os.open(p, os.O_PATH)
    os.write(os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_APPEND), b"forged\n")


def mmap_write(p):
    # A shared writable mapping needs a descriptor open for writing.
    m = mmap.mmap(os.open(p, os.O_RDWR), 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[0:1] = b"#"
    m.flush()


def replace(p):
    with open("src/forged", "w") as f:
        f.write("protect: []\n")
    os.replace("src/forged", p)


def remount_rw(p):
    try:
        mount(None, p, None, MS_REMOUNT | MS_BIND | kept_flags(p))
    except OSError:
        mount(None, p, None, MS_REMOUNT | MS_BIND)


# The new mount API (x86_64 system call numbers): what umount2 and mount
# refuse must stay refused by these too.
libc.syscall.restype = ctypes.c_long
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_FSOPEN, SYS_FSCONFIG, SYS_FSMOUNT = 428, 429, 430, 431, 432
SYS_MOUNT_SETATTR = 442
AT_FDCWD, AT_EMPTY_PATH, AT_RECURSIVE = -100, 0x1000, 0x8000
OPEN_TREE_CLONE, MOVE_MOUNT_F_EMPTY_PATH, FSCONFIG_CMD_CREATE = 1, 4, 6
MOUNT_ATTR_RDONLY = 1


def raw(*args):
    r = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def clear_rdonly(dfd, path, flags):
    attr = (ctypes.c_uint64 * 4)(0, MOUNT_ATTR_RDONLY, 0, 0)  # set, clr, propagation, userns
    raw(SYS_MOUNT_SETATTR, dfd, b(path), flags, ctypes.byref(attr), ctypes.sizeof(attr))


def clone_rw(src, dst):
    """A detached copy of the mounts at src, made writable, attached at dst."""
    fd = raw(SYS_OPEN_TREE, AT_FDCWD, b(src), OPEN_TREE_CLONE | AT_RECURSIVE)
    clear_rdonly(fd, "", AT_EMPTY_PATH | AT_RECURSIVE)
    raw(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, b(dst), MOVE_MOUNT_F_EMPTY_PATH)


def fsmount_over(p):
    """A new tmpfs, made with fsopen and fsmount, moved over p."""
    fs = raw(SYS_FSOPEN, b"tmpfs", 0)
    raw(SYS_FSCONFIG, fs, FSCONFIG_CMD_CREATE, None, None, 0)
    mfd = raw(SYS_FSMOUNT, fs, 0, 0)
    raw(SYS_MOVE_MOUNT, mfd, b"", AT_FDCWD, b(p), MOVE_MOUNT_F_EMPTY_PATH)


def clone_write(src, name):
    """A detached copy of the one mount at src, without what is mounted
    below it (ATTACKS #44: a look under the cover), and a write to name
    through it."""
    fd = raw(SYS_OPEN_TREE, AT_FDCWD, b(src), OPEN_TREE_CLONE)
    w = os.open(name, os.O_WRONLY | os.O_APPEND, dir_fd=fd)
    os.write(w, b"forged\n")


SYS_NAME_TO_HANDLE_AT, SYS_OPEN_BY_HANDLE_AT = 303, 304


def handle_write(p):
    """The file at p reopened for writing from a file handle, through the
    mount of the working directory (ATTACKS #48)."""
    handle = ctypes.create_string_buffer(8 + 128)  # handle_bytes, handle_type, f_handle
    ctypes.c_uint.from_buffer(handle).value = 128
    mount_id = ctypes.c_int()
    raw(SYS_NAME_TO_HANDLE_AT, AT_FDCWD, b(p), handle, ctypes.byref(mount_id), 0)
    mfd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    w = raw(SYS_OPEN_BY_HANDLE_AT, mfd, handle, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"forged\n")


def ptrace_seize(pid):
    PTRACE_SEIZE, PTRACE_DETACH = 0x4206, 17
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    check(libc.ptrace(PTRACE_SEIZE, int(pid), None, None))
    libc.ptrace(PTRACE_DETACH, int(pid), None, None)


FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_NODUMP_FL = 0x80086601, 0x40086602, 0x40


def chattr_nodump(p):
    import array, fcntl
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    flags = array.array("i", [0])
    fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags, True)
    flags[0] |= FS_NODUMP_FL
    fcntl.ioctl(fd, FS_IOC_SETFLAGS, flags, True)


ACL = ("\x02\x00\x00\x00"          # version 2, then (tag, perm, id) entries:
       "\x01\x00\x06\x00\xff\xff\xff\xff"  # owner rw
       "\x02\x00\x06\x00\x92\x10\x00\x00"  # user 4242 rw
       "\x04\x00\x04\x00\xff\xff\xff\xff"  # group r
       "\x10\x00\x06\x00\xff\xff\xff\xff"  # mask rw
       "\x20\x00\x04\x00\xff\xff\xff\xff"  # others r
       ).encode("latin-1")


def setacl(p):
    os.setxattr(p, "system.posix_acl_access", ACL)


def write(p):
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, b"forged\n")
    os.close(fd)


OPS = {
    "nest": (0, nest),
    "ioctl": (1, ioctl),
    "otrunc": (1, otrunc),
    "truncate": (1, lambda p: os.truncate(p, 1)),
    "reopen": (1, reopen),
    "mmap": (1, mmap_write),
    "replace": (1, replace),
    "exchange": (2, lambda a, c: check(libc.renameat2(-100, b(a), -100, b(c), 2))),
    "setxattr": (1, lambda p: os.setxattr(p, "user.ralon", b"1")),
    "chattr": (1, chattr_nodump),
    "setacl": (1, setacl),
    "umount": (1, lambda p: check(libc.umount2(b(p), 0))),
    "umount_lazy": (1, lambda p: check(libc.umount2(b(p), MNT_DETACH))),
    "remount_rw": (1, remount_rw),
    "tmpfs": (1, lambda p: mount("none", p, "tmpfs", 0)),
    "bind": (2, lambda a, c: mount(a, c, None, MS_BIND)),
    "rbind": (2, lambda a, c: mount(a, c, None, MS_BIND | MS_REC)),
    "setattr_rw": (1, lambda p: clear_rdonly(AT_FDCWD, p, 0)),
    "setattr_rw_rec": (1, lambda p: clear_rdonly(AT_FDCWD, p, AT_RECURSIVE)),
    "clone_rw": (2, clone_rw),
    "clone_write": (2, clone_write),
    "move": (2, lambda a, c: mount(a, c, None, MS_MOVE)),
    "handle_write": (1, handle_write),
    "ptrace": (1, ptrace_seize),
    "fsmount_over": (1, fsmount_over),
    "write": (1, write),
}

args = sys.argv[1:]
while args:
    op = args.pop(0)
    n, fn = OPS[op]
    params, args = args[:n], args[n:]
    name = params[0] if op == "ioctl" else op
    try:
        fn(*params)
    except OSError as e:
        print("%s: %s" % (name, errno.errorcode.get(e.errno, e.errno)), flush=True)
        sys.exit(1)
    print("%s: OK" % name, flush=True)
'''


# ---- outcomes ---------------------------------------------------------------

class Blocked:
    """Non-zero exit, nothing protected changed. `rc`: the exact exit
    status; `output`: a regex the output must match; `started`: whether the
    command itself must have run (False: ralon refused before it)."""

    def __init__(self, rc=None, output=None, started=True):
        self.rc, self.output, self.started = rc, output, started

    def __repr__(self):
        return "BLOCKED" if self.started else "REFUSED(%r)" % self.output


class Unchanged:
    """Nothing protected changed on disk; `output`: a regex the output
    must match (that the shadowing itself happened)."""

    def __init__(self, output=None):
        self.output = output

    def __repr__(self):
        return "UNCHANGED"


class Allowed:
    def __init__(self, check):
        self.check = check

    def __repr__(self):
        return "ALLOWED"


class Gap:
    def __init__(self, path, check):
        self.path, self.check = path, check

    def __repr__(self):
        return "GAP(%s)" % self.path


BLOCKED = Blocked()


def SHADOWED(op):
    """UNCHANGED on disk, and the shadowing operation `op` did succeed in
    the agent's own namespace (or the row would prove nothing)."""
    return Unchanged(output=r"(?m)^%s: OK\r?$" % op)


# What a BLOCKED row's output must show (unless the row names its own):
# the kernel's refusal, as the tools and the helpers print it, so that a
# row cannot pass because a tool is missing, a path was mistyped or the
# nested namespace could not be made.
DENIAL = (r"(?m)(Permission denied|Read-only file system|Device or resource busy"
          r"|Operation not permitted|Invalid cross-device link"
          r"|^[a-z_A-Z]+: E(ACCES|ROFS|BUSY|PERM|XDEV|INVAL)\r?$)")
NOT_A_DENIAL = (r"(?m)(^nest: E|No such file or directory|not found|: ENOENT\r?$"
                r"|^(?!PermissionError)[A-Za-z]*Error: )")


def ALLOWED(check):
    return Allowed(check)


def GAP(path, check):
    return Gap(path, check)


# The line `run` prints (unless -q) once the restriction is in place.
LOCKED_LINE = r"(?m)^ralon: [0-9]+ path\(s\) locked via the [a-z]+ backend$"


def REFUSED(regex):
    return Blocked(rc=2, output=regex, started=False)


def EPERM_FOR(name):
    """Blocked, and the operation failed with EPERM exactly."""
    return Blocked(output=r"(?m)^%s: EPERM\r?$" % name)


SAME = object()


class Row:
    """name; cmd (for sh -c); the outcome under the mount backend and, if
    different, under Landlock; launcher: shell code run before ralon in the
    shell that starts it; setup: shell code run in the project before the
    "before" snapshot, as the same user; pty: run on a new controlling
    terminal; needs: a precondition ("user_xattr", "flags", "acl", "io_uring"); protected: paths the
    setup's policy protects beyond PROTECTED, snapshotted with them."""

    def __init__(self, name, cmd, mount, landlock=SAME, launcher=None, setup=None, pty=False,
                 needs=None, protected=()):
        self.name, self.cmd = name, cmd
        self.expect = {"mount": mount, "landlock": mount if landlock is SAME else landlock}
        self.launcher, self.setup, self.pty, self.needs = launcher, setup, pty, needs
        self.protected = tuple(protected)


# ---- checks (run outside, after the command) --------------------------------
# An ALLOWED check takes the Context; a GAP check takes the before and after
# snapshot entries of its path. Both raise AssertionError (through expect:
# python -O drops `assert`).

def expect(cond, message):
    if not cond:
        raise AssertionError(message)


def _read(ctx, rel):
    with open(os.path.join(ctx.proj, rel), encoding="utf-8") as f:
        return f.read()


def file_is(rel, content):
    def check(ctx):
        got = _read(ctx, rel)
        expect(got == content, "%s holds %r, expected %r" % (rel, got, content))
    return check


def file_endswith(rel, tail):
    def check(ctx):
        got = _read(ctx, rel)
        expect(got.endswith(tail), "%s holds %r, expected it to end with %r" % (rel, got, tail))
    return check


def base_file_is(rel, content):
    def check(ctx):
        with open(os.path.join(ctx.base, rel), encoding="utf-8") as f:
            got = f.read()
        expect(got == content, "$BASE/%s holds %r, expected %r" % (rel, got, content))
    return check


def tmpdir_holds(content):
    def check(ctx):
        found = []
        for name in os.listdir(ctx.tmp):
            p = os.path.join(ctx.tmp, name)
            if os.path.isfile(p):
                with open(p, encoding="utf-8") as f:
                    found.append(f.read())
        expect(content in found, "no file in $TMPDIR holds %r: %r" % (content, found))
    return check


def moved(src, dst, content=None):
    def check(ctx):
        expect(not os.path.lexists(os.path.join(ctx.proj, src)), "%s still exists" % src)
        expect(os.path.isfile(os.path.join(ctx.proj, dst)), "%s does not exist" % dst)
        if content is not None:
            got = _read(ctx, dst)
            expect(got == content, "%s holds %r, expected %r" % (dst, got, content))
    return check


def gone(rel):
    def check(ctx):
        expect(not os.path.lexists(os.path.join(ctx.proj, rel)), "%s still exists" % rel)
    return check


def stdout_has(text):
    def check(ctx):
        expect(text in ctx.stdout, "output lacks %r: %r" % (text, ctx.stdout))
    return check


def git_head_subject(subject):
    def check(ctx):
        r = subprocess.run(["git", "-c", "safe.directory=*", "-C", ctx.proj, "log", "-1",
                            "--format=%s"], capture_output=True, text=True, env=git_env(ctx.home))
        expect(r.returncode == 0, r.stderr)
        expect(r.stdout.strip() == subject, "HEAD is %r, expected %r" % (r.stdout, subject))
        r = subprocess.run(["git", "-c", "safe.directory=*", "-C", ctx.proj, "status",
                            "--porcelain", "src/main.c"], capture_output=True, text=True,
                           env=git_env(ctx.home))
        expect(r.stdout == "", "src/main.c not committed: %r" % r.stdout)
    return check


def all_of(*checks):
    def check(ctx):
        for c in checks:
            c(ctx)
    return check


def mode_is(mode):
    def check(before, after):
        got = stat.S_IMODE(after["mode"])
        expect(got == mode, "mode is %o, expected %o" % (got, mode))
    return check


def mtime_year(year):
    def check(before, after):
        got = time.gmtime(after["mtime_ns"] // 10**9).tm_year
        expect(got == year, "mtime year is %d, expected %d" % (got, year))
    return check


def ctime_changed_same_owner(before, after):
    expect(after["ctime_ns"] != before["ctime_ns"], "ctime unchanged: the chown did not happen")
    expect((after["uid"], after["gid"]) == (before["uid"], before["gid"]), "owner changed")


def has_flag(flag):
    def check(before, after):
        expect(not before["flags"] & flag and after["flags"] & flag,
               "inode flags %#x -> %#x, expected %#x set" % (before["flags"], after["flags"], flag))
    return check


def gained_xattr(name):
    def check(before, after):
        expect(name not in before["xattrs"] and name in after["xattrs"],
               "xattr %s: %r -> %r" % (name, before["xattrs"].get(name), after["xattrs"].get(name)))
    return check


def has_xattr(name, value):
    def check(before, after):
        got = after["xattrs"].get(name)
        expect(got == value, "xattr %s is %r, expected %r" % (name, got, value))
    return check


# ---- the table --------------------------------------------------------------
# cwd is the project root. Environment: HOME=$BASE/home, TMPDIR=$BASE/tmp,
# BASE (holds code/proj), RALON (the binary under test), OP (the helper
# above).

# The policy `ralon init` writes in a git repository: .git/hooks and
# .git/config protected too.
GIT_PROTECTED = ("printf 'protect: [tests/golden/**, conf/secret.yml, .github/workflows,"
                 " Cargo.lock, .git/hooks, .git/config]\\n' > agent.lock")

ROWS = [
    # -- content of protected files
    Row("write", "echo forged > Cargo.lock", BLOCKED),
    Row("append", "echo forged >> agent.lock", BLOCKED),
    Row("append_in_protected_dir", "echo forged >> tests/golden/a.txt", BLOCKED),
    Row("append_deep_in_protected_dir", "echo forged >> .github/workflows/ci.yml", BLOCKED),
    Row("shell_o_trunc", ": > conf/secret.yml", BLOCKED),
    Row("o_rdonly_o_trunc", 'python3 "$OP" otrunc Cargo.lock', BLOCKED),
    Row("truncate_cmd", "truncate -s 1 agent.lock", BLOCKED),
    Row("truncate_syscall_by_path", 'python3 "$OP" truncate conf/secret.yml', BLOCKED),
    Row("truncate_in_protected_dir", "truncate -s 0 tests/golden/a.txt", BLOCKED),
    Row("uring_write", '"$URING" write agent.lock', BLOCKED, needs="io_uring"),
    Row("uring_write_in_protected_dir", '"$URING" write tests/golden/a.txt', BLOCKED,
        needs="io_uring"),
    Row("uring_unlink", '"$URING" unlink Cargo.lock', BLOCKED, needs="io_uring"),
    Row("uring_rename_away", '"$URING" rename conf/secret.yml conf/s2', BLOCKED,
        needs="io_uring"),
    Row("uring_rename_over", 'echo forged > src/f && "$URING" rename src/f Cargo.lock', BLOCKED,
        needs="io_uring"),
    Row("uring_write_unprotected", '"$URING" write src/main.c',
        ALLOWED(file_endswith("src/main.c", "forged\n")), needs="io_uring"),
    Row("uring_unlink_unprotected", '"$URING" unlink src/main.c', ALLOWED(gone("src/main.c")),
        needs="io_uring"),
    Row("uring_rename_unprotected", '"$URING" rename src/main.c docs/main.c',
        ALLOWED(moved("src/main.c", "docs/main.c", HELLO_C)), needs="io_uring"),
    Row("mmap_shared_write", 'python3 "$OP" mmap agent.lock', BLOCKED),
    Row("reopen_o_path_fd_wronly", 'python3 "$OP" reopen agent.lock', BLOCKED),
    Row("cp_over_policy", "cp README.md agent.lock", BLOCKED),
    Row("tee_into_workflow", "echo forged | tee .github/workflows/ci.yml", BLOCKED),
    # -- delete, rename, replace
    Row("rm_file", "rm -f Cargo.lock", BLOCKED),
    Row("rm_policy", "rm -f agent.lock", BLOCKED),
    Row("rm_in_protected_dir", "rm -f tests/golden/a.txt", BLOCKED),
    Row("rm_rf_protected_dir", "rm -rf .github/workflows", BLOCKED),
    # An empty one: nothing in it stops rmdir but the protection.
    Row("rmdir_empty_protected_dir", "rmdir data/empty", BLOCKED,
        setup="mkdir -p data/empty && printf 'protect: [tests/golden/**, conf/secret.yml,"
              " .github/workflows, Cargo.lock, data/empty]\\n' > agent.lock",
        protected=("data/empty",)),
    Row("mv_away", "mv conf/secret.yml conf/secret.old", BLOCKED),
    Row("mv_out_of_protected_dir", "mv tests/golden/a.txt src/a.txt", BLOCKED),
    Row("editor_atomic_save", "printf 'forged\\n' > conf/.secret.yml.swp"
        " && mv -f conf/.secret.yml.swp conf/secret.yml", BLOCKED),
    Row("atomic_save_from_src", "printf 'protect: []\\n' > src/tmp && mv -f src/tmp agent.lock",
        BLOCKED),
    Row("sed_in_place", "sed -i s/Cargo/Nothing/ agent.lock", BLOCKED),
    Row("python_os_replace", 'python3 "$OP" replace agent.lock', BLOCKED),
    Row("rename_exchange", 'python3 "$OP" exchange src/main.c Cargo.lock', BLOCKED),
    # -- ancestors, the project root and above
    Row("rename_conf", "mv conf conf.old", BLOCKED),
    Row("rename_tests", "mv tests tests.old", BLOCKED),
    Row("rename_github", "mv .github github.old", BLOCKED),
    Row("rename_golden", "mv tests/golden tests/golden.old", BLOCKED),
    Row("rename_project_root", "mv ../proj ../proj2", BLOCKED),
    Row("rename_above_root", 'mv "$BASE/code" "$BASE/code.old" && mkdir -p "$BASE/code/proj"'
        " && echo 'protect: []' > \"$BASE/code/proj/agent.lock\"", BLOCKED),
    Row("rename_base", 'mv "$BASE" "$BASE.old"', BLOCKED),
    # -- aliases
    Row("hard_link_into_src_then_write", "ln Cargo.lock src/hl && echo forged >> src/hl", BLOCKED),
    Row("hard_link_same_dir_then_write", "ln conf/secret.yml conf/alias"
        " && echo forged >> conf/alias", BLOCKED),
    # The swap itself: a link made elsewhere, renamed over the protected
    # name (not `rm; ln -s`, whose `ln` fails on the name `rm` left).
    Row("symlink_swap", "ln -s src/main.c src/lnk && mv -fT src/lnk Cargo.lock", BLOCKED),
    Row("touch_in_protected_dir", "touch tests/golden/new.txt", BLOCKED),
    Row("mkdir_in_protected_dir", "mkdir tests/golden/sub", BLOCKED),
    Row("mkfifo_in_protected_dir", "mkfifo tests/golden/fifo", BLOCKED),
    Row("symlink_in_protected_dir", "ln -s ../unit.c tests/golden/link", BLOCKED),
    # -- metadata: the mount backend blocks it, Landlock does not (pinned gap)
    Row("chmod", "chmod 0666 Cargo.lock", BLOCKED, GAP("Cargo.lock", mode_is(0o666))),
    Row("chmod_protected_dir", "chmod 0700 tests/golden", BLOCKED,
        GAP("tests/golden", mode_is(0o700))),
    Row("touch_date", "touch -d 2001-02-03 conf/secret.yml", BLOCKED,
        GAP("conf/secret.yml", mtime_year(2001))),
    Row("chown_to_self", 'chown "$(id -u):$(id -g)" agent.lock', BLOCKED,
        GAP("agent.lock", ctime_changed_same_owner)),
    # An unprotected directory on the way: neither backend governs its
    # mode (a nuisance, not a way in: a directory the next session cannot
    # read is protected whole, TestNextSession).
    Row("chmod_ancestor", "chmod 0700 conf", GAP("ancestor conf/", mode_is(0o700))),
    Row("chattr_nodump", 'python3 "$OP" chattr Cargo.lock', BLOCKED,
        GAP("Cargo.lock", has_flag(0x40)), needs="flags"),
    Row("setfacl", 'python3 "$OP" setacl Cargo.lock', BLOCKED,
        GAP("Cargo.lock", gained_xattr("system.posix_acl_access")), needs="acl"),
    Row("setxattr_user", 'python3 "$OP" setxattr Cargo.lock', BLOCKED,
        GAP("Cargo.lock", has_xattr("user.ralon", b"1")), needs="user_xattr"),
    # -- mount namespace, directly: the raw system calls (umount(8) and
    # mount(8) refuse most of these on their own, before the kernel is
    # asked, so rows running them would pass whatever ralon did)
    Row("umount_syscall", 'python3 "$OP" umount agent.lock write agent.lock', BLOCKED),
    Row("umount_lazy_syscall", 'python3 "$OP" umount_lazy tests/golden'
        ' write tests/golden/a.txt', BLOCKED),
    Row("remount_rw_syscall", 'python3 "$OP" remount_rw Cargo.lock write Cargo.lock', BLOCKED),
    Row("tmpfs_over_syscall", 'python3 "$OP" tmpfs tests/golden write tests/golden/a.txt',
        BLOCKED),
    Row("bind_over_syscall", 'python3 "$OP" bind README.md agent.lock write agent.lock', BLOCKED),
    # -- mount namespace, in a nested user and mount namespace (full
    # capabilities there), with raw system calls: they need no uid mapping
    # (a root caller without CAP_SETFCAP cannot map uid 0, so `unshare -Urm`
    # fails before anything is tried). Shadowing changes only the agent's
    # own view: UNCHANGED.
    Row("nested_umount_syscall", 'python3 "$OP" nest umount agent.lock write agent.lock',
        BLOCKED),
    Row("nested_umount_lazy_syscall", 'python3 "$OP" nest umount_lazy tests/golden'
        ' write tests/golden/a.txt', BLOCKED),
    Row("nested_remount_rw_syscall", 'python3 "$OP" nest remount_rw Cargo.lock write Cargo.lock',
        BLOCKED),
    Row("setattr_rw_syscall", 'python3 "$OP" setattr_rw Cargo.lock write Cargo.lock', BLOCKED),
    Row("fsmount_over_syscall", 'python3 "$OP" fsmount_over tests/golden'
        ' write tests/golden/a.txt', BLOCKED),
    Row("nested_setattr_rw_syscall", 'python3 "$OP" nest setattr_rw Cargo.lock write Cargo.lock',
        BLOCKED),
    Row("nested_setattr_rw_dir_syscall", 'python3 "$OP" nest setattr_rw tests/golden'
        ' write tests/golden/a.txt', BLOCKED),
    Row("nested_setattr_rw_recursive_syscall", 'python3 "$OP" nest setattr_rw_rec tests/golden'
        ' write tests/golden/a.txt', BLOCKED),
    Row("nested_clone_rw_syscall", 'mkdir -p "$HOME/m" && python3 "$OP" nest clone_rw'
        ' tests/golden "$HOME/m" write "$HOME/m/a.txt"', BLOCKED),
    Row("nested_fsmount_over_syscall", 'python3 "$OP" nest fsmount_over tests/golden'
        ' write tests/golden/a.txt', SHADOWED("fsmount_over"), BLOCKED),
    Row("nested_rbind_elsewhere_syscall", 'mkdir -p "$HOME/m" && python3 "$OP" nest rbind .'
        ' "$HOME/m" write "$HOME/m/agent.lock"', BLOCKED),
    # ... and the copy made writable again (ATTACKS #45).
    Row("nested_rbind_elsewhere_remount_syscall", 'mkdir -p "$HOME/m" && python3 "$OP" nest'
        ' rbind . "$HOME/m" remount_rw "$HOME/m/agent.lock" write "$HOME/m/agent.lock"',
        BLOCKED),
    Row("nested_remount_rw_dir_syscall", 'python3 "$OP" nest remount_rw tests/golden'
        ' write tests/golden/a.txt', BLOCKED),
    Row("nested_tmpfs_shadow_syscall", 'python3 "$OP" nest tmpfs tests/golden'
        ' write tests/golden/a.txt', SHADOWED("tmpfs"), BLOCKED),
    Row("nested_bind_shadow_syscall", 'python3 "$OP" nest bind README.md agent.lock'
        ' write agent.lock', SHADOWED("bind"), BLOCKED),
    # What the nested rows above rely on: inside the mount backend's
    # sandbox a namespace of the agent's own may mount (Landlock forbids
    # every mount), so their refusals come from the locked mounts.
    Row("nested_mount_unprotected", 'python3 "$OP" nest tmpfs src',
        ALLOWED(stdout_has("tmpfs: OK")), BLOCKED),
    # Looking under the cover (ATTACKS #44): a bind or a detached copy of
    # a directory without the read-only mounts below it.
    Row("nested_bind_ancestor_syscall", 'mkdir -p "$HOME/m" && python3 "$OP" nest bind conf'
        ' "$HOME/m" write "$HOME/m/secret.yml"', BLOCKED),
    Row("nested_clone_ancestor_syscall", 'python3 "$OP" nest clone_write conf secret.yml',
        BLOCKED),
    # Moving a locked mount away (ATTACKS #46).
    Row("nested_move_mount_syscall", 'mkdir -p "$HOME/m" && python3 "$OP" nest move'
        ' tests/golden "$HOME/m" write tests/golden/a.txt', BLOCKED),
    # A file handle opened through a mount that is not read-only (ATTACKS
    # #48), without and with the capabilities of a nested namespace.
    Row("open_by_handle_syscall", 'python3 "$OP" handle_write conf/secret.yml', BLOCKED),
    Row("nested_open_by_handle_syscall", 'python3 "$OP" nest handle_write conf/secret.yml',
        BLOCKED),
    # -- ralon inside ralon
    Row("nested_ralon_write", "\"$RALON\" run -q -- sh -c 'echo forged >> agent.lock'", BLOCKED),
    Row("nested_ralon_harmless", "\"$RALON\" run -q -- sh -c 'echo nested > src/nested.txt'",
        ALLOWED(file_is("src/nested.txt", "nested\n"))),
    # -- descriptors and terminals
    Row("inherited_writable_fd", "echo forged >&7", REFUSED(r"descriptor 7\b"),
        launcher="exec 7>>agent.lock"),
    # A file that is no target of its own, inside a protected directory:
    # known by where the descriptor's name lies, not by its identity.
    Row("inherited_writable_fd_in_protected_dir", "echo forged >&7",
        REFUSED(r"descriptor 7 is open for writing on the protected .*/\.github/workflows/ci\.yml"),
        launcher="exec 7>>.github/workflows/ci.yml"),
    # Open for writing on an unprotected file: nothing to refuse.
    Row("inherited_writable_fd_unprotected", "echo more >&7",
        ALLOWED(file_is("README.md", "# Demo project\nmore\n")), launcher="exec 7>>README.md"),
    # A read-only descriptor on the project directory: a lookup through it
    # starts below the read-only binds, so the mount backend refuses to
    # start; Landlock judges the file reached, whatever the way there.
    Row("inherited_directory_fd",
        "python3 -c 'import os; fd = os.open(\"agent.lock\", os.O_WRONLY | os.O_APPEND,"
        " dir_fd=8); os.write(fd, b\"forged\\n\")'",
        REFUSED(r"descriptor 8 refers to the directory "), BLOCKED,
        launcher="exec 8<."),
    # Any directory will do: `..` from it walks the caller's mounts, where
    # nothing is read-only. A sibling of the protected paths, and a
    # directory outside the project, reached through /proc/self/fd.
    Row("inherited_sibling_directory_fd",
        "echo forged >> /proc/self/fd/9/../agent.lock",
        REFUSED(r"descriptor 9 refers to the directory .*/src\b"), BLOCKED,
        launcher="exec 9<src"),
    Row("inherited_outside_directory_fd",
        'echo forged >> "/proc/self/fd/9/..$PWD/Cargo.lock"'
        ' && chmod 600 "/proc/self/fd/9/..$PWD/Cargo.lock"',
        REFUSED(r"descriptor 9 refers to the directory /tmp\b"), BLOCKED,
        launcher="exec 9</tmp"),
    # A read-only descriptor on a protected file, reopened for writing.
    Row("inherited_readonly_fd_reopened", "echo forged >> /proc/self/fd/6",
        REFUSED(r"descriptor 6 refers to the protected "), BLOCKED,
        launcher="exec 6<Cargo.lock"),
    # -- other names made before the run
    # A hard link of a file inside a protected directory, beside the way
    # to a protected path: a Landlock rule on it would follow the file to
    # its protected name, so it gets none (and is read-only too).
    Row("hard_link_beside_chain_protected_name", "echo forged >> tests/golden/a.txt",
        BLOCKED, setup="ln tests/golden/a.txt zz_golden"),
    Row("hard_link_beside_chain_truncate", "truncate -s 0 tests/golden/a.txt",
        BLOCKED, setup="ln tests/golden/a.txt tests/zz_golden"),
    # One file under two names the policy both protects, in directories
    # with nothing else protected: each name is kept (bound, or its
    # directory on the chain), not only the first the scan meets.
    Row("hard_link_both_names_protected",
        "mv src/copy.yml src/s2 && echo forged >> src/s2;"
        " mv conf/secret.yml conf/s1 && echo forged >> conf/s1;"
        " echo forged >> conf/secret.yml", BLOCKED,
        setup="ln conf/secret.yml src/copy.yml && printf 'protect: [tests/golden/**,"
              " conf/secret.yml, .github/workflows, Cargo.lock, src/copy.yml]\\n' > agent.lock",
        protected=("src/copy.yml",)),
    # A literal pattern through a symbolic link on the way: the file it
    # names is protected, though the scan does not follow the link.
    # A symbolic link made before the run, in a directory the agent may
    # write, leading to a protected file (ATTACKS #33): the file is
    # judged, not the link's name.
    Row("symlink_sibling_made_before", "echo forged >> src/secret-link", BLOCKED,
        setup="ln -s ../conf/secret.yml src/secret-link"),
    # The project reached through a symbolic link to it (ATTACKS #34):
    # ralon started there protects the real paths, and the names through
    # the link lead to them.
    Row("via_symlinked_ancestor", 'echo forged >> Cargo.lock;'
        ' echo forged >> "$BASE/plink/agent.lock"', BLOCKED,
        launcher='ln -s code/proj "$BASE/plink" && cd "$BASE/plink"'),
    Row("via_symlinked_ancestor_unprotected", 'echo more >> README.md'
        ' && echo more >> "$BASE/plink/src/main.c"',
        ALLOWED(all_of(file_endswith("README.md", "more\n"),
                       file_endswith("src/main.c", "more\n"))),
        launcher='ln -s code/proj "$BASE/plink" && cd "$BASE/plink"'),
    # Started with its working directory inside a protected directory: the
    # directory it stands in is the read-only one (the mount backend
    # enters it again after the binds), not the one below them.
    Row("cwd_in_protected_dir", "echo forged >> a.txt; echo forged > new.txt;"
        " echo forged >> ../../Cargo.lock", BLOCKED, launcher="cd tests/golden"),
    # A protected name that is a symbolic link (ATTACKS #35): a bind
    # follows it, so under the mount backend the file it leads to is
    # read-only but the link itself can be replaced (documented; the
    # audit warns, `symlink`, and --strict refuses). Under Landlock it
    # lies in the root, which accepts no new entries.
    Row("protected_symlink_replaced", "rm lnk.yml && echo forged > lnk.yml",
        ALLOWED(file_is("lnk.yml", "forged\n")), BLOCKED,
        setup="ln -s conf/secret.yml lnk.yml && printf 'protect: [tests/golden/**,"
              " conf/secret.yml, .github/workflows, Cargo.lock, lnk.yml]\\n' > agent.lock"),
    Row("literal_through_symlinked_dir", "echo forged >> src/lnk/key.pem", BLOCKED,
        setup="mkdir src/real && echo key > src/real/key.pem && ln -s real src/lnk"
              " && printf 'protect: [tests/golden/**, conf/secret.yml, .github/workflows,"
              " Cargo.lock, src/lnk/key.pem]\\n' > agent.lock",
        protected=("src/real/key.pem", "src/lnk")),
    # ATTACKS #35 in a directory not otherwise on Landlock's chain: the
    # mount backend binds only the target, and the link can be replaced
    # (documented; agent.lock itself: TestSymlinkedPolicy).
    Row("protected_symlink_off_the_chain", "rm docs/link.c && echo forged > docs/link.c",
        ALLOWED(file_is("docs/link.c", "forged\n")), BLOCKED,
        setup="ln -s ../src/main.c docs/link.c && printf 'protect: [tests/golden/**,"
              " conf/secret.yml, .github/workflows, Cargo.lock, docs/link.c]\\n' > agent.lock"),
    # ATTACKS #36: a link inside a protected directory leads out of it; what
    # is written through it lands outside, unprotected (ralon warns).
    Row("link_out_of_protected_dir", "echo more >> tests/golden/ext",
        ALLOWED(file_endswith("src/main.c", "more\n")),
        setup="ln -s ../../src/main.c tests/golden/ext"),
    # ATTACKS #62: with .git/hooks and .git/config protected (ralon init),
    # no hook can be planted and no hooksPath set.
    Row("plant_git_hook", "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/post-checkout",
        BLOCKED, setup=GIT_PROTECTED, protected=(".git/hooks", ".git/config")),
    Row("git_config_hookspath", 'git config core.hooksPath "$HOME"', BLOCKED,
        setup=GIT_PROTECTED, protected=(".git/hooks", ".git/config")),
    Row("tiocsti", 'python3 "$OP" ioctl TIOCSTI', EPERM_FOR("TIOCSTI"), pty=True),
    Row("tiocsti_high_bits", 'python3 "$OP" ioctl TIOCSTI_HIGH', EPERM_FOR("TIOCSTI_HIGH"),
        pty=True),
    Row("tioclinux", 'python3 "$OP" ioctl TIOCLINUX', EPERM_FOR("TIOCLINUX"), pty=True),
    # -- work that must succeed
    Row("write_unprotected", "echo 'int x;' >> src/main.c",
        ALLOWED(file_endswith("src/main.c", "int x;\n"))),
    Row("create_in_src", "echo 'int y;' > src/new.c", ALLOWED(file_is("src/new.c", "int y;\n"))),
    Row("write_siblings_of_protected", "echo more >> tests/unit.c && echo more >> conf/other.yml",
        ALLOWED(all_of(file_endswith("tests/unit.c", "more\n"),
                       file_endswith("conf/other.yml", "more\n")))),
    Row("write_root_file", "echo more >> README.md", ALLOWED(file_endswith("README.md", "more\n"))),
    Row("create_in_home", 'echo hi > "$HOME/notes.txt"', ALLOWED(base_file_is("home/notes.txt",
                                                                             "hi\n"))),
    # /tmp itself: on the way to the project when the project is below it
    # (RALON_TEST_TMPDIR), and then Landlock lets nothing be created there.
    Row("create_in_tmp", 'f=/tmp/ralon-enf-$$ && echo hi > "$f" && cat "$f" && rm "$f"',
        ALLOWED(stdout_has("hi\n")),
        BLOCKED if (os.path.realpath(TMP_ROOT) + "/").startswith("/tmp/")
        or os.path.realpath(TMP_ROOT) == "/tmp" else ALLOWED(stdout_has("hi\n"))),
    Row("mktemp_in_tmpdir", 'f=$(mktemp) && echo hi > "$f"', ALLOWED(tmpdir_holds("hi\n"))),
    Row("compile_and_run", "cc -o src/hello src/main.c && ./src/hello > src/out.txt",
        ALLOWED(file_is("src/out.txt", "hello, world\n"))),
    Row("git_commit", "echo '/* agent */' >> src/main.c && git add src/main.c"
        " && git commit -q -m agent-change", ALLOWED(git_head_subject("agent-change"))),
    # With .git/hooks and .git/config protected, as `ralon init` suggests,
    # .git is on Landlock's chain: git cannot make .git/index.lock
    # (documented, and the warning says so).
    Row("git_commit_hooks_protected", "echo '/* agent */' >> src/main.c && git add src/main.c"
        " && git commit -q -m agent-change", ALLOWED(git_head_subject("agent-change")), BLOCKED,
        setup=GIT_PROTECTED, protected=(".git/hooks", ".git/config")),
    Row("mv_cross_dir", "mv src/main.c docs/main.c", ALLOWED(moved("src/main.c", "docs/main.c",
                                                                  HELLO_C))),
    Row("read_protected", "cat agent.lock conf/secret.yml tests/golden/a.txt",
        ALLOWED(stdout_has(POLICY + "token: s3cr3t\ngolden output\n"))),
    # -- directories on the Landlock chain accept no new entries (documented)
    Row("mv_into_chain_dir", "mv src/main.c tests/main.c",
        ALLOWED(moved("src/main.c", "tests/main.c", HELLO_C)), BLOCKED),
    Row("create_in_root", "echo hi > new.txt", ALLOWED(file_is("new.txt", "hi\n")), BLOCKED),
    Row("create_above_root", 'echo hi > "$BASE/above.txt"',
        ALLOWED(base_file_is("above.txt", "hi\n")), BLOCKED),
    Row("rename_in_root", "mv README.md README.txt", ALLOWED(moved("README.md", "README.txt")),
        BLOCKED),
    Row("sed_in_place_root_file", "sed -i s/Demo/Sample/ README.md",
        ALLOWED(file_is("README.md", "# Sample project\n")), BLOCKED),
]


# ---- machinery --------------------------------------------------------------

class Tools:
    """ralon, deny-userns and the helpers, copied into a world-readable
    directory so nobody can run them wherever the build tree is."""
    dir = None

    @classmethod
    def setup(cls):
        if cls.dir is not None:
            return
        d = tempfile.mkdtemp(prefix="ralon-enf-bin-", dir=TMP_ROOT)
        os.chmod(d, 0o755)
        cls.ralon = os.path.join(d, "ralon")
        shutil.copy2(RALON_SRC, cls.ralon)
        os.chmod(cls.ralon, 0o755)
        cls.deny = None
        if DENY_SRC and os.path.exists(DENY_SRC):
            cls.deny = os.path.join(d, "deny-userns")
            shutil.copy2(DENY_SRC, cls.deny)
            os.chmod(cls.deny, 0o755)
        cls.uring = None
        if os.path.exists(URING_SRC):
            cls.uring = os.path.join(d, "uring-op")
            shutil.copy2(URING_SRC, cls.uring)
            os.chmod(cls.uring, 0o755)
        cls.op = os.path.join(d, "op.py")
        with open(cls.op, "w", encoding="utf-8") as f:
            f.write(OP_PY)
        os.chmod(cls.op, 0o644)
        # A python3 every user can run, first on PATH.
        bindir = os.path.join(d, "bin")
        os.mkdir(bindir, 0o755)
        py = shutil.which("python3", path=SAFE_PATH) or sys.executable
        os.symlink(py, os.path.join(bindir, "python3"))
        cls.path = bindir + ":" + SAFE_PATH
        cls.dir = d

    @classmethod
    def cleanup(cls):
        if cls.dir is not None:
            shutil.rmtree(cls.dir, ignore_errors=True)
            cls.dir = None


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def git_env(home):
    return {"PATH": SAFE_PATH, "HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C.UTF-8"}


class Project:
    """base/ (owned by the user running the row) holding code/proj (the
    project, with a git repository), home (HOME) and tmp (TMPDIR)."""

    def __init__(self, uid):
        self.base = tempfile.mkdtemp(prefix="ralon-enf-", dir=TMP_ROOT)
        os.chmod(self.base, 0o755)
        self.code = os.path.join(self.base, "code")
        self.proj = os.path.join(self.code, "proj")
        self.home = os.path.join(self.base, "home")
        self.tmp = os.path.join(self.base, "tmp")
        for d in (self.proj, self.home, self.tmp):
            os.makedirs(d)
        for rel, content in FILES.items():
            p = os.path.join(self.proj, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:
                f.write(content)
        env = git_env(self.home)
        for args in (["init", "-q", "-b", "main"],
                     ["config", "user.name", "Ralon Test"],
                     ["config", "user.email", "ralon-test@example.invalid"],
                     ["add", "-A"],
                     ["commit", "-q", "-m", "initial"]):
            subprocess.run(["git"] + args, cwd=self.proj, env=env, check=True,
                           stdout=subprocess.DEVNULL)
        if uid is not None:
            for top, dirs, files in os.walk(self.base):
                os.lchown(top, uid, uid)
                for n in dirs + files:
                    os.lchown(os.path.join(top, n), uid, uid)

    def cleanup(self):
        for d in (self.base + ".old", self.base):
            if os.path.lexists(d):
                shutil.rmtree(d, ignore_errors=True)

    def env(self):
        return {"PATH": Tools.path, "HOME": self.home, "TMPDIR": self.tmp, "BASE": self.base,
                "RALON": Tools.ralon, "OP": Tools.op, "URING": Tools.uring or "uring-op-missing",
                "LC_ALL": "C.UTF-8",
                "GIT_CONFIG_NOSYSTEM": "1"}


class Result:
    def __init__(self, rc, stdout, stderr):
        self.rc, self.stdout, self.stderr = rc, stdout, stderr

    @property
    def output(self):
        return self.stdout + self.stderr

    def __repr__(self):
        return "exit %r\n--- stdout\n%s--- stderr\n%s" % (self.rc, self.stdout, self.stderr)


# The capability sets /proc/PID/status shows, and the securebits ralon
# locks where it may (libcap's CAP_SECURED_BITS_AMBIENT): bit -> the name
# capsh --print gives it.
CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
PR_GET_SECUREBITS = 27
SECUREBITS = {0: "secure-noroot", 1: "secure-noroot-locked", 2: "secure-no-suid-fixup",
              3: "secure-no-suid-fixup-locked", 4: "secure-keep-caps",
              5: "secure-keep-caps-locked", 6: "secure-no-ambient-raise",
              7: "secure-no-ambient-raise-locked"}
LOCKED_SECUREBITS = 0xef


def cap_names(mask):
    """A capability set as libcap names it ("cap_chown,cap_kill"), through
    capsh --decode; the hexadecimal mask where capsh is missing."""
    capsh = shutil.which("capsh", path=SAFE_PATH)
    if mask == 0:
        return "(none)"
    if capsh is not None:
        p = subprocess.run([capsh, "--decode=%x" % mask], capture_output=True, text=True)
        if p.returncode == 0 and "=" in p.stdout:
            return p.stdout.strip().split("=", 1)[1]
    return "0x%x" % mask


def securebit_names(bits):
    return ",".join(n for b, n in sorted(SECUREBITS.items()) if bits & (1 << b)) or "(none)"


def own_capabilities(field):
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split(":", 1)[1].strip(), 16)
    raise AssertionError("no %s in /proc/self/status" % field)


def agent_process(root, token):
    """The pid of the process below `root` (ralon, and in the mount backend
    its guard and the sandbox's processes) that runs `sh -c` with `token`
    in its command: ralon's own command lines carry the token too, so the
    one whose program is sh."""
    parent = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, encoding="utf-8", errors="replace") as f:
                parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    for pid in parent:
        up = pid
        while up in parent and up != root and up > 1:
            up = parent[up]
        if up != root:
            continue
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0] == b"sh" and any(token.encode() in a for a in argv):
            return pid
    return None


def _preexec(uid, ctty):
    def fn():
        if ctty:
            import fcntl
            import termios
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
    return fn


def run(argv, user, cwd, env, pty=False, timeout=TIMEOUT):
    """Runs argv as `user` ("root" or "nobody"); with pty, on a new pseudo
    terminal that is its controlling terminal (stdin, stdout and stderr)."""
    uid = USERS[user]
    if not pty:
        p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, errors="replace",
                           preexec_fn=_preexec(uid, False), timeout=timeout)
        return Result(p.returncode, p.stdout, p.stderr)
    master, slave = pty_module.openpty()
    try:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                             start_new_session=True, preexec_fn=_preexec(uid, True))
    finally:
        os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 1.0)
            if not r:
                if p.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError as e:
                if e.errno == errno.EIO:  # every slave descriptor is closed
                    break
                raise
            if not chunk:
                break
            out += chunk
        else:
            p.kill()
        rc = p.wait(timeout=timeout)
    finally:
        os.close(master)
    return Result(rc, out.decode("utf-8", "replace"), "")


# ---- snapshots --------------------------------------------------------------

def inode_flags(path):
    """chattr(1)'s flags, or an error name where the file system has none."""
    import array
    import fcntl
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(fd, 0x80086601, flags, True)  # FS_IOC_GETFLAGS
        return flags[0]
    except OSError as ex:
        return "error %s" % errno.errorcode.get(ex.errno, ex.errno)
    finally:
        os.close(fd)


def _entry(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {"missing": True}
    e = {"dev": st.st_dev, "ino": st.st_ino, "mode": st.st_mode, "uid": st.st_uid,
         "gid": st.st_gid, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
         "nlink": st.st_nlink}
    try:
        e["xattrs"] = {n: os.getxattr(path, n, follow_symlinks=False)
                       for n in sorted(os.listxattr(path, follow_symlinks=False))}
    except OSError as ex:
        e["xattrs"] = "error %s" % errno.errorcode.get(ex.errno, ex.errno)
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        e["flags"] = inode_flags(path)
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as f:
            e["sha256"] = hashlib.sha256(f.read()).hexdigest()
    elif stat.S_ISDIR(st.st_mode):
        e["listing"] = sorted(os.listdir(path))
    elif stat.S_ISLNK(st.st_mode):
        e["target"] = os.readlink(path)
    try:
        rs = os.stat(path)
        e["resolves_to"] = (rs.st_dev, rs.st_ino)
    except OSError as ex:
        e["resolves_to"] = "error %s" % errno.errorcode.get(ex.errno, ex.errno)
    return e


def snapshot(pr, extra=()):
    """Every protected object (PROTECTED and `extra`, and everything below a
    protected directory) in full; the ancestors by identity, mode and
    owner (their times and listings change with ordinary work)."""
    snap = {}
    for rel in PROTECTED + tuple(extra):
        top = os.path.join(pr.proj, rel)
        snap[rel] = _entry(top)
        if os.path.isdir(top) and not os.path.islink(top):
            for d, dirs, files in os.walk(top):
                for n in dirs + files:
                    p = os.path.join(d, n)
                    snap[os.path.relpath(p, pr.proj)] = _entry(p)
    for label, path in (("ancestor conf/", os.path.join(pr.proj, "conf")),
                        ("ancestor tests/", os.path.join(pr.proj, "tests")),
                        ("ancestor .github/", os.path.join(pr.proj, ".github")),
                        ("ancestor proj/", pr.proj),
                        ("ancestor code/", pr.code),
                        ("ancestor base/", pr.base)):
        try:
            st = os.lstat(path)
            snap[label] = {"dev": st.st_dev, "ino": st.st_ino, "type": stat.S_IFMT(st.st_mode),
                           "mode": st.st_mode, "uid": st.st_uid, "gid": st.st_gid}
        except FileNotFoundError:
            snap[label] = {"missing": True}
    return snap


def diff(before, after):
    """[(path, field, before, after)] for everything that differs."""
    out = []
    for path in sorted(set(before) | set(after)):
        b, a = before.get(path, {"absent": True}), after.get(path, {"absent": True})
        for field in sorted(set(b) | set(a)):
            if b.get(field) != a.get(field):
                out.append((path, field, b.get(field), a.get(field)))
    return out


METADATA = {"mode", "uid", "gid", "mtime_ns", "ctime_ns", "xattrs", "flags"}


def format_diff(d):
    return "\n".join("  %s: %s %r -> %r" % x for x in d) or "  (nothing)"


# ---- backends ---------------------------------------------------------------

_availability = {}


def backend_available(backend, user):
    """(available, reason) from `ralon run --backend B --dry-run -- true`,
    run as `user` in a fresh project."""
    key = (backend, user)
    if key not in _availability:
        Tools.setup()
        pr = Project(USERS[user])
        try:
            r = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--", "true"], user,
                    pr.proj, pr.env())
        finally:
            pr.cleanup()
        why = " ".join(line.strip() for line in r.output.splitlines()
                       if "unavailable" in line or "would fail" in line
                       or (line.startswith("ralon:") and "warning" not in line))
        _availability[key] = (r.rc == 0, why or r.output.strip())
    return _availability[key]


def require_backend(tc, backend, user):
    if user not in USERS:
        tc.skipTest("the %s column needs the suite to run as root" % user)
    ok, why = backend_available(backend, user)
    if not ok:
        msg = "the %s backend is not available to %s here: %s" % (backend, user, why)
        if backend in REQUIRED:
            tc.fail(msg + " (RALON_REQUIRE_BACKENDS=%s)" % ",".join(sorted(REQUIRED)))
        tc.skipTest(msg)


def landlock_abi():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION); 444
    # on every architecture.
    abi = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return abi if abi > 0 else 0


_xattr_ok = None


def user_xattrs_supported():
    global _xattr_ok
    if _xattr_ok is None:
        fd, p = tempfile.mkstemp(dir=TMP_ROOT, prefix="ralon-enf-xattr-")
        os.close(fd)
        try:
            os.setxattr(p, "user.ralon", b"1")
            _xattr_ok = True
        except OSError as e:
            if e.errno != errno.EOPNOTSUPP:
                raise
            _xattr_ok = False
        finally:
            os.unlink(p)
    return _xattr_ok


_metadata_ok = {}
# What the helper's setacl writes: owner rw, user 4242 rw, group r, mask rw,
# others r (version 2, then tag, permissions and id per entry).
ACL_BLOB = struct.pack("<I", 2) + b"".join(
    struct.pack("<HHI", tag, perm, ident) for tag, perm, ident in
    ((0x01, 6, 0xFFFFFFFF), (0x02, 6, 4242), (0x04, 4, 0xFFFFFFFF), (0x10, 6, 0xFFFFFFFF),
     (0x20, 4, 0xFFFFFFFF)))


def metadata_supported(kind):
    """Whether files under TMP_ROOT take inode flags ("flags") or POSIX
    ACLs ("acl"), tried on a file of root's."""
    if kind not in _metadata_ok:
        fd, p = tempfile.mkstemp(dir=TMP_ROOT, prefix="ralon-enf-%s-" % kind)
        os.close(fd)
        try:
            if kind == "flags":
                _metadata_ok[kind] = isinstance(inode_flags(p), int)
            else:
                os.setxattr(p, "system.posix_acl_access", ACL_BLOB)
                _metadata_ok[kind] = True
        except OSError as e:
            if e.errno != errno.EOPNOTSUPP:
                raise
            _metadata_ok[kind] = False
        finally:
            os.unlink(p)
    return _metadata_ok[kind]


def ralon_run(backend, cmd, quiet=True, extra=()):
    return ([Tools.ralon, "run", "--backend", backend] + (["-q"] if quiet else []) + list(extra)
            + ["--", "sh", "-c", cmd])


# ---- the table as tests -----------------------------------------------------

class Context:
    def __init__(self, pr, res):
        self.proj, self.base, self.home, self.tmp = pr.proj, pr.base, pr.home, pr.tmp
        self.stdout, self.stderr = res.stdout, res.stderr


def run_row(tc, row, backend, user):
    require_backend(tc, backend, user)
    if row.needs == "user_xattr" and not user_xattrs_supported():
        tc.skipTest("the filesystem under %s refuses user.* extended attributes" % TMP_ROOT)
    if row.needs == "io_uring" and Tools.uring is None:
        tc.skipTest("uring-op was not built (RALON_URING_OP)")
    if row.needs in ("flags", "acl") and not metadata_supported(row.needs):
        tc.skipTest("the filesystem under %s has no %s" % (
            TMP_ROOT, "inode flags" if row.needs == "flags" else "POSIX ACLs"))
    expect = row.expect[backend]
    pr = Project(USERS[user])
    try:
        if row.needs == "io_uring":
            # The helper must work outside the sandbox, or the row proves
            # nothing: a file of the user's in its TMPDIR.
            res = run(["sh", "-c", ': > probe && "$URING" write probe'], user, pr.tmp, pr.env())
            if res.rc == 2:
                tc.skipTest("io_uring cannot be used here: %r" % (res,))
            tc.assertEqual(res.rc, 0, "uring-op fails outside the sandbox: %r" % (res,))
            tc.assertEqual(read_text(os.path.join(pr.tmp, "probe")), "forged\n", res)
        if row.setup:
            res = run(["sh", "-c", row.setup], user, pr.proj, pr.env())
            tc.assertEqual(res.rc, 0, "the setup failed: %r" % (res,))
        before = snapshot(pr, row.protected)
        argv = ralon_run(backend, "echo '%s' >&2; %s" % (STARTED, row.cmd))
        if row.launcher:
            argv = ["sh", "-c", row.launcher + ' && exec "$@"', "launcher"] + argv
        res = run(argv, user, pr.proj, pr.env(), pty=row.pty)
        after = snapshot(pr, row.protected)
        d = diff(before, after)
        what = "row %s, backend %s, user %s, expected %r: %s\n%r\nchanged:\n%s" % (
            row.name, backend, user, expect, row.cmd, res, format_diff(d))
        started = STARTED in res.output

        if isinstance(expect, Blocked):
            if expect.started:
                tc.assertTrue(started, "the command never ran inside the sandbox; " + what)
            else:
                tc.assertFalse(started, "ralon ran the command instead of refusing; " + what)
            tc.assertNotEqual(res.rc, 0, "the command succeeded; " + what)
            if expect.rc is not None:
                tc.assertEqual(res.rc, expect.rc, what)
            if expect.output is not None:
                tc.assertRegex(res.output, expect.output, what)
            elif expect.started:
                tc.assertRegex(res.output, DENIAL, "no refusal by the kernel in the output; "
                               + what)
                tc.assertNotRegex(res.output, NOT_A_DENIAL, "the command failed for another "
                                  "reason; " + what)
            tc.assertEqual(d, [], "protected paths changed; " + what)
        elif isinstance(expect, Unchanged):
            tc.assertTrue(started, "the command never ran inside the sandbox; " + what)
            if expect.output is not None:
                tc.assertRegex(res.output, expect.output, "the shadowing did not happen; " + what)
            tc.assertEqual(d, [], "protected paths changed; " + what)
        elif isinstance(expect, Allowed):
            tc.assertEqual(res.rc, 0, "the command failed; " + what)
            tc.assertEqual(d, [], "protected paths changed; " + what)
            try:
                expect.check(Context(pr, res))
            except AssertionError as e:
                tc.fail("the intended effect is missing: %s; %s" % (e, what))
        elif isinstance(expect, Gap):
            tc.assertEqual(res.rc, 0, "the gap is gone or the command failed (update the "
                           "table if Landlock now covers this); " + what)
            unexpected = [x for x in d if x[0] != expect.path or x[1] not in METADATA]
            tc.assertEqual(unexpected, [], "more than the documented metadata changed; " + what)
            tc.assertNotEqual(d, [], "nothing changed; " + what)
            try:
                expect.check(before[expect.path], after[expect.path])
            except AssertionError as e:
                tc.fail("the metadata change is not the expected one: %s; %s" % (e, what))
        else:
            raise ValueError("bad expectation %r" % expect)
    finally:
        pr.cleanup()


class TestAttackTable(unittest.TestCase):
    """Generated: test_<row>__<backend>__<user>."""


def _generate():
    seen = set()
    for row in ROWS:
        if row.name in seen:
            raise ValueError("duplicate row " + row.name)
        seen.add(row.name)
        for backend in BACKENDS:
            for user in ALL_USERS:
                def t(self, row=row, backend=backend, user=user):
                    run_row(self, row, backend, user)
                t.__doc__ = "%s [%s, %s]: %s" % (row.name, backend, user, row.cmd)
                setattr(TestAttackTable, "test_%s__%s__%s" % (row.name, backend, user), t)


_generate()


# ---- separate tests ---------------------------------------------------------

EXPECTED_PROTECTED = {"agent.lock", "tests/golden", "conf/secret.yml", ".github/workflows",
                      "Cargo.lock"}


class Base(unittest.TestCase):
    def project(self, user=None):
        user = user or ME
        pr = Project(USERS[user])
        self.addCleanup(pr.cleanup)
        return pr

    def users(self):
        return [u for u in ALL_USERS if u in USERS]

    def each_backend_and_user(self):
        """Every backend the kernel offers, with every user that can run
        it (a missing required backend fails the test)."""
        for backend in BACKENDS:
            for user in self.users():
                if self.available(backend, user):
                    yield backend, user

    def available(self, backend, user):
        if user not in USERS:
            return False
        ok, why = backend_available(backend, user)
        if not ok and backend in REQUIRED:
            self.fail("the %s backend is not available to %s: %s" % (backend, user, why))
        return ok

    def any_backend(self, user=None):
        user = user or ME
        avail = [b for b in BACKENDS if self.available(b, user)]
        if not avail:
            self.skipTest("no backend is available here")
        return avail

    def assertUnchanged(self, before, pr, what, extra=()):
        d = diff(before, snapshot(pr, extra))
        self.assertEqual(d, [], "protected paths changed; %s\n%s" % (what, format_diff(d)))


class TestDryRun(Base):
    def test_dry_run_names_backend_and_protected_paths(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                before = snapshot(pr)
                r = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--", "true"],
                        user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertRegex(r.stdout, r"(?m)^backend\s+%s\b" % backend, r)
                for rel in EXPECTED_PROTECTED:
                    self.assertRegex(r.stdout, r"(?m)^\s+read-only\s+%s/?$" % re.escape(rel), r)
                # As root, and only as root, the plan warns that a root agent
                # is not a protected configuration.
                self.assertEqual("running as root" in r.stderr, user == "root", r)
                self.assertUnchanged(before, pr, "dry run")

    def test_dry_run_json(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                r = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--json", "--",
                         "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                doc = json.loads(r.stdout)
                self.assertEqual(doc["backend"], backend)
                self.assertIs(doc["enforceable"], True)
                self.assertEqual({p["path"] for p in doc["protected"]}, EXPECTED_PROTECTED)
                self.assertEqual(os.path.realpath(doc["root"]), os.path.realpath(pr.proj))

    def test_dry_run_every_name_of_one_object(self):
        # Two protected names of one file (a hard link): a target each, so
        # neither can be renamed or replaced (hard_link_both_names_protected
        # in the table).
        for backend in self.any_backend():
            with self.subTest(backend=backend):
                pr = self.project()
                os.link(os.path.join(pr.proj, "conf/secret.yml"),
                        os.path.join(pr.proj, "conf/secret-copy.yml"))
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(POLICY.replace("conf/secret.yml,",
                                           "conf/secret.yml, conf/secret-copy.yml,"))
                r = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--json", "--",
                         "true"], ME, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                paths = [p["path"] for p in json.loads(r.stdout)["protected"]]
                self.assertEqual(sorted(paths),
                                 sorted(EXPECTED_PROTECTED | {"conf/secret-copy.yml"}), r)


    def test_dry_run_landlock_withholds_linked_files(self):
        # A file beside the chain with another name (here a hard link of a
        # file inside the protected tests/golden) gets no Landlock rule,
        # and the plan says so; a file with one name is granted.
        pr = self.project()
        os.link(os.path.join(pr.proj, "tests/golden/a.txt"), os.path.join(pr.proj, "zz_golden"))
        r = run([Tools.ralon, "run", "--backend", "landlock", "--dry-run", "--json", "--",
                 "true"], ME, pr.proj, pr.env())
        self.assertEqual(r.rc, 0, r)
        doc = json.loads(r.stdout)
        root = os.path.realpath(pr.proj)
        self.assertIn(os.path.join(root, "zz_golden"), doc["withheld"], r)
        self.assertNotIn(os.path.join(root, "zz_golden"), doc["granted"], r)
        self.assertIn(os.path.join(root, "README.md"), doc["granted"], r)
        kinds = {(f["kind"], f["subject"]) for f in doc["findings"]}
        self.assertIn(("landlock-linked-file", "zz_golden"), kinds, r)
        r = run([Tools.ralon, "run", "--backend", "landlock", "--dry-run", "--", "true"],
                ME, pr.proj, pr.env())
        self.assertRegex(r.stdout, r"(?m)^\s+no write rule for\s+%s$"
                         % re.escape(os.path.join(root, "zz_golden")), r)


    def test_dry_run_says_what_the_run_would_refuse(self):
        # What makes `run` refuse after the plan (an inherited descriptor
        # open for writing on a protected file, a weakening finding with
        # --strict) makes the dry run exit 1 with the same error, in text
        # and in JSON, and not otherwise.
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(POLICY.replace("Cargo.lock]", "Cargo.lock, not-yet.txt]"))
                if USERS[user] is not None:
                    os.lchown(os.path.join(pr.proj, "agent.lock"), USERS[user], USERS[user])
                dry = [Tools.ralon, "run", "--backend", backend, "--dry-run"]
                launcher = ["sh", "-c", 'exec 7>>agent.lock && exec "$@"', "launcher"]
                before = snapshot(pr)

                r = run(dry + ["--", "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertNotIn("would fail", r.stdout, r)
                real = run(launcher + [Tools.ralon, "run", "-q", "--backend", backend, "--",
                                       "true"], user, pr.proj, pr.env())
                self.assertEqual(real.rc, 2, real)
                refusal = real.stderr.strip()[len("ralon: "):]
                self.assertRegex(refusal, r"^descriptor 7 is open for writing", real)
                r = run(launcher + dry + ["--", "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 1, r)
                self.assertIn("would fail: %s\n" % refusal, r.stdout, r)
                r = run(launcher + dry + ["--json", "--", "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 1, r)
                doc = json.loads(r.stdout)
                self.assertIs(doc["enforceable"], False, r)
                self.assertEqual(doc["error"], refusal, r)

                real = run([Tools.ralon, "run", "-q", "--strict", "--backend", backend, "--",
                            "true"], user, pr.proj, pr.env())
                self.assertEqual(real.rc, 2, real)
                refusal = real.stderr.strip()[len("ralon: "):]
                self.assertRegex(refusal, r"\(refusing to run with --strict\)$", real)
                r = run(dry + ["--strict", "--", "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 1, r)
                self.assertIn("would fail: %s\n" % refusal, r.stdout, r)
                r = run(dry + ["--strict", "--json", "--", "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 1, r)
                self.assertEqual(json.loads(r.stdout)["error"], refusal, r)
                self.assertUnchanged(before, pr, "dry runs")

    def test_dry_run_says_when_the_command_cannot_be_run(self):
        # The run looks for the command once the restriction holds, and
        # fails when it cannot be found (exit 127) or executed (126), as
        # env(1) does; the dry run says it would, with the same error, and
        # exits 1 (not enforceable).
        for backend, user in self.each_backend_and_user():
            for cmd, rc in (("no-such-command-ralon", 127), ("./agent.lock", 126)):
                with self.subTest(backend=backend, user=user, cmd=cmd):
                    pr = self.project(user)
                    real = run([Tools.ralon, "run", "-q", "--backend", backend, "--", cmd],
                               user, pr.proj, pr.env())
                    self.assertEqual(real.rc, rc, real)
                    refusal = real.stderr.strip()[len("ralon: "):]
                    self.assertRegex(refusal, r"^failed to run `%s`: " % re.escape(cmd), real)
                    dry = [Tools.ralon, "run", "-q", "--backend", backend, "--dry-run"]
                    r = run(dry + ["--", cmd], user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 1, r)
                    self.assertIn("would fail: %s\n" % refusal, r.stdout, r)
                    r = run(dry + ["--json", "--", cmd], user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 1, r)
                    doc = json.loads(r.stdout)
                    self.assertIs(doc["enforceable"], False, r)
                    self.assertEqual(doc["error"], refusal, r)

    def test_run_warns_in_one_line_per_kind(self):
        # Before the agent starts, each kind of finding is one line naming
        # its subjects, and one more says where the detail is: the dry
        # run, which gives every finding whole. Landlock has the most.
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(POLICY.replace("Cargo.lock]", "Cargo.lock, not-yet.txt, nor-this]"))
                dry = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--json",
                           "--", "true"], user, pr.proj, pr.env())
                self.assertEqual(dry.rc, 0, dry)
                findings = json.loads(dry.stdout)["findings"]
                kinds = list(dict.fromkeys(f["kind"] for f in findings))
                r = run([Tools.ralon, "run", "--backend", backend, "--", "true"], user, pr.proj,
                        pr.env())
                self.assertEqual(r.rc, 0, r)
                lines = r.stderr.splitlines()
                self.assertRegex(lines[0], LOCKED_LINE, r)
                self.assertEqual(lines[-1], "ralon: `ralon run --dry-run` explains each warning, "
                                 "and what to do about it", r)
                warnings = lines[1:-1]
                self.assertEqual(len(warnings), len(kinds), r)
                for w in warnings:
                    self.assertTrue(w.startswith("ralon: warning: "), r)
                    self.assertLessEqual(len(w), 200, r)
                self.assertIn("ralon: warning: not locked, as nothing on disk matches: "
                              "`not-yet.txt`, `nor-this`", warnings, r)
                # The whole of each finding stays in the dry run.
                d = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--", "true"],
                        user, pr.proj, pr.env())
                for f in findings:
                    self.assertIn("ralon: warning: %s\n" % f["message"], d.stderr, d)
                if backend == "landlock":
                    self.assertTrue(any(w.startswith(
                        "ralon: warning: creating, removing or renaming entries fails with "
                        "\"Permission denied\" in: ") and " ., " in w + " " for w in warnings), r)
                    self.assertIn("ralon: warning: Landlock does not stop chmod, chown, touch or "
                                  "setxattr on protected paths", warnings, r)

    def test_dry_run_quiet_prints_no_warnings(self):
        for backend in self.any_backend():
            with self.subTest(backend=backend):
                pr = self.project()
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(POLICY.replace("Cargo.lock]", "Cargo.lock, not-yet.txt]"))
                argv = [Tools.ralon, "run", "--backend", backend, "--dry-run"]
                r = run(argv + ["--", "true"], ME, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertRegex(r.stderr, r"(?m)^ralon: warning: `not-yet.txt` matches nothing",
                                 r)
                q = run(argv + ["-q", "--", "true"], ME, pr.proj, pr.env())
                self.assertEqual(q.rc, 0, q)
                self.assertEqual(q.stderr, "", q)
                # The same plan; Landlock's number of grants and its list
                # of each directory's entries count those of /, /tmp and
                # the like, which other programs may change between the
                # two runs: only the project's own are compared.
                self.assertEqual(own_plan(q.stdout, pr.base), own_plan(r.stdout, pr.base), q)


def own_plan(text, base):
    """A dry run's plan without what lies outside `base`: the number of
    Landlock grants, and the entries listed for each directory on the way
    from / that is not in `base` (with their wrapped lines)."""
    out, skipping = [], False
    for line in text.splitlines():
        m = re.match(r"^  (?:no new entries in|no write rule for)  (\S+)", line)
        if m:
            skipping = not (m.group(1) + "/").startswith(base.rstrip("/") + "/")
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            out.append(re.sub(r"^(landlock +)\d+ grant", r"\1N grant", line))
    return "\n".join(out)


class TestAutoFallback(Base):
    """`deny-userns` makes user namespaces unavailable, as some distributions
    do: auto must pick Landlock, and --backend mount must refuse."""

    def setUp(self):
        Tools.setup()
        if Tools.deny is None:
            self.skipTest("RALON_DENY_USERNS is not set (build tests/enforcement/deny-userns)")

    def test_auto_falls_back_to_landlock(self):
        for user in self.users():
            if not self.available("landlock", user):
                continue
            with self.subTest(user=user):
                pr = self.project(user)
                r = run([Tools.deny, Tools.ralon, "run", "--dry-run", "--", "true"], user,
                        pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertRegex(r.stdout, r"(?m)^backend\s+landlock\b", r)
                self.assertIn("unshare", r.stdout, r)
                r = run([Tools.deny, Tools.ralon, "run", "--dry-run", "--json", "--", "true"],
                        user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertEqual(json.loads(r.stdout)["backend"], "landlock", r)

                before = snapshot(pr)
                r = run([Tools.deny, Tools.ralon, "run", "--", "sh", "-c",
                         "echo '%s' >&2; echo forged >> agent.lock" % STARTED], user, pr.proj,
                        pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertNotEqual(r.rc, 0, r)
                self.assertRegex(r.stderr, r"(?m)^ralon: %d path\(s\) locked via the landlock "
                                 r"backend$" % len(EXPECTED_PROTECTED), r)
                self.assertUnchanged(before, pr, repr(r))

                r = run([Tools.deny, Tools.ralon, "run", "-q", "--", "sh", "-c",
                         "echo ok > src/ok.txt"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertEqual(read_text(os.path.join(pr.proj, "src/ok.txt")), "ok\n")

    def test_mount_backend_refuses_without_user_namespaces(self):
        for user in self.users():
            with self.subTest(user=user):
                pr = self.project(user)
                before = snapshot(pr)
                r = run([Tools.deny, Tools.ralon, "run", "--backend", "mount", "--", "sh", "-c",
                         "echo '%s' >&2" % STARTED], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertNotIn(STARTED, r.output, r)
                self.assertIn("unshare(CLONE_NEWUSER|CLONE_NEWNS)", r.stderr, r)
                self.assertNotIn(NESTED_HINT, r.stderr, r)
                self.assertNotRegex(r.stderr, LOCKED_LINE, r)
                self.assertUnchanged(before, pr, repr(r))

    def test_inside_another_run_the_failure_says_so(self):
        # Under an outer Landlock run, or a sealed mount one, whose domain
        # refuses mounts, the mount backend fails: the error and status
        # say where they run.
        for user in self.users():
            for flags in (["--backend", "landlock"], ["--backend", "mount", "--seal"]):
                if not (self.available("landlock", user) and self.available(flags[1], user)):
                    continue
                if "--seal" in flags and landlock_abi() < 2:
                    continue  # the mount backend's seal needs ABI 2
                with self.subTest(user=user, outer=flags):
                    pr = self.project(user)
                    outer = [Tools.ralon, "run", "-q"] + flags + ["--"]
                    r = run(outer + [Tools.ralon, "run", "--backend", "mount", "--", "true"],
                            user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 2, r)
                    # Root, whose capabilities are gone, fails at its uid
                    # map; an ordinary user at the first mount.
                    m = re.match(r"\Aralon: the mount backend failed at (.*?): ", r.stderr)
                    self.assertIsNotNone(m, r)
                    hint = (NESTED_MOUNT_HINT if m.group(1).startswith("mount")
                            else NESTED_USERNS_HINT if m.group(1).startswith("unshare(")
                            else NESTED_HINT + ")")
                    if user != "root":
                        # Under a sealed mount backend no user namespace can
                        # be made; under Landlock nothing can be mounted.
                        self.assertEqual(hint, NESTED_USERNS_HINT if "--seal" in flags
                                         else NESTED_MOUNT_HINT, r)
                    self.assertRegex(r.stderr, r"\Aralon: the mount backend failed at [^\n]*%s\n\Z"
                                     % re.escape(hint), r)
                    r = run(outer + [Tools.ralon, "status"], user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 0, r)
                    self.assertRegex(r.stdout, r"(?m)^  mount +unavailable — .*%s$"
                                     % re.escape(hint), r)

    def test_auto_does_not_fall_back_when_namespaces_run_out(self):
        # The quota of user namespaces is per user, and a process an agent
        # leaves behind can use it up: then unshare fails with ENOSPC, and
        # auto must not take that as the system's choice and drop to the
        # weaker Landlock backend. --backend landlock still works.
        for quota in ("max_user_namespaces", "max_mnt_namespaces"):
            with open("/proc/sys/user/" + quota) as f:
                if int(f.read()) == 0:
                    self.skipTest("%s is 0: ENOSPC is how namespaces are turned off here" % quota)
        for user in self.users():
            with self.subTest(user=user):
                pr = self.project(user)
                before = snapshot(pr)
                deny = [Tools.deny, "--enospc"]
                r = run(deny + [Tools.ralon, "run", "--", "sh", "-c",
                                "echo '%s' >&2; chmod 666 agent.lock" % STARTED],
                        user, pr.proj, pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertNotIn(STARTED, r.output, r)
                # (Root makes its mounts before a user namespace: the
                # second unshare is where it first asks for one.)
                self.assertRegex(r.stderr, r"\Aralon: the mount backend is unavailable — "
                                 r"(second )?unshare\(CLONE_NEWUSER\|CLONE_NEWNS\) failed: No space left "
                                 r"on device: [^\n]*auto does not fall back [^\n]*\n\Z", r)
                self.assertUnchanged(before, pr, repr(r))
                r = run(deny + [Tools.ralon, "run", "--dry-run", "--", "true"], user, pr.proj,
                        pr.env())
                self.assertEqual(r.rc, 1, r)
                if self.available("landlock", user):
                    r = run(deny + [Tools.ralon, "run", "-q", "--backend", "landlock", "--",
                                    "sh", "-c", "echo ok > src/ok.txt"], user, pr.proj,
                            pr.env())
                    self.assertEqual(r.rc, 0, r)
                    self.assertEqual(read_text(os.path.join(pr.proj, "src/ok.txt")), "ok\n")

    def test_auto_falls_back_when_the_namespace_is_made_but_mounts_are_refused(self):
        # Where a user namespace can be made but mounting in it is refused
        # (AppArmor's restriction of unprivileged user namespaces, or here an
        # outer Landlock domain), a successful unshare proves nothing: the
        # probe must go on to the mounts, and auto must pick Landlock.
        for user in self.users():
            if not self.available("landlock", user):
                continue
            with self.subTest(user=user):
                pr = self.project(user)
                outer = [Tools.ralon, "run", "-q", "--backend", "landlock", "--"]
                r = run(outer + [Tools.ralon, "status"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                why = re.search(r"(?m)^  mount +unavailable — (.*)$", r.stdout)
                self.assertIsNotNone(why, r)
                self.assertNotIn("unshare", why.group(1), r)
                r = run(outer + [Tools.ralon, "run", "--", "sh", "-c",
                                 "echo '%s' >&2; echo ok > src/ok.txt" % STARTED],
                        user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertIn(STARTED, r.stderr, r)
                self.assertRegex(r.stderr, r"(?m)^ralon: %d path\(s\) locked via the landlock "
                                 r"backend$" % len(EXPECTED_PROTECTED), r)
                self.assertEqual(read_text(os.path.join(pr.proj, "src/ok.txt")), "ok\n")


NESTED_HINT = "(this runs inside another `ralon run`, whose restrictions stay in force here"
# Where a mount itself was refused, the hint says which runs refuse them.
NESTED_MOUNT_HINT = NESTED_HINT + "; under its landlock backend or --seal, nothing can be mounted)"
NESTED_USERNS_HINT = NESTED_HINT + "; under its mount backend's --seal, no user namespace can be made)"


class TestLockedLine(Base):
    def test_locked_line_only_once_locked(self):
        """`N path(s) locked via B` is said once the restriction is in
        place, right before the command starts, and never by a run that
        then refuses or fails."""
        checked = 0
        for user in self.users():
            for backend in ("mount", "landlock"):
                if not self.available(backend, user):
                    continue
                with self.subTest(user=user, backend=backend):
                    pr = self.project(user)
                    argv = ralon_run(backend, "echo '%s' >&2" % STARTED, quiet=False)
                    r = run(argv, user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 0, r)
                    lines = r.stderr.splitlines()
                    locked = [i for i, l in enumerate(lines) if re.search(LOCKED_LINE, l)]
                    self.assertEqual(len(locked), 1, r)
                    self.assertIn("via the %s backend" % backend, lines[locked[0]], r)
                    self.assertLess(locked[0], lines.index(STARTED), r)

                    # Refused after the plan was made: an inherited
                    # descriptor open for writing on agent.lock.
                    before = snapshot(pr)
                    r = run(["sh", "-c", 'exec 7>>agent.lock && exec "$@"', "launcher"] + argv,
                            user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 2, r)
                    self.assertNotIn(STARTED, r.output, r)
                    self.assertRegex(r.stderr, r"descriptor 7\b", r)
                    self.assertNotRegex(r.stderr, LOCKED_LINE, r)
                    self.assertUnchanged(before, pr, repr(r))
                    checked += 1
        if checked == 0:
            self.skipTest("no backend is available here")


class TestSeal(Base):
    # Shadowing from a nested namespace, as the tools do it (needs a uid
    # mapping: an ordinary user only) and with raw system calls (any user):
    # (command, what it prints when the shadow is made, what it prints when
    # the mount itself is refused). unshare keeps the propagation as it is,
    # so that the nested namespace is made under --seal too and what fails
    # is the mount, not unshare's own set-up.
    SHADOWS = (
        ("unshare -Urm --propagation unchanged sh -c"
         " 'mount -t tmpfs none tests/golden && echo shadowed || echo refused'",
         r"(?m)^shadowed$", r"(?m)^refused$"),
        ('python3 "$OP" nest tmpfs tests/golden',
         r"(?m)^tmpfs: OK$", r"(?m)^nest: OK\ntmpfs: EPERM$"),
        ('python3 "$OP" nest bind README.md agent.lock',
         r"(?m)^bind: OK$", r"(?m)^nest: OK\nbind: EPERM$"),
        ('python3 "$OP" nest fsmount_over tests/golden',
         r"(?m)^fsmount_over: OK$", r"(?m)^nest: OK\nfsmount_over: EPERM$"),
    )

    def test_seal_forbids_nested_shadowing(self):
        if landlock_abi() < 2:
            self.skipTest("--seal needs Landlock ABI 2 or later (this kernel: %d)"
                          % landlock_abi())
        checked = 0
        for user in self.users():
            if not self.available("mount", user):
                continue
            for shadow, made, refused in self.SHADOWS:
                with self.subTest(user=user, command=shadow):
                    pr = self.project(user)
                    before = snapshot(pr)
                    control = run(ralon_run("mount", shadow), user, pr.proj, pr.env())
                    self.assertUnchanged(before, pr, repr(control))
                    if not re.search(made, control.stdout):
                        continue  # not possible here even without --seal
                    checked += 1
                    r = run(ralon_run("mount", "echo '%s' >&2; %s; ls tests/golden" % (
                        STARTED, shadow), extra=["--seal"]), user, pr.proj, pr.env())
                    self.assertIn(STARTED, r.stderr, r)
                    # The mount backend's seal refuses the nested user
                    # namespace itself (max_user_namespaces is 0).
                    self.assertNotRegex(r.stdout, made, r)
                    self.assertRegex(r.output, r"(?m)^nest: ENOSPC$|unshare failed: No space "
                                     r"left on device",
                                     "the namespace was not what --seal refused; %r" % r)
                    # The view inside is the files', not an empty tmpfs.
                    self.assertIn("a.txt", r.stdout.split(), r)
                    self.assertUnchanged(before, pr, repr(r))
        if checked == 0:
            self.skipTest("nested shadowing is impossible here even without --seal")

    def test_seal_lets_normal_work_succeed(self):
        if landlock_abi() < 2:
            self.skipTest("--seal needs Landlock ABI 2 or later")
        work = ("echo hi > new.txt && mv new.txt renamed.txt && mv src/main.c docs/main.c"
                " && mv docs/main.c tests/main.c && echo 'int z;' > src/main.c"
                " && mkdir -p \"$HOME/x\" && echo h > \"$HOME/x/f\""
                " && cc -o hello tests/main.c && ./hello > hello.txt"
                " && git add -A && git commit -q -m sealed-change"
                # its own processes stay within reach of its signals
                " && { sleep 30 & pid=$!; kill $pid; wait $pid; test $? -gt 128; }"
                " && echo killed")
        for user in self.users():
            if not self.available("mount", user):
                continue
            with self.subTest(user=user):
                pr = self.project(user)
                before = snapshot(pr)
                r = run(ralon_run("mount", work, extra=["--seal"]), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertUnchanged(before, pr, repr(r))
                p = pr.proj
                self.assertEqual(read_text(os.path.join(p, "renamed.txt")), "hi\n")
                self.assertFalse(os.path.exists(os.path.join(p, "new.txt")))
                self.assertEqual(read_text(os.path.join(p, "tests/main.c")), HELLO_C)
                self.assertFalse(os.path.exists(os.path.join(p, "docs/main.c")))
                self.assertEqual(read_text(os.path.join(p, "src/main.c")), "int z;\n")
                self.assertEqual(read_text(os.path.join(p, "hello.txt")), "hello, world\n")
                git_head_subject("sealed-change")(Context(pr, r))
                self.assertIn("killed", r.stdout, r)

    def test_seal_costs_what_the_manual_says(self):
        # The documented cost of --seal with the mount backend: no user
        # namespace of the agent's own can be made (ENOSPC), and so neither
        # a mount namespace nor anything mounted in one. An ordinary user,
        # who can do all of it without it.
        if landlock_abi() < 2:
            self.skipTest("--seal needs Landlock ABI 2 or later")
        probe = ("unshare -Ur true && echo userns-made;"
                 " unshare -Urm --propagation unchanged sh -c 'echo mountns-made;"
                 " mount -t tmpfs none /tmp && echo mounted || echo mount-refused';"
                 " unshare -Urm true && echo propagation-changed || echo propagation-refused")
        checked = 0
        for user in self.users():
            if user == "root" or not self.available("mount", user):
                continue
            with self.subTest(user=user):
                pr = self.project(user)
                control = run(ralon_run("mount", probe), user, pr.proj, pr.env())
                if "mounted" not in control.stdout.split():
                    continue  # no nested namespaces here even without --seal
                self.assertEqual(control.stdout.split(), ["userns-made", "mountns-made",
                                                          "mounted", "propagation-changed"],
                                 control)
                r = run(ralon_run("mount", probe, extra=["--seal"]), user, pr.proj, pr.env())
                self.assertEqual(r.stdout.split(), ["propagation-refused"], r)
                self.assertEqual(r.stderr.count("No space left on device"), 3, r)
                checked += 1
        if checked == 0:
            self.skipTest("no ordinary user can nest namespaces here")

    # Each way to reach a process outside: a signal by pid and through a
    # pidfd, a stream connection and a datagram to an abstract socket.
    SCOPE_PROBE = """import errno, os, signal, socket, sys
pid, name = int(sys.argv[1]), sys.argv[2]
def stream():
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("\\0" + name)
def dgram():
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", "\\0" + name + "-d")
for what, fn in (("kill", lambda: os.kill(pid, 0)),
                 ("pidfd", lambda: signal.pidfd_send_signal(os.pidfd_open(pid), 0)),
                 ("stream", stream), ("dgram", dgram)):
    try:
        fn()
        print(what + ": ok")
    except OSError as e:
        print(what + ": " + errno.errorcode.get(e.errno, str(e.errno)))
"""

    def test_seal_scopes_signals_and_abstract_sockets(self):
        # Landlock ABI 6 scopes both to the sandbox: a process outside it,
        # of the same user, can be neither signalled nor reached through an
        # abstract unix socket. Without --seal all of it works (the control).
        if landlock_abi() < 6:
            self.skipTest("scoping needs Landlock ABI 6 (this kernel: %d)" % landlock_abi())
        listener = ("import socket, sys, time\n"
                    "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                    "s.bind('\\0' + sys.argv[1]); s.listen(8)\n"
                    "d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                    "d.bind('\\0' + sys.argv[1] + '-d')\n"
                    "print('ready', flush=True); time.sleep(60)\n")
        ways = ("kill", "pidfd", "stream", "dgram")
        checked = 0
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                script = os.path.join(pr.home, "scope_probe.py")
                with open(script, "w", encoding="utf-8") as f:
                    f.write(self.SCOPE_PROBE)
                os.chmod(script, 0o644)
                name = "ralon-enf-%d-%s-%s" % (os.getpid(), backend, user)
                outside = subprocess.Popen(["python3", "-c", listener, name], cwd=pr.base,
                                           stdout=subprocess.PIPE, text=True,
                                           preexec_fn=_preexec(USERS[user], False),
                                           env={"PATH": Tools.path})
                self.addCleanup(outside.wait)
                self.addCleanup(outside.kill)
                self.addCleanup(outside.stdout.close)
                self.assertEqual(outside.stdout.readline(), "ready\n")
                probe = "python3 %s %d %s" % (shlex.quote(script), outside.pid, name)
                control = run(ralon_run(backend, probe), user, pr.proj, pr.env())
                # Under the mount backend the command has a PID namespace
                # of its own: no process ID names a process outside.
                signals = "ESRCH" if backend == "mount" else None
                self.assertEqual(control.stdout.split("\n")[:4],
                                 ["%s: %s" % (w, signals or "ok") if w in ("kill", "pidfd")
                                  else "%s: ok" % w for w in ways], control)
                r = run(ralon_run(backend, "echo '%s' >&2; %s" % (STARTED, probe),
                                  extra=["--seal"]), user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertEqual(r.stdout.split("\n")[:4],
                                 ["%s: %s" % (w, signals or "EPERM") if w in ("kill", "pidfd")
                                  else "%s: EPERM" % w for w in ways], r)
                self.assertIsNone(outside.poll(), "the process outside was killed")
                checked += 1
        if checked == 0:
            self.skipTest("no backend is available")

    def test_seal_with_landlock_lets_normal_work_succeed(self):
        # The Landlock backend's own domain is the seal (it refuses every
        # mount); --seal adds the scopes. Work inside the project's
        # subdirectories (the root accepts no new entries there anyway),
        # and the agent's own processes, are untouched.
        if landlock_abi() < 1:
            self.skipTest("Landlock is not available")
        work = ("echo hi > src/new.txt && mv src/new.txt docs/renamed.txt"
                " && cc -o src/hello src/main.c && ./src/hello > docs/hello.txt"
                " && { sleep 30 & pid=$!; kill $pid; wait $pid; test $? -gt 128; }"
                " && echo killed")
        for user in self.users():
            if not self.available("landlock", user):
                continue
            with self.subTest(user=user):
                pr = self.project(user)
                before = snapshot(pr)
                r = run(ralon_run("landlock", work, extra=["--seal"]), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertUnchanged(before, pr, repr(r))
                self.assertEqual(read_text(os.path.join(pr.proj, "docs/renamed.txt")), "hi\n")
                self.assertEqual(read_text(os.path.join(pr.proj, "docs/hello.txt")),
                                 "hello, world\n")
                self.assertIn("killed", r.stdout, r)

    def test_wrapper_inside_a_run_keeps_what_it_asks(self):
        # A wrapper's `run --if-policy` inside a `ralon run` of the same
        # project starts its command unchanged: that sandbox holds. Not when
        # it asks for more than the run outside did: --seal must still
        # scope signals (ABI 6), and --strict must still refuse on a
        # finding that weakens the protection (a literal naming nothing).
        if landlock_abi() < 6:
            self.skipTest("scoping needs Landlock ABI 6 (this kernel: %d)" % landlock_abi())
        policy = POLICY.replace("Cargo.lock]", "Cargo.lock, .env.production]")
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(policy)
                # A process outside, reached through an abstract socket (under
                # the mount backend no process ID names it).
                name = "ralon-enf-wrap-%d-%s-%s" % (os.getpid(), backend, user)
                outside = subprocess.Popen(
                    ["python3", "-c", "import socket, sys, time\n"
                     "d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                     "d.bind('\\0' + sys.argv[1]); print('ready', flush=True)\n"
                     "time.sleep(60)\n", name], cwd=pr.base, stdout=subprocess.PIPE, text=True,
                    preexec_fn=_preexec(USERS[user], False), env={"PATH": Tools.path})
                self.addCleanup(outside.wait)
                self.addCleanup(outside.kill)
                self.addCleanup(outside.stdout.close)
                self.assertEqual(outside.stdout.readline(), "ready\n")
                probe = ("echo '%s' >&2; python3 -c 'import socket; socket.socket(socket.AF_UNIX,"
                         " socket.SOCK_DGRAM).sendto(b\"x\", \"\\0%s\")' && echo signalled"
                         % (STARTED, name))
                inner = "%s run --if-policy %%s -- sh -c %s" % (shlex.quote(Tools.ralon),
                                                                shlex.quote(probe))
                before = snapshot(pr)
                # The control: nothing more asked, so it passes through.
                r = run(ralon_run(backend, inner % ""), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertIn("signalled", r.stdout, r)
                # The dry run says what the run does: pass through.
                r = run(ralon_run(backend, inner % "--dry-run"), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertEqual(r.stdout, "already inside `ralon run` for this project: `sh` "
                                 "would run unchanged\n", r)
                r = run(ralon_run(backend, inner % "--dry-run --json"), user, pr.proj,
                        pr.env())
                self.assertEqual(r.rc, 0, r)
                doc = json.loads(r.stdout)
                self.assertIsNone(doc["backend"], doc)
                self.assertEqual(doc["root"], pr.proj, doc)
                self.assertEqual(doc["protected"], [], doc)
                r = run(ralon_run(backend, inner % "--seal"), user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertNotIn("signalled", r.stdout, r)
                self.assertIn("Operation not permitted", r.stderr, r)
                r = run(ralon_run(backend, inner % "--strict"), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertNotIn(STARTED, r.stderr, r)
                self.assertIn("(refusing to run with --strict)", r.stderr, r)
                self.assertUnchanged(before, pr, repr(r))
                self.assertIsNone(outside.poll(), "the process outside was killed")

    def test_seal_in_the_dry_run(self):
        # What --seal adds is in the plan, text and JSON; where it cannot
        # hold, the dry run says so as the run would.
        abi = landlock_abi()
        scoped = abi >= 6
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                r = run([Tools.ralon, "run", "--dry-run", "--backend", backend, "--seal", "--",
                         "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                userns = "no user namespaces, " if backend == "mount" else ""
                self.assertRegex(r.stdout, r"(?m)^seal +%sno mounts%s$" % (userns,
                    "; signals and abstract sockets scoped to the sandbox" if scoped
                    else r" \(scoping signals and abstract sockets needs Landlock ABI 6\)"), r)
                r = run([Tools.ralon, "run", "--dry-run", "--json", "--backend", backend,
                         "--seal", "--", "true"], user, pr.proj, pr.env())
                doc = json.loads(r.stdout)
                self.assertEqual(doc["seal"], (["user-namespaces"] if backend == "mount" else [])
                                 + (["mount", "signal", "abstract-unix-socket"]
                                    if scoped else ["mount"]), r)
                self.assertEqual(doc["guard"], backend == "mount", r)
                self.assertTrue(doc["enforceable"], r)
                r = run([Tools.ralon, "run", "--dry-run", "--json", "--backend", backend, "--",
                         "true"], user, pr.proj, pr.env())
                self.assertIsNone(json.loads(r.stdout)["seal"], r)
                r = run([Tools.ralon, "run", "--dry-run", "--backend", backend, "--", "true"],
                        user, pr.proj, pr.env())
                self.assertNotRegex(r.stdout, r"(?m)^seal ", r)


class TestProcess(Base):
    def test_exit_status_passthrough(self):
        for user in self.users():
            for backend in self.any_backend(user):
                with self.subTest(backend=backend, user=user):
                    pr = self.project(user)
                    r = run(ralon_run(backend, "exit 7"), user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 7, r)
                    r = run(ralon_run(backend, "kill -TERM $$"), user, pr.proj, pr.env())
                    self.assertEqual(r.rc, -signal.SIGTERM, r)

    def test_if_policy_without_policy_runs_unchanged(self):
        Tools.setup()
        d = tempfile.mkdtemp(prefix="ralon-enf-nopolicy-", dir=TMP_ROOT)
        self.addCleanup(shutil.rmtree, d, True)
        p = d
        while True:
            if os.path.exists(os.path.join(p, "agent.lock")):
                self.skipTest("%s/agent.lock exists above the scratch directory" % p)
            if p == "/":
                break
            p = os.path.dirname(p)
        env = {"PATH": Tools.path, "HOME": d, "LC_ALL": "C.UTF-8"}
        r = run([Tools.ralon, "run", "--", "sh", "-c", "echo hi > out.txt"], ME, d, env)
        self.assertEqual(r.rc, 2, "without --if-policy a missing policy is an error: %r" % r)
        self.assertFalse(os.path.exists(os.path.join(d, "out.txt")))
        r = run([Tools.ralon, "run", "--if-policy", "--", "sh", "-c", "echo hi > out.txt"],
                ME, d, env)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(read_text(os.path.join(d, "out.txt")), "hi\n")
        # Started unchanged, the command is still found, or not, as env(1)
        # would: 127; and -C DIR starts it in DIR.
        r = run([Tools.ralon, "run", "--if-policy", "--", "ralon-enf-no-such-command"],
                ME, d, env)
        self.assertEqual(r.rc, 127, r)
        os.mkdir(os.path.join(d, "sub"))
        r = run([Tools.ralon, "-C", "sub", "run", "--if-policy", "--", "sh", "-c",
                 "echo hi > out.txt"], ME, d, env)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(read_text(os.path.join(d, "sub", "out.txt")), "hi\n")

    def test_missing_command_fails_to_run(self):
        # 127 for a command not found, 126 for one found but not
        # executable, as env(1), timeout(1), nice(1) and unshare(1) exit,
        # so that a caller can tell them from the command's own exit 2.
        for backend in self.any_backend():
            with self.subTest(backend=backend):
                pr = self.project()
                os.mkdir(os.path.join(pr.proj, "a-directory"))
                for cmd, rc in (("/nonexistent/ralon-enf-command", 127),
                                ("ralon-enf-no-such-command", 127),
                                ("./agent.lock", 126), ("./a-directory", 126)):
                    r = run([Tools.ralon, "run", "--backend", backend, "--", cmd], ME, pr.proj,
                            pr.env())
                    self.assertEqual(r.rc, rc, r)
                    self.assertEqual(r.stderr.count("failed to run `%s`" % cmd), 1, r)
                    # Nothing ran: no line claims paths locked for it.
                    self.assertNotRegex(r.stderr, LOCKED_LINE, r)

    def test_command_on_path_not_executable_exits_126(self):
        # A command found in PATH but not executable is 126, as bash, env(1)
        # and timeout(1) give, not 127: the lookup says why it found none.
        # Root executes a file with any execute bit set, so root's file has
        # none; nobody's has the owner's (root's) only. A later entry of
        # PATH that can be executed is still found, as execvp(3) does.
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                bins = [os.path.join(pr.base, d) for d in ("bin1", "bin2")]
                for d in bins:
                    os.mkdir(d, 0o755)
                script = os.path.join(bins[0], "ralon-enf-noexec")
                with open(script, "w", encoding="utf-8") as f:
                    f.write("#!/bin/sh\necho ran\n")
                os.chmod(script, 0o644 if user == "root" else 0o700)
                env = dict(pr.env(), PATH="%s:%s" % (bins[0], Tools.path))
                for args in (["run", "-q", "--backend", backend],
                             ["run", "-q", "--if-policy", "--backend", backend]):
                    r = run([Tools.ralon] + args + ["--", "ralon-enf-noexec"], user, pr.proj,
                            env)
                    self.assertEqual(r.rc, 126, r)
                    self.assertEqual(r.stderr, "ralon: failed to run `ralon-enf-noexec`: "
                                     "Permission denied\n", r)
                    self.assertEqual(r.stdout, "", r)
                r = run([Tools.ralon, "run", "-q", "--backend", backend, "--dry-run", "--",
                         "ralon-enf-noexec"], user, pr.proj, env)
                self.assertEqual(r.rc, 1, r)
                self.assertIn("would fail: failed to run `ralon-enf-noexec`: Permission denied\n",
                              r.stdout, r)
                # Outside any project, --if-policy starts it unchanged: 126.
                r = run([Tools.ralon, "run", "--if-policy", "--", "ralon-enf-noexec"], user,
                        pr.home, env)
                self.assertEqual(r.rc, 126, r)
                # pause -- COMMAND runs it outside any sandbox: 126 too.
                r = run([Tools.ralon, "pause", "--", "ralon-enf-noexec"], user, pr.proj, env)
                self.assertEqual(r.rc, 126, r)
                self.assertIn("failed to run `ralon-enf-noexec`: Permission denied", r.stderr, r)
                # An executable one later in PATH is the one started.
                later = os.path.join(bins[1], "ralon-enf-noexec")
                with open(later, "w", encoding="utf-8") as f:
                    f.write("#!/bin/sh\necho later\n")
                os.chmod(later, 0o755)
                env["PATH"] = "%s:%s:%s" % (bins[0], bins[1], Tools.path)
                r = run([Tools.ralon, "run", "-q", "--backend", backend, "--",
                         "ralon-enf-noexec"], user, pr.proj, env)
                self.assertEqual((r.rc, r.stdout), (0, "later\n"), r)

    def test_command_failing_in_execve_exits_126_or_127(self):
        # Found and executable, but execve(2) itself fails once the
        # restriction holds (under the mount backend in the guard's child,
        # after the guard let it go): a `#!` interpreter that does not
        # exist is ENOENT, 127, as env(1) says.
        for backend in self.any_backend():
            with self.subTest(backend=backend):
                pr = self.project()
                script = os.path.join(pr.proj, "no-interpreter")
                with open(script, "w", encoding="utf-8") as f:
                    f.write("#!/nonexistent/ralon-interpreter\n")
                os.chmod(script, 0o755)
                r = run([Tools.ralon, "run", "-q", "--backend", backend, "--", "./no-interpreter"],
                        ME, pr.proj, pr.env())
                self.assertEqual(r.rc, 127, r)
                self.assertEqual(r.stderr, "ralon: failed to run `./no-interpreter`: "
                                 "No such file or directory\n", r)

    def test_dash_C_starts_the_command_in_dir(self):
        # `ralon -C DIR run -- CMD` runs CMD as if ralon had been started
        # in DIR, as `git -C` does: its working directory and PWD are DIR,
        # and the policy is the one found from DIR.
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                sub = os.path.join(pr.proj, "src")
                outside = os.path.dirname(pr.proj)
                for d in (sub, os.path.relpath(sub, outside)):
                    r = run([Tools.ralon, "-C", d, "run", "-q", "--backend", backend, "--",
                             "sh", "-c", "pwd -P; echo \"$PWD\"; : > here.txt; exit 7"],
                            user, outside, pr.env())
                    real = os.path.realpath(sub)
                    self.assertEqual(r.rc, 7, r)
                    self.assertEqual(r.stdout, "%s\n%s\n" % (real, real), r)
                    self.assertTrue(os.path.exists(os.path.join(sub, "here.txt")), r)
                    os.unlink(os.path.join(sub, "here.txt"))
                    self.assertFalse(os.path.exists(os.path.join(outside, "here.txt")), r)
                # Still enforced there: the policy found from DIR.
                r = run([Tools.ralon, "-C", sub, "run", "-q", "--backend", backend, "--",
                         "sh", "-c", "echo x >> ../Cargo.lock"], user, outside, pr.env())
                self.assertNotEqual(r.rc, 0, r)

    def test_guard_points_to_run(self):
        Tools.setup()
        pr = self.project()
        r = run([Tools.ralon, "guard"], ME, pr.proj, pr.env())
        self.assertEqual(r.rc, 2, r)
        self.assertIn("ralon run", r.stderr, r)

    def test_capabilities_dropped_and_no_new_privs(self):
        # The agent's capability state, read from outside while it runs
        # (/proc/PID/status of the agent's process, found from ralon's pid)
        # and, for the securebits, which /proc does not show, by the agent
        # itself (prctl PR_GET_SECUREBITS). Differences are named as libcap
        # names them (capsh --decode).
        token = "ralon-enf-capprobe"
        probe = ("python3 -c 'import ctypes; print(\"securebits\", "
                 "ctypes.CDLL(None).prctl(%d, 0, 0, 0, 0))'; echo ready; read line; : %s"
                 % (PR_GET_SECUREBITS, token))
        # With `ambient`, ralon is started holding CAP_NET_BIND_SERVICE in
        # its inheritable and ambient sets (capsh, as root, which switches
        # to the user itself), so the ambient set has something to clear.
        capsh = shutil.which("capsh", path=SAFE_PATH)
        raise_amb = ["--inh=cap_net_bind_service", "--addamb=cap_net_bind_service"]
        for user, ambient in itertools.product(self.users(), (False, True)):
            if ambient and (capsh is None or not IS_ROOT):
                continue
            prefix, preexec = [], _preexec(USERS[user], False)
            if ambient:
                prefix = [capsh] + raise_amb[:1] + (
                    ["--keep=1", "--user=nobody"] if user == "nobody" else []) + raise_amb[1:]
                pre = subprocess.run(prefix + ["--", "-c", "grep CapAmb /proc/self/status"],
                                     capture_output=True, text=True)
                self.assertEqual(int(pre.stdout.split()[-1], 16), 1 << 10, pre)
                prefix += ["--", "-c", 'exec "$0" "$@"']
                preexec = None
            for backend in self.any_backend(user):
                with self.subTest(backend=backend, user=user, ambient=ambient):
                    pr = self.project(user)
                    p = subprocess.Popen(prefix + ralon_run(backend, probe), cwd=pr.proj,
                                         env=pr.env(), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, errors="replace", preexec_fn=preexec)
                    try:
                        secbits = None
                        for line in p.stdout:
                            if line.startswith("securebits "):
                                secbits = int(line.split()[1])
                            if line == "ready\n":
                                break
                        self.assertIsNotNone(secbits, "the probe never ran: rc %r, %s"
                                             % (p.poll(), p.stderr.read() if p.poll() else ""))
                        agent = agent_process(p.pid, token)
                        self.assertIsNotNone(agent, "no process of ralon's runs the probe")
                        with open("/proc/%d/status" % agent, encoding="utf-8") as f:
                            fields = dict(line.split(":", 1) for line in f if ":" in line)
                    finally:
                        _, err = p.communicate(input="\n", timeout=TIMEOUT)
                    self.assertEqual(p.returncode, 0, err)
                    expected = dict.fromkeys(CAP_SETS, 0)
                    expected_bits = LOCKED_SECUREBITS
                    if backend == "landlock" and user != "root":
                        # Emptying the bounding set and setting securebits
                        # need CAP_SETPCAP, which an ordinary user under
                        # Landlock does not have: the bounding set stays the
                        # caller's (no_new_privs keeps execve from adding
                        # capabilities), and no securebit is set.
                        expected["CapBnd"] = own_capabilities("CapBnd")
                        expected_bits = 0
                    for name in CAP_SETS:
                        got = int(fields[name].strip(), 16)
                        self.assertEqual(got, expected[name], "%s of the agent is %s, expected %s"
                                         % (name, cap_names(got), cap_names(expected[name])))
                    self.assertEqual(secbits, expected_bits, "securebits %s, expected %s"
                                     % (securebit_names(secbits), securebit_names(expected_bits)))
                    self.assertEqual(fields["NoNewPrivs"].strip(), "1", fields)
                    self.assertEqual(fields.get("Seccomp", "").strip(), "2", fields)

    def test_capabilities_without_libcap_fail_closed(self):
        # libcap is loaded by `run` when it drops the command's
        # capabilities: one that cannot be loaded (here an empty file found
        # first through LD_LIBRARY_PATH) stops ralon before the command runs.
        for backend in self.any_backend():
            with self.subTest(backend=backend):
                pr = self.project()
                fake = os.path.join(pr.tmp, "fakelib")
                os.makedirs(fake)
                open(os.path.join(fake, "libcap.so.2"), "w").close()
                env = dict(pr.env(), LD_LIBRARY_PATH=fake)
                marker = os.path.join(pr.tmp, "ran")
                r = run(ralon_run(backend, "echo ran > \"$TMPDIR/ran\""), ME, pr.proj, env)
                self.assertEqual(r.rc, 2, r)
                self.assertIn("ralon: cannot load libcap.so.2, with which ralon drops the "
                              "command's capabilities: ", r.stderr, r)
                self.assertFalse(os.path.exists(marker), r)

    def test_signal_dispositions_pass_through(self):
        # The command gets the signal dispositions and mask ralon was
        # given, as if started directly: a parent that ignores SIGPIPE
        # (nohup, many daemons) or SIGHUP, and one that ignores nothing.
        probe = "grep -E '^Sig(Ign|Blk):' /proc/self/status"
        for user in self.users():
            for backend in self.any_backend(user):
                for ignored in ((), (signal.SIGPIPE, signal.SIGHUP)):
                    with self.subTest(backend=backend, user=user, ignored=ignored):
                        pr = self.project(user)
                        drop = _preexec(USERS[user], False)

                        def preexec(ignored=ignored, drop=drop):
                            drop()
                            for sig in (signal.SIGPIPE, signal.SIGHUP):
                                signal.signal(sig, signal.SIG_IGN if sig in ignored
                                              else signal.SIG_DFL)
                        outs = []
                        for argv in (["sh", "-c", probe], ralon_run(backend, probe)):
                            p = subprocess.run(argv, cwd=pr.proj, env=pr.env(),
                                               stdin=subprocess.DEVNULL, capture_output=True,
                                               text=True, preexec_fn=preexec, timeout=TIMEOUT)
                            self.assertEqual(p.returncode, 0, p)
                            outs.append(p.stdout)
                        ign = int(outs[0].split("SigIgn:")[1].split()[0], 16)
                        for sig in (signal.SIGPIPE, signal.SIGHUP):
                            self.assertEqual(bool(ign & (1 << (sig - 1))), sig in ignored, outs)
                        self.assertEqual(outs[1], outs[0])

    def test_no_signal_pending_from_the_probe(self):
        # auto tries the mount backend in a child first. Where the caller
        # blocks SIGCHLD, that child's exit must not leave one pending for
        # the command (pending signals survive execve): the command's
        # pending and blocked sets are those of a direct start.
        if not (self.available("mount", "root") or self.available("landlock", "root")):
            self.skipTest("no backend is available")
        probe = ["grep", "-E", "^(ShdPnd|SigPnd|SigBlk):", "/proc/self/status"]
        for user in self.users():
            with self.subTest(user=user):
                pr = self.project(user)
                drop = _preexec(USERS[user], False)

                def preexec(drop=drop):
                    drop()
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
                outs = []
                for argv in (probe, [Tools.ralon, "run", "-q", "--"] + probe):
                    p = subprocess.run(argv, cwd=pr.proj, env=pr.env(),
                                       stdin=subprocess.DEVNULL, capture_output=True,
                                       text=True, preexec_fn=preexec, timeout=TIMEOUT)
                    self.assertEqual(p.returncode, 0, p)
                    outs.append(p.stdout)
                blocked = int(outs[0].split("SigBlk:")[1].split()[0], 16)
                self.assertTrue(blocked & (1 << (signal.SIGCHLD - 1)), outs)
                self.assertEqual(outs[1], outs[0])

    def test_no_descriptor_leaks_into_the_command(self):
        for user in self.users():
            for backend in self.any_backend(user):
                with self.subTest(backend=backend, user=user):
                    pr = self.project(user)
                    # ls opens /proc/self/fd as descriptor 3 to list it.
                    r = run(ralon_run(backend, "ls -1 /proc/self/fd"), user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 0, r)
                    self.assertEqual(sorted(r.stdout.split()), ["0", "1", "2", "3"], r)


class TestNamelessDescriptor(Base):
    """A descriptor open for writing on a file below a protected directory
    whose name is longer than PATH_MAX, so /proc/self/fd cannot name it:
    refused (it may lie below the protected directory), where a file in a
    directory ralon can name is judged by where it lies."""

    def deep_file(self, pr, user, top):
        fd = os.open(os.path.join(pr.proj, top), os.O_RDONLY | os.O_DIRECTORY)
        for _ in range(21):  # 21 x 201 bytes: past PATH_MAX
            os.mkdir("d" * 200, dir_fd=fd)
            nfd = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        w = os.open("f.txt", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666, dir_fd=fd)
        os.write(w, b"deep\n")
        if USERS[user] is not None:
            os.fchown(w, USERS[user], USERS[user])
        os.close(fd)
        return w

    def run_with(self, w, user, pr, backend):
        saved = os.dup(7) if self.fd_open(7) else None
        os.dup2(w, 7)
        try:
            p = subprocess.run(ralon_run(backend, "echo forged >&7"), cwd=pr.proj, env=pr.env(),
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               pass_fds=(7,), preexec_fn=_preexec(USERS[user], False),
                               timeout=TIMEOUT)
        finally:
            if saved is not None:
                os.dup2(saved, 7)
                os.close(saved)
            else:
                os.close(7)
        return Result(p.returncode, p.stdout, p.stderr)

    @staticmethod
    def fd_open(fd):
        try:
            os.fstat(fd)
            return True
        except OSError:
            return False

    def test_refused_below_a_protected_directory(self):
        for user in self.users():
            for backend in self.any_backend(user):
                with self.subTest(backend=backend, user=user):
                    pr = self.project(user)
                    w = self.deep_file(pr, user, "tests/golden")
                    try:
                        r = self.run_with(w, user, pr, backend)
                        self.assertEqual(r.rc, 2, r)
                        self.assertRegex(r.stderr, r"descriptor 7 is open for writing on a file "
                                         r"whose name cannot be read, on the file system of the "
                                         r"protected /", r)
                        self.assertEqual(os.pread(w, 100, 0), b"deep\n")
                    finally:
                        os.close(w)

    def test_allowed_where_nothing_is_protected_below(self):
        # The same descriptor with no protected directory in the plan:
        # nothing it could lie below.
        for user in self.users():
            for backend in self.any_backend(user):
                with self.subTest(backend=backend, user=user):
                    pr = self.project(user)
                    with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                        f.write("protect: [conf/secret.yml, Cargo.lock]\n")
                    w = self.deep_file(pr, user, "src")
                    try:
                        r = self.run_with(w, user, pr, backend)
                        self.assertEqual(r.rc, 0, r)
                        self.assertEqual(os.pread(w, 100, 0), b"deep\nforged\n")
                    finally:
                        os.close(w)


class TestLiteralThroughLink(Base):
    """The table's literal_through_symlinked_dir row, seen from outside:
    the file a literal pattern reaches through a symbolic link keeps its
    content and inode, and the link its target; a file beside it stays
    writable."""

    def test_file_kept_beside_writable(self):
        for user in self.users():
            for backend in self.any_backend(user):
                with self.subTest(backend=backend, user=user):
                    pr = self.project(user)
                    r = run(["sh", "-c", "mkdir src/real && echo key > src/real/key.pem"
                             " && echo other > src/real/other.txt && ln -s real src/lnk"
                             " && echo 'protect: [src/lnk/key.pem]' > agent.lock"],
                            user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 0, r)
                    key = os.path.join(pr.proj, "src/real/key.pem")
                    before = os.stat(key)
                    r = run(ralon_run(backend, "echo forged >> src/lnk/key.pem;"
                                               " mv src/lnk/key.pem src/lnk/gone;"
                                               " echo more >> src/lnk/other.txt"),
                            user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 0, r)  # the last command's status
                    self.assertTrue(os.path.lexists(key), "moved away: %r" % r)
                    after = os.stat(key)
                    with open(key, encoding="utf-8") as f:
                        self.assertEqual(f.read(), "key\n", r)
                    self.assertEqual((after.st_ino, after.st_size, after.st_mtime_ns),
                                     (before.st_ino, before.st_size, before.st_mtime_ns), r)
                    self.assertEqual(os.readlink(os.path.join(pr.proj, "src/lnk")), "real")
                    with open(os.path.join(pr.proj, "src/real/other.txt"),
                              encoding="utf-8") as f:
                        self.assertEqual(f.read(), "other\nmore\n", r)


class TestChainDirectories(Base):
    """Landlock: directories on the way to a protected path accept no new
    entries (documented); the mount backend has no such limit."""

    def _create_in_root(self, backend, check):
        for user in self.users():
            if not self.available(backend, user):
                self.skipTest("the %s backend is not available" % backend)
            with self.subTest(user=user):
                pr = self.project(user)
                before = snapshot(pr)
                r = run(ralon_run(backend, "echo '%s' >&2; echo hi > new-in-root.txt" % STARTED),
                        user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertUnchanged(before, pr, repr(r))
                check(r, os.path.join(pr.proj, "new-in-root.txt"))

    def test_mount_project_root_accepts_new_entries(self):
        def check(r, path):
            self.assertEqual(r.rc, 0, r)
            self.assertEqual(read_text(path), "hi\n")
        self._create_in_root("mount", check)

    def test_landlock_project_root_accepts_no_new_entries(self):
        def check(r, path):
            self.assertNotEqual(r.rc, 0, r)
            self.assertFalse(os.path.exists(path), "the file was created")
        self._create_in_root("landlock", check)


class TestGitWorktree(Base):
    """A project that is a git worktree: .git is a file naming a git
    directory outside it, whose hooks and configuration no policy of the
    project can protect. Pinned: an agent plants a hook there under either
    backend, and ralon says so (a weakening finding, refused by --strict);
    the .git file itself, when the policy names it, cannot be pointed
    elsewhere."""

    HOOK = "#!/bin/sh\necho planted\n"

    def worktree(self, user):
        pr = self.project(user)
        wt = os.path.join(pr.code, "wt")
        r = run(["git", "worktree", "add", "-q", "-b", "wt", wt], user, pr.proj,
                git_env(pr.home))
        self.assertEqual(r.rc, 0, r)
        with open(os.path.join(wt, "agent.lock"), "w", encoding="utf-8") as f:
            f.write(POLICY.replace("protect: [", "protect: [.git, "))
        if USERS[user] is not None:
            os.lchown(os.path.join(wt, "agent.lock"), USERS[user], USERS[user])
        return pr, wt

    def test_worktree_hooks_are_outside_and_said_to_be(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr, wt = self.worktree(user)
                common = os.path.realpath(os.path.join(pr.proj, ".git"))
                dot_git = read_text(os.path.join(wt, ".git"))
                r = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--json", "--",
                         "true"], user, wt, pr.env())
                self.assertEqual(r.rc, 0, r)
                found = [f for f in json.loads(r.stdout)["findings"]
                         if f["kind"] == "git-dir-outside-project"]
                self.assertEqual(len(found), 1, r)
                self.assertEqual(found[0]["subject"], ".git", r)
                self.assertIn(common, found[0]["message"], r)
                # Not the directory advice: .git is a file, and git works.
                r = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--", "true"],
                        user, wt, pr.env())
                self.assertNotRegex(r.stderr, r"(?m)^ralon: warning: \.git accepts", r)

                hook = os.path.join(common, "hooks", "pre-commit")
                r = run(ralon_run(backend, "echo '%s' >&2; printf '%s' > "
                                  "\"$(git rev-parse --git-common-dir)/hooks/pre-commit\"; "
                                  "echo 'gitdir: /tmp' > .git"
                                  % (STARTED, self.HOOK.replace("\n", "\\n"))),
                        user, wt, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertRegex(r.stderr, DENIAL, r)
                # The gap: the hook is in the repository's own .git.
                self.assertEqual(read_text(hook), self.HOOK)
                # The pointer is protected.
                self.assertEqual(read_text(os.path.join(wt, ".git")), dot_git)
                r = run(ralon_run(backend, "true", extra=["--strict"]), user, wt, pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertRegex(r.stderr, r"\Aralon: \.git is a file .*%s.*\(refusing to run "
                                 r"with --strict\)\n\Z" % re.escape(common), r)


    def test_linked_worktrees_commondir_protected_as_init_writes(self):
        # In the main repository, .git/worktrees/wt/commondir names the
        # repository whose hooks and configuration git runs in the linked
        # worktree: with init's pattern it cannot be pointed elsewhere.
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr, wt = self.worktree(user)
                policy = POLICY.replace("protect: [", "protect: [.git/worktrees/*/commondir, ")
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(policy)
                commondir = os.path.join(pr.proj, ".git", "worktrees", "wt", "commondir")
                before = read_text(commondir)
                r = run(ralon_run(backend, "echo '%s' >&2; echo \"$HOME\" > "
                                  ".git/worktrees/wt/commondir" % STARTED),
                        user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertNotEqual(r.rc, 0, r)
                self.assertRegex(r.stderr, DENIAL, r)
                self.assertEqual(read_text(commondir), before)

    def test_planted_commondir_in_the_main_repository(self):
        # git reads .git/commondir in any repository, and takes hooks and
        # configuration from where it points. Under Landlock, .git is on
        # the chain (its hooks and config are protected): the file cannot
        # be made. The mount backend cannot keep a missing file from being
        # made (the documented gap): pinned here, and the next ralon says so.
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(POLICY.replace("protect: [", "protect: [.git/hooks, .git/config, "))
                planted = os.path.join(pr.proj, ".git", "commondir")
                r = run(ralon_run(backend, "echo '%s' >&2; echo \"$HOME\" > .git/commondir"
                                  % STARTED), user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                if backend == "landlock":
                    self.assertNotEqual(r.rc, 0, r)
                    self.assertRegex(r.stderr, DENIAL, r)
                    self.assertFalse(os.path.lexists(planted))
                    continue
                self.assertEqual(r.rc, 0, r)
                self.assertEqual(read_text(planted), pr.home + "\n")
                r = run([Tools.ralon, "status"], user, pr.proj, pr.env())
                self.assertRegex(r.stderr, r"(?m)^ralon: warning: \.git/commondir sends git "
                                 r"elsewhere: .*%s" % re.escape(os.path.realpath(pr.home)), r)
                r = run(ralon_run(backend, "true", extra=["--strict"]), user, pr.proj,
                        pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertIn(".git/commondir", r.stderr, r)


class TestNextSession(Base):
    """What one session leaves behind must not weaken the next. An agent
    can change the mode of unprotected directories (neither backend
    governs that of the project root), so discovery must not walk past a
    directory it cannot search: the policy may be there."""

    def nobody_backends(self, why):
        """The backends the unprivileged user can use; skips without one."""
        if "nobody" not in USERS:
            self.skipTest("needs an unprivileged user (%s)" % why)
        return [b for b in BACKENDS if self.available(b, "nobody")]

    def test_unsearchable_root_is_not_passed_by(self):
        for backend in self.nobody_backends("root searches any directory"):
            with self.subTest(backend=backend):
                pr = self.project("nobody")
                before = snapshot(pr)
                # What an agent could do in a previous session.
                r = run(["chmod", "0644", pr.proj], "nobody", pr.base, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.addCleanup(os.chmod, pr.proj, 0o755)
                marker = os.path.join(pr.base, "ran")
                argv = [Tools.ralon, "run", "--if-policy", "--backend", backend, "--",
                        "sh", "-c", 'echo forged >> Cargo.lock; echo ran > "$BASE/ran"']
                # The shell's working directory is still the project.
                r = run(argv, "nobody", pr.proj, pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertIn("ralon: cannot tell whether %s/agent.lock exists: "
                              "Permission denied" % pr.proj, r.stderr)
                self.assertFalse(os.path.exists(marker), "the command ran: %r" % r)
                os.chmod(pr.proj, 0o755)
                self.assertUnchanged(before, pr, repr(r))

    def test_literal_through_a_link_to_an_unsearchable_directory(self):
        # link -> locked (mode 000): the literal link/key cannot be looked
        # up by the user, and locked is protected whole. The run starts
        # (no false "appeared": the mount backend's user namespace could
        # look it up, the command cannot), and key stays as it was.
        for backend in self.nobody_backends("root searches any directory"):
            with self.subTest(backend=backend):
                pr = self.project("nobody")
                locked = os.path.join(pr.proj, "locked")
                os.makedirs(locked)
                with open(os.path.join(locked, "key"), "w", encoding="utf-8") as f:
                    f.write("k\n")
                os.symlink("locked", os.path.join(pr.proj, "link"))
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write("protect: [link/key]\n")
                for q in (locked, os.path.join(locked, "key"), os.path.join(pr.proj, "link")):
                    os.lchown(q, NOBODY, NOBODY)
                key = os.lstat(os.path.join(locked, "key"))
                os.chmod(locked, 0)
                self.addCleanup(os.chmod, locked, 0o755)
                r = run(ralon_run(backend, "echo '%s' >&2; chmod 755 locked; "
                                  "echo forged >> link/key" % STARTED),
                        "nobody", pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertNotEqual(r.rc, 0, r)
                self.assertRegex(r.stderr, DENIAL, r)
                # From outside: the same file, content, mode and links.
                os.chmod(locked, 0o755)
                now = os.lstat(os.path.join(locked, "key"))
                self.assertEqual((now.st_ino, now.st_mode, now.st_nlink, now.st_mtime_ns),
                                 (key.st_ino, key.st_mode, key.st_nlink, key.st_mtime_ns), r)
                self.assertEqual(read_text(os.path.join(locked, "key")), "k\n", r)
                self.assertEqual(os.listdir(locked), ["key"], r)


    def test_directory_replaced_by_a_link_does_not_lose_the_policy(self):
        # In one session an agent moves an unprotected directory out of the
        # project, puts a link in its place, and plants a policy that
        # protects nothing beside the moved directory. The user later
        # `cd`s into it: discovery from the real path finds the planted
        # policy (or none), the way the user came finds the project's. The
        # next run refuses, rather than protect nothing (--if-policy: run
        # the command unrestricted).
        for backend, user in self.each_backend_and_user():
            for planted in (False, True):
                with self.subTest(backend=backend, user=user, planted=planted):
                    pr = self.project(user)
                    lib = os.path.join(pr.proj, "src", "lib")
                    os.makedirs(lib)
                    if USERS[user] is not None:
                        os.chown(lib, USERS[user], USERS[user])
                    agent = ('mkdir -p "$HOME/ev" && mv src/lib "$HOME/ev/lib" && '
                             'ln -s "$HOME/ev/lib" src/lib')
                    if planted:
                        agent += " && printf 'protect: []\\n' > \"$HOME/ev/agent.lock\""
                    r = run(ralon_run(backend, agent), user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 0, r)
                    self.assertTrue(os.path.islink(lib), r)
                    before = snapshot(pr)
                    marker = os.path.join(pr.base, "ran")
                    next_run = ('cd src/lib && export PWD && exec "$RALON" run --if-policy '
                                '--backend %s -- sh -c \'echo forged >> "$0"; echo ran > "$1"\' '
                                '"%s" "%s"' % (backend, os.path.join(pr.proj, "Cargo.lock"),
                                               marker))
                    r = run(["sh", "-c", next_run], user, pr.proj, pr.env())
                    self.assertEqual(r.rc, 2, r)
                    self.assertRegex(r.stderr, r"\Aralon: the working directory %s is reached "
                                     r"through the symbolic link %s: along that way the policy "
                                     r"is %s, .*\n\Z" % (re.escape(lib), re.escape(lib),
                                                          re.escape(os.path.join(
                                                              pr.proj, "agent.lock"))), r)
                    self.assertFalse(os.path.exists(marker), "the command ran: %r" % r)
                    self.assertUnchanged(before, pr, repr(r))


    def test_unreadable_directory_is_protected_whole(self):
        # Made unreadable in one session, a directory's protected files
        # were not found by the next: unbound by the mount backend, and
        # (named by a glob) granted by Landlock. It is protected whole.
        policies = {"literal": POLICY,
                    "glob": POLICY.replace("conf/secret.yml", "'conf/*.yml'")}
        for backend in self.nobody_backends("root reads any directory"):
            for kind, policy in policies.items():
                with self.subTest(backend=backend, policy=kind):
                    pr = self.project("nobody")
                    lock = os.path.join(pr.proj, "agent.lock")
                    with open(lock, "w", encoding="utf-8") as f:
                        f.write(policy)
                    conf = os.path.join(pr.proj, "conf")
                    r = run(["chmod", "000", conf], "nobody", pr.base, pr.env())
                    self.assertEqual(r.rc, 0, r)
                    self.addCleanup(os.chmod, conf, 0o755)
                    before = snapshot(pr)
                    r = run(ralon_run(backend, "echo '%s' >&2; chmod 755 conf; "
                                      "echo forged >> conf/secret.yml; "
                                      "echo new > src/new.c" % STARTED, quiet=False),
                            "nobody", pr.proj, pr.env())
                    self.assertIn(STARTED, r.stderr, r)
                    self.assertIn("ralon: warning: could not be read in full, so what is "
                                  "protected there may be missed: conf\n", r.stderr)
                    self.assertEqual(read_text(os.path.join(pr.proj, "src", "new.c")), "new\n",
                                     "unprotected work was refused: %r" % r)
                    # Its mode: read-only as a whole on the mount backend;
                    # Landlock does not govern chmod (documented).
                    mode = stat.S_IMODE(os.stat(conf).st_mode)
                    self.assertEqual(mode, 0 if backend == "mount" else 0o755, r)
                    os.chmod(conf, 0)  # as it was before, for the comparison
                    self.assertUnchanged(before, pr, repr(r))
                    self.assertEqual(read_text(os.path.join(conf, "secret.yml")),
                                     FILES["conf/secret.yml"], repr(r))


# Creates $1/ready, swaps names in a tight loop until $1/stop exists, then
# puts them back as they were and creates $1/done. Modes: hide A (rename A to .A.away and
# back), exchange A B (renameat2 RENAME_EXCHANGE). It dies with the test
# (PR_SET_PDEATHSIG): one whose test was killed must not spin on.
RACER = r"""
import ctypes, os, signal, sys
base, mode, a = sys.argv[1], sys.argv[2], sys.argv[3]
PR_SET_PDEATHSIG = 1
ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
if os.getppid() == 1:
    sys.exit(1)
stop, done = os.path.join(base, "stop"), os.path.join(base, "done")
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def exchange(x, y):
    libc.renameat2(AT_FDCWD, x.encode(), AT_FDCWD, y.encode(), RENAME_EXCHANGE)
away = os.path.join(os.path.dirname(a), "." + os.path.basename(a) + ".away")
swapped = False
open(os.path.join(base, "ready"), "w").close()
while not os.path.exists(stop):
    for _ in range(64):
        if mode == "hide":
            os.rename(a, away)
            os.rename(away, a)
        else:
            exchange(a, sys.argv[4])
            swapped = not swapped
if swapped:
    exchange(a, sys.argv[4])
open(done, "w").close()
"""


class TestRacedSetup(Base):
    """A process outside the sandbox (one an earlier session left behind,
    or an editor saving agent.lock) renames protected paths while ralon
    reads the policy, scans and applies the restriction. ralon may refuse
    (exit 2), but when the command starts, what the policy protects is
    protected, or (a path missing when planned and put back after) ralon
    said it could not protect it. Probabilistic: each case runs many times; before the checks
    of the policy file's identity and of paths missing when planned, about
    one run in five of these started with the path writable."""

    RUNS = 25

    def race(self, backend, mode, names, protected, may_be_missing=False):
        pr = self.project(ME)
        racer = os.path.join(pr.base, "racer.py")
        with open(racer, "w", encoding="utf-8") as f:
            f.write(RACER)
        targets = [os.path.join(pr.proj, n) for n in names]
        started = 0
        for _ in range(self.RUNS):
            # In TMPDIR: Landlock keeps the directories on the way to the
            # project from taking new entries.
            for n in ("stop", "done", "ready"):
                if os.path.exists(os.path.join(pr.tmp, n)):
                    os.unlink(os.path.join(pr.tmp, n))
            before = {p: (read_text(p), os.lstat(p).st_ino)
                      for p in (os.path.join(pr.proj, q) for q in protected)}
            proc = subprocess.Popen(["python3", racer, pr.tmp, mode] + targets)
            try:
                deadline = time.monotonic() + 30
                while not os.path.exists(os.path.join(pr.tmp, "ready")):
                    self.assertLess(time.monotonic(), deadline, "the racer did not start")
                    time.sleep(0.001)
                cmd = ('touch "$TMPDIR/stop"; while [ ! -e "$TMPDIR/done" ]; do sleep 0.01; done; '
                       "echo '%s' >&2; " % STARTED +
                       "; ".join("echo forged >> %s" % q for q in protected) + "; true")
                r = run(ralon_run(backend, cmd, quiet=False), ME, pr.proj, pr.env(), timeout=60)
            finally:
                open(os.path.join(pr.tmp, "stop"), "w").close()
                proc.wait(timeout=TIMEOUT)
            self.assertEqual(proc.returncode, 0)
            if STARTED in r.stderr:
                started += 1
            else:
                # Refused while starting, or (mount backend) stopped by
                # the guard for a change after the paths were protected.
                self.assertIn(r.rc, (2, 125) if backend == "mount" else (2,), r)
            after = {p: (read_text(p), os.lstat(p).st_ino) for p in before}
            if after != before and may_be_missing:
                # Missing when planned, and put back once the restriction
                # held: nothing can protect it, but ralon must have said so.
                for q in protected:
                    self.assertRegex(r.stderr, r"(?m)^ralon: warning: not locked, as nothing on "
                                     r"disk matches: .*`%s`" % re.escape(q),
                                  "the command started with %s writable, unannounced: %r"
                                  % (q, r))
                continue
            self.assertEqual(after, before, "the command started with a protected path "
                             "writable: %r" % r)
        return started

    def test_policy_file_renamed_during_setup(self):
        for backend in self.any_backend():
            for mode, names in (("hide", ["agent.lock"]),
                                ("exchange", ["agent.lock", "README.md"])):
                with self.subTest(backend=backend, mode=mode):
                    self.race(backend, mode, names, ["agent.lock"])

    def test_protected_file_hidden_during_setup(self):
        for backend in self.any_backend():
            with self.subTest(backend=backend):
                self.race(backend, "hide", ["conf/secret.yml"], ["conf/secret.yml"], True)


class TestPolicyNotAFile(Base):
    """A distribution's wrapper runs `ralon run --if-policy -- AGENT`: an
    agent.lock that is no regular file (a FIFO, a directory, a link that
    leads nowhere) must not count as "no policy here" and start the agent
    unprotected, nor as a reason to use the policy further up. Verified
    from outside: the marker the command would write does not exist, and
    ralon has not waited on the FIFO. Before, the command ran."""

    KINDS = (("FIFO", "a FIFO", lambda p: os.mkfifo(p)),
             ("directory", "a directory", lambda p: os.mkdir(p)),
             ("dangling link", "a symbolic link that leads nowhere (to lock.yml)",
              lambda p: os.symlink("lock.yml", p)))

    def test_if_policy_does_not_start_the_command(self):
        for user in self.users():
            for (name, kind, make), above in itertools.product(self.KINDS, (False, True)):
                with self.subTest(user=user, kind=name, policy_above=above):
                    pr = self.project(user)
                    if above:
                        # A valid policy, which must not be used instead.
                        with open(os.path.join(pr.code, "agent.lock"), "w") as f:
                            f.write("protect: [nothing]\n")
                    lock = os.path.join(pr.proj, "agent.lock")
                    os.unlink(lock)
                    make(lock)
                    if USERS[user] is not None:
                        os.lchown(lock, USERS[user], USERS[user])
                    marker = os.path.join(pr.base, "ran")
                    for backend in ([], ["--backend", "landlock"], ["--backend", "mount"]):
                        argv = ([Tools.ralon, "run", "--if-policy"] + backend +
                                ["--", "sh", "-c", 'echo ran > "$BASE/ran"'])
                        r = run(argv, user, os.path.join(pr.proj, "src"), pr.env(), timeout=30)
                        self.assertEqual(r.rc, 2, r)
                        self.assertEqual(r.stderr, "ralon: %s is %s; a policy must be a regular "
                                         "file. Which paths are protected here is unknown, so "
                                         "ralon refuses to go on (make it the policy it should "
                                         "be, or remove it and run `ralon init`)\n"
                                         % (lock, kind), r)
                        self.assertFalse(os.path.lexists(marker), r)


def exchange(a, b):
    """renameat2(a, b, RENAME_EXCHANGE), as an outside racer does it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                               ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    if libc.renameat2(at_fdcwd, a.encode(), at_fdcwd, b.encode(), rename_exchange) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


class TestLandlockGrantIdentity(Base):
    """A process outside the sandbox exchanges a protected directory
    (conf/, `protect: [conf]`) with a sibling the carve-out grants (src/)
    while `ralon run --backend landlock` starts. A grant opened by name
    after the exchange puts the write rule on conf/. Each rule must land on
    the object the plan listed, and a rename of a name the plan decided on
    while the rules are made must stop the start: refused (exit 2, naming
    the path), the command never runs.

    The moment is made certain rather than hoped for: strace holds ralon
    for a while right after it made the Landlock ruleset (the plan is
    complete, no rule added yet), and the racer exchanges then. The
    command asks for both directories to be put back before it writes
    conf/secret.yml, which from outside must never change. Before the
    grants were checked, the exchange after the plan won every time (and a
    free-running racer, without strace, in about half of the runs)."""

    DELAY_US = 300000

    def start_held(self, pr, user, during):
        """Runs the command under strace, calls during() while ralon is held
        after making its ruleset, puts conf/ and src/ back when the command
        asks (or when ralon has refused), and returns the result."""
        strace = shutil.which("strace", path=SAFE_PATH)
        if strace is None:
            self.skipTest("needs strace to hold ralon at the moment of the race")
        conf, src = os.path.join(pr.proj, "conf"), os.path.join(pr.proj, "src")
        log = os.path.join(pr.tmp, "strace.log")
        cmd = ('touch "$TMPDIR/pause"; while [ ! -e "$TMPDIR/paused" ]; do sleep 0.01; done; '
               "echo '%s' >&2; echo forged >> conf/secret.yml; true" % STARTED)
        argv = [strace, "-f", "-qq", "-o", log, "-e", "trace=landlock_create_ruleset", "-e",
                "inject=landlock_create_ruleset:delay_exit=%d" % self.DELAY_US,
                Tools.ralon, "run", "--backend", "landlock", "--", "sh", "-c", cmd]
        # A sanitized build's leak checker cannot work under ptrace.
        env = dict(pr.env(), ASAN_OPTIONS="detect_leaks=0")
        p = subprocess.Popen(argv, cwd=pr.proj, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", preexec_fn=_preexec(USERS[user], False))
        swapped = False
        try:
            deadline = time.monotonic() + 60
            while True:
                self.assertLess(time.monotonic(), deadline, "ralon never made its ruleset")
                self.assertIsNone(p.poll(), "ralon ended before it made its ruleset")
                if os.path.exists(log) and "handled_access_fs" in read_text(log):
                    break
                time.sleep(0.001)
            swapped = during(conf, src)
            while p.poll() is None and not os.path.exists(os.path.join(pr.tmp, "pause")):
                self.assertLess(time.monotonic(), deadline, "neither refused nor started")
                time.sleep(0.001)
        finally:
            if swapped:
                exchange(conf, src)
            open(os.path.join(pr.tmp, "paused"), "w").close()
            out, err = p.communicate(timeout=TIMEOUT)
        return Result(p.returncode, out, err)

    def check(self, user, during, refusal):
        pr = self.project(user)
        lock = os.path.join(pr.proj, "agent.lock")
        with open(lock, "w", encoding="utf-8") as f:
            f.write("protect: [conf]\n")
        if USERS[user] is not None:
            os.lchown(lock, USERS[user], USERS[user])
        secret = os.path.join(pr.proj, "conf", "secret.yml")
        before = (read_text(secret), os.lstat(secret).st_ino)
        r = self.start_held(pr, user, during)
        self.assertEqual((read_text(secret), os.lstat(secret).st_ino), before,
                         "the command started with conf/ writable: %r" % r)
        self.assertNotIn(STARTED, r.stderr, r)
        self.assertEqual(r.rc, 2, r)
        self.assertRegex(r.stderr, r"(?m)^ralon: %s%s (changed|became the protected \S+) "
                         r"while ralon started; refusing to run$"
                         % (re.escape(pr.proj), "/" + refusal if refusal else ""), r)

    def each_user(self):
        users = [u for u in self.users() if self.available("landlock", u)]
        if not users:
            self.skipTest("no Landlock here")
        return users

    def test_exchanged_after_the_plan(self):
        # The plan saw src/ as src/; by the time its rule is made, src
        # names conf/. The rule must not land there.
        def during(conf, src):
            exchange(conf, src)
            return True
        for user in self.each_user():
            with self.subTest(user=user):
                self.check(user, during, "src")

    def test_exchanged_and_back_while_the_rules_are_made(self):
        # Each name leads to the object the plan listed again, but a racer
        # that keeps exchanging may have been caught in the other state
        # when the plan was made: a change of a directory of the project on
        # the way refuses (its ctime, looked at when it was listed).
        def during(conf, src):
            exchange(conf, src)
            exchange(conf, src)
            return False
        for user in self.each_user():
            with self.subTest(user=user):
                self.check(user, during, None)


class TestPlantedPolicy(Base):
    """An agent.lock planted in a writable directory governs a session
    started there (the nearest wins, agent.lock(5)); ralon says so, and
    --strict refuses."""

    def test_planted_policy_is_named_and_refused_with_strict(self):
        # nobody and the mount backend: no other finding that --strict
        # refuses (running as root, Landlock's metadata gap) comes first.
        user = "nobody"
        if not self.available("mount", user):
            self.skipTest("needs the mount backend for an unprivileged user")
        pr = self.project(user)
        r = run(ralon_run("mount", "printf 'protect: [main.c]\\n' > src/agent.lock"), user,
                pr.proj, pr.env())
        self.assertEqual(r.rc, 0, r)
        src = os.path.join(pr.proj, "src")
        outer = ("ralon: warning: only the nearest agent.lock applies, not: %s/agent.lock\n"
                 % pr.proj)
        r = run(ralon_run("mount", "echo '%s' >&2" % STARTED, quiet=False), user, src, pr.env())
        self.assertIn(STARTED, r.stderr, r)
        self.assertIn(outer, r.stderr, r)
        before = snapshot(pr)
        r = run(ralon_run("mount", "echo '%s' >&2; echo forged >> ../Cargo.lock" % STARTED,
                          extra=["--strict"]), user, src, pr.env())
        self.assertEqual(r.rc, 2, r)
        self.assertNotIn(STARTED, r.stderr, r)
        self.assertRegex(r.stderr, r"\Aralon: %s/agent.lock also governs this directory.*"
                         r"\(refusing to run with --strict\)\n\Z" % re.escape(pr.proj))
        self.assertUnchanged(before, pr, repr(r))


class TestSymlinkedPolicy(Base):
    """agent.lock as a symbolic link to the policy elsewhere in the project:
    the mount backend can bind only what it leads to, and the link in the
    writable root could be replaced by a policy of the agent's own for the
    next session (ATTACKS #35 with the policy itself). The mount backend
    refuses to start; Landlock, whose root accepts no new entries and loses
    none, keeps the link."""

    def test_symlinked_policy(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                lock, real = os.path.join(pr.proj, "agent.lock"), os.path.join(pr.proj, "lock.yml")
                os.rename(lock, real)
                os.symlink("lock.yml", lock)
                if USERS[user] is not None:
                    os.lchown(lock, USERS[user], USERS[user])
                before = snapshot(pr)
                forge = "rm -f agent.lock && echo 'protect: []' > agent.lock"
                r = run(ralon_run(backend, "echo '%s' >&2; %s" % (STARTED, forge)), user,
                        pr.proj, pr.env())
                self.assertUnchanged(before, pr, repr(r))
                self.assertEqual(os.readlink(lock), "lock.yml", r)
                self.assertEqual(read_text(real), POLICY, r)
                dry = run([Tools.ralon, "run", "--dry-run", "--backend", backend, "--", "true"],
                          user, pr.proj, pr.env())
                if backend == "mount":
                    self.assertEqual(r.rc, 2, r)
                    self.assertNotIn(STARTED, r.stderr, r)
                    self.assertIn("agent.lock is a symbolic link, which the mount backend cannot "
                                  "keep from being replaced", r.stderr, r)
                    self.assertEqual(dry.rc, 1, dry)
                    self.assertIn("would fail: ", dry.stdout, dry)
                else:
                    self.assertIn(STARTED, r.stderr, r)
                    self.assertNotEqual(r.rc, 0, r)
                    self.assertEqual(dry.rc, 0, dry)

    def test_status_says_the_mount_backend_refuses(self):
        """`status` says what `run` will do: the machine offers the mount
        backend, and it refuses this project."""
        if not self.available("mount", ME):
            self.skipTest("no mount backend here")
        pr = self.project(ME)
        lock = os.path.join(pr.proj, "agent.lock")

        def status(wrap=()):
            text = run(list(wrap) + [Tools.ralon, "status"], ME, pr.proj, pr.env())
            js = run(list(wrap) + [Tools.ralon, "status", "--json"], ME, pr.proj, pr.env())
            self.assertEqual((text.rc, js.rc), (0, 0), (text, js))
            return text.stdout, json.loads(js.stdout)["backends"]["mount"]

        out, mount = status()
        self.assertNotIn("refuses this project", out)
        self.assertIsNone(mount["refused"], mount)
        os.rename(lock, os.path.join(pr.proj, "lock.yml"))
        os.symlink("lock.yml", lock)
        out, mount = status()
        self.assertRegex(out, r"\n  mount    available \(.*\)\n           but refuses this "
                              r"project: .*agent\.lock is a symbolic link, which the mount backend "
                              r"cannot keep from being replaced")
        self.assertTrue(mount["available"], mount)
        self.assertIn("agent.lock is a symbolic link", mount["refused"], mount)
        # Where the machine does not offer it, there is nothing to refuse.
        Tools.setup()
        if Tools.deny is not None:
            out, mount = status([Tools.deny])
            self.assertRegex(out, r"\n  mount    unavailable ")
            self.assertNotIn("refuses this project", out)
            self.assertFalse(mount["available"], mount)
            self.assertIsNone(mount["refused"], mount)


class TestMissingLiteral(Base):
    """A literal pattern naming nothing yet: the mount backend can bind
    nothing there and says so (the command may create it); Landlock keeps
    it from being created; --strict refuses to run on either."""

    def test_missing_literal(self):
        policy = POLICY.replace("Cargo.lock]", "Cargo.lock, .env.production]")
        warning = "ralon: warning: not locked, as nothing on disk matches: `.env.production`\n"
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(policy)
                env_file = os.path.join(pr.proj, ".env.production")
                before = snapshot(pr)
                r = run(ralon_run(backend, "echo '%s' >&2; echo TOKEN=x > .env.production"
                                  % STARTED, quiet=False), user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertIn(warning, r.stderr, r)
                self.assertUnchanged(before, pr, repr(r))
                if backend == "mount":  # documented: nothing to bind
                    self.assertEqual(r.rc, 0, r)
                    self.assertEqual(read_text(env_file), "TOKEN=x\n")
                    os.unlink(env_file)
                else:
                    self.assertNotEqual(r.rc, 0, r)
                    self.assertFalse(os.path.exists(env_file), r)
                r = run(ralon_run(backend, "echo '%s' >&2; echo TOKEN=x > .env.production"
                                  % STARTED, extra=["--strict"]), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertNotIn(STARTED, r.stderr, r)
                self.assertIn("(refusing to run with --strict)", r.stderr, r)
                self.assertFalse(os.path.exists(env_file), r)


class TestAwkwardNames(Base):
    """Protected files whose names hold a space, a newline, a byte that is
    not UTF-8, an escape sequence, glob characters and a leading dash, found
    by a glob: every backend keeps each of them, for each user, while the
    file beside them stays writable; the plan shows each name quoted on a
    line of its own, and its JSON gives each name exactly (an array of
    bytes where it is not UTF-8)."""

    NAMES = ("a b.key", "new\nline.key", "bad\udcffbyte.key", "esc\x1b[2J.key", "st*r.key",
             "br[ac]ket.key", "-dash.key", "d\u00e4t.key")
    SHOWN = ("keys/a b.key", '"keys/new\\nline.key"', '"keys/bad\\377byte.key"',
             '"keys/esc\\033[2J.key"', "keys/st*r.key", "keys/br[ac]ket.key", "keys/-dash.key",
             "keys/d\u00e4t.key")
    POLICY = POLICY.replace("Cargo.lock]", "Cargo.lock, 'keys/*.key']")
    ATTEMPTS = ('for f in keys/*.key; do echo hacked >> "$f"; rm -f "$f"; mv "$f" "$f.moved";'
                ' ln "$f" "$f.hl"; done; echo fine > keys/plain.txt')

    def awkward_project(self, user):
        pr = self.project(user)
        with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
            f.write(self.POLICY)
        keys = os.path.join(pr.proj, "keys")
        os.mkdir(keys)
        for n in self.NAMES + ("plain.txt",):
            with open(os.path.join(keys, n), "w", encoding="utf-8") as f:
                f.write("secret %r\n" % n)
        uid = USERS[user]
        if uid is not None:
            for n in ("",) + self.NAMES + ("plain.txt",):
                os.lchown(os.path.join(keys, n), uid, uid)
        return pr

    def test_awkward_names_kept(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.awkward_project(user)
                extra = ["keys/" + n for n in self.NAMES]
                before = snapshot(pr, extra)
                r = run(ralon_run(backend, "echo '%s' >&2; %s" % (STARTED, self.ATTEMPTS)),
                        user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertUnchanged(before, pr, repr(r), extra)
                self.assertEqual(sorted(os.listdir(os.path.join(pr.proj, "keys"))),
                                 sorted(self.NAMES + ("plain.txt",)), r)
                self.assertEqual(read_text(os.path.join(pr.proj, "keys", "plain.txt")),
                                 "fine\n", r)

    def test_plan_shows_each_name_once(self):
        for backend in BACKENDS:
            user = self.users()[-1]
            if not self.available(backend, user):
                continue
            with self.subTest(backend=backend, user=user):
                pr = self.awkward_project(user)
                argv = [Tools.ralon, "run", "--dry-run", "--backend", backend, "--", "true"]
                p = subprocess.run(argv, cwd=pr.proj, env=pr.env(), capture_output=True,
                                   timeout=TIMEOUT, preexec_fn=_preexec(USERS[user], False))
                self.assertEqual(p.returncode, 0, p)
                out = p.stdout.decode("utf-8")  # strict: no byte that is not UTF-8
                self.assertNotIn("\x1b", out + p.stderr.decode("utf-8"))
                lines = out.splitlines()
                for shown in self.SHOWN:
                    self.assertEqual(lines.count("  read-only  " + shown), 1, out)
                p = subprocess.run(argv[:2] + ["--json"] + argv[2:], cwd=pr.proj, env=pr.env(),
                                   capture_output=True, timeout=TIMEOUT,
                                   preexec_fn=_preexec(USERS[user], False))
                doc = json.loads(p.stdout.decode("utf-8"))
                got = sorted(bytes(e["path"]) if isinstance(e["path"], list)
                             else e["path"].encode("utf-8") for e in doc["protected"])
                self.assertEqual([g for g in got if g.startswith(b"keys/")],
                                 sorted(os.fsencode("keys/" + n) for n in self.NAMES))


class TestGlobThroughLink(Base):
    """A glob the policy could match below a symbolic link to a directory
    (`lib/*/config.yml`, `lib/a` -> `../vendor/a`): what it matches there
    is protected at its own path, on both backends, while the rest of
    that directory stays writable on the mount backend."""

    def test_glob_through_link(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                uid = USERS[user]
                for rel, content in (("vendor/a/config.yml", "a: 1\n"),
                                     ("lib/b/config.yml", "b: 1\n")):
                    p = os.path.join(pr.proj, rel)
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    with open(p, "w", encoding="utf-8") as f:
                        f.write(content)
                os.symlink("../vendor/a", os.path.join(pr.proj, "lib", "a"))
                policy = POLICY.replace("Cargo.lock]", "Cargo.lock, 'lib/*/config.yml']")
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(policy)
                if uid is not None:
                    for top, dirs, files in os.walk(pr.proj):
                        for n in dirs + files:
                            os.lchown(os.path.join(top, n), uid, uid)
                real = os.path.join(pr.proj, "vendor", "a", "config.yml")
                before = os.stat(real)
                r = run(ralon_run(backend, "echo '%s' >&2; "
                                  "echo x >> lib/a/config.yml; "
                                  "echo x >> vendor/a/config.yml; "
                                  "echo x >> lib/b/config.yml; "
                                  "echo new > src/new.c" % STARTED, quiet=False),
                        user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertRegex(r.stderr, r"(?m)^ralon: warning: symbolic links on the way to "
                                 r"protected paths \(their targets are locked\): .*lib/a")
                self.assertEqual(read_text(real), "a: 1\n", r)
                after = os.stat(real)
                self.assertEqual((after.st_ino, after.st_mtime_ns, after.st_nlink),
                                 (before.st_ino, before.st_mtime_ns, before.st_nlink), r)
                self.assertEqual(read_text(os.path.join(pr.proj, "lib", "b", "config.yml")),
                                 "b: 1\n", r)
                self.assertEqual(read_text(os.path.join(pr.proj, "src", "new.c")), "new\n",
                                 "unprotected work was refused: %r" % r)


class TestDanglingProtectedLink(Base):
    """A protected path that is a symbolic link to something that does not
    exist yet: its target is a missing path, like a literal pattern naming
    nothing. Landlock keeps the target from being created and the link
    from being replaced; the mount backend can bind nothing and says so."""

    SETUP = "rm conf/secret.yml && ln -s ../docs/later.yml conf/secret.yml"

    def test_landlock_keeps_target_and_link(self):
        if not self.available("landlock", ME):
            self.skipTest("the landlock backend is not available")
        for user in self.users():
            if not self.available("landlock", user):
                continue
            with self.subTest(user=user):
                pr = self.project(user)
                r = run(["sh", "-c", self.SETUP], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                link = os.path.join(pr.proj, "conf/secret.yml")
                later = os.path.join(pr.proj, "docs/later.yml")
                before = snapshot(pr)
                for cmd in ("echo forged > conf/secret.yml", "ln -sf ../README.md conf/secret.yml",
                            "mv conf/secret.yml conf/moved", "echo forged > docs/later.yml"):
                    r = run(ralon_run("landlock", cmd), user, pr.proj, pr.env())
                    self.assertNotEqual(r.rc, 0, r)
                    self.assertEqual(os.readlink(link), "../docs/later.yml", r)
                    self.assertFalse(os.path.lexists(later), r)
                self.assertUnchanged(before, pr, "dangling protected link")
                # Beside them, work goes on.
                r = run(ralon_run("landlock", "echo more >> conf/other.yml"), user, pr.proj,
                        pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertEqual(read_text(os.path.join(pr.proj, "conf/other.yml")),
                                 FILES["conf/other.yml"] + "more\n")

    def test_dry_run_says_not_covered(self):
        for backend in self.any_backend():
            with self.subTest(backend=backend):
                pr = self.project()
                r = run(["sh", "-c", self.SETUP], ME, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                r = run([Tools.ralon, "run", "--backend", backend, "--dry-run", "--json", "--",
                         "true"], ME, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                doc = json.loads(r.stdout)
                missing = {m["path"]: m for m in doc["missing"]}
                self.assertIn("conf/secret.yml", missing, r)
                root = os.path.realpath(pr.proj)
                self.assertEqual(missing["conf/secret.yml"]["target"],
                                 os.path.join(root, "docs/later.yml"), r)
                self.assertEqual(missing["conf/secret.yml"]["link"],
                                 os.path.join(root, "conf/secret.yml"), r)
                if backend == "landlock":
                    self.assertIn(os.path.join(root, "docs"), doc["restricted"], r)
                    self.assertIn(os.path.join(root, "conf"), doc["restricted"], r)


class TestDescriptorLimit(Base):
    """A `**` pattern over a chain of directories deeper than the limit of
    open files: the landlock backend holds one descriptor for each
    directory on the way to a protected path while it makes its rules.
    The run refuses up front (exit 2, the command never started), and the
    dry run says it would (exit 1, not enforceable), with the same words.
    The mount backend holds one at a time and runs."""

    LIMIT = 64
    DEPTH = 100

    def deep_project(self, user):
        pr = self.project(user)
        deep = os.path.join(pr.proj, *(["deep"] + ["d"] * self.DEPTH))
        os.makedirs(deep)
        with open(os.path.join(deep, "leaf.txt"), "w", encoding="utf-8") as f:
            f.write("leaf\n")
        with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
            f.write(POLICY.replace("Cargo.lock]", "Cargo.lock, 'deep/**/leaf.txt']"))
        if USERS[user] is not None:
            for top, dirs, files in os.walk(os.path.join(pr.proj, "deep")):
                for n in [top] + [os.path.join(top, x) for x in dirs + files]:
                    os.lchown(n, USERS[user], USERS[user])
            os.lchown(os.path.join(pr.proj, "agent.lock"), USERS[user], USERS[user])
        return pr

    def limited(self, argv):
        return ["prlimit", "--nofile=%d" % self.LIMIT, "--"] + argv

    def test_deep_chain_over_the_limit(self):
        if shutil.which("prlimit", path=SAFE_PATH) is None:
            self.skipTest("no prlimit(1)")
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.deep_project(user)
                marker = os.path.join(pr.proj, "src", "started-marker")
                before = snapshot(pr)
                real = run(self.limited(ralon_run(backend, "echo '%s' >&2; touch src/started-marker"
                                                  % STARTED)), user, pr.proj, pr.env())
                dry = run(self.limited([Tools.ralon, "run", "-q", "--backend", backend,
                                        "--dry-run", "--json", "--", "true"]),
                          user, pr.proj, pr.env())
                text = run(self.limited([Tools.ralon, "run", "-q", "--backend", backend,
                                         "--dry-run", "--", "true"]), user, pr.proj, pr.env())
                doc = json.loads(dry.stdout)
                if backend == "mount":
                    self.assertEqual(real.rc, 0, real)
                    self.assertTrue(os.path.exists(marker), real)
                    self.assertEqual(dry.rc, 0, dry)
                    self.assertIs(doc["enforceable"], True, dry)
                    continue
                self.assertEqual(real.rc, 2, real)
                self.assertNotIn(STARTED, real.output, real)
                self.assertFalse(os.path.exists(marker), "the command ran: %r" % (real,))
                refusal = real.stderr.strip()[len("ralon: "):]
                self.assertRegex(refusal, r"^the plan needs \d+ open directories .*more than "
                                 r"the limit of %d open files \(ulimit -n\)" % self.LIMIT, real)
                self.assertNotIn("Too many open files", real.output, real)
                self.assertEqual(dry.rc, 1, dry)
                self.assertIs(doc["enforceable"], False, dry)
                self.assertEqual(doc["error"], refusal, dry)
                self.assertEqual(text.rc, 1, text)
                self.assertIn("would fail: %s\n" % refusal, text.stdout, text)
                self.assertUnchanged(before, pr, repr(real))
                # Under a limit that leaves room, both go ahead.
                r = run(ralon_run(backend, "touch src/started-marker"), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertTrue(os.path.exists(marker), r)
                r = run([Tools.ralon, "run", "-q", "--backend", backend, "--dry-run", "--json",
                         "--", "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertIs(json.loads(r.stdout)["enforceable"], True, r)

    def test_run_starts_under_the_least_limit_the_dry_run_accepts(self):
        # The run counts its descriptors as the dry run does: under the
        # smallest limit the dry run calls enforceable, the run starts (it
        # once counted the directories it had already opened twice), and
        # under one less, both refuse.
        if shutil.which("prlimit", path=SAFE_PATH) is None:
            self.skipTest("no prlimit(1)")
        for backend, user in self.each_backend_and_user():
            if backend != "landlock":
                continue
            with self.subTest(user=user):
                pr = self.deep_project(user)

                def dry(limit):
                    r = run(["prlimit", "--nofile=%d" % limit, "--", Tools.ralon, "run", "-q",
                             "--backend", backend, "--dry-run", "--json", "--", "true"],
                            user, pr.proj, pr.env())
                    self.assertIn(r.rc, (0, 1), r)
                    return json.loads(r.stdout)["enforceable"]

                low, high = self.LIMIT, 4 * self.DEPTH
                self.assertFalse(dry(low))
                self.assertTrue(dry(high))
                while high - low > 1:
                    mid = (low + high) // 2
                    low, high = (low, mid) if dry(mid) else (mid, high)
                marker = os.path.join(pr.proj, "src", "started-marker")
                r = run(["prlimit", "--nofile=%d" % high, "--"]
                        + ralon_run(backend, "touch src/started-marker"), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertTrue(os.path.exists(marker), r)
                os.unlink(marker)
                r = run(["prlimit", "--nofile=%d" % low, "--"]
                        + ralon_run(backend, "touch src/started-marker"), user, pr.proj, pr.env())
                self.assertEqual(r.rc, 2, r)
                self.assertRegex(r.stderr, r"the limit of %d open files" % low, r)
                self.assertFalse(os.path.exists(marker), r)


class TestNewNames(Base):
    """What each backend does with a name that does not exist when the
    command starts but matches a protected glob (documented in ralon-security(7),
    "What each backend does with new names"): the mount backend binds
    what exists, so a new match in a writable directory can be made;
    Landlock refuses it in a directory on the way to a protected path,
    and allows it below a directory it grants. The dry run and status
    list the patterns whose new matches the backend does not stop."""

    # docs/*.secret matches nothing yet: docs is no directory on the way
    # to a protected path, and Landlock grants it whole.
    POLICY = POLICY.replace("Cargo.lock]",
                            "Cargo.lock, 'migrations/*.sql', '**/*.pem', 'docs/*.secret']")
    NOT_STOPPED = {"mount": ["migrations/*.sql", "**/*.pem", "docs/*.secret"],
                   "landlock": ["**/*.pem", "docs/*.secret"]}

    def names_project(self, user):
        pr = self.project(user)
        os.mkdir(os.path.join(pr.proj, "migrations"))
        with open(os.path.join(pr.proj, "migrations/001_init.sql"), "w", encoding="utf-8") as f:
            f.write("create table t;\n")
        with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
            f.write(self.POLICY)
        if USERS[user] is not None:
            for rel in ("migrations", "migrations/001_init.sql", "agent.lock"):
                os.lchown(os.path.join(pr.proj, rel), USERS[user], USERS[user])
        return pr

    def test_plan_and_status_list_what_is_not_stopped(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.names_project(user)
                want = self.NOT_STOPPED[backend]
                r = run([Tools.ralon, "run", "-q", "--backend", backend, "--dry-run", "--json",
                         "--", "true"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                doc = json.loads(r.stdout)
                self.assertEqual(doc["new_names"], want, r)
                self.assertIn("new-names", doc["not_covered"], r)
                r = run([Tools.ralon, "run", "-q", "--backend", backend, "--dry-run", "--",
                         "true"], user, pr.proj, pr.env())
                listed = re.findall(r"(?m)^  new names matching `([^`]*)`", r.stdout)
                self.assertEqual(listed, want, r)
                r = run([Tools.ralon, "status", "--json"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 0, r)
                self.assertEqual(json.loads(r.stdout)["backends"][backend]["new_names"], want, r)
                r = run([Tools.ralon, "status"], user, pr.proj, pr.env())
                # The lines under the backend's own.
                lines = r.stdout.splitlines()
                i = next(k for k, line in enumerate(lines) if line.startswith("  %s " % backend))
                shown = []
                for line in lines[i + 1:]:
                    if not line.startswith(" " * 11):
                        break
                    m = re.match(r"^ {11}does not stop new names matching `([^`]*)`$", line)
                    if m:
                        shown.append(m.group(1))
                self.assertEqual(shown, want, r)
                # The hooks and `check` say a new match is protected, whatever
                # the backend does with it.
                r = run([Tools.ralon, "check", "migrations/002_new.sql", "src/new.pem",
                         "docs/new.secret"], user, pr.proj, pr.env())
                self.assertEqual(r.rc, 1, r)
                self.assertRegex(r.stdout, r"(?m)^locked +docs/new\.secret ", r)
                self.assertRegex(r.stdout, r"(?m)^locked +migrations/002_new\.sql ", r)
                self.assertRegex(r.stdout, r"(?m)^locked +src/new\.pem ", r)

    def test_new_matches_from_outside(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.names_project(user)
                before = snapshot(pr, ("migrations/001_init.sql",))
                for rel, stopped in (("migrations/002_new.sql", backend == "landlock"),
                                     ("src/new.pem", False),
                                     ("docs/new.secret", False),
                                     ("tests/golden/new.txt", True)):
                    path = os.path.join(pr.proj, rel)
                    r = run(ralon_run(backend, "echo '%s' >&2; echo new > %s" % (STARTED, rel)),
                            user, pr.proj, pr.env())
                    self.assertIn(STARTED, r.stderr, r)
                    if stopped:
                        self.assertNotEqual(r.rc, 0, r)
                        self.assertRegex(r.output, DENIAL, r)
                        self.assertFalse(os.path.lexists(path), "%s was made: %r" % (rel, r))
                    else:
                        self.assertEqual(r.rc, 0, r)
                        self.assertEqual(read_text(path), "new\n", r)
                        os.unlink(path)
                self.assertUnchanged(before, pr, "new names", ("migrations/001_init.sql",))


class TestLandlockUnlistableChainDirectory(Base):
    """A directory on the way that the user may search but not list (root's
    0711 above a user's project): Landlock grants nothing in it, instead of
    refusing to start, and the project works as usual."""

    def test_runs_and_protects(self):
        if not IS_ROOT:
            self.skipTest("making a directory the user cannot list needs root")
        if not self.available("landlock", "nobody"):
            self.skipTest("the landlock backend is not available")
        pr = self.project("nobody")
        os.chown(pr.code, 0, 0)
        os.chmod(pr.code, 0o711)
        before = snapshot(pr)
        r = run(ralon_run("landlock", "echo forged >> agent.lock"), "nobody", pr.proj, pr.env())
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("Permission denied", r.stderr, r)
        r = run(ralon_run("landlock", "echo more >> src/main.c && echo new > src/new.c"),
                "nobody", pr.proj, pr.env())
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(read_text(os.path.join(pr.proj, "src/new.c")), "new\n")
        self.assertUnchanged(before, pr, "unlistable chain directory")
        r = run([Tools.ralon, "run", "--backend", "landlock", "--dry-run", "--json", "--", "true"],
                "nobody", pr.proj, pr.env())
        self.assertEqual(r.rc, 0, r)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["unlisted"], [os.path.realpath(pr.code)], r)
        self.assertIn(("landlock-unlisted-directory", os.path.realpath(pr.code)),
                      {(f["kind"], f["subject"]) for f in doc["findings"]}, r)


class TestLandlockLinkedFilesEitherWay(Base):
    """A hard link of a protected file beside the Landlock chain gets no
    rule however ralon plans: with the audit (its findings printed, so
    the plan stats every file and withholds the link) and with -q and no
    journal (nothing reads which files get no rule: the plan takes files
    as getdents names them and landlock_apply finds the second name when
    it opens one for a rule). The journal's socket is hidden in a private
    mount namespace so that -q really is the second way wherever the
    suite runs. A file beside them stays writable."""

    def test_linked_files_get_no_rule(self):
        if not IS_ROOT:
            self.skipTest("hiding the journal's socket needs root")
        if not self.available("landlock", ME):
            self.skipTest("the landlock backend is not available")
        hide = ("if [ -d /run/systemd/journal ]; then"
                " mount -t tmpfs -o mode=0755 none /run/systemd/journal; fi")
        for user in self.users():
            for quiet in (True, False):
                with self.subTest(user=user, quiet=quiet):
                    pr = self.project(user)
                    golden = os.path.join(pr.proj, "tests/golden/a.txt")
                    os.link(golden, os.path.join(pr.proj, "zz_golden"))
                    os.link(golden, os.path.join(pr.proj, "tests/zz_golden"))
                    inner = ("echo '%s' >&2; echo forged >> tests/golden/a.txt;"
                             " truncate -s 0 tests/golden/a.txt; echo forged >> zz_golden;"
                             " echo ok >> src/lib.rs && echo wrote src" % STARTED)
                    uid = USERS[user]
                    drop = (["setpriv", "--reuid", str(uid), "--regid", str(uid),
                             "--clear-groups", "--"] if uid is not None else [])
                    argv = (["unshare", "-m", "--propagation", "private", "--", "sh", "-c",
                             hide + ' && exec "$@"', "sh"] + drop
                            + ralon_run("landlock", inner, quiet=quiet))
                    before = snapshot(pr)
                    st = os.stat(golden)
                    r = run(argv, "root", pr.proj, pr.env())
                    self.assertIn(STARTED, r.stderr, r)
                    self.assertIn("wrote src", r.stdout, r)
                    self.assertUnchanged(before, pr, repr(r))
                    after = os.stat(golden)
                    self.assertEqual((after.st_ino, after.st_size, after.st_mtime_ns),
                                     (st.st_ino, st.st_size, st.st_mtime_ns), r)
                    self.assertEqual(after.st_nlink, 3, r)
                    self.assertEqual(read_text(os.path.join(pr.proj, "src/lib.rs")), "ok\n", r)


class TestLandlockAliasesBesideTheChain(Base):
    """Other names for protected objects that exist before ralon starts,
    as entries of directories on the Landlock chain: a bind mount of the
    project, of / itself, of a protected file, and of a file inside a
    protected directory. The carve-out grants the siblings of the chain,
    so it must never grant one of these (a rule on one would cover the
    protected paths below it, or follow the file to its protected name).
    Made as root in a private mount namespace; ralon runs inside it as
    each user."""

    def _run_with_aliases(self, user, aliases):
        pr = self.project(user)
        names = {"proj": (os.path.join(pr.code, "alias-proj"), pr.proj, True),
                 "slash": (os.path.join(pr.base, "alias-slash"), "/", True),
                 "lock": (os.path.join(pr.code, "alias-lock"),
                          os.path.join(pr.proj, "agent.lock"), False),
                 "golden": (os.path.join(pr.code, "alias-golden"),
                            os.path.join(pr.proj, "tests/golden/a.txt"), False),
                 "goldendir": (os.path.join(pr.code, "alias-golden-dir"),
                               os.path.join(pr.proj, "tests/golden"), True)}
        writes = {"proj": os.path.join(pr.code, "alias-proj", "agent.lock"),
                  "slash": os.path.join(pr.base, "alias-slash") + pr.proj + "/agent.lock",
                  "lock": os.path.join(pr.code, "alias-lock"),
                  # through its protected name: a rule on the mounted file
                  # would open it there too
                  "golden": os.path.join(pr.proj, "tests/golden/a.txt"),
                  "goldendir": os.path.join(pr.proj, "tests/golden/a.txt")}
        setup, inner = [], "echo '%s' >&2" % STARTED
        for a in aliases:
            point, source, is_dir = names[a]
            if is_dir:
                os.mkdir(point)
            else:
                open(point, "w").close()
            setup.append("mount --bind '%s' '%s'" % (source, point))
            inner += ("; if echo forged >> '%s' 2>/dev/null; then echo 'wrote %s';"
                      " else echo 'refused %s'; fi" % (writes[a], a, a))
        uid = USERS[user]
        drop = (["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--"]
                if uid is not None else [])
        argv = (["unshare", "-m", "--propagation", "private", "--", "sh", "-c",
                 " && ".join(setup) + ' && exec "$@"', "sh"] + drop
                + ralon_run("landlock", inner))
        before = snapshot(pr)
        r = run(argv, "root", pr.proj, pr.env())
        # From outside (the aliases went with the namespace): the protected
        # file behind every name is intact.
        self.assertUnchanged(before, pr, repr(r))
        self.assertEqual(read_text(os.path.join(pr.proj, "agent.lock")), POLICY, r)
        self.assertIn(STARTED, r.stderr, r)
        self.assertEqual(r.rc, 0, r)
        for a in aliases:
            self.assertIn("refused " + a, r.stdout, r)
        return r

    def _users(self):
        if not IS_ROOT:
            self.skipTest("making the aliases needs root")
        if not self.available("landlock", ME):
            self.skipTest("the landlock backend is not available")
        return self.users()

    def test_directory_aliases_are_not_granted(self):
        for user in self._users():
            with self.subTest(user=user):
                self._run_with_aliases(user, ["proj", "slash"])

    def test_bind_of_protected_directory_is_not_granted(self):
        # A directory from inside a protected one, bound beside the chain:
        # no rule on it (it would follow the inode to its protected name).
        for user in self._users():
            with self.subTest(user=user):
                self._run_with_aliases(user, ["goldendir"])

    def test_file_aliases_are_not_granted(self):
        # Known by the identity of what is mounted on them, and left
        # without a rule (a mount point: another name reaches the file).
        for user in self._users():
            with self.subTest(user=user):
                self._run_with_aliases(user, ["lock", "golden"])


class TestForgedActiveRoot(Base):
    """ATTACKS #64: RALON_ACTIVE_ROOT set by hand (from a ~/.bashrc an
    earlier session wrote, say) outside any sandbox must not make a
    wrapper's `run --if-policy` pass through: the variable is believed
    only where agent.lock cannot be opened for writing for a reason other
    than its mode. Here agent.lock's mode is 0444 (what Landlock's
    metadata gap would let an earlier session do): the command is still
    restricted."""

    def test_forged_variable_does_not_pass_through(self):
        # auto: a named backend never passes through.
        for user in self.users():
            if not self.any_backend(user):
                continue
            with self.subTest(user=user):
                pr = self.project(user)
                lock = os.path.join(pr.proj, "agent.lock")
                os.chmod(lock, 0o444)
                self.addCleanup(os.chmod, lock, 0o644)
                before = snapshot(pr)
                env = dict(pr.env(), RALON_ACTIVE_ROOT=pr.proj)
                r = run([Tools.ralon, "run", "--if-policy", "--", "sh", "-c",
                         "echo '%s' >&2; echo forged >> Cargo.lock" % STARTED],
                        user, pr.proj, env)
                self.assertIn(STARTED, r.stderr, r)
                self.assertNotEqual(r.rc, 0, r)
                self.assertRegex(r.stderr, DENIAL, r)
                self.assertRegex(r.stderr, LOCKED_LINE, r)
                self.assertUnchanged(before, pr, repr(r))


class TestMountInsideProtectedDirectory(Base):
    """ATTACKS #51: a file system mounted inside a protected directory before
    ralon starts (a tmpfs at tests/golden/sub) is protected with it: the
    mount backend's read-only bind is recursive, and Landlock's rights go
    by the path. One mounted in an unprotected directory (src/mnt) stays
    writable. Made as root in a private mount namespace; ralon runs in it
    as each user, and what happened is read there once ralon is done."""

    def test_submount_is_protected(self):
        if not IS_ROOT:
            self.skipTest("mounting needs root")
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                uid = USERS[user]
                drop = ("setpriv --reuid %d --regid %d --clear-groups -- " % (uid, uid)
                        if uid is not None else "")
                inner = ("echo '%s' >&2; echo forged >> tests/golden/sub/f;"
                         " echo new > tests/golden/sub/g; echo ok > src/mnt/x" % STARTED)
                script = ("mkdir -p tests/golden/sub src/mnt"
                          " && mount -t tmpfs none tests/golden/sub"
                          " && mount -t tmpfs none src/mnt && echo orig > tests/golden/sub/f"
                          " && chmod 777 tests/golden/sub src/mnt"
                          " && chmod 666 tests/golden/sub/f || exit 9; "
                          + drop + " ".join(shlex.quote(a) for a in ralon_run(backend, inner))
                          + "; echo after; cat tests/golden/sub/f; ls tests/golden/sub;"
                          " cat src/mnt/x")
                r = run(["unshare", "-m", "--propagation", "private", "--", "sh", "-c", script],
                        "root", pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertEqual(r.stdout.split("after\n", 1)[-1], "orig\nf\nok\n", r)
                self.assertEqual(len(re.findall(DENIAL, r.stderr)), 2, r)


class TestMountsMadeOutsideAfterStart(Base):
    """The mount backend's namespace is private (docs/ARCHITECTURE.md §4):
    nothing mounted outside once the command runs reaches it. That is a
    cost (a USB stick or an automount made later does not appear, as
    ralon-security(7) says) and a defence: with slave propagation, as bubblewrap
    uses, a bind mount made outside over a protected file propagates onto
    ralon's read-only one and lands on top (seen on this kernel: the
    command then read and wrote the file mounted over it). Made as root in
    a mount namespace of its own whose mounts are shared, as a host's are
    under systemd; ralon runs in it as each user, and once the command has
    started, root mounts a tmpfs in the project and binds a decoy over
    Cargo.lock. Landlock makes no namespace: outside mounts are the
    command's view there by design."""

    def test_outside_mounts_do_not_reach_inside(self):
        if not IS_ROOT:
            self.skipTest("mounting outside needs root")
        rows = [(b, u) for b, u in self.each_backend_and_user() if b == "mount"]
        if not rows:
            self.skipTest("no mount backend here")
        for backend, user in rows:
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                cargo = os.path.join(pr.proj, "Cargo.lock")
                before = read_text(cargo)
                uid = USERS[user]
                drop = ("setpriv --reuid %d --regid %d --clear-groups -- " % (uid, uid)
                        if uid is not None else "")
                wait_for = ("i=0; while [ ! -e %s ] && [ $i -lt 600 ]; do sleep 0.05;"
                            " i=$((i+1)); done; ")
                inner = ("echo '%s' >&2; : > ready; " % STARTED + wait_for % "go"
                         + "echo listing; ls later; echo seen; cat Cargo.lock;"
                         " echo forged >> Cargo.lock")
                # The control: a namespace made before the mounts, a slave
                # of the same mounts, sees both: the setup does propagate.
                control = ("unshare -m --propagation slave -- sh -c "
                           + shlex.quote(": > cready; " + wait_for % "go"
                                         + "ls later; cat Cargo.lock")
                           + " > CONTROL 2>&1 & ")
                script = ("mount --make-rshared / && mkdir later && echo decoy > DECOY"
                          " && chmod 666 DECOY || exit 9; " + control
                          + drop + " ".join(shlex.quote(a) for a in ralon_run(backend, inner))
                          + " & " + wait_for % "ready" + wait_for % "cready"
                          + "mount -t tmpfs none later && echo hi > later/hello"
                          " && mount --bind DECOY Cargo.lock && : > go || exit 8; wait;"
                          " echo after; cat DECOY; echo control; cat CONTROL; umount Cargo.lock")
                r = run(["unshare", "-m", "--propagation", "private", "--", "sh", "-c", script],
                        "root", pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                # Inside: no tmpfs, the original Cargo.lock, and no write.
                self.assertIn("listing\nseen\n" + before, r.stdout, r)
                self.assertNotIn("decoy\n", r.stdout.split("after\n", 1)[0], r)
                self.assertRegex(r.stderr, DENIAL)
                # Outside: the decoy got nothing, the file on disk neither;
                # the control saw the tmpfs and the decoy.
                self.assertEqual(r.stdout.split("after\n", 1)[-1],
                                 "decoy\ncontrol\nhello\ndecoy\n", r)
                self.assertEqual(read_text(cargo), before, r)


class TestAliasMadeBeforeLaunch(Base):
    """ATTACKS.md #31: a bind mount of the project made before ralon starts,
    away from the Landlock chain (in $HOME, which Landlock grants whole).
    Neither backend restricts writes through it, which is documented; the
    audit must name it (`second-mount`, which weakens), and the protected
    name itself stays blocked. Where nothing else weakens the protection
    (the mount backend, an ordinary user, git's hooks and config
    protected), `--strict` runs without the alias and refuses with it.
    Made as root in a private mount namespace; ralon runs inside it as
    each user."""

    POLICY = POLICY.replace("Cargo.lock]", "Cargo.lock, .git/hooks, .git/config]")

    def test_alias_is_named_and_strict_refuses(self):
        if not IS_ROOT:
            self.skipTest("making the alias needs root")
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                self.check_alias(backend, user)

    def check_alias(self, backend, user):
        pr = self.project(user)
        with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
            f.write(self.POLICY)
        alias = os.path.join(pr.home, "alias-proj")
        os.mkdir(alias)
        inner = ("echo '%s' >&2; echo forged >> agent.lock && echo 'wrote name';"
                 " echo aliased >> '%s/Cargo.lock' && echo 'wrote alias'" % (STARTED, alias))
        uid = USERS[user]
        drop = (["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--"]
                if uid is not None else [])

        def launch(extra, with_alias=True):
            bind = 'mount --bind "$1" "$2" && ' if with_alias else ""
            return (["unshare", "-m", "--propagation", "private", "--", "sh", "-c",
                     bind + 'shift 2 && exec "$@"', "sh", pr.proj, alias] + drop
                    + ralon_run(backend, inner, quiet=False, extra=extra))

        warning = "ralon: warning: second paths to protected files, not restricted: %s\n" % alias
        cargo = os.path.join(pr.proj, "Cargo.lock")
        before = read_text(cargo)
        if backend == "mount" and user != "root":
            r = run(launch(["--strict"], with_alias=False), "root", pr.proj, pr.env())
            self.assertIn(STARTED, r.stderr, r)
            self.assertNotIn("ralon: warning", r.stderr, r)
            r = run(launch(["--strict"]), "root", pr.proj, pr.env())
            self.assertEqual(r.rc, 2, r)
            self.assertNotIn(STARTED, r.stderr, r)
            self.assertIn("ralon: %s is a second path to this project" % alias, r.stderr, r)
            self.assertIn("(refusing to run with --strict)", r.stderr, r)
            self.assertEqual(read_text(cargo), before, r)

        r = run(launch([]), "root", pr.proj, pr.env())
        self.assertIn(STARTED, r.stderr, r)
        self.assertIn(warning, r.stderr, r)
        self.assertNotIn("wrote name", r.stdout, r)
        self.assertEqual(read_text(os.path.join(pr.proj, "agent.lock")), self.POLICY, r)
        # The documented gap, pinned: the write through the alias lands in
        # the protected file.
        self.assertIn("wrote alias", r.stdout, r)
        self.assertEqual(read_text(cargo), before + "aliased\n", r)


class TestHardLinkMadeBeforeLaunch(Base):
    """ATTACKS #29 and #30, pinned: a hard link of a protected file made
    before ralon starts, in a directory the agent may write (src/), is
    another name for the same file. Neither backend can take write access
    from a name it does not know of, so a write through it lands; the
    audit names the file (its link count), and where nothing else weakens
    the protection (the mount backend, an ordinary user, git's hooks and
    config protected) --strict refuses to run. The protected name itself
    stays blocked."""

    POLICY = POLICY.replace("Cargo.lock]", "Cargo.lock, .git/hooks, .git/config]")

    def test_link_is_named_and_strict_refuses(self):
        inner = ("echo '%s' >&2; echo forged >> tests/golden/a.txt && echo 'wrote name';"
                 " echo aliased >> src/golden-alias && echo 'wrote alias'" % STARTED)
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                with open(os.path.join(pr.proj, "agent.lock"), "w", encoding="utf-8") as f:
                    f.write(self.POLICY)
                golden = os.path.join(pr.proj, "tests/golden/a.txt")
                before = read_text(golden)
                if backend == "mount" and user != "root":
                    r = run(ralon_run(backend, inner, extra=["--strict"]), user, pr.proj,
                            pr.env())
                    self.assertIn("wrote alias", r.stdout, r)  # no alias yet: a plain file
                    os.unlink(os.path.join(pr.proj, "src/golden-alias"))
                r = run(["ln", "tests/golden/a.txt", "src/golden-alias"], user, pr.proj,
                        pr.env())
                self.assertEqual(r.rc, 0, r)
                warning = ("tests/golden/a.txt has 2 hard links; the other names are not "
                           "protected and writing one changes this file")
                if backend == "mount" and user != "root":
                    r = run(ralon_run(backend, inner, extra=["--strict"]), user, pr.proj,
                            pr.env())
                    self.assertEqual(r.rc, 2, r)
                    self.assertNotIn(STARTED, r.stderr, r)
                    self.assertIn("ralon: %s (refusing to run with --strict)" % warning,
                                  r.stderr, r)
                    self.assertEqual(read_text(golden), before, r)
                r = run(ralon_run(backend, inner, quiet=False), user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                self.assertIn("ralon: warning: protected files with other, unprotected names "
                              "(hard links): tests/golden/a.txt\n", r.stderr, r)
                self.assertNotIn("wrote name", r.stdout, r)
                self.assertIn("wrote alias", r.stdout, r)
                self.assertEqual(read_text(golden), before + "aliased\n", r)


class TestOutsideProcess(Base):
    """ATTACKS #53 and #54: a process of the same user started before the
    sandbox (the user's editor, a shell, another agent) is a way back to
    the unrestricted view: /proc/PID/cwd and /proc/PID/root lead through
    its mounts, /proc/PID/fd/N reopens what it holds open (here a
    descriptor open for writing on Cargo.lock), /proc/PID/mem would let
    the agent write its memory, and ptrace run code in it. Outside the
    sandbox all of it works (checked first, so that the refusals inside
    come from the sandbox); inside, all of it is refused and nothing
    changes."""

    def test_outside_process_is_out_of_reach(self):
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                self.check_outside(backend, user)

    def check_outside(self, backend, user):
        pr = self.project(user)
        outside = subprocess.Popen(["sh", "-c", "exec 3>>Cargo.lock; exec sleep 300"],
                                   cwd=pr.proj, stdin=subprocess.DEVNULL,
                                   preexec_fn=_preexec(USERS[user], False))
        self.addCleanup(outside.wait)
        self.addCleanup(outside.kill)
        pid = outside.pid
        deadline = time.monotonic() + 30
        while not os.path.exists("/proc/%d/fd/3" % pid):
            self.assertLess(time.monotonic(), deadline, "the outside process did not start")
            time.sleep(0.01)
        main_c = os.path.join(pr.proj, "src", "main.c")
        mem = "python3 -c \"import os; os.close(os.open('/proc/%d/mem', os.O_RDWR))\"" % pid
        r = run(["sh", "-c", 'echo control >> /proc/%d/cwd/src/main.c && python3 "$OP" ptrace %d'
                 ' && echo control >> /proc/%d/fd/3 && %s' % (pid, pid, pid, mem)],
                user, pr.proj, pr.env())
        self.assertEqual(r.rc, 0, "the control fails outside the sandbox: %r" % (r,))
        self.assertIn("ptrace: OK", r.stdout, r)
        self.assertEqual(read_text(main_c), HELLO_C + "control\n", r)
        self.assertTrue(read_text(os.path.join(pr.proj, "Cargo.lock")).endswith("control\n"), r)

        before = snapshot(pr, ())
        inner = ("echo '%s' >&2; echo forged >> /proc/%d/cwd/Cargo.lock;"
                 " echo forged >> /proc/%d/root%s/agent.lock;"
                 " echo forged >> /proc/%d/cwd/src/main.c; python3 \"$OP\" ptrace %d;"
                 " echo forged >> /proc/%d/fd/3; %s"
                 % (STARTED, pid, pid, pr.proj, pid, pid, pid, mem))
        r = run(ralon_run(backend, inner), user, pr.proj, pr.env())
        self.assertIn(STARTED, r.stderr, r)
        self.assertEqual(r.rc, 1, r)
        if backend == "mount":
            # In a PID namespace of its own, no process ID names a process
            # outside: its /proc entries and ptrace find nothing.
            self.assertRegex(r.stdout, r"(?m)^ptrace: ESRCH$", r)
            self.assertEqual(r.stderr.count("nonexistent") +
                             r.stderr.count("No such file or directory"), 5, r)
        else:
            self.assertRegex(r.stdout, r"(?m)^ptrace: EPERM$", r)
            self.assertEqual(r.stderr.count("Permission denied"), 5, r)
        self.assertEqual(diff(before, snapshot(pr, ())), [], r)
        self.assertEqual(read_text(main_c), HELLO_C + "control\n", r)


class TestRootIsNotProtected(Base):
    """ATTACKS #65, pinned: an agent running as root keeps owner access
    to what root owns outside the protected paths, such as
    /proc/sys/kernel/core_pattern (whose pipe helper the kernel runs as
    root outside any sandbox), on both backends, even with every
    capability dropped. ralon says so when it starts; an ordinary user
    cannot open it. Nothing is written: the file is only opened."""

    def test_root_keeps_owner_access(self):
        if not IS_ROOT:
            self.skipTest("needs root")
        probe = ("echo '%s' >&2; python3 -c \"import os; os.close(os.open("
                 "'/proc/sys/kernel/core_pattern', os.O_WRONLY)); print('opened')\"" % STARTED)
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                pr = self.project(user)
                r = run(ralon_run(backend, probe, quiet=False), user, pr.proj, pr.env())
                self.assertIn(STARTED, r.stderr, r)
                if user == "root":
                    self.assertEqual(r.rc, 0, r)
                    self.assertIn("opened", r.stdout, r)
                    self.assertIn("ralon: warning: running as root: the agent keeps root's "
                                  "access to everything not protected\n", r.stderr, r)
                else:
                    self.assertNotEqual(r.rc, 0, r)
                    self.assertIn("PermissionError", r.stderr, r)
                    self.assertNotIn("running as root", r.stderr, r)


class TestTerminalControl(Base):
    """Without ralon, the pty harness really can inject input (so EPERM in
    the table comes from ralon's filter, not from the setup)."""

    def test_tiocsti_works_outside_the_sandbox(self):
        Tools.setup()
        try:
            with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
                legacy = f.read().strip() == "1"
        except FileNotFoundError:
            legacy = True
        if not legacy:
            self.skipTest("dev.tty.legacy_tiocsti is 0: TIOCSTI is refused outside as well")
        for user in self.users():
            with self.subTest(user=user):
                pr = self.project(user)
                for name in ("TIOCSTI", "TIOCSTI_HIGH"):
                    r = run(["python3", Tools.op, "ioctl", name], user, pr.proj, pr.env(),
                            pty=True)
                    # The injected "x" is echoed in front of the report.
                    self.assertRegex(r.output, r"(?m)^x?%s: OK\r?$" % name, r)



# An interactive program for TestInteractive: reports whether it is the
# leader of the terminal's foreground process group and the window size,
# then each window resize, each resumption and each line it reads. SIGINT
# is left to its default action, as most programs leave it.
INTERACTIVE_PROBE = r"""
import fcntl, os, signal, struct, sys, termios

def size():
    rows, cols = struct.unpack("HHHH", fcntl.ioctl(0, termios.TIOCGWINSZ, bytes(8)))[:2]
    return "%dx%d" % (rows, cols)

def say(text):
    os.write(1, ("probe: " + text + "\n").encode())

def foreground():
    return os.tcgetpgrp(0) == os.getpgrp()

signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGWINCH, lambda s, f: say("winch " + size()))
signal.signal(signal.SIGCONT, lambda s, f: say("cont fg=%s" % foreground()))
say("ready fg=%s leader=%s size=%s" % (foreground(), os.getpgrp() == os.getpid(), size()))
for line in sys.stdin:
    say("got " + line.strip())
"""


class Terminal:
    """An interactive bash on a new pseudo terminal (its controlling
    terminal), driven as a person would type into it."""

    PROMPT = "PROMPT-7f3a$ "

    def __init__(self, user, cwd, env):
        self.master, slave = pty_module.openpty()
        self.resize(24, 80)
        env = dict(env, PS1=self.PROMPT, TERM="dumb")
        try:
            self.proc = subprocess.Popen(
                ["bash", "--norc", "--noprofile", "--noediting", "-i"], cwd=cwd, env=env,
                stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                preexec_fn=_preexec(USERS[user], True))
        finally:
            os.close(slave)
        self.seen = b""
        self.pending = b""

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        os.close(self.master)

    def resize(self, rows, cols):
        import fcntl
        import termios
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def send(self, text):
        os.write(self.master, text.encode())

    def expect(self, pattern, timeout=30):
        """The first match of pattern in what the terminal shows next."""
        rx = re.compile(pattern.encode())
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.pending)
            if m:
                self.seen += self.pending[:m.end()]
                self.pending = self.pending[m.end():]
                return m.group(1).decode() if rx.groups else m.group(0).decode()
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("the terminal never showed %r; it showed:\n%s" % (
                    pattern, (self.seen + self.pending).decode("utf-8", "replace")))
            r, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if r:
                try:
                    self.pending += os.read(self.master, 65536)
                except OSError as e:
                    if e.errno != errno.EIO:
                        raise

    def session(self, command, start_only=False):
        """Runs command (the probe, or something starting it) as a job and
        goes through what a person does with an interactive program; returns
        what the program and the shell showed at each step (with
        start_only, the first; the job is then ended with Ctrl-C)."""
        prompt = re.escape(self.PROMPT)
        self.expect(prompt)
        self.send(command + "\n")
        steps = [("start", self.expect(r"probe: ready ([^\r\n]*)"))]
        if start_only:
            self.send("\x03")
            self.expect(prompt)
            return steps
        self.resize(40, 100)
        steps.append(("resize", self.expect(r"probe: winch ([^\r\n]*)")))
        self.send("first line\n")
        steps.append(("type", self.expect(r"probe: got ([^\r\n]*)")))
        self.send("\x1a")  # Ctrl-Z: the job stops, the shell takes the terminal back
        steps.append(("ctrl-z", self.expect(r"(Stopped)")))
        self.expect(prompt)
        self.send("fg\n")
        steps.append(("fg", self.expect(r"probe: cont ([^\r\n]*)")))
        self.send("second line\n")
        steps.append(("type again", self.expect(r"probe: got ([^\r\n]*)")))
        self.send("\x03")  # Ctrl-C: the job dies of SIGINT, as it would started directly
        self.expect(prompt)
        self.send('echo "status=$?"\n')
        steps.append(("ctrl-c", self.expect(r"status=(\d+)")))
        self.expect(prompt)
        return steps


class TestInteractive(Base):
    """`run` becomes the command: typed into an interactive shell, the
    command under ralon is the job's process group leader in the terminal's
    foreground, sees the window and its resizes, reads what is typed, stops
    on Ctrl-Z, resumes in the foreground with `fg`, and dies of Ctrl-C, as
    the same command started directly does, step for step."""

    def transcript(self, user, pr, command, start_only=False):
        term = Terminal(user, pr.proj, pr.env())
        try:
            return term.session(command, start_only)
        finally:
            term.close()

    def test_interactive_job_control_as_if_started_directly(self):
        Tools.setup()
        for user in self.users():
            pr = self.project(user)
            probe = os.path.join(pr.tmp, "probe.py")
            with open(probe, "w", encoding="utf-8") as f:
                f.write(INTERACTIVE_PROBE)
            if USERS[user] is not None:
                os.chown(probe, USERS[user], USERS[user])
            start = "python3 %s" % probe
            direct = self.transcript(user, pr, start)
            with self.subTest(user=user, command="directly"):
                # The harness sees what it is here to see.
                self.assertEqual(direct, [
                    ("start", "fg=True leader=True size=24x80"), ("resize", "40x100"),
                    ("type", "first line"), ("ctrl-z", "Stopped"), ("fg", "fg=True"),
                    ("type again", "second line"), ("ctrl-c", str(128 + signal.SIGINT))])
            with self.subTest(user=user, command="a wrapper that forks"):
                # A wrapper that starts the program as its child instead of
                # becoming it is told apart: the program leads no group.
                forked = self.transcript(user, pr, "sh -c '%s; exit $?'" % start, True)
                self.assertEqual(forked, [("start", "fg=True leader=False size=24x80")])
            for backend in self.any_backend(user):
                with self.subTest(user=user, backend=backend):
                    got = self.transcript(user, pr, "%s run -q --backend %s -- %s" % (
                        Tools.ralon, backend, start))
                    self.assertEqual(got, direct)


SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# The rogue agent's attempts (examples/rogue-agent) and what each backend
# makes of them: the README's first command shows exactly this.
DEMO_ATTACKS = ("overwrite the golden test output", "append to a migration",
                "truncate the npm lock file", "delete the CI workflow",
                "add a workflow next to it", "editor-style save (write, rename over)",
                "sed -i on the golden file", "rename the tests directory away",
                "rewrite the policy itself", "delete the policy",
                "make the policy world-writable", "hard-link the migration, then write",
                "replace the lock file with a symlink", "mount a tmpfs over the golden files")
DEMO_WORK = ("edit the source code", "create a new source file", "compile and run",
             "read a protected file")
# Landlock does not govern chmod (ATTACKS #8): pinned, and the demo says so.
DEMO_ALLOWED_ATTACKS = {"mount": (), "landlock": ("make the policy world-writable",)}

# Stands in for ralon in the demo's negative controls: claims $FAKE_BACKEND
# in the dry run and, asked to run the agent, does $FAKE_ACTION instead of
# protecting anything.
FAKE_RALON = """#!/bin/sh
case "$1" in
run)
  for a in "$@"; do
    if [ "$a" = --dry-run ]; then
      printf '{\\n  "backend": "%s",\\n}\\n' "$FAKE_BACKEND"
      exit 0
    fi
  done
  while [ "$1" != -- ]; do shift; done
  shift
  [ "$FAKE_ACTION" = agent ] && exec "$@"
  exec sh -c "$FAKE_ACTION"
  ;;
esac
exit 0
"""


class TestDemo(Base):
    """scripts/demo, the README's first command, under every backend and
    user: each attempt of the rogue agent gets its backend's verdict, the
    ordinary work succeeds, and the demo's own check from outside passes;
    with nothing protecting the files, that check fails."""

    def demo_tree(self, user):
        """scripts/demo and examples/ copied where `user` can read them,
        and a TMPDIR of its own."""
        pr = self.project(user)
        root = os.path.join(pr.base, "src")
        os.makedirs(os.path.join(root, "scripts"))
        shutil.copy2(os.path.join(SOURCE_ROOT, "scripts", "demo"),
                     os.path.join(root, "scripts", "demo"))
        shutil.copytree(os.path.join(SOURCE_ROOT, "examples"), os.path.join(root, "examples"),
                        symlinks=True)
        uid = USERS[user]
        if uid is not None:
            for top, dirs, files in os.walk(root):
                os.lchown(top, uid, uid)
                for n in dirs + files:
                    os.lchown(os.path.join(top, n), uid, uid)
        return pr, os.path.join(root, "scripts", "demo")

    def demo(self, user, ralon, args=(), env=()):
        pr, script = self.demo_tree(user)
        e = pr.env()
        e.update({"RALON_BINARY": ralon, "TMPDIR": pr.tmp})
        e.update(dict(env))
        return run(["bash", script] + list(args), user, pr.base, e)

    def test_demo_under_each_backend(self):
        if shutil.which("cc", path=SAFE_PATH) is None:
            self.skipTest("no C compiler for the rogue agent's ordinary work")
        for backend, user in self.each_backend_and_user():
            with self.subTest(backend=backend, user=user):
                r = self.demo(user, Tools.ralon, ["--backend", backend])
                self.assertEqual(r.rc, 0, r)
                self.assertIn("5 path(s) locked via the %s backend" % backend, r.stderr, r)
                allowed = DEMO_ALLOWED_ATTACKS[backend]
                for what in DEMO_ATTACKS:
                    verdict = "allowed" if what in allowed else "BLOCKED"
                    self.assertRegex(r.stdout, r"(?m)^  %s  %s$" % (verdict, re.escape(what)), r)
                for what in DEMO_WORK:
                    self.assertRegex(r.stdout, r"(?m)^  allowed  %s$" % re.escape(what), r)
                n_allowed = len(allowed) + len(DEMO_WORK)
                self.assertIn("%d blocked, %d allowed" % (len(DEMO_ATTACKS) - len(allowed),
                                                        n_allowed), r.stdout, r)
                if backend == "mount":
                    self.assertIn("every protected file is exactly as it was", r.stdout, r)
                else:
                    self.assertIn("every protected file has the content and", r.stdout, r)
                    self.assertRegex(r.stdout, r"(?m)^> -rw-rw-rw- .* agent\.lock$", r)

    def test_demo_detects_what_an_unprotected_agent_does(self):
        fake = os.path.join(Tools.dir, "fake-ralon")
        if not os.path.exists(fake):
            with open(fake, "w", encoding="utf-8") as f:
                f.write(FAKE_RALON)
            os.chmod(fake, 0o755)
        # The rogue agent with nothing in its way: its writes are seen.
        r = self.demo(ME, fake, env={"FAKE_BACKEND": "mount", "FAKE_ACTION": "agent"})
        self.assertEqual(r.rc, 1, r)
        self.assertIn("PROTECTED FILES CHANGED", r.stdout, r)
        self.assertRegex(r.stdout, r"(?m)^  allowed  overwrite the golden test output$", r)
        # A mode change alone: a failure where the backend governs modes,
        # the documented gap where it is Landlock.
        chmod = {"FAKE_ACTION": "chmod 666 agent.lock"}
        r = self.demo(ME, fake, env=dict(chmod, FAKE_BACKEND="mount"))
        self.assertEqual(r.rc, 1, r)
        self.assertIn("PROTECTED MODES CHANGED", r.stdout, r)
        r = self.demo(ME, fake, env=dict(chmod, FAKE_BACKEND="landlock"))
        self.assertEqual(r.rc, 0, r)
        self.assertIn("which the Landlock backend does not govern", r.stdout, r)
        self.assertNotIn("CHANGED", r.stdout, r)


def tearDownModule():
    Tools.cleanup()


def setUpModule():
    if not os.path.exists(RALON_SRC):
        raise unittest.SkipTest("no ralon binary at %s (set RALON_BINARY)" % RALON_SRC)
    Tools.setup()


if __name__ == "__main__":
    unittest.main()
