#!/usr/bin/env python3
"""The design card's rules for core-hooks.patch: under 1000 added lines,
comments at most 15% of them, and every file it touches named in its
description (which says, per hunk, why the module can't do it and the test
that covers it). Exit 1 with what is off; prints the figures either way."""
import re
import sys

LIMIT, COMMENT_SHARE = 1000, 0.15

text = open(sys.argv[1], encoding="utf-8").read()
desc, _, body = text.partition("\ndiff --git ")
body = "diff --git " + body
added = comments = 0
files = re.findall(r"^diff --git a/(\S+) ", body, re.M)
for line in body.splitlines():
    if not line.startswith("+") or line.startswith("+++"):
        continue
    added += 1
    s = line[1:].strip()
    if s.startswith(("/*", "*", "//")):
        comments += 1
bad = []
if added >= LIMIT:
    bad.append(f"{added} added lines, the limit is under {LIMIT}")
if comments > COMMENT_SHARE * added:
    bad.append(f"{comments} comment lines, over {COMMENT_SHARE:.0%} of {added}")
for f in files:
    base = f.rsplit("/", 1)[-1]
    if f not in desc and not re.search(r"(?<![\w.])" + re.escape(base) + r"\b", desc):
        bad.append(f"{f} is not named in the description")
print(f"core-hooks.patch: {added} added lines, {comments} comments "
      f"({100 * comments / max(added, 1):.0f}%), {len(files)} files")
for b in bad:
    print("core-hooks.patch: " + b)
sys.exit(1 if bad else 0)
