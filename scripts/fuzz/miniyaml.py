"""A YAML subset reader and writer for the fuzzer (Python 3 standard library only).

It reads what hayate's shipped inputs and model files use -- block mappings and sequences,
flow collections, plain, single- and double-quoted scalars, comments -- into a tree the fuzzer
can mutate, and writes such a tree back as YAML. It is not a YAML implementation: anything
else raises ParseError, and the fuzzer then mutates the file as text only.

Tree: Map (a list of [key, value] pairs, so duplicate keys can be expressed), list (sequence),
Scalar (text and quoting style) and Raw (text written verbatim, for mutations that are not
well-formed trees: deep flow nesting, control bytes).
"""

import re


class ParseError(Exception):
    pass


class Map(list):
    """A mapping as a list of [key, value] pairs (keys are Scalars)."""


class Scalar:
    __slots__ = ("text", "style")

    def __init__(self, text, style="plain"):
        self.text = text
        self.style = style  # plain, single, double

    def __repr__(self):
        return "Scalar(%r, %s)" % (self.text, self.style)


class Raw:
    """Text emitted as it is where a value goes (may make the document invalid on purpose)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
            "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
            "N": "\x85", "_": "\xa0"}


def _strip_comment(line):
    """The line without a trailing comment (a '#' at the start or after a blank, outside quotes)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if quote == '"' and c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'" and (i == 0 or line[i - 1] in " \t[{,:-"):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
        i += 1
    return line.rstrip()


class _Flow:
    """A flow value ([...], {...} or a scalar) read from one string."""

    def __init__(self, text):
        self.s = text
        self.p = 0

    def blank(self):
        while self.p < len(self.s) and self.s[self.p] in " \t":
            self.p += 1

    def value(self, stop):
        self.blank()
        if self.p >= len(self.s):
            return Scalar("")
        c = self.s[self.p]
        if c == "[":
            self.p += 1
            out = []
            while True:
                self.blank()
                if self.p < len(self.s) and self.s[self.p] == "]":
                    self.p += 1
                    return out
                out.append(self.value(",]"))
                self.blank()
                if self.p < len(self.s) and self.s[self.p] == ",":
                    self.p += 1
                elif self.p < len(self.s) and self.s[self.p] == "]":
                    continue
                else:
                    raise ParseError("bad flow sequence: %r" % self.s)
        if c == "{":
            self.p += 1
            out = Map()
            while True:
                self.blank()
                if self.p < len(self.s) and self.s[self.p] == "}":
                    self.p += 1
                    return out
                key = self.value(":,}")
                self.blank()
                if self.p < len(self.s) and self.s[self.p] == ":":
                    self.p += 1
                    val = self.value(",}")
                else:
                    val = Scalar("")
                out.append([key, val])
                self.blank()
                if self.p < len(self.s) and self.s[self.p] == ",":
                    self.p += 1
                elif self.p < len(self.s) and self.s[self.p] == "}":
                    continue
                else:
                    raise ParseError("bad flow mapping: %r" % self.s)
        if c in "\"'":
            return self.quoted()
        start = self.p
        while self.p < len(self.s):
            ch = self.s[self.p]
            if ch in stop and (ch != ":" or self.p + 1 >= len(self.s) or self.s[self.p + 1] in " \t"):
                break
            self.p += 1
        return Scalar(self.s[start:self.p].strip())

    def quoted(self):
        q = self.s[self.p]
        self.p += 1
        out = []
        while self.p < len(self.s):
            c = self.s[self.p]
            if q == "'" and c == "'":
                if self.s[self.p + 1:self.p + 2] == "'":
                    out.append("'")
                    self.p += 2
                    continue
                self.p += 1
                return Scalar("".join(out), "single")
            if q == '"' and c == '"':
                self.p += 1
                return Scalar("".join(out), "double")
            if q == '"' and c == "\\":
                e = self.s[self.p + 1:self.p + 2]
                if e in _ESCAPES:
                    out.append(_ESCAPES[e])
                    self.p += 2
                    continue
                width = {"x": 2, "u": 4, "U": 8}.get(e)
                if width:
                    out.append(chr(int(self.s[self.p + 2:self.p + 2 + width], 16)))
                    self.p += 2 + width
                    continue
                raise ParseError("unknown escape \\%s" % e)
            out.append(c)
            self.p += 1
        raise ParseError("unterminated quoted scalar")


def _flow(text):
    f = _Flow(text)
    v = f.value("")
    f.blank()
    if f.p != len(f.s):
        raise ParseError("trailing text after a value: %r" % text)
    return v


_KEY = re.compile(r'^("(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\'|[^\s\'"\[\]{},#&*!|>%@`][^:#]*?)\s*:(?:\s+|$)')


def _split_key(text):
    """(key, rest) when `text` starts with 'key:', else None."""
    m = _KEY.match(text)
    if not m:
        return None
    return _flow(m.group(1)), text[m.end():]


def parse(text):
    """The tree of a YAML document in the supported subset; raises ParseError otherwise."""
    lines = []
    for raw in text.split("\n"):
        if "\t" in raw[: len(raw) - len(raw.lstrip(" \t"))]:
            raise ParseError("tab indentation")
        body = _strip_comment(raw)
        if body.strip() in ("", "---"):
            continue
        if body.lstrip().startswith(("|", ">", "&", "*", "!", "%", "?")):
            raise ParseError("unsupported construct")
        lines.append((len(body) - len(body.lstrip(" ")), body.strip()))
    pos = [0]

    def block(indent):
        if pos[0] >= len(lines):
            return Scalar("")
        ind, body = lines[pos[0]]
        if ind < indent:
            return Scalar("")
        if body.startswith("- ") or body == "-":
            return sequence(ind)
        if _split_key(body):
            return mapping(ind)
        pos[0] += 1
        return _flow(body)

    def item_value(rest, ind):
        """The value after 'key:' or '- ' on a line at indent `ind`."""
        if rest.strip():
            if rest.strip()[0] in "|>&*!":
                raise ParseError("unsupported construct")
            return _flow(rest.strip())
        if pos[0] < len(lines) and (lines[pos[0]][0] > ind or
                                    (lines[pos[0]][0] == ind and lines[pos[0]][1].startswith("-"))):
            return block(lines[pos[0]][0])
        return Scalar("")

    def mapping(ind):
        out = Map()
        while pos[0] < len(lines) and lines[pos[0]][0] == ind:
            body = lines[pos[0]][1]
            kv = _split_key(body)
            if not kv:
                raise ParseError("expected key: value at %r" % body)
            pos[0] += 1
            out.append([kv[0], item_value(kv[1], ind)])
        if pos[0] < len(lines) and lines[pos[0]][0] > ind:
            raise ParseError("bad indentation at %r" % lines[pos[0]][1])
        return out

    def sequence(ind):
        out = []
        while pos[0] < len(lines) and lines[pos[0]][0] == ind and (
                lines[pos[0]][1].startswith("- ") or lines[pos[0]][1] == "-"):
            body = lines[pos[0]][1][1:].lstrip(" ")
            inner = ind + len(lines[pos[0]][1]) - len(body)
            kv = _split_key(body) if body else None
            if kv:
                # "- key: value" opens a mapping whose further keys sit at `inner`.
                lines[pos[0]] = (inner, body)
                out.append(mapping(inner))
            else:
                pos[0] += 1
                out.append(item_value(body, ind))
        return out

    tree = block(0)
    if pos[0] != len(lines):
        raise ParseError("unparsed text at %r" % lines[pos[0]][1])
    return tree


_SPECIAL_PLAIN = re.compile(r"^[A-Za-z0-9_.+\-/]+$")


_NEEDS_ESCAPE = re.compile("[\"\\\\\x00-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff]")


def _escape(m):
    ch = m.group(0)
    if ch == '"':
        return '\\"'
    if ch == "\\":
        return "\\\\"
    o = ord(ch)
    return "\\x%02x" % o if o < 0x100 else "\\u%04x" % o


def quote(text):
    """A double-quoted YAML scalar holding exactly `text`."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def scalar_text(s):
    if isinstance(s, Raw):
        return s.text
    if s.style == "plain" and (s.text == "" or (_SPECIAL_PLAIN.match(s.text) and s.text != "-")):
        return s.text
    if s.style == "single" and "\n" not in s.text and all(0x20 <= ord(c) < 0x7F for c in s.text):
        return "'" + s.text.replace("'", "''") + "'"
    return quote(s.text)


def flow_text(v):
    if isinstance(v, Map):
        return "{" + ", ".join("%s: %s" % (flow_text(k), flow_text(x)) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow_text(x) for x in v) + "]"
    return scalar_text(v)


def dump(tree):
    """YAML text of a tree: block style, leaf collections in flow style."""
    out = []

    def leafy(v):
        if isinstance(v, (Scalar, Raw)) or not v:
            return True
        return not isinstance(v, Map) and all(isinstance(x, (Scalar, Raw)) for x in v)

    def emit(v, indent):
        pad = " " * indent
        if isinstance(v, Map):
            for k, x in v:
                key = flow_text(k)
                if leafy(x):
                    out.append("%s%s: %s" % (pad, key, flow_text(x)))
                else:
                    out.append("%s%s:" % (pad, key))
                    emit(x, indent + 2)
        elif isinstance(v, list):
            for x in v:
                if leafy(x):
                    out.append("%s- %s" % (pad, flow_text(x)))
                else:
                    out.append("%s-" % pad)
                    emit(x, indent + 2)
        else:
            out.append(pad + scalar_text(v))

    emit(tree, 0)
    return "\n".join(out) + "\n"


def get(tree, path):
    """The value at a dotted path of mappings (first match), or None."""
    node = tree
    for part in path.split("."):
        if not isinstance(node, Map):
            return None
        for k, v in node:
            if isinstance(k, Scalar) and k.text == part:
                node = v
                break
        else:
            return None
    return node
