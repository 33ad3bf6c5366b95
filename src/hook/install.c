/* SPDX-License-Identifier: Apache-2.0 */
/* Writes, upgrades and removes ralon's hook in each agent's configuration.
 *
 * JSON configurations are edited as documents (json-c), never as text: our
 * entry is found by its command, replaced where it stands, and everything
 * else is carried over in its order. Whether anything changed is decided by
 * comparing the document before and after, so a file that already holds
 * our hook is not rewritten, not even reformatted. */
#include "hook/install.h"

#include "hook/agent-desc.h"

#include <fcntl.h>
#include <inttypes.h>
#include "json.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"

/* A configuration larger than this is not a hook configuration. */
#define CONFIG_MAX_SIZE HOOK_CONFIG_MAX_SIZE

/* The key Antigravity's hooks.json names ralon's hook set by. */
#define NAMED_KEY "ralon"

const char *hook_change_kind_to_string(HookChangeKind k) {
  static const char *const names[_HOOK_CHANGE_MAX] = {
      [HOOK_CHANGE_WROTE] = "wrote",         [HOOK_CHANGE_UPDATED] = "updated",
      [HOOK_CHANGE_UNCHANGED] = "unchanged", [HOOK_CHANGE_REMOVED] = "removed",
      [HOOK_CHANGE_ABSENT] = "absent",
  };
  return k >= 0 && k < _HOOK_CHANGE_MAX ? names[k] : NULL;
}

void hook_change_clear(HookChange *c) {
  if (c == NULL) {
    return;
  }
  free(c->path);
  free(c->content);
  c->path = NULL;
  c->content = NULL;
}

/* ---- writing JSON ------------------------------------------------------- */

/* The one layout every file we write gets: two-space indent, "key": value,
 * empty containers as [] and {} (json-c's own pretty printer breaks those
 * over two lines), a final newline. Scalars are json-c's, which keeps a
 * parsed number's text (1.50 stays 1.50). */
static void json_write_string(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '"':
      fputs("\\\"", f);
      break;
    case '\\':
      fputs("\\\\", f);
      break;
    case '\b':
      fputs("\\b", f);
      break;
    case '\f':
      fputs("\\f", f);
      break;
    case '\n':
      fputs("\\n", f);
      break;
    case '\r':
      fputs("\\r", f);
      break;
    case '\t':
      fputs("\\t", f);
      break;
    default:
      if (c < 0x20) {
        fprintf(f, "\\u%04x", (unsigned)c);
      } else {
        fputc(c, f);
      }
    }
  }
  fputc('"', f);
}

static void json_write_value(FILE *f, json_object *o, unsigned indent) {
  switch (json_object_get_type(o)) {
  case json_type_null:
    fputs("null", f);
    return;
  case json_type_string:
    json_write_string(f, json_object_get_string(o), (size_t)json_object_get_string_len(o));
    return;
  case json_type_boolean:
  case json_type_int:
  case json_type_double:
    fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), f);
    return;
  case json_type_array: {
    size_t n = json_object_array_length(o);
    if (n == 0) {
      fputs("[]", f);
      return;
    }
    fputs("[\n", f);
    for (size_t i = 0; i < n; i++) {
      fprintf(f, "%*s", (int)indent + 2, "");
      json_write_value(f, json_object_array_get_idx(o, i), indent + 2);
      fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fprintf(f, "%*s]", (int)indent, "");
    return;
  }
  case json_type_object: {
    int n = json_object_object_length(o);
    if (n == 0) {
      fputs("{}", f);
      return;
    }
    fputs("{\n", f);
    int i = 0;
    json_object_object_foreach(o, key, value) {
      fprintf(f, "%*s", (int)indent + 2, "");
      json_write_string(f, key, strlen(key));
      fputs(": ", f);
      json_write_value(f, value, indent + 2);
      fputs(++i < n ? ",\n" : "\n", f);
    }
    fprintf(f, "%*s}", (int)indent, "");
    return;
  }
  }
}

char *hook_json_pretty(json_object *o) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL) {
    oom();
  }
  json_write_value(f, o, 0);
  fputc('\n', f);
  if (fclose(f) != 0) {
    oom();
  }
  return buf;
}

/* ---- reading JSON ------------------------------------------------------- */

static void json_putp(json_object **o) {
  if (*o != NULL) {
    json_object_put(*o);
  }
}
#define _cleanup_json_ _cleanup_(json_putp)

static void tokener_freep(struct json_tokener **t) {
  if (*t != NULL) {
    json_tokener_free(*t);
  }
}

static size_t tokener_end(struct json_tokener *tok) {
#if JSON_C_VERSION_NUM >= ((0 << 16) | (15 << 8))
  return json_tokener_get_parse_end(tok);
#else
  return (size_t)tok->char_offset;
#endif
}

static struct json_tokener *tokener_new(int flags) {
  struct json_tokener *tok = json_tokener_new();
  if (tok == NULL) {
    oom();
  }
  json_tokener_set_flags(tok, flags);
  return tok;
}

static bool blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!strchr(" \t\r\n", s[i])) {
      return false;
    }
  }
  return true;
}

/* Strict JSON only: json-c would otherwise accept comments and trailing
 * commas and we would silently drop them on the way back out. `text` is
 * NUL-terminated; the terminator is handed to the tokener as the end of
 * input, which a top-level scalar needs to be complete. */
static int json_parse(const char *path, const char *text, size_t len, json_object **ret,
                      Error *err) {
  const char *nul = memchr(text, '\0', len);
  if (nul != NULL) {
    len = (size_t)(nul - text);
  }
  int flags = JSON_TOKENER_STRICT;
#ifdef JSON_TOKENER_VALIDATE_UTF8
  flags |= JSON_TOKENER_VALIDATE_UTF8;
#endif
  __attribute__((cleanup(tokener_freep))) struct json_tokener *tok = tokener_new(flags);
  json_object *o = json_tokener_parse_ex(tok, text, (int)len + 1);
  enum json_tokener_error e = json_tokener_get_error(tok);
  if (e == json_tokener_success && nul == NULL) {
    *ret = o;
    return 0;
  }
  json_putp(&o);
  size_t end = e == json_tokener_success ? len : tokener_end(tok);
  unsigned line = 1, column = 1;
  for (size_t i = 0; i < end && i < len; i++) {
    if (text[i] == '\n') {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  if (nul != NULL && end >= len) {
    return error_set(err, EINVAL,
                     _("%s:%u:%u: not valid JSON (a NUL byte), so it will not be modified"), path,
                     line, column);
  }
  /* What json-c accepts when not strict, and whole. */
  __attribute__((cleanup(tokener_freep))) struct json_tokener *lenient = tokener_new(0);
  json_object *lo = json_tokener_parse_ex(lenient, text, (int)len + 1);
  json_putp(&lo);
  size_t lend = tokener_end(lenient);
  if (json_tokener_get_error(lenient) == json_tokener_success &&
      (lend >= len || blank(text + lend, len - lend))) {
    return error_set(err, EINVAL,
                     _("%s:%u:%u: not valid JSON (a comment, a trailing comma, or another "
                       "extension ralon would lose), so it will not be modified"),
                     path, line, column);
  }
  const char *what = e == json_tokener_continue || e == json_tokener_error_parse_eof
                         ? _("unexpected end of file")
                         : json_tokener_error_desc(e);
  return error_set(err, EINVAL, _("%s:%u:%u: not valid JSON (%s), so it will not be modified"),
                   path, line, column, what);
}

/* ---- our entries -------------------------------------------------------- */

static void add_string(json_object *o, const char *key, const char *value) {
  json_object_object_add(o, key, json_object_new_string(value));
}

void hook_json_add_string(json_object *o, const char *key, const char *value) {
  add_string(o, key, value);
}

json_object *hook_new_handler(const char *command) {
  json_object *h = json_object_new_object();
  add_string(h, "type", "command");
  add_string(h, "command", command);
  return h;
}

json_object *hook_new_group(const char *matcher, json_object *handler) {
  json_object *g = json_object_new_object();
  add_string(g, "matcher", matcher);
  json_object *hs = json_object_new_array();
  json_object_array_add(hs, handler);
  json_object_object_add(g, "hooks", hs);
  return g;
}

/* The shell command an agent runs. Most agents let the tool run when the
 * hook fails in any way but exit 2, and Gemini CLI and Qwen Code even on
 * exit 2 when nothing is printed; so every failure of ralon (missing after
 * `apt remove`, not executable, killed, crashed) becomes exit 2 with a
 * reason that says what happened and how to take the hook away. `where`
 * names the file holding the hook; `copilot` adds Copilot's JSON refusal,
 * the only reason it passes on. Not translated: the text must not depend
 * on the locale of whoever installed it, or reinstalling would rewrite
 * it. */
char *hook_blocking_command(const char *check, const char *where, bool owned, bool copilot) {
  /* Named only where the shell's double quotes keep the name as it is. */
  bool nameable = where != NULL && where[0] != '\0' && strpbrk(where, "\"$`\\\n!") == NULL;
  _cleanup_free_ char *undo =
      !nameable ? xstrdup("delete ralon's entry from this agent's hook configuration")
      : owned   ? xasprintf("delete %s", where)
                : xasprintf("delete ralon's entry in %s", where);
  return xasprintf(
      "%s || { s=$?; [ $s = 2 ] && exit 2; "
      "if [ $s = 127 ]; then w='ralon is not installed or not on PATH'; "
      "elif [ $s = 126 ]; then w='ralon cannot be executed'; "
      "elif [ $s -gt 128 ]; then w=\"ralon was killed by signal $((s - 128))\"; "
      "else w=\"ralon hook check failed with exit status $s\"; fi; "
      "m=\"agent.lock could not be checked ($w), so this tool call was refused. If ralon was "
      "removed on purpose, remove its hook: run 'ralon hook uninstall' where ralon is "
      "installed, or %s.\"; "
      "%s"
      "echo \"ralon: $m\" >&2; exit 2; }",
      check, undo,
      copilot ? "printf '{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"%s\"}\\n' "
                "\"$m\"; "
              : "");
}

/* One element of each event array of `a`: a matcher group, or for the
 * flat shapes a handler. `where`: the file, as the refusal names it. */
static json_object *build_entry(Agent a, const char *where) {
  return agent_desc(a)->entry(where);
}

static bool handler_is_ours(json_object *h) {
  static const char *const keys[] = {"command", "bash", "powershell"};
  if (!json_object_is_type(h, json_type_object)) {
    return false;
  }
  for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
    json_object *v;
    if (json_object_object_get_ex(h, keys[i], &v) && json_object_is_type(v, json_type_string) &&
        strstr(json_object_get_string(v), HOOK_COMMAND) != NULL) {
      return true;
    }
  }
  return false;
}

/* A matcher group's handler array, or NULL when it is not a group. */
static json_object *group_handlers(json_object *g) {
  json_object *hs;
  if (json_object_is_type(g, json_type_object) && json_object_object_get_ex(g, "hooks", &hs) &&
      json_object_is_type(hs, json_type_array)) {
    return hs;
  }
  return NULL;
}

static size_t count_ours(json_object *arr) {
  size_t n = 0;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    n += handler_is_ours(json_object_array_get_idx(arr, i));
  }
  return n;
}

/* Removes our handlers from `arr`, except that with `keep` the first one
 * is replaced by `keep` (a reference we hand over) instead. */
static void replace_ours(json_object *arr, json_object *keep) {
  for (size_t i = 0; i < json_object_array_length(arr);) {
    if (!handler_is_ours(json_object_array_get_idx(arr, i))) {
      i++;
    } else if (keep != NULL) {
      json_object_array_put_idx(arr, i, keep);
      keep = NULL;
      i++;
    } else {
      json_object_array_del_idx(arr, i, 1);
    }
  }
  json_putp(&keep);
}

/* Puts our entry into one event array: where our first handler stands
 * (the whole group when it holds nothing else, else that handler alone,
 * under its group's matcher), or appended. Other copies of ours go, and
 * groups they leave empty with them. */
static void install_event(Agent a, AgentShape shape, json_object *arr, bool *found,
                          const char *where) {
  bool placed = false;
  for (size_t i = 0; i < json_object_array_length(arr);) {
    json_object *e = json_object_array_get_idx(arr, i);
    if (shape == AGENT_SHAPE_FLAT) {
      if (!handler_is_ours(e)) {
        i++;
        continue;
      }
      *found = true;
      if (!placed) {
        json_object_array_put_idx(arr, i++, build_entry(a, where));
        placed = true;
      } else {
        json_object_array_del_idx(arr, i, 1);
      }
      continue;
    }
    json_object *hs = group_handlers(e);
    size_t ours = hs ? count_ours(hs) : 0;
    if (ours == 0) {
      i++;
      continue;
    }
    *found = true;
    if (!placed && ours == json_object_array_length(hs)) {
      json_object_array_put_idx(arr, i++, build_entry(a, where));
      placed = true;
      continue;
    }
    if (!placed) {
      json_object *entry = build_entry(a, where);
      json_object *handler = json_object_get(json_object_array_get_idx(group_handlers(entry), 0));
      json_object_put(entry);
      replace_ours(hs, handler);
      placed = true;
      i++;
      continue;
    }
    replace_ours(hs, NULL);
    if (json_object_array_length(hs) == 0) {
      json_object_array_del_idx(arr, i, 1);
    } else {
      i++;
    }
  }
  if (!placed) {
    json_object_array_add(arr, build_entry(a, where));
  }
}

/* Takes our handlers out of one event array, and the groups that held
 * nothing else. */
static void remove_event(AgentShape shape, json_object *arr, bool *found) {
  for (size_t i = 0; i < json_object_array_length(arr);) {
    json_object *e = json_object_array_get_idx(arr, i);
    if (shape == AGENT_SHAPE_FLAT) {
      if (handler_is_ours(e)) {
        *found = true;
        json_object_array_del_idx(arr, i, 1);
      } else {
        i++;
      }
      continue;
    }
    json_object *hs = group_handlers(e);
    if (hs == NULL || count_ours(hs) == 0) {
      i++;
      continue;
    }
    *found = true;
    replace_ours(hs, NULL);
    if (json_object_array_length(hs) == 0) {
      json_object_array_del_idx(arr, i, 1);
    } else {
      i++;
    }
  }
}

/* parent[key], checked to be of `type`; created when missing and
 * `create`, else *ret = NULL. A JSON null counts as missing. */
static int member(json_object *parent, const char *key, json_type type, bool create,
                  const char *path, const char *what, json_object **ret, Error *err) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(parent, key, &v) || v == NULL) {
    if (!create) {
      *ret = NULL;
      return 0;
    }
    v = type == json_type_object ? json_object_new_object() : json_object_new_array();
    json_object_object_add(parent, key, v);
  } else if (!json_object_is_type(v, type)) {
    if (type == json_type_object) {
      return error_set(err, EINVAL,
                       _("%s: `%s` is not a JSON object, so the file will not be modified"), path,
                       what);
    }
    return error_set(err, EINVAL,
                     _("%s: `%s` is not a JSON array, so the file will not be modified"), path,
                     what);
  }
  *ret = v;
  return 0;
}

/* Installs or removes our entries in the document `doc` (an object). */
static int edit_document(Agent a, json_object *doc, const char *path, const char *where,
                         bool remove, bool *found,
                         Error *err) {
  const AgentDesc *s = agent_desc(a);
  *found = false;
  if (s->shape == AGENT_SHAPE_NAMED) {
    /* The whole hook set under our name is ours. */
    json_object *v = NULL;
    *found = json_object_object_get_ex(doc, NAMED_KEY, &v);
    if (remove) {
      json_object_object_del(doc, NAMED_KEY);
      return 0;
    }
    json_object *set = json_object_new_object();
    json_object_object_add(set, "enabled", json_object_new_boolean(true));
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, build_entry(a, where));
    json_object_object_add(set, s->events[0], arr);
    /* An existing key keeps its place. */
    json_object_object_add(doc, NAMED_KEY, set);
    return 0;
  }

  if (!remove && s->versioned) {
    /* A versioned file (Cursor's): the version ahead of `hooks` in a new
     * file. */
    json_object *v;
    if (!json_object_object_get_ex(doc, "version", &v)) {
      json_object_object_add(doc, "version", json_object_new_int(1));
    }
  }
  json_object *hooks = NULL;
  if (member(doc, "hooks", json_type_object, !remove, path, "hooks", &hooks, err) < 0) {
    return -1;
  }
  if (hooks == NULL) {
    return 0;
  }
  bool removed_any = false;
  for (size_t i = 0; i < ELEMENTSOF(s->events) && s->events[i] != NULL; i++) {
    const char *event = s->events[i];
    _cleanup_free_ char *what = xasprintf("hooks.%s", event);
    json_object *arr = NULL;
    if (member(hooks, event, json_type_array, !remove, path, what, &arr, err) < 0) {
      return -1;
    }
    if (arr == NULL) {
      continue;
    }
    if (!remove) {
      install_event(a, s->shape, arr, found, where);
      continue;
    }
    bool here = false;
    remove_event(s->shape, arr, &here);
    if (here && json_object_array_length(arr) == 0) {
      json_object_object_del(hooks, event);
    }
    removed_any |= here;
  }
  *found |= removed_any;
  if (remove && removed_any && json_object_object_length(hooks) == 0) {
    json_object_object_del(doc, "hooks");
  }
  return 0;
}

/* ---- the files ---------------------------------------------------------- */

typedef struct {
  bool exists;
  char *text;
  size_t len;
  mode_t mode;
} ConfigFile;

static void config_file_clear(ConfigFile *f) {
  free(f->text);
}

static int read_config(const char *path, ConfigFile *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  struct stat st;
  if (lstat(path, &st) < 0) {
    if (errno == ENOENT) {
      return 0;
    }
    return error_set(err, errno, _("cannot read %s: %m"), path);
  }
  if (S_ISLNK(st.st_mode)) {
    return error_set(err, ELOOP,
                     _("%s is a symbolic link; ralon does not edit a configuration through a "
                       "link, so it will not be modified"),
                     path);
  }
  if (!S_ISREG(st.st_mode)) {
    return error_set(err, EINVAL, _("%s is not a regular file, so it will not be modified"),
                     path);
  }
  _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return error_set(err, errno, _("cannot read %s: %m"), path);
  }
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    return error_set(err, EINVAL, _("%s is not a regular file, so it will not be modified"),
                     path);
  }
  int r = read_fd_limited(fd, CONFIG_MAX_SIZE, &ret->text, &ret->len);
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot read %s: %m"), path);
  }
  ret->exists = true;
  ret->mode = st.st_mode & 0777;
  return 0;
}

/* The new text and what kind of change it is, for a JSON configuration.
 * An empty (or all-blank) file counts as an empty object. */
static int plan_json(Agent a, const char *path, const char *where, const ConfigFile *f,
                     bool remove, char **ret_text,
                     HookChangeKind *ret_kind, Error *err) {
  _cleanup_json_ json_object *doc = NULL;
  bool have = f->exists && !blank(f->text, f->len);
  if (have) {
    if (json_parse(path, f->text, f->len, &doc, err) < 0) {
      return -1;
    }
    if (!json_object_is_type(doc, json_type_object)) {
      return error_set(err, EINVAL,
                       _("%s does not contain a JSON object, so it will not be modified"), path);
    }
  }
  if (remove && doc == NULL) {
    *ret_text = NULL;
    *ret_kind = HOOK_CHANGE_ABSENT;
    return 0;
  }
  _cleanup_free_ char *before = doc ? hook_json_pretty(doc) : NULL;
  if (doc == NULL) {
    doc = json_object_new_object();
  }
  bool found;
  if (edit_document(a, doc, path, where, remove, &found, err) < 0) {
    return -1;
  }
  if (remove) {
    *ret_kind = found ? HOOK_CHANGE_REMOVED : HOOK_CHANGE_ABSENT;
    *ret_text = found ? hook_json_pretty(doc) : NULL;
    return 0;
  }
  char *after = hook_json_pretty(doc);
  if (before != NULL && streq(before, after)) {
    /* Ours already, exactly: leave the file as it is, layout and all. */
    free(after);
    *ret_text = xstrndup(f->text, f->len);
    *ret_kind = HOOK_CHANGE_UNCHANGED;
    return 0;
  }
  *ret_text = after;
  *ret_kind = found ? HOOK_CHANGE_UPDATED : HOOK_CHANGE_WROTE;
  return 0;
}

/* The same for a file ralon owns whole. */
static int plan_file(Agent a, const char *path, const char *where, const ConfigFile *f,
                     bool remove, char **ret_text,
                     HookChangeKind *ret_kind, Error *err) {
  bool ours = f->exists && (!agent_desc(a)->marked ||
                            memmem(f->text, f->len, HOOK_COMMAND, strlen(HOOK_COMMAND)));
  if (remove) {
    *ret_text = NULL;
    *ret_kind = ours ? HOOK_CHANGE_REMOVED : HOOK_CHANGE_ABSENT;
    return 0;
  }
  if (f->exists && !ours) {
    return error_set(err, EEXIST,
                     _("%s exists and was not written by ralon, so it will not be replaced"),
                     path);
  }
  char *text = agent_desc(a)->file(where);
  size_t len = strlen(text);
  if (!f->exists) {
    *ret_kind = HOOK_CHANGE_WROTE;
  } else if (f->len == len && memcmp(f->text, text, len) == 0) {
    *ret_kind = HOOK_CHANGE_UNCHANGED;
  } else {
    *ret_kind = HOOK_CHANGE_UPDATED;
  }
  *ret_text = text;
  return 0;
}

/* Project scope: the directory the file goes into must resolve inside
 * the project, or a symbolic link (.claude -> /elsewhere) would have us
 * write outside it. */
static int check_inside(const char *root, const char *path, Error *err) {
  _cleanup_free_ char *croot = realpath(root, NULL);
  if (croot == NULL) {
    return error_set(err, errno, _("cannot use %s: %m"), root);
  }
  _cleanup_free_ char *dir = path_dirname(path);
  _cleanup_free_ char *rdir = path_resolve(dir);
  if (rdir == NULL) {
    return error_set(err, errno, _("cannot resolve %s: %m"), dir);
  }
  if (path_relative(croot, rdir) == NULL) {
    return error_set(err, EXDEV,
                     _("%s leads outside the project (to %s) through a symbolic link, so ralon "
                       "will not write there"),
                     path, rdir);
  }
  return 0;
}

/* Makes `dir` and its missing parents (0755); each directory it made is
 * added to *made (absolute names, outermost first). */
static int make_parents(const char *dir, char ***made, size_t *n_made, Error *err) {
  _cleanup_free_ char *p = xstrdup(dir);
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s != '\0') {
      continue;
    }
    char c = *s;
    *s = '\0';
    if (mkdir(p, 0755) == 0) {
      *made = xreallocarray(*made, *n_made + 1, sizeof(char *));
      (*made)[(*n_made)++] = xstrdup(p);
    } else if (errno != EEXIST) {
      return error_set(err, errno, _("cannot create %s: %m"), p);
    }
    *s = c;
    if (c == '\0') {
      return 0;
    }
  }
}

/* ---- what ralon created ------------------------------------------------- */

const char *hook_env_dir(const char *name) {
  const char *v = name ? getenv(name) : NULL;
  return v != NULL && v[0] == '/' ? v : NULL;
}


/* `hook uninstall` removes what `hook install` created and nothing else:
 * the configuration file when ralon made it and nothing but ralon's
 * default is left in it, and the directories ralon made for it once they
 * are empty again. What it made is recorded, outside the project, in
 * $XDG_STATE_HOME/ralon/created.json (~/.local/state/ralon/…):
 *
 *   {"created": [{"path": "/p/.claude", "dev": "2049", "ino": "131",
 *                 "btime": "1796598992.692583114"},
 *                {"path": "/p/.claude/settings.json"}],
 *    "record": [the directories made to hold this file, the same way]}
 *
 * A directory counts only while it is the same directory (device and
 * inode, and its birth time where the filesystem keeps one: ext4 gives a
 * directory made again the inode number just freed): one the user
 * deleted and made again is theirs. Without a record
 * (another user installed, no HOME), uninstall removes ralon's hook and
 * leaves files and directories where they are. The record is the user's:
 * a damaged one is started afresh, and failing to write it never fails an
 * install (uninstall then keeps what it cannot tell was ralon's). */
#define RECORD_NAME "created.json"

static char *record_dir(const char *home) {
  const char *state = hook_env_dir("XDG_STATE_HOME");
  if (state != NULL) {
    return path_join(state, "ralon");
  }
  if (home == NULL || home[0] != '/') {
    return NULL;
  }
  return path_join(home, ".local/state/ralon");
}

static json_object *record_array(json_object *doc, const char *key) {
  json_object *v;
  if (!json_object_object_get_ex(doc, key, &v) || !json_object_is_type(v, json_type_array)) {
    v = json_object_new_array();
    json_object_object_add(doc, key, v);
  }
  return v;
}

/* Whether the record's directory and file, where they exist, are this
 * user's own, not symbolic links, and writable by no one else: the record
 * names files uninstall removes or gives back, so one planted elsewhere
 * through a link must not be read, written or removed. */
static bool record_trusted(const char *dir) {
  struct stat st;
  if (lstat(dir, &st) < 0) {
    return errno == ENOENT;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    return false;
  }
  _cleanup_free_ char *file = path_join(dir, RECORD_NAME);
  if (lstat(file, &st) < 0) {
    return errno == ENOENT;
  }
  return S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0;
}

/* The record, or an empty one. */
static json_object *record_load(const char *home) {
  _cleanup_free_ char *dir = record_dir(home);
  if (dir != NULL && !record_trusted(dir)) {
    free(dir);
    dir = NULL;
  }
  _cleanup_free_ char *file = dir ? path_join(dir, RECORD_NAME) : NULL;
  _cleanup_free_ char *text = file ? read_text_file(file, CONFIG_MAX_SIZE) : NULL;
  json_object *doc = text ? json_tokener_parse(text) : NULL;
  if (doc != NULL && !json_object_is_type(doc, json_type_object)) {
    json_object_put(doc);
    doc = NULL;
  }
  if (doc == NULL) {
    doc = json_object_new_object();
  }
  record_array(doc, "created");
  record_array(doc, "record");
  return doc;
}

static const char *entry_path(json_object *e) {
  json_object *v;
  return json_object_object_get_ex(e, "path", &v) && json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : NULL;
}

/* When the directory at `p` was made, as "SECONDS.NANOSECONDS", or NULL
 * where the filesystem does not say. */
static char *dir_birth(const char *p) {
  struct statx sx;
  if (statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) < 0 ||
      !(sx.stx_mask & STATX_BTIME)) {
    return NULL;
  }
  return xasprintf("%lld.%09u", (long long)sx.stx_btime.tv_sec, (unsigned)sx.stx_btime.tv_nsec);
}

/* Whether entry `e` still names what was made: a directory by device,
 * inode and birth time (where recorded); a file (rewritten whole on every
 * change) by its name. */
static bool entry_current(json_object *e) {
  const char *p = entry_path(e);
  struct stat st;
  if (p == NULL || lstat(p, &st) < 0) {
    return false;
  }
  json_object *dev, *ino;
  if (!json_object_object_get_ex(e, "ino", &ino)) {
    return S_ISREG(st.st_mode);
  }
  _cleanup_free_ char *want = xasprintf("%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
  _cleanup_free_ char *have = xasprintf(
      "%s:%s",
      json_object_object_get_ex(e, "dev", &dev) ? json_object_get_string(dev) : "",
      json_object_get_string(ino));
  if (!S_ISDIR(st.st_mode) || !streq(want, have)) {
    return false;
  }
  json_object *born;
  if (!json_object_object_get_ex(e, "btime", &born)) {
    return true;
  }
  _cleanup_free_ char *now = dir_birth(p);
  return now != NULL && streq(now, json_object_get_string(born));
}

static json_object *record_find(json_object *arr, const char *path) {
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    const char *p = entry_path(e);
    if (p != NULL && streq(p, path)) {
      return e;
    }
  }
  return NULL;
}

static void record_add(json_object *arr, const char *path, bool dir) {
  struct stat st;
  if (record_find(arr, path) != NULL || lstat(path, &st) < 0) {
    return;
  }
  json_object *e = json_object_new_object();
  add_string(e, "path", path);
  if (dir) {
    _cleanup_free_ char *dev = xasprintf("%ju", (uintmax_t)st.st_dev);
    _cleanup_free_ char *ino = xasprintf("%ju", (uintmax_t)st.st_ino);
    add_string(e, "dev", dev);
    add_string(e, "ino", ino);
    _cleanup_free_ char *born = dir_birth(path);
    if (born != NULL) {
      add_string(e, "btime", born);
    }
  }
  json_object_array_add(arr, e);
}

/* The record of the file `path`, while it is current. */
static json_object *record_file(json_object *doc, const char *path) {
  json_object *e = record_find(record_array(doc, "created"), path);
  return e != NULL && entry_current(e) ? e : NULL;
}

static const char *entry_string(json_object *e, const char *key) {
  json_object *v;
  return e != NULL && json_object_object_get_ex(e, key, &v) &&
                 json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : NULL;
}

static void record_forget(json_object *arr, const char *path) {
  for (size_t i = 0; i < json_object_array_length(arr);) {
    const char *p = entry_path(json_object_array_get_idx(arr, i));
    if (p != NULL && streq(p, path)) {
      json_object_array_del_idx(arr, i, 1);
    } else {
      i++;
    }
  }
}

/* After an install changed `path`: a file ralon made is recorded as made;
 * a file of the user's with the text it had and the text ralon wrote, so
 * that an uninstall finding ralon's text unchanged gives back the user's
 * bytes exactly (layout, comments of their own and all). An install
 * into a file ralon had already changed keeps the first text. */
static void record_write(json_object *created, const char *path, const ConfigFile *f,
                         const char *text) {
  json_object *e = record_find(created, path);
  const char *wrote = entry_string(e, "wrote");
  bool made = e != NULL && entry_string(e, "before") == NULL;
  if (e != NULL && !made && (wrote == NULL || !f->exists || f->len != strlen(wrote) ||
                             memcmp(f->text, wrote, f->len) != 0)) {
    /* Changed by someone else since: what it was is no longer known. */
    record_forget(created, path);
    e = NULL;
  }
  if (e == NULL && f->exists && memmem(f->text, f->len, HOOK_COMMAND, strlen(HOOK_COMMAND))) {
    return; /* ralon's hook was there before: not a text to give back */
  }
  if (e == NULL && !f->exists) {
    record_add(created, path, false);
    return;
  }
  if (e == NULL) {
    e = json_object_new_object();
    add_string(e, "path", path);
    json_object_object_add(e, "before", json_object_new_string(f->text));
    json_object_array_add(created, e);
  }
  if (!made) {
    json_object_object_add(e, "wrote", json_object_new_string(text));
  }
}

/* Entries that no longer name what was made go. */
static void record_prune(json_object *arr) {
  for (size_t i = 0; i < json_object_array_length(arr);) {
    if (entry_current(json_object_array_get_idx(arr, i))) {
      i++;
    } else {
      json_object_array_del_idx(arr, i, 1);
    }
  }
}

/* Removes the recorded directories of `arr` that are empty, innermost
 * first, as far as `stop` (itself kept; NULL: no limit). */
static void remove_made_dirs(json_object *arr, const char *from, const char *stop) {
  _cleanup_free_ char *dir = xstrdup(from);
  while (!streq(dir, "/") && (stop == NULL || !streq(dir, stop))) {
    json_object *e = record_find(arr, dir);
    if (e == NULL || !entry_current(e) || rmdir(dir) < 0) {
      break;
    }
    char *up = path_dirname(dir);
    free(dir);
    dir = up;
  }
}

/* Writes the record back; an empty one is removed, with the directories
 * made to hold it. Best effort (see above). */
static void record_save(const char *home, json_object *doc) {
  _cleanup_free_ char *dir = record_dir(home);
  if (dir == NULL || !record_trusted(dir)) {
    return;
  }
  json_object *created = record_array(doc, "created");
  json_object *own = record_array(doc, "record");
  record_prune(created);
  record_prune(own);
  _cleanup_free_ char *file = path_join(dir, RECORD_NAME);
  if (json_object_array_length(created) == 0) {
    if (unlink(file) == 0 || errno == ENOENT) {
      remove_made_dirs(own, dir, NULL);
    }
    return;
  }
  char **made = NULL;
  size_t n_made = 0;
  _cleanup_error_ Error e = {0};
  if (make_parents(dir, &made, &n_made, &e) == 0) {
    for (size_t i = 0; i < n_made; i++) {
      record_add(own, made[i], true);
    }
    _cleanup_free_ char *text = hook_json_pretty(doc);
    _cleanup_free_ char *old = read_text_file(file, CONFIG_MAX_SIZE);
    if (record_trusted(dir) && (old == NULL || !streq(old, text))) {
      (void)write_file_atomic_mode(dir, RECORD_NAME, text, strlen(text), true, 0600);
    }
  }
  strings_free(made, n_made);
}

/* Whether the JSON texts a and b hold the same document (layout aside). */
static bool same_document(const char *a, const char *b) {
  if (a == NULL || b == NULL) {
    return false;
  }
  _cleanup_json_ json_object *x = json_tokener_parse(a);
  _cleanup_json_ json_object *y = json_tokener_parse(b);
  return x != NULL && y != NULL && json_object_equal(x, y);
}

/* The text a file ralon made holds once ralon's hook is out of it again:
 * what an install into nothing writes, less the hook. */
static char *stub_text(Agent a) {
  _cleanup_json_ json_object *doc = json_object_new_object();
  bool found;
  _cleanup_error_ Error e = {0};
  if (edit_document(a, doc, "", NULL, false, &found, &e) < 0 ||
      edit_document(a, doc, "", NULL, true, &found, &e) < 0) {
    return NULL;
  }
  return hook_json_pretty(doc);
}

static int apply(Agent a, const char *path, const ConfigFile *f, const char *text, char ***made,
                 size_t *n_made, Error *err) {
  if (text == NULL) {
    if (unlink(path) < 0 && errno != ENOENT) {
      return error_set(err, errno, _("cannot remove %s: %m"), path);
    }
    return 0;
  }
  _cleanup_free_ char *dir = path_dirname(path);
  if (make_parents(dir, made, n_made, err) < 0) {
    return -1;
  }
  mode_t mode;
  if (f->exists) {
    mode = f->mode;
    if (agent_desc(a)->executable) {
      /* Whoever may read the script may run it. */
      mode |= (mode & 0444) >> 2;
    }
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = (agent_desc(a)->executable ? 0777 : 0666) & ~mask;
  }
  int r = write_file_atomic_mode(dir, path_basename(path), text, strlen(text), true, mode);
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot write %s: %m"), path);
  }
  return 0;
}

char *hook_config_path(Agent agent, const char *root, const char *home, bool user) {
  if (agent < 0 || agent >= _AGENT_MAX) {
    return NULL;
  }
  const AgentDesc *s = agent_desc(agent);
  if (!user) {
    return root ? path_join(root, s->project) : NULL;
  }
  /* Where the agent itself looks: CODEX_HOME, XDG_CONFIG_HOME, … */
  const char *dir = hook_env_dir(s->user_env);
  if (dir != NULL) {
    _cleanup_free_ char *p = path_join(dir, s->user_env_file);
    return path_normalize(p);
  }
  if (home == NULL || home[0] == '\0' || s->user == NULL) {
    return NULL;
  }
  return path_join(home, s->user);
}

int hook_install(Agent agent, const char *root, const char *home, bool user, bool remove,
                 bool dry_run, HookChange *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  if (agent < 0 || agent >= _AGENT_MAX) {
    return error_set(err, EINVAL, _("unknown agent"));
  }
  _cleanup_free_ char *path = hook_config_path(agent, root, home, user);
  if (path == NULL) {
    if (user && agent_desc(agent)->user == NULL) {
      return error_set(err, ENOTSUP,
                       _("%s has no user-level hook configuration that ralon knows of; install "
                         "its hook in the project instead"),
                       agent_display_name(agent));
    }
    return error_set(err, EINVAL,
                     user ? _("HOME is not set, so the user-level configuration cannot be found")
                          : _("no project directory given"));
  }
  if (!user && check_inside(root, path, err) < 0) {
    return -1;
  }
  _cleanup_(config_file_clear) ConfigFile f;
  if (read_config(path, &f, err) < 0) {
    return -1;
  }
  _cleanup_free_ char *text = NULL;
  HookChangeKind kind = HOOK_CHANGE_ABSENT;
  /* The file as the installed hook's refusal names it: relative to the
   * project (which may be cloned anywhere), or under ~. */
  _cleanup_free_ char *where = NULL;
  if (!user) {
    where = xstrdup(agent_desc(agent)->project);
  } else if (home != NULL && home[0] == '/' && path_relative(home, path) != NULL &&
             path_relative(home, path)[0] != '\0') {
    where = xasprintf("~/%s", path_relative(home, path));
  } else {
    where = xstrdup(path);
  }
  int r = agent_desc(agent)->shape == AGENT_SHAPE_FILE
              ? plan_file(agent, path, where, &f, remove, &text, &kind, err)
              : plan_json(agent, path, where, &f, remove, &text, &kind, err);
  if (r < 0) {
    return -1;
  }
  _cleanup_json_ json_object *record = record_load(home);
  json_object *entry = remove && kind == HOOK_CHANGE_REMOVED ? record_file(record, path) : NULL;
  const char *before = entry_string(entry, "before"), *wrote = entry_string(entry, "wrote");
  if (entry != NULL && before != NULL && wrote != NULL && f.len == strlen(wrote) &&
      memcmp(f.text, wrote, f.len) == 0 && same_document(before, text)) {
    /* The user's file as ralon left it: theirs again, byte for byte. The
     * record is outside every sandbox's protection, so what it holds is
     * given back only when it says what taking ralon's hook out says,
     * but for the layout: an agent that rewrote it cannot have its own
     * settings written into a protected file. */
    free(text);
    text = xstrdup(before);
  } else if (entry != NULL && before == NULL && text != NULL) {
    /* A file ralon made, holding nothing but what ralon put there. */
    _cleanup_free_ char *stub = stub_text(agent);
    if (stub != NULL && streq(stub, text)) {
      free(text);
      text = NULL;
    }
  }
  bool change = kind != HOOK_CHANGE_UNCHANGED && kind != HOOK_CHANGE_ABSENT;
  if (!dry_run) {
    char **made = NULL;
    size_t n_made = 0;
    r = change ? apply(agent, path, &f, text, &made, &n_made, err) : 0;
    /* What was made before a failure is recorded too. */
    json_object *created = record_array(record, "created");
    for (size_t i = 0; i < n_made; i++) {
      record_add(created, made[i], true);
    }
    strings_free(made, n_made);
    if (r == 0 && !remove && change) {
      record_write(created, path, &f, text);
    }
    if (r == 0 && remove) {
      if (change) {
        record_forget(created, path);
      }
      _cleanup_free_ char *dir = path_dirname(path);
      remove_made_dirs(created, dir, user ? NULL : root);
    }
    record_save(home, record);
    if (r < 0) {
      return -1;
    }
  }
  ret->agent = agent;
  ret->kind = kind;
  ret->path = steal_pointer(&path);
  ret->content = steal_pointer(&text);
  return 0;
}

int hook_is_installed(Agent agent, const char *root, const char *home, bool user, bool *ret,
                      Error *err) {
  /* Installed exactly when uninstalling would remove something. */
  HookChange c;
  if (hook_install(agent, root, home, user, true, true, &c, err) < 0) {
    return -1;
  }
  *ret = c.kind == HOOK_CHANGE_REMOVED;
  hook_change_clear(&c);
  return 0;
}

/* ---- detection, trust, PATH --------------------------------------------- */

static bool is_dir(const char *base, const char *rel) {
  if (base == NULL || base[0] == '\0') {
    return false;
  }
  _cleanup_free_ char *p = path_join(base, rel);
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool hook_detect(const char *root, const char *home, bool ret[_AGENT_MAX]) {
  bool any = false;
  for (int a = 0; a < _AGENT_MAX; a++) {
    const AgentDesc *d = agent_desc((Agent)a);
    ret[a] = false;
    for (size_t i = 0; i < ELEMENTSOF(d->detect) && d->detect[i].dir != NULL; i++) {
      const AgentDir *dir = &d->detect[i];
      if (((dir->where & AGENT_IN_PROJECT) && is_dir(root, dir->dir)) ||
          ((dir->where & AGENT_IN_HOME) && is_dir(home, dir->dir))) {
        ret[a] = true;
      }
    }
    /* The user-level directory the agent is told to use instead
     * (CODEX_HOME, …), or the agent's own directory in it. */
    const char *env = home != NULL ? hook_env_dir(d->user_env) : NULL;
    if (env != NULL && is_dir(env, d->user_env_dir ? d->user_env_dir : ".")) {
      ret[a] = true;
    }
    any |= ret[a];
  }
  return any;
}

const char *hook_trust_note(Agent agent) {
  const AgentDesc *d = agent_desc(agent);
  return d != NULL && d->trust_note != NULL ? _(d->trust_note) : NULL;
}

bool hook_ralon_on_path(const char *path_env, char **ret_found) {
  char *found = path_find_program(path_env, "ralon");
  if (found == NULL) {
    return false;
  }
  if (ret_found != NULL) {
    *ret_found = path_absolute(NULL, found);
    if (*ret_found == NULL) {
      *ret_found = steal_pointer(&found);
    }
  }
  free(found);
  return true;
}

/* ---- will it run here? -------------------------------------------------- */

const char *hook_runs_to_string(HookRuns r) {
  static const char *const names[_HOOK_RUNS_MAX] = {
      [HOOK_RUNS_YES] = "yes", [HOOK_RUNS_NO] = "no", [HOOK_RUNS_UNKNOWN] = "unknown"};
  return r >= 0 && r < _HOOK_RUNS_MAX ? names[r] : NULL;
}

json_object *hook_agent_json(const char *path) {
  _cleanup_free_ char *text = read_text_file(path, CONFIG_MAX_SIZE);
  json_object *doc = text ? json_tokener_parse(text) : NULL;
  if (doc != NULL && !json_object_is_type(doc, json_type_object)) {
    json_object_put(doc);
    doc = NULL;
  }
  return doc;
}

json_object *hook_json_at(json_object *doc, const char *const *keys) {
  for (; doc != NULL && *keys != NULL; keys++) {
    if (!json_object_is_type(doc, json_type_object) ||
        !json_object_object_get_ex(doc, *keys, &doc)) {
      return NULL;
    }
  }
  return doc;
}

bool hook_path_within(const char *path, const char *dir) {
  _cleanup_free_ char *p = path_normalize(path), *d = path_normalize(dir);
  return p[0] == '/' && d[0] == '/' && path_relative(d, p) != NULL;
}

/* Gemini CLI's folder trust, which Qwen Code inherited: `file` maps
 * folders to TRUST_FOLDER (it and below), TRUST_PARENT (its parent and
 * below) or DO_NOT_TRUST (exactly it); a rule that trusts wins. Returns 1
 * trusted, 0 distrusted, -1 undecided (the agent asks when started). */
static int folder_trust(const char *file, const char *root) {
  _cleanup_json_ json_object *doc = hook_agent_json(file);
  if (doc == NULL) {
    return -1;
  }
  int verdict = -1;
  json_object_object_foreach(doc, folder, level) {
    const char *l = json_object_is_type(level, json_type_string) ? json_object_get_string(level)
                                                                : "";
    if (streq(l, "TRUST_FOLDER") || streq(l, "TRUST_PARENT")) {
      _cleanup_free_ char *dir = streq(l, "TRUST_PARENT") ? path_dirname(folder)
                                                          : xstrdup(folder);
      if (hook_path_within(root, dir)) {
        return 1;
      }
    } else if (streq(l, "DO_NOT_TRUST") && hook_path_within(root, folder) &&
               hook_path_within(folder, root)) {
      verdict = 0;
    }
  }
  return verdict;
}

/* Whether the user turned folder trust off in the agent's settings
 * (security.folderTrust.enabled: false): then every folder counts. */
static bool folder_trust_off(const char *settings) {
  static const char *const keys[] = {"security", "folderTrust", "enabled", NULL};
  _cleanup_json_ json_object *doc = hook_agent_json(settings);
  json_object *v = hook_json_at(doc, keys);
  return v != NULL && json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v);
}

char *hook_agent_home(Agent a, const char *home) {
  const AgentDesc *d = agent_desc(a);
  const char *dir = hook_env_dir(d->user_env);
  if (dir != NULL) {
    /* GEMINI_CLI_HOME stands for the home directory, the others for the
     * agent's own directory. */
    return d->user_env_dir != NULL ? path_join(dir, d->user_env_dir) : xstrdup(dir);
  }
  return home != NULL && home[0] == '/' && d->home_dir != NULL ? path_join(home, d->home_dir)
                                                               : NULL;
}

HookRuns hook_runs_folder_trust(Agent a, const char *root, const char *home,
                                const char *trusted_file, char **note) {
  const char *name = agent_display_name(a);
  _cleanup_free_ char *dir = hook_agent_home(a, home);
  _cleanup_free_ char *file = trusted_file != NULL && trusted_file[0] == '/' ? xstrdup(trusted_file)
                              : dir != NULL ? path_join(dir, "trustedFolders.json")
                                            : NULL;
  _cleanup_free_ char *settings = dir != NULL ? path_join(dir, "settings.json") : NULL;
  if (settings != NULL && folder_trust_off(settings)) {
    return HOOK_RUNS_YES;
  }
  int t = file != NULL ? folder_trust(file, root) : -1;
  if (t == 1) {
    return HOOK_RUNS_YES;
  }
  if (t == 0) {
    *note = xasprintf(_("%s does not trust %s (%s), so it skips the project's settings and "
                        "this hook: trust the folder in %s, or install the hook with --user."),
                      name, root, file, name);
    return HOOK_RUNS_NO;
  }
  *note = xasprintf(_("%s runs this hook only in a trusted folder: when started in %s, trust "
                      "it (started with --skip-trust, it skips the project's settings and this "
                      "hook), or install the hook with --user."),
                    name, root);
  return HOOK_RUNS_UNKNOWN;
}

HookRuns hook_runs_here(Agent agent, const char *root, const char *home, bool user,
                        char **ret_note) {
  const AgentDesc *d = agent_desc(agent);
  _cleanup_free_ char *note = NULL;
  HookRuns r = HOOK_RUNS_YES;
  if (d == NULL) {
    /* no such agent */
  } else if (d->runs_here != NULL) {
    r = d->runs_here(root, home, user || root == NULL, &note);
  } else if (user || root == NULL) {
    /* A user-level hook runs in every project, trusted or not. */
  } else if (d->trust_note != NULL) {
    /* A trust that cannot be read (an IDE's workspace trust). */
    r = HOOK_RUNS_UNKNOWN;
    note = xstrdup(_(d->trust_note));
  }
  if (ret_note != NULL) {
    *ret_note = steal_pointer(&note);
  }
  return r;
}
