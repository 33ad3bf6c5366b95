#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The JSON Schema of agent.lock (data/schema/agent.lock.schema.json)
against the policy test tables of tests/unit/test-policy.c: it must accept
every valid policy there (good_rows, and every accepted row of norm_rows as
a one-item list) and reject every invalid one it can express (bad_rows,
exact_rows, the rejected rows of norm_rows). What a schema cannot see is
listed below, each with why; a row the YAML reader itself refuses is
refused before any schema is consulted (editors say so too). The policy
`ralon init` writes must name the schema and satisfy it.

Environment: RALON_SCHEMA (the schema file), RALON_POLICY_TESTS
(test-policy.c), RALON_BINARY (optional: for `init`). Exit 77 (skipped)
without python3-jsonschema or python3-yaml."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

try:
    import jsonschema
    import yaml
except ImportError as e:
    print("skipped: %s (install python3-jsonschema and python3-yaml)" % e)
    sys.exit(77)

SCHEMA = os.environ.get("RALON_SCHEMA", "data/schema/agent.lock.schema.json")
TABLES = os.environ.get("RALON_POLICY_TESTS", "tests/unit/test-policy.c")
RALON = os.environ.get("RALON_BINARY")

# Invalid rows the schema cannot reject, by name, and why.
NOT_EXPRESSIBLE = {
    # YAML structure: a JSON instance has no duplicate keys, anchors or
    # tags; the reader resolves or drops them before a schema looks.
    "duplicate protect": "a JSON object has no duplicate keys",
    "duplicate version": "a JSON object has no duplicate keys",
    "duplicate key in flow mapping": "a JSON object has no duplicate keys",
    "anchor on list": "an anchor is gone once the YAML is read",
    "anchor on item": "an anchor is gone once the YAML is read",
    "tag !!str": "a tag is gone once the YAML is read",
    "tag !!int on version": "a tag is gone once the YAML is read",
    "%TAG directive": "a directive is gone once the YAML is read",
    "empty item": "an empty item reads as null, which is also what `- null` (a name) reads as",
    "version 1.0": "1.0 is the integer 1 in JSON Schema",
    # Glob structure beyond what a regular expression says plainly.
    "too many components": "256 components: a count, not a shape",
    "too many alternatives": "a product of brace alternatives",
    # Files: what the whole file is, not what it says.
    "over 1 MiB": "a file size",
}


class YAML12Loader(yaml.SafeLoader):
    """PyYAML reads YAML 1.1; editors' language servers read 1.2, where
    0o1 is an octal integer (ralon reads it so too)."""


YAML12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^0o[0-7]+$"), list("0"))
_base_int = yaml.SafeLoader.yaml_constructors["tag:yaml.org,2002:int"]


def _int(loader, node):
    v = loader.construct_scalar(node)
    if re.match(r"^0o[0-7]+$", v):
        return int(v[2:], 8)
    return _base_int(loader, node)


YAML12Loader.add_constructor("tag:yaml.org,2002:int", _int)

C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0",
             "?": "?", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def c_strings(src, pos):
    """The bytes of the C string literals (adjacent ones joined) starting
    at src[pos] (after blanks), and the position after them."""
    out = bytearray()
    while True:
        m = re.compile(r'\s*"').match(src, pos)
        if not m:
            return bytes(out), pos
        i = m.end()
        while src[i] != '"':
            c = src[i]
            if c == "\\":
                n = src[i + 1]
                if n == "x":
                    h = re.compile(r"[0-9A-Fa-f]+").match(src, i + 2)
                    out.append(int(h.group(0), 16) & 0xFF)
                    i = h.end()
                    continue
                if n in "01234567" and n != "0" or re.match(r"[0-7]{2,3}", src[i + 1:i + 4]):
                    o = re.compile(r"[0-7]{1,3}").match(src, i + 1)
                    out.append(int(o.group(0), 8))
                    i = o.end()
                    continue
                out += C_ESCAPES[n].encode("latin-1")
                i += 2
                continue
            out += c.encode("utf-8")
            i += 1
        pos = i + 1


def table(src, name):
    """The body of `static const ... name[] = { ... };`."""
    m = re.search(r"\b%s\[\] = \{" % re.escape(name), src)
    end = src.index("\n};", m.end())
    return src[m.end():end]


def rows_with_text(body, macro):
    """(name, bytes) of every row `{"name", MACRO("...")...` in a table;
    GEN rows (generated texts) have no bytes: None."""
    rows = []
    for m in re.finditer(r'\{\s*"((?:[^"\\]|\\.)*)",\s*(TEXT|TXT|GEN)\(', body):
        name = m.group(1).encode().decode("unicode_escape")
        if m.group(2) == "GEN":
            rows.append((name, None))
            continue
        text, _ = c_strings(body, m.end())
        rows.append((name, text))
    return rows


def norm_rows(body):
    """(pattern, accepted) of every row {"in", "out" or NULL, ...}."""
    rows = []
    for m in re.finditer(r'\{\s*(?=")', body):
        inp, pos = c_strings(body, m.end() - 0)
        rest = body[pos:].lstrip()
        if not rest.startswith(","):
            continue
        rest = rest[1:].lstrip()
        rows.append((inp.decode("utf-8"), not rest.startswith("NULL")))
    return rows


def load(text):
    """The JSON instance an editor checks: the YAML read as 1.2 would, or
    None when the YAML reader refuses the text."""
    try:
        return True, yaml.load(text.decode("utf-8"), Loader=YAML12Loader)
    except (yaml.YAMLError, UnicodeDecodeError, ValueError):
        return False, None


class SchemaTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        with open(SCHEMA, encoding="utf-8") as f:
            cls.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(cls.schema)
        cls.validator = jsonschema.Draft202012Validator(cls.schema)
        with open(TABLES, encoding="utf-8") as f:
            cls.src = f.read()

    def valid(self, instance):
        return self.validator.is_valid(instance)

    def test_tables_were_read(self):
        # The reader of the C tables must find them all, or the rest
        # would pass by testing nothing.
        self.assertGreaterEqual(len(rows_with_text(table(self.src, "good_rows"), "TXT")), 30)
        self.assertGreaterEqual(len(rows_with_text(table(self.src, "bad_rows"), "TEXT")), 60)
        self.assertGreaterEqual(len(rows_with_text(table(self.src, "exact_rows"), "TEXT")), 5)
        self.assertGreaterEqual(len(norm_rows(table(self.src, "norm_rows"))), 40)

    def test_accepts_every_valid_policy(self):
        for name, text in rows_with_text(table(self.src, "good_rows"), "TXT"):
            with self.subTest(row=name):
                ok, doc = load(text)
                self.assertTrue(ok, "the YAML reader refuses a valid policy: %r" % text)
                errors = [e.message for e in self.validator.iter_errors(doc)]
                self.assertEqual(errors, [], "%r read as %r" % (text, doc))

    def test_rejects_every_invalid_policy_it_can_express(self):
        expressed = refused_by_yaml = 0
        for table_name in ("bad_rows", "exact_rows"):
            for name, text in rows_with_text(table(self.src, table_name), "TEXT"):
                if text is None or name in NOT_EXPRESSIBLE:
                    continue
                with self.subTest(row=name):
                    ok, doc = load(text)
                    if not ok:
                        refused_by_yaml += 1
                        continue
                    expressed += 1
                    self.assertFalse(self.valid(doc),
                                     "accepted %r (read as %r); if no schema can say why, add "
                                     "the row to NOT_EXPRESSIBLE with the reason" % (text, doc))
        self.assertGreaterEqual(expressed, 40)
        print("\n%d invalid rows rejected by the schema, %d by the YAML reader, %d not "
              "expressible" % (expressed, refused_by_yaml, len(NOT_EXPRESSIBLE)),
              file=sys.stderr)

    def test_not_expressible_rows_exist_and_pass(self):
        # The list above names rows that exist, and that the schema does
        # accept (else they belong with the others).
        names = {n for t in ("bad_rows", "exact_rows")
                 for n, _ in rows_with_text(table(self.src, t), "TEXT")}
        self.assertEqual(sorted(set(NOT_EXPRESSIBLE) - names), [])
        for t in ("bad_rows", "exact_rows"):
            for name, text in rows_with_text(table(self.src, t), "TEXT"):
                if name not in NOT_EXPRESSIBLE or text is None:
                    continue
                ok, doc = load(text)
                if ok:
                    with self.subTest(row=name):
                        self.assertTrue(self.valid(doc), "%s: the schema rejects it after all"
                                        % name)

    def test_patterns(self):
        # Every pattern of the normalisation table, as a one-item list.
        for pattern, accepted in norm_rows(table(self.src, "norm_rows")):
            with self.subTest(pattern=pattern):
                self.assertEqual(self.valid({"protect": [pattern]}), accepted,
                                 "%r: ralon %s it" % (pattern,
                                                      "accepts" if accepted else "refuses"))

    def test_shape(self):
        self.assertTrue(self.valid({}))
        self.assertTrue(self.valid({"version": 1}))
        self.assertTrue(self.valid({"protect": [1, True, None, 1.5, "a"]}))
        for bad in ([], "protect", {"protect": "a"}, {"protect": [["a"]]},
                    {"protect": [{"a": "b"}]}, {"version": "1"}, {"version": 2},
                    {"protects": ["a"]}, {"protect": ["a"], "extra": 1}):
            with self.subTest(instance=bad):
                self.assertFalse(self.valid(bad))

    @unittest.skipUnless(RALON, "RALON_BINARY is not set")
    def test_init_names_the_schema_and_satisfies_it(self):
        with tempfile.TemporaryDirectory(prefix="ralon-schema-") as d:
            os.mkdir(os.path.join(d, ".git"))
            subprocess.run([RALON, "init", "--no-hooks"], cwd=d, check=True,
                           stdout=subprocess.DEVNULL,
                           env=dict(os.environ, LC_ALL="C.UTF-8", HOME=d))
            with open(os.path.join(d, "agent.lock"), "rb") as f:
                text = f.read()
        first = text.decode("utf-8").splitlines()[0]
        m = re.fullmatch(r"# yaml-language-server: \$schema=file://(/\S+)", first)
        self.assertIsNotNone(m, first)
        self.assertTrue(m.group(1).endswith("/ralon/agent.lock.schema.json"), first)
        ok, doc = load(text)
        self.assertTrue(ok)
        self.assertEqual([e.message for e in self.validator.iter_errors(doc)], [])


if __name__ == "__main__":
    unittest.main()
