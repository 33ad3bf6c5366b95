/* SPDX-License-Identifier: Apache-2.0 */
#include "policy.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "matcher.h"
#include "audit.h"
#include "path.h"

/* What to write, shown when a policy protects nothing. */
#define POLICY_EXAMPLE "    protect:\n      - src/auth.c\n      - tests/golden/**"

void policy_free(Policy *p) {
  if (p == NULL) {
    return;
  }
  arena_free(&p->strings);
  free(p->text);
  free(p->patterns);
  free(p->positions);
  free(p->plain);
  free(p->file);
  free(p->root);
  free(p->enclosing_by_link);
  free(p);
}

/* Line and column (1-based, counted in characters) of byte `off`. */
static void position_of(const char *text, size_t off, unsigned *line, unsigned *col) {
  unsigned l = 1, c = 1;
  size_t i = 0;
  /* A byte order mark is not a column, as libyaml counts. */
  if (off >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
    i = 3;
  }
  for (; i < off; i++) {
    if (text[i] == '\n') {
      l++;
      c = 1;
    } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
      c++;
    }
  }
  *line = l;
  *col = c;
}

/* A `:` names a drive or a URL scheme, except inside a bracket expression
 * such as `[[:digit:]]`. */
static bool colon_outside_class(const char *s) {
  for (size_t i = 0; s[i] != '\0'; i++) {
    if (s[i] == '[') {
      size_t j = i + 1;
      if (s[j] == '!' || s[j] == '^') {
        j++;
      }
      if (s[j] == ']') {
        j++;
      }
      for (; s[j] != '\0' && s[j] != ']'; j++) {
        if (s[j] == '[' && (s[j + 1] == ':' || s[j + 1] == '.' || s[j + 1] == '=')) {
          const char *close = strstr(s + j + 2, (char[]){s[j + 1], ']', '\0'});
          if (close == NULL) {
            break;
          }
          j = (size_t)(close - s) + 1;
        }
      }
      if (s[j] == ']') {
        i = j; /* past the class; an unclosed `[` is an ordinary character */
      }
    } else if (s[i] == ':') {
      return true;
    }
  }
  return false;
}

int policy_normalize_pattern(const char *in, size_t len, char **ret, char **ret_reason) {
  *ret_reason = NULL;
  if (memchr(in, '\0', len) != NULL) {
    *ret_reason = xstrdup(_("a pattern may not contain a NUL character"));
    return -1;
  }
  /* Trim blanks, as the Rust ralon does. */
  while (len > 0 && strchr(" \t\r\n", in[0]) != NULL) {
    in++, len--;
  }
  while (len > 0 && strchr(" \t\r\n", in[len - 1]) != NULL) {
    len--;
  }
  _cleanup_free_ char *s = xstrndup(in, len);
  if (len == 0) {
    *ret_reason = xstrdup(_("empty pattern"));
    return -1;
  }
  if (s[0] == '!') {
    *ret_reason = xasprintf(_("negation is not supported in version 1: `%s`"), s);
    return -1;
  }
  if (s[0] == '~') {
    *ret_reason = xasprintf(_("`~` is not expanded: `%s`; patterns are relative to agent.lock"), s);
    return -1;
  }
  /* Policies are shared by mixed teams: a backslash separates, too. */
  for (char *p = s; *p != '\0'; p++) {
    if (*p == '\\') {
      *p = '/';
    }
  }
  if (s[0] == '/') {
    *ret_reason =
        xasprintf(_("absolute paths are not allowed, patterns are relative to agent.lock: `%s`"), s);
    return -1;
  }
  if (colon_outside_class(s)) {
    *ret_reason = xasprintf(
        _("`:` is not allowed (drive letters and URLs are not project paths): `%s`"), s);
    return -1;
  }
  if (len >= PATH_MAX) {
    *ret_reason = xasprintf(_("a pattern may not be longer than %d bytes"), PATH_MAX - 1);
    return -1;
  }

  /* Rebuild segment by segment: drop empty and "." segments (which covers
   * one leading "./" and a trailing "/"), refuse "..". */
  char *out = xmalloc(len + 1);
  size_t o = 0;
  for (char *seg = s, *next; seg != NULL; seg = next) {
    char *slash = strchr(seg, '/');
    next = slash ? slash + 1 : NULL;
    if (slash) {
      *slash = '\0';
    }
    if (seg[0] == '\0' || streq(seg, ".")) {
      continue;
    }
    if (streq(seg, "..")) {
      free(out);
      *ret_reason = xasprintf(_("`..` may not be used to escape the project root: `%.*s`"),
                              (int)len, in);
      return -1;
    }
    if (o > 0) {
      out[o++] = '/';
    }
    size_t n = strlen(seg);
    memcpy(out + o, seg, n);
    o += n;
  }
  out[o] = '\0';
  if (o == 0) {
    free(out);
    *ret_reason = xasprintf(
        _("`%.*s` does not name anything inside the project (to protect everything, write `**`)"),
        (int)len, in);
    return -1;
  }
  char *why = NULL;
  if (matcher_check_pattern(out, &why) < 0) {
    free(out);
    *ret_reason = why;
    return -1;
  }
  *ret = out;
  return 0;
}

/* Only blanks and comment lines (libyaml refuses a tab where YAML
 * indentation could start, even on a line that holds nothing). */
static bool text_is_blank(const char *text, size_t len) {
  size_t i = 0;
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
    i = 3;
  }
  bool line_start = true, comment = false;
  for (; i < len; i++) {
    char c = text[i];
    if (c == '\n') {
      line_start = true;
      comment = false;
    } else if (comment || c == ' ' || c == '\t' || c == '\r') {
      continue;
    } else if (c == '#' && line_start) {
      comment = true;
    } else {
      return false;
    }
  }
  return true;
}

typedef struct {
  const char *file;
  const char *text;
  size_t len;
  /* Or the file, read through libyaml's own buffer (policy_load): no text
   * to quote, so any refusal is left to the whole text's reading
   * (parse_text), which says what is wrong and where. */
  struct Stream *stream;
  /* Where patterns written in their normal form (most) are copied to, one
   * after the other: `cap` bytes, of which `used` are, and `ahead` mapped
   * in (prefault_ahead). They are in the policy's `text` afterwards. */
  char *copies;
  size_t copies_cap, copies_used, copies_ahead;
  yaml_parser_t parser;
  Error *err;
  /* Entries of the policy's arrays (`cap` each), and the bytes of each
   * mapped in ahead (prefault_ahead). */
  size_t cap, ahead_patterns, ahead_positions;
} Parse;

ATTR_PRINTF(3, 4)
static int fail_at(Parse *ps, const yaml_mark_t *m, const char *fmt, ...) {
  _cleanup_free_ char *what = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&what, fmt, ap) < 0) {
    oom();
  }
  va_end(ap);
  return error_set(ps->err, EINVAL, "%s:%zu:%zu: %s", ps->file, m->line + 1, m->column + 1, what);
}

static const char *event_noun(const yaml_event_t *ev) {
  switch (ev->type) {
  case YAML_SEQUENCE_START_EVENT:
    return _("a list");
  case YAML_MAPPING_START_EVENT:
    return _("a mapping");
  case YAML_SCALAR_EVENT:
    return _("a value");
  case YAML_ALIAS_EVENT:
    return _("an alias");
  case YAML_DOCUMENT_START_EVENT:
    return _("a second document");
  case YAML_NO_EVENT:
  case YAML_STREAM_START_EVENT:
  case YAML_STREAM_END_EVENT:
  case YAML_DOCUMENT_END_EVENT:
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT:
    break;
  }
  return _("the end of the document");
}

/* Where mark `m` is in the text: libyaml counts lines and characters (not
 * bytes) in a line. */
static const char *text_at(const Parse *ps, const yaml_mark_t *m) {
  const char *s = ps->text, *end = ps->text + ps->len;
  if (ps->len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
    s += 3;
  }
  for (size_t line = 0; line < m->line && s < end; s++) {
    line += *s == '\n';
  }
  for (size_t col = 0; s < end && *s != '\n'; s++) {
    if (((unsigned char)*s & 0xC0) != 0x80 && col++ == m->column) {
      return s;
    }
  }
  return s;
}

/* The two mistakes everyone makes first get a message that says what to
 * do, not libyaml's: a pattern starting with `*` (or another character
 * YAML reserves) left unquoted, and a tab in the indentation. Returns -1
 * with the error set, or 0 for any other problem. */
static int fail_friendly(Parse *ps) {
  const yaml_parser_t *y = &ps->parser;
  const char *problem = y->problem != NULL ? y->problem : "";
  const char *context = y->context != NULL ? y->context : "";
  const char *at = text_at(ps, &y->problem_mark);
  const char *end = ps->text + ps->len;
  if (strstr(problem, "tab") != NULL || (at < end && *at == '\t')) {
    return fail_at(ps, &y->problem_mark,
                   _("a tab character: YAML indents with spaces only; replace the tab with "
                     "spaces"));
  }
  const yaml_mark_t *m = NULL;
  if (strstr(context, "while scanning an alias") != NULL ||
      strstr(context, "while scanning an anchor") != NULL) {
    m = &y->context_mark; /* the `*` or `&` */
  } else if (strstr(problem, "cannot start any token") != NULL && at < end &&
             (*at == '@' || *at == '`')) {
    m = &y->problem_mark;
  }
  if (m == NULL) {
    return 0;
  }
  /* The pattern as written: to the end of the line, a comment or (in a
   * flow list) the next `,` or `]`. A mark past the text (libyaml's at
   * the end of the stream) names nothing to quote. */
  const char *start = text_at(ps, m), *stop = start;
  if (start >= end) {
    return 0;
  }
  bool flow = y->flow_level > 0;
  while (stop < end && *stop != '\n' && *stop != '\0' && *stop != '\r' &&
         !(flow && (*stop == ',' || *stop == ']')) &&
         !(stop > start && *stop == '#' && (stop[-1] == ' ' || stop[-1] == '\t'))) {
    stop++;
  }
  while (stop > start && (stop[-1] == ' ' || stop[-1] == '\t')) {
    stop--;
  }
  /* Quoted as YAML reads it back: in double quotes unless a `"` or `\`
   * would need escaping there, else in single quotes (`'` doubled). */
  _cleanup_free_ char *raw = xstrndup(start, (size_t)(stop - start));
  bool single = strpbrk(raw, "\"\\") != NULL;
  char *quoted = xmalloc(2 * strlen(raw) + 3), *q = quoted;
  *q++ = single ? '\'' : '"';
  for (const char *c = raw; *c; c++) {
    if (single && *c == '\'') {
      *q++ = '\'';
    }
    *q++ = *c;
  }
  *q++ = single ? '\'' : '"';
  *q = '\0';
  _cleanup_free_ char *word = text_display(quoted);
  free(quoted);
  if (*start == '@' || *start == '`') {
    return fail_at(ps, m,
                   _("a pattern that starts with `%c` must be quoted (YAML reserves the "
                     "character): write %s"),
                   *start, word);
  }
  if (*start == '&') {
    return fail_at(ps, m,
                   _("a pattern that starts with `&` must be quoted, or YAML reads it as an "
                     "anchor: write %s"),
                   word);
  }
  return fail_at(ps, m,
                 _("a pattern that starts with `*` must be quoted, or YAML reads it as an "
                   "alias: write %s"),
                 word);
}

/* Next event, with every YAML feature a policy has no use for refused:
 * aliases and anchors (the "billion laughs"), tags. */
static int next_event(Parse *ps, yaml_event_t *ev) {
  if (!yaml_parser_parse(&ps->parser, ev)) {
    if (ps->stream != NULL) {
      return -1; /* no text to point at: parse_text says what it is */
    }
    if (fail_friendly(ps) < 0) {
      return -1;
    }
    const yaml_mark_t *m = &ps->parser.problem_mark;
    const char *problem = ps->parser.problem ? ps->parser.problem : _("unknown error");
    if (ps->parser.context != NULL) {
      /* An unterminated quote or list ends at the end of the file: where
       * it starts is where to look. */
      if (strstr(problem, "end of stream") != NULL) {
        m = &ps->parser.context_mark;
      }
      return fail_at(ps, m, _("invalid YAML: %s %s"), problem, ps->parser.context);
    }
    return fail_at(ps, m, _("invalid YAML: %s"), problem);
  }
  const yaml_char_t *anchor = NULL, *tag = NULL;
  switch (ev->type) {
  case YAML_ALIAS_EVENT:
    fail_at(ps, &ev->start_mark, _("aliases (`*name`) are not allowed in agent.lock"));
    yaml_event_delete(ev);
    return -1;
  case YAML_SCALAR_EVENT:
    anchor = ev->data.scalar.anchor;
    tag = ev->data.scalar.tag;
    break;
  case YAML_SEQUENCE_START_EVENT:
    anchor = ev->data.sequence_start.anchor;
    tag = ev->data.sequence_start.tag;
    break;
  case YAML_MAPPING_START_EVENT:
    anchor = ev->data.mapping_start.anchor;
    tag = ev->data.mapping_start.tag;
    break;
  case YAML_DOCUMENT_START_EVENT:
    if (ev->data.document_start.tag_directives.start != ev->data.document_start.tag_directives.end) {
      fail_at(ps, &ev->start_mark, _("%%TAG directives are not allowed in agent.lock"));
      yaml_event_delete(ev);
      return -1;
    }
    break;
  case YAML_NO_EVENT:
  case YAML_STREAM_START_EVENT:
  case YAML_STREAM_END_EVENT:
  case YAML_DOCUMENT_END_EVENT:
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT:
    break;
  }
  if (anchor != NULL) {
    fail_at(ps, &ev->start_mark, _("anchors (`&%s`) are not allowed in agent.lock"),
            (const char *)anchor);
    yaml_event_delete(ev);
    return -1;
  }
  if (tag != NULL) {
    const char *t = (const char *)tag;
    bool core = startswith(t, "tag:yaml.org,2002:");
    fail_at(ps, &ev->start_mark, _("tags (`%s%s`) are not allowed in agent.lock"), core ? "!!" : "",
            core ? t + strlen("tag:yaml.org,2002:") : t);
    yaml_event_delete(ev);
    return -1;
  }
  return 0;
}

static bool scalar_is(const yaml_event_t *ev, const char *s) {
  return ev->data.scalar.length == strlen(s) && memcmp(ev->data.scalar.value, s, strlen(s)) == 0;
}

/* A plain scalar that YAML reads as null: nothing, "~", "null". */
static bool scalar_is_null(const yaml_event_t *ev) {
  return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
         (ev->data.scalar.length == 0 || scalar_is(ev, "~") || scalar_is(ev, "null") ||
          scalar_is(ev, "Null") || scalar_is(ev, "NULL"));
}

static int parse_version(Parse *ps, const yaml_event_t *ev, unsigned *ret) {
  if (ev->type != YAML_SCALAR_EVENT) {
    return fail_at(ps, &ev->start_mark, _("expected the number 1 after `version:`, found %s"),
                   event_noun(ev));
  }
  const char *v = (const char *)ev->data.scalar.value;
  size_t n = ev->data.scalar.length;
  /* YAML integers: decimal with an optional sign, 0x…, 0o…, 0b…. */
  int base = 10;
  size_t i = 0;
  if (n > 0 && v[0] == '+') {
    i = 1;
  }
  if (n - i > 2 && v[i] == '0' && (v[i + 1] == 'x' || v[i + 1] == 'o' || v[i + 1] == 'b')) {
    base = v[i + 1] == 'x' ? 16 : v[i + 1] == 'o' ? 8 : 2;
    i += 2;
  }
  if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
    return fail_at(ps, &ev->start_mark,
                   _("expected the number 1 after `version:`, found the string \"%.*s\" (write "
                     "it without quotes)"),
                   (int)n, v);
  }
  if (n == 0) {
    return fail_at(ps, &ev->start_mark, _("expected the number 1 after `version:`, found nothing"));
  }
  bool ok = i < n;
  uintmax_t val = 0;
  for (size_t k = i; ok && k < n; k++) {
    int d;
    char c = v[k];
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      d = 99;
    }
    if (d >= base) {
      ok = false;
      break;
    }
    if (val > (UINTMAX_MAX - (uintmax_t)d) / (uintmax_t)base) {
      val = UINTMAX_MAX;
    } else {
      val = val * (uintmax_t)base + (uintmax_t)d;
    }
  }
  if (!ok) {
    return fail_at(ps, &ev->start_mark, _("expected the number 1 after `version:`, found `%.*s`"),
                   (int)n, v);
  }
  if (val != POLICY_VERSION) {
    return fail_at(ps, &ev->start_mark,
                   _("unsupported version %.*s (this build understands version %u)"), (int)n, v,
                   POLICY_VERSION);
  }
  *ret = (unsigned)val;
  return 0;
}

/* Bytes that keep a pattern from being a plain literal (NOT_PLAIN): ones
 * normalising changes or refuses (`\\`, NUL, `:`) and wildcards and
 * braces, which the matcher has to read; and the separator (SEPARATOR),
 * where a component ends. One look a byte tells both. */
enum { NOT_PLAIN = 1, SEPARATOR = 2 };
static const unsigned char plain_class[256] = {
    ['\0'] = NOT_PLAIN, ['\\'] = NOT_PLAIN, [':'] = NOT_PLAIN, ['*'] = NOT_PLAIN,
    ['?'] = NOT_PLAIN,  ['['] = NOT_PLAIN,   ['{'] = NOT_PLAIN, ['}'] = NOT_PLAIN,
    ['/'] = SEPARATOR,
};

/* Whether the `n` bytes at `s` are a literal path in its normal form, as
 * most patterns are (`src/auth.c`): no blank around it, no `!`, `~` or
 * `/` first, no `\\`, `:`, NUL, wildcard or brace, no empty, `.` or `..`
 * component, at most MATCHER_MAX_SEGMENTS components, shorter than
 * PATH_MAX. policy_normalize_pattern() would return such a pattern
 * unchanged, and the matcher accept it: one look at each byte instead.
 * Anything else takes the whole way. */
static bool plain_literal(const char *s, size_t n) {
  if (n == 0 || n >= PATH_MAX) {
    return false;
  }
  /* Tested one by one: strchr(3) calls cost more, for every pattern. */
  char first = s[0], last = s[n - 1];
  if (first == ' ' || first == '\t' || first == '\r' || first == '\n' || first == '!' ||
      first == '~' || first == '/' || last == ' ' || last == '\t' || last == '\r' ||
      last == '\n' || last == '/') {
    return false;
  }
  size_t components = 1, seg = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char k = plain_class[(unsigned char)s[i]];
    if (k == 0) {
      continue;
    }
    if (k == NOT_PLAIN) {
      return false;
    }
    /* A separator: the component s[seg, i) is empty, `.` or `..`? */
    size_t len = i - seg;
    if (len == 0 || (s[seg] == '.' && (len == 1 || (len == 2 && s[seg + 1] == '.')))) {
      return false;
    }
    components++;
    seg = i + 1;
  }
  size_t len = n - seg;
  if (s[seg] == '.' && (len == 1 || (len == 2 && s[seg + 1] == '.'))) {
    return false;
  }
  return components <= MATCHER_MAX_SEGMENTS;
}

static void add_pattern(Parse *ps, Policy *p, char *pattern, char *declared, bool plain,
                        unsigned line, unsigned col) {
  size_t n = p->n_patterns;
  if (n == ps->cap) {
    size_t words = (ps->cap + 63) / 64;
    ps->cap *= 2;
    p->patterns = xreallocarray(p->patterns, ps->cap, sizeof(PolicyPattern));
    if (p->positions != NULL) {
      p->positions = xreallocarray(p->positions, ps->cap, sizeof(PolicyPosition));
    }
    p->plain = xreallocarray(p->plain, (ps->cap + 63) / 64, sizeof(uint64_t));
    memset(p->plain + words, 0, ((ps->cap + 63) / 64 - words) * sizeof(uint64_t));
    /* Moved: what the new place has mapped in is not known. */
    ps->ahead_patterns = n * sizeof(PolicyPattern);
    ps->ahead_positions = n * sizeof(PolicyPosition);
  }
  /* Ten thousand patterns fill twenty pages of pointers (forty with
   * positions): mapped in a few at a time rather than one fault each. */
  prefault_ahead(p->patterns, n, sizeof(PolicyPattern), ps->cap, &ps->ahead_patterns);
  if (p->positions != NULL) {
    prefault_ahead(p->positions, n, sizeof(PolicyPosition), ps->cap, &ps->ahead_positions);
    p->positions[n] = (PolicyPosition){.declared = declared, .line = line, .column = col};
  }
  if (plain) {
    p->plain[n / 64] |= UINT64_C(1) << (n % 64);
  }
  p->patterns[n] = (PolicyPattern){.pattern = pattern};
  p->n_patterns = n + 1;
}

static int parse_protect(Parse *ps, const yaml_event_t *start, Policy *p) {
  if (start->type == YAML_SCALAR_EVENT && scalar_is_null(start)) {
    return fail_at(ps, &start->start_mark,
                   _("`protect:` is empty; list the paths to protect below it, one per line:\n\n%s"),
                   POLICY_EXAMPLE);
  }
  if (start->type == YAML_SCALAR_EVENT) {
    return fail_at(ps, &start->start_mark,
                   _("expected a list of paths after `protect:`, found the string `%.*s`; write "
                     "one path per line:\n\n%s"),
                   (int)start->data.scalar.length, (const char *)start->data.scalar.value,
                   POLICY_EXAMPLE);
  }
  if (start->type != YAML_SEQUENCE_START_EVENT) {
    return fail_at(ps, &start->start_mark,
                   _("expected a list of paths after `protect:`, found %s; write one path per "
                     "line:\n\n%s"),
                   event_noun(start), POLICY_EXAMPLE);
  }
  for (;;) {
    yaml_event_t ev;
    if (next_event(ps, &ev) < 0) {
      return -1;
    }
    if (ev.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&ev);
      return 0;
    }
    if (ev.type != YAML_SCALAR_EVENT) {
      fail_at(ps, &ev.start_mark, _("expected a path (a string) in the `protect` list, found %s"),
              event_noun(&ev));
      yaml_event_delete(&ev);
      return -1;
    }
    const char *v = (const char *)ev.data.scalar.value;
    size_t n = ev.data.scalar.length;
    char *pattern, *declared = NULL;
    bool plain = plain_literal(v, n);
    if (plain && n < ps->copies_cap - ps->copies_used) {
      /* Its own normal form, valid as it stands, beside the ones before:
       * the pages they fill are mapped in a few at a time. One that does
       * not fit goes to the arena: a file grown since its size was taken,
       * or escapes that make a quoted pattern longer than its text (`\L`,
       * two characters, is three bytes). */
      prefault_ahead(ps->copies, ps->copies_used + n, 1, ps->copies_cap, &ps->copies_ahead);
      pattern = declared = ps->copies + ps->copies_used;
      memcpy(pattern, v, n);
      pattern[n] = '\0';
      ps->copies_used += n + 1;
    } else if (plain) {
      /* its own normal form, valid as it stands */
      pattern = declared = arena_strndup(&p->strings, v, n);
    } else {
      _cleanup_free_ char *norm = NULL;
      char *why = NULL;
      if (policy_normalize_pattern(v, n, &norm, &why) < 0) {
        fail_at(ps, &ev.start_mark, _("invalid pattern: %s"), why);
        free(why);
        yaml_event_delete(&ev);
        return -1;
      }
      /* As written, only where it is shown. */
      if (p->positions != NULL) {
        declared = arena_strndup(&p->strings, v, n);
      }
      pattern = declared != NULL && streq(norm, declared)
                    ? declared
                    : arena_strndup(&p->strings, norm, strlen(norm));
    }
    add_pattern(ps, p, pattern, declared, plain, (unsigned)ev.start_mark.line + 1,
                (unsigned)ev.start_mark.column + 1);
    yaml_event_delete(&ev);
  }
}

static int parse_document(Parse *ps, Policy *p) {
  yaml_event_t ev;
  bool seen_version = false, seen_protect = false;

  if (next_event(ps, &ev) < 0) {
    return -1;
  }
  if (ev.type == YAML_SCALAR_EVENT && scalar_is_null(&ev)) {
    yaml_event_delete(&ev);
    return error_set(ps->err, EINVAL,
                     _("%s:1:1: the file is empty, so it protects nothing. Add the paths to "
                       "protect:\n\n%s"),
                     ps->file, POLICY_EXAMPLE);
  }
  if (ev.type != YAML_MAPPING_START_EVENT) {
    fail_at(ps, &ev.start_mark,
            _("expected a mapping with the key `protect:` (and optionally `version: 1`), found "
              "%s:\n\n%s"),
            event_noun(&ev), POLICY_EXAMPLE);
    yaml_event_delete(&ev);
    return -1;
  }
  yaml_event_delete(&ev);

  for (;;) {
    if (next_event(ps, &ev) < 0) {
      return -1;
    }
    if (ev.type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(&ev);
      break;
    }
    if (ev.type != YAML_SCALAR_EVENT) {
      fail_at(ps, &ev.start_mark, _("expected a key (`protect` or `version`), found %s"),
              event_noun(&ev));
      yaml_event_delete(&ev);
      return -1;
    }
    yaml_mark_t key_mark = ev.start_mark;
    bool is_version = scalar_is(&ev, "version"), is_protect = scalar_is(&ev, "protect");
    if (!is_version && !is_protect) {
      fail_at(ps, &key_mark, _("unknown key `%.*s`; expected `protect` or `version`"),
              (int)ev.data.scalar.length, (const char *)ev.data.scalar.value);
      yaml_event_delete(&ev);
      return -1;
    }
    yaml_event_delete(&ev);
    if ((is_version && seen_version) || (is_protect && seen_protect)) {
      return fail_at(ps, &key_mark, _("duplicate key `%s`"), is_version ? "version" : "protect");
    }
    if (next_event(ps, &ev) < 0) {
      return -1;
    }
    int r = is_version ? parse_version(ps, &ev, &p->version) : parse_protect(ps, &ev, p);
    yaml_event_delete(&ev);
    if (r < 0) {
      return -1;
    }
    seen_version |= is_version;
    seen_protect |= is_protect;
  }

  if (next_event(ps, &ev) < 0) {
    return -1;
  }
  /* DOCUMENT_END is all that can follow a mapping. */
  yaml_event_delete(&ev);
  if (next_event(ps, &ev) < 0) {
    return -1;
  }
  if (ev.type != YAML_STREAM_END_EVENT) {
    fail_at(ps, &ev.start_mark,
            _("a second YAML document is not allowed in agent.lock (remove the `---`)"));
    yaml_event_delete(&ev);
    return -1;
  }
  yaml_event_delete(&ev);
  return 0;
}

/* More than the patterns `len` bytes of text can hold: agent.lock's, and
 * one for every two bytes, since an item is at least one character and
 * a `-`, `,` or `[` before it. */
static size_t most_items(size_t len) {
  return len / 2 + 2;
}

static size_t pattern_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s != '\0'; s++) {
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  }
  return (size_t)(h ^ (h >> 29));
}

/* Keeps the first of equal patterns, in one pass through a hash set of
 * those kept: a policy may hold a megabyte of them. */
static void remove_duplicates(Policy *p) {
  if (p->n_patterns < 2) {
    return;
  }
  /* At most two thirds full: a lookup probes about two slots, and the
   * set's pages, every one of which a hash touches, are few. */
  size_t size = 16;
  while (2 * size < 3 * p->n_patterns) {
    size *= 2;
  }
  size_t mask = size - 1;
  /* Index + 1 of a kept pattern (in its new place), or 0 (a policy holds
   * far fewer than 2^32 patterns: POLICY_MAX_SIZE). */
  /* Every page of it is touched past a few thousand patterns: mapped in
   * at once. */
  uint32_t *set = xmalloc(size * sizeof(uint32_t));
  prefault(set, size * sizeof(uint32_t));
  memset(set, 0, size * sizeof(uint32_t));
  size_t o = 0;
  for (size_t i = 0; i < p->n_patterns; i++) {
    const char *pat = p->patterns[i].pattern;
    size_t k = pattern_hash(pat) & mask;
    bool dup = false;
    for (; set[k] != 0; k = (k + 1) & mask) {
      p->operations++;
      if (streq(p->patterns[set[k] - 1].pattern, pat)) {
        dup = true;
        break;
      }
    }
    p->operations++;
    if (!dup) {
      p->patterns[o] = p->patterns[i];
      if (p->positions != NULL) {
        p->positions[o] = p->positions[i];
      }
      /* o <= i: bit o is set or cleared after every bit before it was
       * read. */
      uint64_t bit = UINT64_C(1) << (o % 64);
      p->plain[o / 64] = (p->plain[i / 64] >> (i % 64)) & 1 ? p->plain[o / 64] | bit
                                                             : p->plain[o / 64] & ~bit;
      set[k] = (uint32_t)++o;
    }
  }
  p->n_patterns = o;
  free(set);
}

/* How many bytes the text starts with that are ASCII, eight at a time: a
 * policy is mostly ASCII, which is UTF-8 as it stands. */
static size_t ascii_prefix(const char *text, size_t len) {
  size_t i = 0;
  for (uint64_t w; i + 8 <= len; i += 8) {
    memcpy(&w, text + i, sizeof(w));
    if (w & 0x8080808080808080ull) {
      break;
    }
  }
  while (i < len && (unsigned char)text[i] < 0x80) {
    i++;
  }
  return i;
}

int policy_parse(const char *file, const char *text, size_t len, Policy **ret, Error *err) {
  return policy_parse_flags(file, text, len, POLICY_POSITIONS, ret, err);
}

/* A policy file read by libyaml as it parses, in its own buffer: the file
 * is never held whole (a policy of ten thousand paths is 160 KB, forty
 * pages, and a page first touched costs as much as thousands of
 * instructions). What parse_text refuses before parsing, this refuses
 * too: more than POLICY_MAX_SIZE bytes here, and libyaml's reader
 * itself every byte sequence that is not UTF-8 and every control
 * character, NUL among them. */
typedef struct Stream {
  int fd;
  size_t total; /* bytes read */
  bool started;
} Stream;

/* libyaml's read handler: 1 with *size_read bytes (0 at the end), or 0
 * on an error (a read error, or a file grown past the limit). */
static int stream_read(void *data, unsigned char *buffer, size_t size, size_t *size_read) {
  Stream *s = data;
  size_t got = 0;
  bool end = false;
  /* Some bytes (0 only at the end), the first time three at least when
   * the file has them: a byte order mark is left out, as libyaml's
   * detection leaves it (its marks then count from the character after
   * it, as for a text), and what follows it read. */
  for (size_t want = s->started ? 1 : (size < 3 ? size : 3);;) {
    while (got < want && !end) {
      ssize_t r = read(s->fd, buffer + got, size - got);
      if (r < 0 && errno == EINTR) {
        continue;
      }
      if (r < 0) {
        return 0;
      }
      end = r == 0;
      got += (size_t)r;
    }
    if (s->started || got < 3 || memcmp(buffer, "\xEF\xBB\xBF", 3) != 0) {
      break;
    }
    memmove(buffer, buffer + 3, got - 3);
    got -= 3;
    s->total += 3;
    s->started = true;
    want = 1;
  }
  s->started = true;
  s->total += got;
  if (s->total > POLICY_MAX_SIZE) {
    return 0;
  }
  *size_read = got;
  return 1;
}

static int parse_events(Parse ps, size_t len, unsigned flags, Policy **ret);

static int parse_text(const char *file, const char *text, size_t len, unsigned flags,
                      Policy **ret, Error *err) {
  unsigned line, col;

  if (len > POLICY_MAX_SIZE) {
    position_of(text, POLICY_MAX_SIZE, &line, &col);
    return error_set(err, EFBIG,
                     _("%s:%u:%u: the file is larger than %u bytes; a policy is a short list"),
                     file, line, col, POLICY_MAX_SIZE);
  }
  const char *nul = memchr(text, '\0', len);
  if (nul != NULL) {
    position_of(text, (size_t)(nul - text), &line, &col);
    return error_set(err, EINVAL, _("%s:%u:%u: a NUL byte; agent.lock must be UTF-8 text"), file,
                     line, col);
  }
  size_t ascii = ascii_prefix(text, len);
  size_t bad = ascii + utf8_invalid_offset((const unsigned char *)text + ascii, len - ascii);
  if (bad < len) {
    position_of(text, bad, &line, &col);
    return error_set(err, EILSEQ, _("%s:%u:%u: not valid UTF-8; agent.lock must be UTF-8 text"),
                     file, line, col);
  }

  if (text_is_blank(text, len)) {
    return error_set(err, EINVAL,
                     _("%s:1:1: the file is empty, so it protects nothing. Add the paths to "
                       "protect:\n\n%s"),
                     file, POLICY_EXAMPLE);
  }

  Parse ps = {.file = file, .text = text, .len = len, .err = err};
  return parse_events(ps, len, flags, ret);
}

/* The policy in what `ps` is to read, its text or its stream: `len`
 * bytes, the text's or the file's size when it was looked at (what bounds
 * the number of items and the copies' size). */
static int parse_events(Parse ps, size_t len, unsigned flags, Policy **ret) {
  const char *file = ps.file;
  Error *err = ps.err;
  _cleanup_policy_ Policy *p = xcalloc(1, sizeof(Policy));
  /* Allocated once, for as many patterns as the text could hold: past
   * malloc's threshold for mapping (128 KiB) what is not used is never
   * touched, and what is, is mapped in as the patterns come
   * (add_pattern). */
  ps.cap = most_items(len);
  /* Patterns written in their normal form, copied one after the other
   * into pages that past malloc's threshold for mapping are touched only
   * as far as they are filled: mostly no more than the text (each at
   * least a byte, its NUL, shorter than its item); what does not fit
   * goes to the arena (parse_protect). */
  ps.copies_cap = len + 1;
  ps.copies = xmalloc(ps.copies_cap);
  p->patterns = xreallocarray(NULL, ps.cap, sizeof(PolicyPattern));
  if (flags & POLICY_POSITIONS) {
    p->positions = xreallocarray(NULL, ps.cap, sizeof(PolicyPosition));
  }
  p->plain = xcalloc((ps.cap + 63) / 64, sizeof(uint64_t));
  p->file = xstrdup(file);
  p->root = path_dirname(file);
  p->version = POLICY_VERSION;
  char *self = arena_strndup(&p->strings, POLICY_FILE_NAME, strlen(POLICY_FILE_NAME));
  add_pattern(&ps, p, self, self, true, 0, 0);

  if (!yaml_parser_initialize(&ps.parser)) {
    oom();
  }
  /* libyaml holds what it reads in two buffers of its own (16 KiB raw,
   * 48 KiB decoded, of which it fills the raw size at most): as many of
   * their pages as the input will fill are mapped in at once, a fault
   * each costing more. A short policy fills less than a page of each,
   * and nothing is. */
  size_t raw = (size_t)(ps.parser.raw_buffer.end - ps.parser.raw_buffer.start);
  size_t decoded = (size_t)(ps.parser.buffer.end - ps.parser.buffer.start);
  prefault(ps.parser.raw_buffer.start, len < raw ? len : raw);
  size_t fill = raw + page_size(); /* what is left of the last fill, and the next */
  fill = fill < decoded ? fill : decoded;
  prefault(ps.parser.buffer.start, len < fill ? len : fill);
  if (ps.stream != NULL) {
    /* What a file holds is read as UTF-8, a byte order mark left out as
     * libyaml's detection would (stream_read), but no other encoding
     * detected: a UTF-16 file is refused, as by parse_text. */
    yaml_parser_set_encoding(&ps.parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input(&ps.parser, stream_read, ps.stream);
  } else {
    /* The text is known to be UTF-8 (checked above); libyaml's detection
     * also skips a byte order mark. */
    yaml_parser_set_input_string(&ps.parser, (const unsigned char *)ps.text, ps.len);
  }

  int r = 0;
  yaml_event_t ev;
  if (next_event(&ps, &ev) < 0) { /* STREAM_START */
    r = -1;
    goto out;
  }
  yaml_event_delete(&ev);
  if (next_event(&ps, &ev) < 0) {
    r = -1;
    goto out;
  }
  if (ev.type == YAML_STREAM_END_EVENT) {
    yaml_event_delete(&ev);
    r = error_set(err, EINVAL,
                  _("%s:1:1: the file is empty, so it protects nothing. Add the paths to "
                    "protect:\n\n%s"),
                  file, POLICY_EXAMPLE);
    goto out;
  }
  yaml_event_delete(&ev); /* DOCUMENT_START */
  r = parse_document(&ps, p);

out:
  yaml_parser_delete(&ps.parser);
  if (r < 0 || ps.copies_used == 0) {
    free(ps.copies);
    ps.copies = NULL;
  }
  if (r < 0) {
    return -1;
  }
  if (!(flags & POLICY_DUPLICATES)) {
    remove_duplicates(p);
  }
  p->n_declared = p->n_patterns - 1;
  p->text = ps.copies;
  *ret = steal_pointer(&p);
  return 0;
}

int policy_matcher(const Policy *p, unsigned flags, Matcher **ret, Error *err) {
  return matcher_new_strided((const char *const *)&p->patterns[0].pattern, sizeof(PolicyPattern),
                             p->n_patterns, p->plain, flags, ret, err);
}

int policy_parse_flags(const char *file, const char *text, size_t len, unsigned flags,
                       Policy **ret, Error *err) {
  return parse_text(file, text, len, flags, ret, err);
}

int policy_load(const char *file, Policy **ret, Error *err) {
  return policy_load_flags(file, POLICY_POSITIONS, ret, err);
}

/* The policy in file `fd` as libyaml reads it, `st` what fstat(2) said of
 * it first: 0, or -1 for anything this way does not take (a bad policy, a
 * read error), which parse_text is then to read and say. A file changed
 * while it was read (the user's editor writing it in place: the parse
 * reads it in pieces) could give a policy that was never on disk, the
 * start of one version and the rest of another, or the start alone: so
 * it counts only when as many bytes were read as the file had, and the
 * file still has that size and the times it had; otherwise -1 too, and
 * the caller reads it whole. */
static int parse_stream(const char *file, int fd, const struct stat *st, unsigned flags,
                        Policy **ret) {
  Stream s = {.fd = fd};
  Error scratch = {0};
  Parse ps = {.file = file, .stream = &s, .err = &scratch};
  int r = parse_events(ps, (size_t)st->st_size, flags, ret);
  error_clear(&scratch);
  if (r < 0) {
    return -1;
  }
  struct stat now;
  if (s.total != (size_t)st->st_size || fstat(fd, &now) < 0 || now.st_size != st->st_size ||
      now.st_mtim.tv_sec != st->st_mtim.tv_sec || now.st_mtim.tv_nsec != st->st_mtim.tv_nsec ||
      now.st_ctim.tv_sec != st->st_ctim.tv_sec || now.st_ctim.tv_nsec != st->st_ctim.tv_nsec) {
    policy_free(*ret);
    *ret = NULL;
    return -1;
  }
  return 0;
}

int policy_load_flags(const char *file, unsigned flags, Policy **ret, Error *err) {
  _cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return error_set(err, errno, _("cannot open %s: %m"), file);
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    return error_set(err, errno, _("cannot read %s: %m"), file);
  }
  if (!S_ISREG(st.st_mode)) {
    return error_set(err, EINVAL, _("%s is not a regular file"), file);
  }
  if ((uintmax_t)st.st_size <= POLICY_MAX_SIZE && parse_stream(file, fd, &st, flags, ret) == 0) {
    (*ret)->file_dev = st.st_dev;
    (*ret)->file_ino = st.st_ino;
    return 0;
  }
  /* Refused, not read, or changed while it was read: the whole text read
   * again from its start, whose reading says what is wrong and where,
   * quoting it. */
  if (lseek(fd, 0, SEEK_SET) < 0) {
    return error_set(err, errno, _("cannot read %s: %m"), file);
  }
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  int r = read_fd_limited_stat(fd, &st, POLICY_MAX_SIZE, &text, &len);
  if (r == -EFBIG) {
    /* Not read past the limit, so no finer position than the start. */
    return error_set(err, EFBIG,
                     _("%s:1:1: the file is larger than %u bytes; a policy is a short list"), file,
                     POLICY_MAX_SIZE);
  }
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot read %s: %m"), file);
  }
  if (parse_text(file, text, len, flags, ret, err) < 0) {
    return -1;
  }
  (*ret)->read_whole = true;
  (*ret)->file_dev = st.st_dev;
  (*ret)->file_ino = st.st_ino;
  return 0;
}

/* What a file of mode `mode` is, for a message saying why it cannot be a
 * policy. */
static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) {
    return _("a directory");
  }
  if (S_ISFIFO(mode)) {
    return _("a FIFO");
  }
  if (S_ISSOCK(mode)) {
    return _("a socket");
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return _("a device");
  }
  return _("a special file");
}

int policy_check_file(const char *file, Error *err) {
  /* lstat(2) first, never open(2): a FIFO would block an open, and a
   * device could answer one. One look where there is nothing or a regular
   * file, as for each directory of a walk up to `/`. */
  struct stat st;
  if (lstat(file, &st) < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return -ENOENT;
    }
    int e = errno;
    error_set(err, e, _("cannot tell whether %s exists: %m"), file);
    return -e;
  }
  if (S_ISREG(st.st_mode)) {
    return 0;
  }
  _cleanup_free_ char *kind = NULL;
  if (S_ISLNK(st.st_mode)) {
    _cleanup_free_ char *link = path_read_link(file);
    const char *target = link != NULL ? link : "";
    struct stat to;
    if (stat(file, &to) == 0) {
      if (S_ISREG(to.st_mode)) {
        return 0;
      }
      /* TRANSLATORS: "agent.lock is a symbolic link to ../x, a directory". */
      kind = xasprintf(_("a symbolic link to %s, %s"), target, kind_of(to.st_mode));
    } else if (errno == ENOENT || errno == ENOTDIR) {
      kind = xasprintf(_("a symbolic link that leads nowhere (to %s)"), target);
    } else if (errno == ELOOP) {
      kind = xasprintf(_("a symbolic link that leads nowhere (to %s, through too many links)"),
                       target);
    } else {
      int e = errno;
      error_set(err, e, _("cannot tell whether %s exists: %m"), file);
      return -e;
    }
  } else {
    kind = xstrdup(kind_of(st.st_mode));
  }
  /* Passing it by would let the walk go on to a policy further up, or to
   * none (`run --if-policy` would start the agent unprotected), while
   * `init` refuses to write one here. */
  error_set(err, EINVAL,
            _("%s is %s; a policy must be a regular file. Which paths are protected here is "
              "unknown, so ralon refuses to go on (make it the policy it should be, or remove "
              "it and run `ralon init`)"),
            file, kind);
  return -EINVAL;
}

/* The nearest agent.lock from `dir` up, each parent taken lexically: 0
 * and *ret_file, -ENOENT when there is none (err untouched), or another
 * error. */
static int find_upward(const char *dir, char **ret_file, Error *err) {
  for (char *d = xstrdup(dir);;) {
    _cleanup_free_ char *candidate = path_join(d, POLICY_FILE_NAME);
    int r = policy_check_file(candidate, err);
    if (r == 0) {
      free(d);
      *ret_file = steal_pointer(&candidate);
      return 0;
    }
    if (r != -ENOENT) {
      /* Only a name that is not there lets the walk go on: one that cannot
       * be looked at (a directory made unsearchable, say by an agent in a
       * previous session) may hold the policy, and one that is no regular
       * file says a policy was meant here. */
      free(d);
      return r;
    }
    if (streq(d, "/")) {
      free(d);
      return -ENOENT;
    }
    char *parent = path_dirname(d);
    free(d);
    d = parent;
  }
}

/* Whether policy files `a` and `b` are in the same directory: the same
 * project root (a link to the other's agent.lock is not). */
static bool same_root(const char *a, const char *b) {
  if (a == NULL || b == NULL) {
    return false;
  }
  _cleanup_free_ char *da = path_dirname(a);
  _cleanup_free_ char *db = path_dirname(b);
  struct stat sa, sb;
  return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* The first leading part of absolute `path` that is a symbolic link, or a
 * copy of `path` when none is. */
static char *first_link(const char *path) {
  for (const char *p = path + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      _cleanup_free_ char *prefix = xstrndup(path, (size_t)(p - path));
      struct stat st;
      if (lstat(prefix, &st) == 0 && S_ISLNK(st.st_mode)) {
        return steal_pointer(&prefix);
      }
      if (*p == '\0') {
        return xstrdup(path);
      }
    }
  }
}

/* The search starts from the working directory's real path, `dir`. When
 * the shell reached it through a symbolic link ($PWD names the same
 * directory by another path), the policy found along that way must be in
 * the same directory: otherwise a directory of the project replaced by a
 * link to a directory elsewhere (which an agent can do) would lead the
 * next run to a policy of the agent's, or to none, and `--if-policy` would
 * run the command unrestricted. `found` is what the real path gave, or
 * NULL. A name on that way that cannot be looked at is an error, as on the
 * real path. When both ways agree, *ret_enclosing (if given) is the
 * agent.lock further up the way through the link that the real path does
 * not have. A $PWD that names another directory, or none, is stale: the
 * real path decides. */
static int check_logical_way(const char *dir, const struct stat *cwd, const char *found,
                             char **ret_enclosing, Error *err) {
  const char *pwd = getenv("PWD");
  struct stat st;
  if (pwd == NULL || pwd[0] != '/' || streq(pwd, dir) || stat(pwd, &st) < 0 ||
      st.st_dev != cwd->st_dev || st.st_ino != cwd->st_ino) {
    return 0;
  }
  _cleanup_free_ char *logical = path_normalize(pwd);
  _cleanup_free_ char *other = NULL;
  int r = find_upward(logical, &other, err);
  if (r == -ENOENT) {
    return 0; /* nothing along that way */
  }
  if (r < 0) {
    return r;
  }
  if (same_root(found, other)) {
    /* The same one, found in or below the link. One further up that way
     * is an enclosing policy (the audit reports it), unless the real
     * path has it too. */
    _cleanup_free_ char *from = path_dirname(other);
    if (ret_enclosing != NULL && !streq(from, "/")) {
      Error e = {0};
      _cleanup_free_ char *above = NULL;
      _cleanup_free_ char *up = path_dirname(from);
      if (find_upward(up, &above, &e) == 0) {
        _cleanup_free_ char *real_dir = path_dirname(found);
        _cleanup_free_ char *real_up = path_dirname(real_dir);
        _cleanup_free_ char *real_above = NULL;
        if (streq(real_dir, "/") || find_upward(real_up, &real_above, &e) < 0 ||
            !same_root(above, real_above)) {
          *ret_enclosing = steal_pointer(&above);
        }
      }
      error_clear(&e);
    }
    return 0;
  }
  _cleanup_free_ char *link = first_link(logical);
  if (found == NULL) {
    error_set(err, EXDEV,
              _("the working directory %s is reached through the symbolic link %s: along that "
                "way the policy is %s, but from the directory's real path, %s, there is none "
                "(start from the project root, and look at the link: an agent may have "
                "replaced a directory with it)"),
              logical, link, other, dir);
    return -EXDEV;
  }
  error_set(err, EXDEV,
            _("the working directory %s is reached through the symbolic link %s: along that "
              "way the policy is %s, but from the directory's real path, %s, it is %s (start "
              "from the project root, and look at the link: an agent may have replaced a "
              "directory with it)"),
            logical, link, other, dir, found);
  return -EXDEV;
}

static int find_policy(const char *start, char **ret_file, char **ret_enclosing, bool quiet_none,
                       Error *err) {
  _cleanup_free_ char *dir = path_absolute(NULL, start ? start : ".");
  if (dir == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  struct stat st;
  if (stat(dir, &st) < 0) {
    return error_set(err, errno, _("cannot use %s: %m"), dir);
  }
  if (!S_ISDIR(st.st_mode)) {
    return error_set(err, ENOTDIR, _("cannot use %s: %s"), dir, strerror(ENOTDIR));
  }
  _cleanup_free_ char *file = NULL;
  int r = find_upward(dir, &file, err);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  if (start == NULL) {
    int q = check_logical_way(dir, &st, file, ret_enclosing, err);
    if (q < 0) {
      return q;
    }
  }
  if (r == -ENOENT) {
    if (!quiet_none) {
      error_set(err, ENOENT,
                _("no agent.lock found in %s or any parent directory (run `ralon init`)"), dir);
    }
    return -ENOENT;
  }
  *ret_file = steal_pointer(&file);
  return 0;
}

int policy_find(const char *start, char **ret_file, Error *err) {
  return find_policy(start, ret_file, NULL, false, err);
}

int policy_find_if_any(const char *start, char **ret_file, Error *err) {
  return find_policy(start, ret_file, NULL, true, err);
}

int policy_discover(const char *start, Policy **ret, Error *err) {
  return policy_discover_flags(start, POLICY_POSITIONS, ret, err);
}

int policy_discover_flags(const char *start, unsigned flags, Policy **ret, Error *err) {
  _cleanup_free_ char *file = NULL;
  _cleanup_free_ char *enclosing = NULL;
  int r = find_policy(start, &file, &enclosing, false, err);
  if (r < 0) {
    return r;
  }
  if (policy_load_flags(file, flags, ret, err) < 0) {
    return -EINVAL;
  }
  (*ret)->enclosing_by_link = steal_pointer(&enclosing);
  /* Found by walking up from getcwd(3)'s name, lexically. */
  (*ret)->root_canonical = start == NULL;
  return 0;
}

char *policy_canonical_root(const Policy *p) {
  return p->root_canonical ? xstrdup(p->root) : realpath(p->root, NULL);
}

char *policy_starter_text(const char *dir) {
  /* Things an unattended agent should not change, when they exist. */
  static const char *const candidates[] = {
      ".github/workflows", ".gitlab-ci.yml",   ".circleci",        "Jenkinsfile",
      "Cargo.lock",        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
      "pnpm-lock.yaml",    "bun.lockb",        "poetry.lock",      "uv.lock",
      "Pipfile.lock",      "go.sum",           "Gemfile.lock",     "composer.lock",
      "flake.lock",        "mix.lock",         "pubspec.lock",     "Package.resolved",
  };
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  if (f == NULL) {
    oom();
  }
  /* Editors with the YAML language server check the file against it. */
  fputs("# yaml-language-server: $schema=file://" SCHEMA_FILE "\n", f);
  fputs(_("# agent.lock: what AI coding agents may not modify.\n"
          "#\n"
          "# `ralon run -- AGENT` makes every path listed here read-only for the agent\n"
          "# and everything it starts; `ralon check PATH` tells whether a path is\n"
          "# covered. Patterns are relative to this file. `*` and `?` stay within one\n"
          "# path component, `**` spans any number of them, `[abc]` is a class. A\n"
          "# directory protects everything inside it. agent.lock itself is always\n"
          "# protected. See agent.lock(5).\n"),
        f);
  fputs("version: 1\nprotect:\n", f);
  fputs(_("  # Always protected; listed so the list is never empty.\n"), f);
  fputs("  - agent.lock\n", f);

  struct stat st;
  _cleanup_free_ char *git = path_join(dir, ".git");
  if (stat(git, &st) == 0 && S_ISDIR(st.st_mode)) {
    fputs(_("  # Code placed here runs outside any sandbox at your next git command.\n"), f);
    fputs("  - .git/hooks\n  - .git/config\n", f);
    _cleanup_free_ char *modules = path_join(dir, ".git/modules");
    if (stat(modules, &st) == 0 && S_ISDIR(st.st_mode)) {
      fputs(_("  # The same for each submodule.\n"), f);
      fputs("  - .git/modules/**/hooks\n  - .git/modules/**/config\n", f);
    }
    bool worktree_config = audit_git_worktree_config(dir);
    if (worktree_config) {
      fputs(_("  # Read by git as configuration too (extensions.worktreeConfig).\n"), f);
      fputs("  - .git/config.worktree\n", f);
    }
    _cleanup_free_ char *worktrees = path_join(dir, ".git/worktrees");
    if (stat(worktrees, &st) == 0 && S_ISDIR(st.st_mode)) {
      fputs(_("  # Which repository's hooks and configuration each linked worktree uses.\n"), f);
      fputs("  - .git/worktrees/*/commondir\n", f);
      if (worktree_config) {
        fputs("  - .git/worktrees/*/config.worktree\n", f);
      }
    }
  } else if (lstat(git, &st) == 0 && S_ISREG(st.st_mode)) {
    fputs(_("  # .git is a file here (a worktree or a submodule): kept from being\n"
            "  # pointed elsewhere. The hooks and configuration git runs are outside\n"
            "  # this project, where agent.lock cannot protect them.\n"),
          f);
    fputs("  - .git\n", f);
  }
  bool header = false;
  for (size_t i = 0; i < ELEMENTSOF(candidates); i++) {
    _cleanup_free_ char *p = path_join(dir, candidates[i]);
    if (lstat(p, &st) < 0) {
      continue;
    }
    if (!header) {
      fputs(_("  # Found here: CI configuration and lock files.\n"), f);
      header = true;
    }
    fprintf(f, "  - %s\n", candidates[i]);
  }
  fputs(_("  # More you may want (remove the `#` to protect):\n"), f);
  fputs("  # - tests/golden/**\n  # - migrations/**\n  # - .env*\n", f);
  if (fclose(f) != 0) {
    oom();
  }
  return buf;
}
