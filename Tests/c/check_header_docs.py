#!/usr/bin/env python3
"""Every function include/tureen.h declares is documented where it is
declared, and its comment says which statuses it returns ("Errors:"), as
sqlite3.h does for each of its functions. Run by `make test`; exits 1 and
names the functions whose comment is missing or has no Errors line."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import List

HEADER = Path(__file__).resolve().parents[2] / "include" / "tureen.h"
# A declaration at the start of a line: a return type, then tureen_name(.
DECLARATION = re.compile(r"^(?!typedef)[A-Za-z_][A-Za-z0-9_ ]*?[ *]+(tureen_[a-z0-9_]+)\s*\(", re.M)


def undocumented(text: str) -> List[str]:
    problems = []
    for match in DECLARATION.finditer(text):
        before = text[: match.start()].rstrip()
        if not before.endswith("*/"):
            problems.append("%s: no comment right before its declaration" % match.group(1))
            continue
        comment = before[before.rfind("/*"):]
        if "Errors:" not in comment:
            problems.append("%s: its comment has no \"Errors:\" line" % match.group(1))
    return problems


def main() -> int:
    text = HEADER.read_text()
    found = len(DECLARATION.findall(text))
    problems = undocumented(text)
    for problem in problems:
        print("tureen.h: %s" % problem, file=sys.stderr)
    if found < 50:  # the pattern itself broke: fail rather than pass on nothing
        print("tureen.h: only %d declarations found; the check is broken" % found, file=sys.stderr)
        return 1
    if problems:
        return 1
    print("tureen.h: all %d functions document their errors" % found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
