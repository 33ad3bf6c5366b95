/* SPDX-License-Identifier: Apache-2.0 */
/* The commands whose operands are files they write, and how to read their
 * options: what the shell reader (shell.c, command_writes) looks up for
 * each simple command. A command missing here writes nothing the hook
 * sees; the kernel is the boundary. */
#include <string.h>

#include "hook/shell.h"
#include "util.h"

static const char *const none[] = {NULL};
static const char *const shred_longs[] = {"--iterations", "--size", "--random-source", NULL};
static const char *const truncate_longs[] = {"--size", "--reference", NULL};
static const char *const touch_longs[] = {"--date", "--reference", NULL};
static const char *const mv_longs[] = {"--suffix", "--target-directory", NULL};
static const char *const cp_longs[] = {"--suffix", "--target-directory", "--sparse",
                                       "--no-preserve", NULL};
static const char *const install_longs[] = {"--suffix", "--target-directory", "--mode",
                                            "--owner",  "--group", "--strip-program", NULL};
static const char *const rsync_longs[] = {
    "--exclude",       "--include",       "--exclude-from",  "--include-from", "--files-from",
    "--filter",        "--rsh",           "--rsync-path",    "--temp-dir",     "--compare-dest",
    "--copy-dest",     "--link-dest",     "--backup-dir",    "--suffix",       "--chmod",
    "--chown",         "--usermap",       "--groupmap",      "--log-file",     "--log-file-format",
    "--out-format",    "--password-file", "--partial-dir",   "--max-size",     "--min-size",
    "--max-delete",    "--bwlimit",       "--timeout",       "--contimeout",   "--port",
    "--sockopts",      "--protocol",      "--iconv",         "--compress-choice",
    "--checksum-choice", "--modify-window", "--block-size",  "--skip-compress",
    "--remote-option", "--info",          "--debug",         NULL};
static const char *const chmod_longs[] = {"--reference", "--from", NULL};
static const char *const setfacl_longs[] = {"--modify", "--modify-file", "--remove",
                                            "--remove-file", "--set", "--set-file", NULL};
static const char *const setfattr_longs[] = {"--name", "--value", "--remove", NULL};

#define OPERANDS SHELL_WRITES_OPERANDS
#define COPY SHELL_WRITES_COPY
#define TREE SHELL_WRITER_TREE
#define SKIP SHELL_WRITER_SKIP_FIRST
#define TDIR SHELL_WRITER_TARGET_DIR
#define RECR SHELL_WRITER_RECURSIVE_R

static const ShellWriter writers[] = {
    /* Removed, with their subtree where -r would take it (rm -r, rmdir's
     * parents): decided as trees. */
    {"rm", OPERANDS, TREE | SHELL_WRITER_ENTRIES, "", none},
    {"unlink", OPERANDS, SHELL_WRITER_ENTRIES, "", none},
    {"rmdir", OPERANDS, TREE, "", none},
    {"shred", OPERANDS, TREE, "ns", shred_longs},
    {"truncate", OPERANDS, 0, "sr", truncate_longs},
    {"touch", OPERANDS, 0, "dtr", touch_longs},
    {"tee", OPERANDS, 0, "", none},
    /* Sources leave their place, the destination is written: a recursive
     * copy that removes its sources. */
    {"mv", COPY, TDIR | SHELL_WRITER_MOVES, "St", mv_longs},
    {"cp", COPY, TDIR, "St", cp_longs},
    {"install", COPY, TDIR, "Stmog", install_longs},
    {"ln", COPY, TDIR | SHELL_WRITER_LINKS, "St", cp_longs},
    {"link", COPY, TDIR | SHELL_WRITER_LINKS | SHELL_WRITER_NO_TARGET_DIR, "St", cp_longs},
    {"rsync", COPY, 0, "BefMT@", rsync_longs},
    /* The mode or owner first. */
    {"chmod", OPERANDS, SKIP | RECR, "", chmod_longs},
    {"chown", OPERANDS, SKIP | RECR, "", chmod_longs},
    {"chgrp", OPERANDS, SKIP | RECR, "", chmod_longs},
    {"chattr", OPERANDS, SKIP | RECR, "vp", chmod_longs},
    {"setfacl", OPERANDS, RECR, "mMxX", setfacl_longs},
    {"setfattr", OPERANDS, 0, "nvx", setfattr_longs},
    /* Only with -i; the script is the first operand unless -e/-f give it. */
    {"sed", SHELL_WRITES_IN_PLACE, 0, "efl", none},
    {"perl", SHELL_WRITES_IN_PLACE, 0, "eEI", none},
    {"dd", SHELL_WRITES_DD, 0, "", none},
};

const ShellWriter *shell_writers(size_t *ret_n) {
  *ret_n = ELEMENTSOF(writers);
  return writers;
}

const ShellWriter *shell_writer_find(const char *name) {
  for (size_t i = 0; i < ELEMENTSOF(writers); i++) {
    if (writers[i].name[0] == name[0] && strcmp(writers[i].name, name) == 0) {
      return &writers[i];
    }
  }
  return NULL;
}
