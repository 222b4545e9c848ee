#!/usr/bin/env python3
"""Finds `await` after another element of one tuple, argument list or array literal.

Swift 6.3.1 at -O miscompiles `return (index, try await work())` inside do/catch in a task: the
tuple comes back without `index` (Tests/Tools/miscompile-tuple-await.swift). A value awaited into
a `let` first, then used, is compiled right, so that is the one shape the code uses:

    let children = try await work()
    return (index, children)

Usage: check-await-in-tuples.py DIR... ; prints each place as path:line and exits 1 if any.
A rough scanner (comments, strings and brackets), not a parser: it errs on the side of flagging.
"""
import os
import sys


def places(path):
    src = open(path, encoding="utf-8").read()
    found = []
    stack = []  # [kind, seen_comma]; kind: "(" "[" or "{"
    line = 1
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j
            line += src.count("\n", i, j)
            i = j + 2
            continue
        if c == '"' or (c == "#" and src.startswith('#"', i)):
            # A string (raw or not, one line or three): skipped, interpolations and all.
            hashes = 0
            while src.startswith("#", i + hashes):
                hashes += 1
            start = i + hashes
            quote = '"""' if src.startswith('"""', start) else '"'
            close = quote + "#" * hashes
            j = start + len(quote)
            while j < n and not src.startswith(close, j):
                if src[j] == "\\" and hashes == 0:
                    j += 1
                j += 1
            line += src.count("\n", i, j)
            i = j + len(close)
            continue
        if c == "\n":
            line += 1
        elif c in "([{":
            stack.append([c, False])
        elif c in ")]}":
            if stack:
                stack.pop()
        elif c == ",":
            if stack:
                stack[-1][1] = True
        elif (
            src.startswith("await", i)
            and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"))
            and (i + 5 >= n or not (src[i + 5].isalnum() or src[i + 5] == "_"))
        ):
            for kind, comma in reversed(stack):
                if kind == "{":
                    break
                if comma:
                    found.append(line)
                    break
        i += 1
    return found


def main(roots):
    bad = 0
    for root in roots:
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                if not name.endswith(".swift") or name == "miscompile-tuple-await.swift":
                    continue
                path = os.path.join(folder, name)
                for line in places(path):
                    print(f"{path}:{line}: an await after another element of a tuple or argument list: "
                          "await into a `let` first (Tests/Tools/miscompile-tuple-await.swift)")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["."]))
