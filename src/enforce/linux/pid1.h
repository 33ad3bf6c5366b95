/* SPDX-License-Identifier: Apache-2.0 */
/* PID 1 of the mount backend's sandbox (guard.c), and the frozen
 * sandbox's state, which it and the guard compare. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Where PID 1 shares the guard's memory (pid1_start()), calling the
 * kernel directly: x86-64 and arm64, whose stacks grow down (the guard's
 * command_spawn() relies on that too). */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(__ILP32__)
#define PID1_SHARES_MEMORY 1
#endif

/* The longest message PID 1 receives ("W" and the frozen state). */
#define PID1_MSG_MAX (1024u * 1024u)

/* Starts PID 1 of the PID namespace this process made for its children
 * (unshare(CLONE_NEWPID)); it talks to the guard on `sock`, its end of a
 * SOCK_SEQPACKET pair, and closes every other descriptor it inherits.
 * Returns its pid, or -1 with errno.
 *
 * On x86-64 and arm64 it runs in this process's memory (clone(2) with
 * CLONE_VM, as a thread would, but in a process of its own): nothing of
 * the guard's memory is copied for it, or write-protected under the
 * guard until its first write. It then makes every system call itself
 * (errno is this process's) and allocates nothing; the stack and buffers
 * it runs on are never unmapped. Elsewhere, and under Valgrind, it is a
 * fork(2). */
pid_t pid1_start(int sock);

/* Whether this process runs under Valgrind (known where its header was
 * there at build time). Valgrind runs no clone(2) that shares memory but
 * a thread's (it exits, saying so) or vfork(2)'s, which it runs as a
 * fork(2) that must start on a stack of its own: PID 1 is then a fork,
 * and the command's process gets a stack mapped for it. */
bool pid1_under_valgrind(void);

/* What the frozen sandbox looks like: each thread of every process in the
 * /proc at proc_fd but PID 1, as "pid/tid state switches switches\n" (its
 * voluntary and involuntary context switches) or "pid/tid gone\n", in
 * the order /proc lists them. SIGSTOP is not a lock: the kernel itself can
 * send a stopped process SIGCONT (a POSIX timer, a file notification set
 * up with F_SETSIG), and it then runs while the user changes protected
 * files; a thread that ran, appeared or went shows here.
 *
 * Written to `out`; 0, or -1 when that /proc cannot be read. */
int pid1_snapshot(int proc_fd, FILE *out);

/* Whether the sandbox still looks as `before` (pid1_snapshot()'s text)
 * says: nothing in it has run since. */
bool pid1_snapshot_unchanged(int proc_fd, const char *before);
