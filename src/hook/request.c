/* SPDX-License-Identifier: Apache-2.0 */
/* Building a HookRequest: what the agent files share. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "hook/hook.h"
#include "path.h"

bool hook_request_charge(HookRequest *req, size_t units) {
  if (!req->over_budget && units <= HOOK_MAX_WORK - req->work) {
    req->work += units;
    return true;
  }
  req->over_budget = true;
  return false;
}

/* Appends a copy of `path` to `v` unless it is empty or there already:
 * each one costs a decision with symbolic links resolved, weighed against
 * HOOK_MAX_NAMES. */
static void add_unique(HookRequest *req, char ***v, size_t *n, const char *path) {
  if (path == NULL || path[0] == '\0' || !hook_request_charge(req, *n + 1)) {
    return;
  }
  for (size_t i = 0; i < *n; i++) {
    if (streq((*v)[i], path)) {
      return;
    }
  }
  size_t weight = 16;
  for (const char *c = path; (c = strchr(c, '/')) != NULL; c++) {
    weight++;
  }
  if (weight > HOOK_MAX_NAMES - req->names) {
    req->over_budget = true;
    return;
  }
  req->names += weight;
  if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, …: grown to twice its size */
    *v = xreallocarray(*v, *n ? 2 * *n : 1, sizeof(char *));
  }
  (*v)[(*n)++] = xstrdup(path);
}

void hook_request_add_path(HookRequest *req, const char *path) {
  add_unique(req, &req->paths, &req->n_paths, path);
}

void hook_request_add_tree(HookRequest *req, const char *path) {
  add_unique(req, &req->trees, &req->n_trees, path);
}

void hook_request_add_unread(HookRequest *req, const char *dir) {
  add_unique(req, &req->unread, &req->n_unread, dir);
}

void hook_request_add_entry(HookRequest *req, const char *path, bool tree) {
  if (tree) {
    add_unique(req, &req->entry_trees, &req->n_entry_trees, path);
  } else {
    add_unique(req, &req->entries, &req->n_entries, path);
  }
}

void hook_request_add_somewhere(HookRequest *req, const char *path, bool tree) {
  if (tree) {
    add_unique(req, &req->somewhere_trees, &req->n_somewhere_trees, path);
  } else {
    add_unique(req, &req->somewhere, &req->n_somewhere, path);
  }
}

void hook_request_add_command(HookRequest *req, const char *command) {
  if (command == NULL || command[0] == '\0') {
    return;
  }
  req->commands = xreallocarray(req->commands, req->n_commands + 1, sizeof(char *));
  req->commands[req->n_commands++] = xstrdup(command);
}

void hook_request_set_tool(HookRequest *req, const char *tool) {
  if (tool != NULL && req->tool == NULL) {
    req->tool = xstrdup(tool);
  }
}

void hook_request_set_cwd(HookRequest *req, const char *cwd) {
  if (cwd != NULL && cwd[0] == '/' && req->cwd == NULL) {
    req->cwd = xstrdup(cwd);
  }
}

void hook_request_set_shell_dir(HookRequest *req, const char *cwd, const char *dir) {
  if (dir == NULL || dir[0] == '\0') {
    return;
  }
  /* Relative to the payload's cwd, else to where the hook runs. */
  _cleanup_free_ char *where = path_absolute(cwd != NULL && cwd[0] == '/' ? cwd : NULL, dir);
  hook_request_set_cwd(req, where);
}

void hook_request_clear(HookRequest *req) {
  strings_free(req->paths, req->n_paths);
  strings_free(req->commands, req->n_commands);
  strings_free(req->trees, req->n_trees);
  strings_free(req->unread, req->n_unread);
  strings_free(req->entries, req->n_entries);
  strings_free(req->entry_trees, req->n_entry_trees);
  strings_free(req->somewhere, req->n_somewhere);
  strings_free(req->somewhere_trees, req->n_somewhere_trees);
  free(req->tool);
  free(req->cwd);
  free(req->not_understood);
  memset(req, 0, sizeof(*req));
}

const char *hook_json_string(json_object *o, const char *key) {
  json_object *v;
  if (o == NULL || !json_object_is_type(o, json_type_object) ||
      !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string)) {
    return NULL;
  }
  return json_object_get_string(v);
}

json_object *hook_json_object(json_object *o, const char *key, json_object **owned) {
  json_object *v;
  *owned = NULL;
  if (o == NULL || !json_object_is_type(o, json_type_object) ||
      !json_object_object_get_ex(o, key, &v)) {
    return NULL;
  }
  if (json_object_is_type(v, json_type_object)) {
    return v;
  }
  if (json_object_is_type(v, json_type_string)) {
    json_object *parsed = json_tokener_parse(json_object_get_string(v));
    if (parsed != NULL && json_object_is_type(parsed, json_type_object)) {
      *owned = parsed;
      return parsed;
    }
    json_object_put(parsed);
  }
  return NULL;
}

/* Copies the rest of the line after `p` with surrounding blanks removed. */
static char *line_rest(const char *p) {
  while (*p == ' ' || *p == '\t') {
    p++;
  }
  const char *e = strchrnul(p, '\n');
  while (e > p && isspace((unsigned char)e[-1])) {
    e--;
  }
  return xstrndup(p, (size_t)(e - p));
}

size_t hook_patch_paths(const char *text, HookRequest *req) {
  static const char *const headers[] = {
      "*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:",
  };
  size_t found = 0;
  if (strstr(text, "*** ") == NULL) {
    return 0; /* every header holds it: one fast scan for most texts */
  }
  for (const char *line = text; line != NULL && *line != '\0';) {
    const char *p = line;
    /* Codex trims whitespace around header lines. */
    while (*p == ' ' || *p == '\t') {
      p++;
    }
    for (size_t i = 0; i < ELEMENTSOF(headers); i++) {
      if (startswith(p, headers[i])) {
        _cleanup_free_ char *path = line_rest(p + strlen(headers[i]));
        if (path[0] != '\0') {
          hook_request_add_path(req, path);
          found++;
        }
        break;
      }
    }
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
  return found;
}

/* A key naming a path, once lowercased and without `_` and `-`. Strings
 * under such a key that are no path (`"to": "v2"`) simply match nothing;
 * a key missing here lets a tool move a protected file unseen (the MCP
 * filesystem server's move_file {source, destination}). */
static bool path_key(const char *key) {
  static const char *const keys[] = {
      "filepath",    "path",        "paths",           "notebookpath", "targetfile",
      "targetpath",  "targetnotebook", "abspath",      "absolutepath", "oldpath",
      "newpath",     "destination", "destinationpath", "sourcepath",   "file",
      "filename",    "files",       "source",          "src",          "from",
      "to",          "target",      "dest",            "destpath",     "oldfilepath",
      "newfilepath", "uri",         "outputpath",      "output",       "out",
      "outfile",     "outputfile",  "outpath",         "destfile",     "destinationfile",
  };
  char k[32];
  size_t n = 0;
  for (const char *p = key; *p != '\0'; p++) {
    if (*p == '_' || *p == '-') {
      continue;
    }
    if (n + 1 >= sizeof(k)) {
      return false;
    }
    k[n++] = (char)tolower((unsigned char)*p);
  }
  k[n] = '\0';
  for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
    if (streq(k, keys[i])) {
      return true;
    }
  }
  return false;
}

static int hex_digit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* The path of a `file://` URI (MCP tools name files so), percent-escapes
 * decoded; NULL when `s` is no such URI. The host, if any, is dropped: a
 * file on another machine is named as if it were here, which at worst
 * refuses too much. An escaped NUL ends the path, as the kernel would.
 * With `query`, a `?` or `#` is part of the name (a client that did not
 * escape it), else it ends the path. */
static char *file_uri_path(const char *s, bool query) {
  if (strncasecmp(s, "file:", 5) != 0) {
    return NULL;
  }
  const char *p = s + 5;
  if (startswith(p, "//")) {
    p = strchrnul(p + 2, '/'); /* file:///x, file://localhost/x */
  } else if (*p != '/') {
    return NULL; /* file:x is no absolute URI: a name like any other */
  }
  char *out = xmalloc(strlen(p) + 1);
  size_t n = 0;
  for (; *p != '\0' && (query || (*p != '?' && *p != '#')); p++) {
    int hi, lo;
    if (*p == '%' && (hi = hex_digit(p[1])) >= 0 && (lo = hex_digit(p[2])) >= 0) {
      if (hi == 0 && lo == 0) {
        break;
      }
      out[n++] = (char)(hi * 16 + lo);
      p += 2;
    } else {
      out[n++] = *p;
    }
  }
  out[n] = '\0';
  return out;
}

static size_t generic_walk(json_object *v, bool under_path_key, HookRequest *req, int depth) {
  size_t found = 0;
  if (v == NULL || depth > 64) {
    return 0;
  }
  switch (json_object_get_type(v)) {
  case json_type_string: {
    const char *s = json_object_get_string(v);
    if (under_path_key) {
      _cleanup_free_ char *uri = file_uri_path(s, false);
      _cleanup_free_ char *whole = uri ? file_uri_path(s, true) : NULL;
      hook_request_add_path(req, uri ? uri : s);
      hook_request_add_path(req, whole); /* the same name, unless `?#` */
      found++;
    } else if (strstr(s, "*** ") != NULL) {
      found += hook_patch_paths(s, req);
    }
    break;
  }
  case json_type_array:
    for (size_t i = 0; i < json_object_array_length(v); i++) {
      found += generic_walk(json_object_array_get_idx(v, i), under_path_key, req, depth + 1);
    }
    break;
  case json_type_object: {
    json_object_object_foreach(v, key, child) {
      found += generic_walk(child, path_key(key), req, depth + 1);
    }
    break;
  }
  case json_type_null:
  case json_type_boolean:
  case json_type_double:
  case json_type_int:
    break;
  }
  return found;
}

size_t hook_generic_paths(json_object *input, HookRequest *req) {
  return generic_walk(input, false, req, 0);
}

char *hook_json_line(json_object *o) {
  char *s = xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(o);
  return s;
}

const char *hook_reason(const HookVerdict *v) {
  return v->reason ? v->reason : "";
}

/* Whether the word `w` (`len` bytes, lowercase) is one of `list`. */
static bool word_in(const char *w, size_t len, const char *const *list) {
  for (size_t i = 0; list[i] != NULL; i++) {
    if (strlen(list[i]) == len && memcmp(w, list[i], len) == 0) {
      return true;
    }
  }
  return false;
}

/* Whether a word of `name` starts at name[i]: after a separator (anything
 * but a letter or digit), or at a change of case (readFile, HTMLView). */
static bool word_starts(const char *name, size_t i) {
  unsigned char c = (unsigned char)name[i], prev = i ? (unsigned char)name[i - 1] : 0;
  if (i == 0 || !isalnum(prev)) {
    return true;
  }
  return isupper(c) && (islower(prev) || isdigit(prev) ||
                        (isupper(prev) && islower((unsigned char)name[i + 1])));
}

bool hook_tool_reads_only(const char *tool) {
  static const char *const reads[] = {"read", "view", "open", "cat",   "grep", "search",
                                      "glob", "list", "ls",   "find",  "fetch", NULL};
  static const char *const writes[] = {"write", "edit",   "create", "replace", "patch",
                                       "insert", "delete", "remove", "rename", "move",
                                       "update", "save",   "append", "exec",  "run",
                                       "command", "shell", "bash",  NULL};
  /* Short ones only as whole words: `rm` is in format, `cp` in scp. */
  static const char *const write_words[] = {"mv",    "cp",     "rm",    "copy",  "unlink",
                                            "chmod", "chown",  "touch", "modify", "set",
                                            "put",   "truncate", "mkdir", "rmdir", "link",
                                            "symlink", "del",  "upload", "download", "apply",
                                            "install", NULL};
  size_t len = strlen(tool);
  _cleanup_free_ char *lower = xmalloc(len + 1);
  for (size_t i = 0; i <= len; i++) {
    lower[i] = (char)tolower((unsigned char)tool[i]);
  }
  /* A write anywhere, even inside a word (overwrite), and it is no read. */
  for (size_t i = 0; writes[i] != NULL; i++) {
    if (strstr(lower, writes[i]) != NULL) {
      return false;
    }
  }
  /* A read verb only as a whole word: `cat` is in duplicate and relocate.
   * A write word anywhere wins over it (list_then_mv). */
  bool reads_only = false;
  for (size_t i = 0; i < len; i++) {
    if (!isalnum((unsigned char)tool[i]) || !word_starts(tool, i)) {
      continue;
    }
    size_t e = i + 1;
    while (e < len && isalnum((unsigned char)tool[e]) && !word_starts(tool, e)) {
      e++;
    }
    if (word_in(lower + i, e - i, write_words)) {
      return false;
    }
    reads_only |= word_in(lower + i, e - i, reads);
  }
  return reads_only;
}

bool hook_input_patch(json_object *payload, const char *key, HookRequest *req) {
  json_object *v;
  if (payload == NULL || !json_object_is_type(payload, json_type_object) ||
      !json_object_object_get_ex(payload, key, &v) || !json_object_is_type(v, json_type_string)) {
    return false;
  }
  const char *text = json_object_get_string(v);
  HookRequest found = {0};
  size_t n = hook_patch_paths(text, &found);
  hook_request_clear(&found);
  if (n == 0 && strstr(text, "*** Begin Patch") == NULL) {
    return false;
  }
  hook_request_set_tool(req, hook_json_string(payload, "tool_name"));
  hook_request_set_tool(req, hook_json_string(payload, "toolName"));
  hook_request_set_cwd(req, hook_json_string(payload, "cwd"));
  if (hook_patch_paths(text, req) == 0) {
    req->unknown_target = true;
  }
  return true;
}

bool hook_input_invalid(json_object *payload, json_object *input, const char *key,
                        HookRequest *req) {
  json_object *v;
  if (input != NULL || payload == NULL || !json_object_object_get_ex(payload, key, &v) ||
      json_object_is_type(v, json_type_null)) {
    return false;
  }
  if (req->not_understood == NULL) {
    req->not_understood = xasprintf(_("`%s` is not an object"), key);
  }
  return true;
}
