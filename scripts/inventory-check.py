#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The state inventory check: every field of the structs a handoff moves
between two tasks has a line in inventory/, and every line names a field.

    scripts/inventory-check.py KSRC [--inventory DIR] [--list STRUCT]

KSRC is a kernel source tree with core-hooks.patch applied. For each struct
below its body is parsed from the header (all #if branches, nested anonymous
structs and unions, bitfields, arrays, function pointers, struct_group() and
the like) and its field names are compared with the table's FIELD column.
Exit 0 with a count per struct; 1 with a line per difference, per malformed
table line, or per struct member line the parser can't name (so nothing
slips by); 2 on usage errors. --list prints the parsed fields of one struct
(a new table's first column).
"""
import argparse
import os
import re
import sys

# label (as printed), struct name, header under KSRC, table file
STRUCTS = [
    ("task_struct", "task_struct", "include/linux/sched.h", "task_struct.txt"),
    ("thread_struct-x86_64", "thread_struct",
     "arch/x86/include/asm/processor.h", "thread_struct-x86_64.txt"),
    ("thread_struct-arm64", "thread_struct",
     "arch/arm64/include/asm/processor.h", "thread_struct-arm64.txt"),
    ("io_uring_task", "io_uring_task", "include/linux/io_uring_types.h",
     "io_uring_task.txt"),
]

VERDICTS = ("moves", "refused", "equal", "invisible", "open")

# Lines of a struct body that are markers, not members (no semicolon or no
# field): dropped before parsing.
MARKERS = {
    "randomized_struct_fields_start",
    "randomized_struct_fields_end",
}
# Marker invocations: NAME(...); declares no field.
MARKER_CALLS = {
    "__cacheline_group_begin",
    "__cacheline_group_end",
    "__cacheline_group_begin_aligned",
    "__cacheline_group_end_aligned",
    "static_assert",
    "_Static_assert",
    "BUILD_BUG_ON",
}
# Member macros: NAME(args); declares the field named by args[index].
NAMED_CALLS = {
    "DECLARE_BITMAP": 0,
    "DECLARE_HASHTABLE": 0,
    "DECLARE_KFIFO": 0,
    "DECLARE_KFIFO_PTR": 0,
    "DECLARE_FLEX_ARRAY": 1,
    "__DECLARE_FLEX_ARRAY": 1,
    "CACHELINE_PADDING": 0,
}
# struct_group() and friends: the group's name and its members are fields.
# NAME: (index of the group name, index of the first member)
GROUP_CALLS = {
    "struct_group": (0, 1),
    "struct_group_attr": (0, 2),
    "struct_group_tagged": (1, 2),
    "__struct_group": (1, 3),
}
# Annotations that may appear anywhere in a declaration, with or without an
# argument list; they are dropped.
ANNOTATIONS = {
    "__rcu", "__user", "__percpu", "__iomem", "__force", "__private",
    "__randomize_layout", "__no_randomize_layout", "__packed",
    "____cacheline_aligned", "____cacheline_aligned_in_smp",
    "__cacheline_aligned", "__cacheline_aligned_in_smp",
    "____cacheline_internodealigned_in_smp", "__attribute__", "__attribute",
    "__aligned", "__counted_by", "__counted_by_le", "__counted_by_be",
    "__guarded_by", "__pt_guarded_by", "__nonstring", "__section",
    "__data_racy", "__must_be_array", "__deprecated", "__maybe_unused",
    "__used", "__read_mostly", "__kernel", "__safe", "__bitwise",
    "__rcu_guarded", "__tagged", "__noreturn", "volatile", "const",
    "restrict", "__restrict", "_Atomic", "__signed__",
}
TYPE_WORDS = {
    "struct", "union", "enum", "unsigned", "signed", "int", "long", "short",
    "char", "void", "bool", "_Bool", "float", "double", "typeof",
    "__typeof__", "__typeof",
}
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


class ParseError(Exception):
    pass


def strip_comments(text):
    """Comments out, string and char literals kept, line numbers kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                j = n
            out.append("".join("\n" if ch == "\n" else " "
                               for ch in text[i:j + 2]))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            # a literal ends at its quote or, unbalanced (an apostrophe in
            # an #error line), at the end of the line
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            if text[j] == "\n":
                j -= 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_preprocessor(text):
    """Directives (with continuations) out: members of every branch stay."""
    lines = text.split("\n")
    out = []
    cont = False
    for line in lines:
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def find_struct_body(text, name):
    """The text between the braces of 'struct name {' at file level."""
    pat = re.compile(r"(?m)^[ \t]*struct\s+" + re.escape(name) + r"\s*\{")
    matches = list(pat.finditer(text))
    if not matches:
        raise ParseError("no definition of struct %s" % name)
    if len(matches) > 1:
        raise ParseError("%d definitions of struct %s" % (len(matches), name))
    start = matches[0].end()
    depth = 1
    i = start
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i], text.count("\n", 0, start) + 1
        i += 1
    raise ParseError("struct %s: unbalanced braces" % name)


def split_top(text, sep):
    """Split at sep outside (), [], {}; keeps (piece, offset) pairs."""
    parts, depth, last = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append((text[last:i], last))
            last = i + 1
    parts.append((text[last:], last))
    return parts


def matching(text, i):
    """Index of the bracket closing the one at text[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opening, closing = text[i], pairs[text[i]]
    depth = 0
    for j in range(i, len(text)):
        if text[j] == opening:
            depth += 1
        elif text[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    raise ParseError("unbalanced '%s'" % opening)


def drop_annotations(decl):
    """Annotations (and their argument lists) out of a declaration."""
    out = []
    i = 0
    while i < len(decl):
        m = re.match(IDENT, decl[i:])
        if m and (i == 0 or not re.match(r"[A-Za-z0-9_]", decl[i - 1])):
            word = m.group(0)
            j = i + len(word)
            if word in ANNOTATIONS:
                k = j
                while k < len(decl) and decl[k].isspace():
                    k += 1
                if k < len(decl) and decl[k] == "(":
                    j = matching(decl, k) + 1
                out.append(" ")
                i = j
                continue
            out.append(word)
            i = j
            continue
        out.append(decl[i])
        i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def declarator_name(decl):
    """The name a declarator declares: 'x', '*x', 'x[N]', 'x : 3',
    '(*x)(args)', '*(*x[2])(void)'. None for an unnamed bitfield."""
    d = decl.strip()
    # a bitfield width
    d = re.sub(r":\s*[^:]+$", "", d) if re.search(r":[^:]*$", d) else d
    d = d.strip()
    if not d:
        return None
    # function pointer: the first parenthesis group holding '*name'
    m = re.search(r"\(\s*[*\s]*(?:const\s+)?(" + IDENT + r")\s*(\[[^\]]*\]\s*)*\)", d)
    if m and "(" in d and re.search(r"\)\s*\(", d):
        return m.group(1)
    # arrays out
    while True:
        m = re.search(r"\[[^\[\]]*\]\s*$", d)
        if not m:
            break
        d = d[:m.start()].rstrip()
    m = re.search("(" + IDENT + r")\s*$", d)
    if not m:
        raise ParseError("no name in '%s'" % decl.strip())
    return m.group(1)


def macro_call(decl):
    """('NAME', [args]) if decl is a bare NAME(args) invocation, else None."""
    m = re.match(r"^(" + IDENT + r")\s*\(", decl)
    if not m:
        return None
    open_at = decl.index("(", m.start(1))
    close_at = matching(decl, open_at)
    if decl[close_at + 1:].strip():
        return None
    args = [a.strip() for a, _ in split_top(decl[open_at + 1:close_at], ",")]
    return m.group(1), args


class Struct:
    def __init__(self, label):
        self.label = label
        self.fields = []
        self.errors = []

    def add(self, name, line):
        self.fields.append((name, line))

    def error(self, line, what):
        self.errors.append("inventory: %s: line %d: %s" % (self.label, line,
                                                           what))


def parse_members(body, base_line, st):
    """Add the fields declared in body (a struct or union body) to st."""
    # markers (no semicolon) would glue onto the next member: blank them
    body = "\n".join("" if line.strip() in MARKERS else line
                      for line in body.split("\n"))
    for piece, off in split_top(body, ";"):
        lead = len(piece) - len(piece.lstrip())
        line = base_line + body[:off + lead].count("\n")
        text = piece.strip()
        if not text:
            continue
        bare = bare_line(text)
        if bare is not None:
            st.error(line + bare[0], "'%s' alone on a line before a member "
                     "(a macro without a semicolon?)" % bare[1])
            continue
        try:
            parse_decl(text, line, st)
        except ParseError as e:
            st.error(line, "can't parse '%s': %s" %
                     (re.sub(r"\s+", " ", text)[:100], e))


def bare_line(text):
    """(line offset, word) of a lone identifier on a line of a member that
    isn't its last line, outside nested braces: an unknown marker macro."""
    depth = 0
    lines = []
    cur, top = [], True
    for c in text:
        if c == "\n":
            lines.append(("".join(cur), top))
            cur, top = [], depth == 0
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if depth:
            top = False
        cur.append(c)
    lines.append(("".join(cur), top))
    for i, (line, top) in enumerate(lines[:-1]):
        w = line.strip()
        if top and re.fullmatch(IDENT, w) and w not in ANNOTATIONS and \
                w not in TYPE_WORDS:
            return i, w
    return None


def parse_decl(text, line, st):
    call = macro_call(text)
    if call and call[0] in GROUP_CALLS:
        # struct_group(name, members...): members may be braced themselves
        gidx, first = GROUP_CALLS[call[0]]
        args = call[1]
        if gidx >= len(args) or not re.fullmatch(IDENT, args[gidx]):
            raise ParseError("%s(): no group name" % call[0])
        st.add(args[gidx], line)
        parse_members(",".join(args[first:]) + ";", line, st)
        return
    brace = text.find("{")
    if brace >= 0:
        close = matching(text, brace)
        head = drop_annotations(text[:brace])
        tail = drop_annotations(text[close + 1:])
        if not re.match(r"^(struct|union|enum)(\s+" + IDENT + r")?$", head):
            raise ParseError("a braced member that isn't a struct, union "
                             "or enum")
        if head.startswith("enum") and not tail:
            return  # constants, no member
        if tail:
            # a named member of an inline struct or union type: its name(s)
            for d, _ in split_top(tail, ","):
                name = declarator_name(d)
                if name:
                    st.add(name, line)
            return
        if head not in ("struct", "union"):
            raise ParseError("a tagged struct or union declares no member")
        inner = text[brace + 1:close]
        inner_line = line + text[:brace + 1].count("\n")
        parse_members(inner, inner_line, st)
        return
    decl = drop_annotations(text)
    if not decl:
        return
    call = macro_call(decl)
    if call:
        name, args = call
        if name in MARKER_CALLS:
            return
        if name in NAMED_CALLS:
            idx = NAMED_CALLS[name]
            if idx >= len(args) or not re.fullmatch(IDENT, args[idx]):
                raise ParseError("%s(): no field name at argument %d" %
                                 (name, idx))
            st.add(args[idx], line)
            return
        raise ParseError("unknown macro %s() as a member" % name)
    parts = split_top(decl, ",")
    first = parts[0][0].strip()
    # the first declarator comes after the type: the type needs one word
    # besides the name (or a struct/union/enum tag), or it's a bare macro
    toks = re.findall(IDENT + r"|\S", first)
    idents = [t for t in toks if re.fullmatch(IDENT, t)]
    if ":" in first and len([t for t in idents if t not in TYPE_WORDS]) == 0:
        return  # an unnamed bitfield, 'unsigned :0'
    if len(idents) < 2 and "(" not in first:
        raise ParseError("not a declaration (a macro without arguments?)")
    if "(" in first and not re.search(r"\(\s*\*", first):
        raise ParseError("parenthesis that isn't a function pointer")
    if len(parts) == 1 and re.fullmatch(r"(struct|union|enum)\s+" + IDENT,
                                        first):
        raise ParseError("a struct, union or enum declaration, no member")
    name = declarator_name(first)
    if name in TYPE_WORDS:
        raise ParseError("declarator without a name")
    if name is not None:
        st.add(name, line)
    for d, _ in parts[1:]:
        n = declarator_name(d)
        if n is not None:
            st.add(n, line)


def parse_struct(ksrc, label, name, header):
    st = Struct(label)
    path = os.path.join(ksrc, header)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = f.read()
    except OSError as e:
        st.errors.append("inventory: %s: %s" % (label, e))
        return st
    text = drop_preprocessor(strip_comments(raw))
    try:
        body, line = find_struct_body(text, name)
    except ParseError as e:
        st.errors.append("inventory: %s: %s: %s" % (label, header, e))
        return st
    parse_members(body, line, st)
    if not st.fields and not st.errors:
        st.errors.append("inventory: %s: no fields parsed" % label)
    return st


def read_table(path, label, shown):
    """{field: verdict} and the errors of a table file."""
    table, errors = {}, []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        return None, ["inventory: %s: %s" % (label, e)]
    for num, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        where = "%s:%d" % (shown, num)
        if len(cols) != 3:
            errors.append("inventory: %s: %s: %d tab-separated columns, "
                          "want FIELD<TAB>VERDICT<TAB>WHY" %
                          (label, where, len(cols)))
            continue
        field, verdict, why = (c.strip() for c in cols)
        if not re.fullmatch(IDENT, field):
            errors.append("inventory: %s: %s: '%s' is not a field name" %
                          (label, where, field))
            continue
        if verdict not in VERDICTS:
            errors.append("inventory: %s: %s: %s: verdict '%s' is not one "
                          "of %s" % (label, where, field, verdict,
                                     ", ".join(VERDICTS)))
        if not why:
            errors.append("inventory: %s: %s: %s: no WHY" %
                          (label, where, field))
        if field in table:
            errors.append("inventory: %s: %s: %s is listed twice" %
                          (label, where, field))
        table[field] = verdict
    return table, errors


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ksrc", help="kernel source, core-hooks.patch applied")
    ap.add_argument("--inventory", metavar="DIR",
                    help="the tables (default: the repo's inventory/)")
    ap.add_argument("--list", metavar="STRUCT",
                    help="print the parsed fields of STRUCT (a label: " +
                    ", ".join(s[0] for s in STRUCTS) + ") and exit")
    args = ap.parse_args()

    if not os.path.isdir(args.ksrc):
        print("inventory: %s is not a directory" % args.ksrc, file=sys.stderr)
        return 2
    if args.inventory:
        inv, shown_dir = args.inventory, args.inventory.rstrip("/")
    else:
        inv, shown_dir = os.path.join(here, "..", "inventory"), "inventory"

    if args.list:
        for label, name, header, _ in STRUCTS:
            if label == args.list:
                st = parse_struct(args.ksrc, label, name, header)
                for field, line in st.fields:
                    print("%s\t%s:%d" % (field, header, line))
                for e in st.errors:
                    print(e, file=sys.stderr)
                return 1 if st.errors else 0
        print("inventory: no struct %s" % args.list, file=sys.stderr)
        return 2

    failed = False
    summary = []
    for label, name, header, fname in STRUCTS:
        st = parse_struct(args.ksrc, label, name, header)
        shown = "%s/%s" % (shown_dir, fname)
        table, errors = read_table(os.path.join(inv, fname), label, shown)
        errors = st.errors + errors
        if table is not None and not st.errors:
            fields = []
            for field, _ in st.fields:
                if field not in fields:
                    fields.append(field)
            for field in fields:
                if field not in table:
                    errors.append("inventory: %s: field %s is not in %s" %
                                  (label, field, shown))
            for field in table:
                if field not in fields:
                    errors.append("inventory: %s: %s is listed but not a "
                                  "field" % (label, field))
            counts = {v: 0 for v in VERDICTS}
            for field in fields:
                if table.get(field) in counts:
                    counts[table[field]] += 1
            summary.append("inventory: %s: %d fields (%s)" % (
                label, len(fields),
                ", ".join("%s %d" % (v, counts[v]) for v in VERDICTS)))
        for e in errors:
            print(e)
        failed = failed or bool(errors)
    if failed:
        return 1
    for s in summary:
        print(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
