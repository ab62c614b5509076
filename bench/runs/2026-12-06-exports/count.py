#!/usr/bin/env python3
"""Counts the names each library crate exports at its root: every name a
`pub use` at column 0 of its lib.rs brings in (braces expanded), and every
`pub` item declared at column 0 there (a `pub mod` counts as one name).
Items behind `#[cfg(feature = ...)]` (gen's `testing`, also doc-hidden) and
other items marked `#[doc(hidden)]` are counted apart. Run from the
repository's root, optionally naming a git revision to count (`-v` lists
the names):

    python3 bench/runs/2026-12-06-exports/count.py [-v] [REV]
"""
import re
import subprocess
import sys
from pathlib import Path

CRATES = ["core", "format", "probe", "engine", "gen", "verify", "vu", "mpi"]
ITEM = re.compile(r"^pub (?:unsafe )?(fn|struct|enum|trait|const|static|type|mod|union) ([A-Za-z_][A-Za-z0-9_]*)")


def names_of(tree: str) -> list[str]:
    """The names a `use` tree brings in (after `pub use`, before `;`)."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix_tree: str):
        # Split at top-level commas.
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(prefix_tree):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(prefix_tree[start:i])
                start = i + 1
        parts.append(prefix_tree[start:])
        for part in filter(None, parts):
            if "{" in part:
                inner = part[part.index("{") + 1 : part.rindex("}")]
                walk(inner)
            elif "::as" in part or " as " in part:
                out.append(part.split("as")[-1])
            else:
                last = part.split("::")[-1]
                if last == "self":
                    last = part.split("::")[-2]
                out.append(last)

    walk(tree)
    return out


def count(lib: Path, rev: str | None = None):
    if rev:
        text = subprocess.run(["git", "show", f"{rev}:{lib}"], check=True,
                              capture_output=True, text=True).stdout
    else:
        text = lib.read_text()
    lines = text.splitlines()
    visible, hidden, featured = [], [], []
    attrs = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#["):
            attrs.append(line)
            i += 1
            continue
        names = []
        if line.startswith("pub use "):
            stmt = line[len("pub use "):]
            while not stmt.rstrip().endswith(";"):
                i += 1
                stmt += lines[i]
            names = names_of(stmt.rstrip()[:-1])
        else:
            m = ITEM.match(line)
            if m:
                names = [m.group(2)]
        if names:
            if any("cfg(" in a and "feature" in a for a in attrs):
                featured += names
            elif any("doc(hidden)" in a for a in attrs):
                hidden += names
            else:
                visible += names
        if not line.startswith("///") and not line.startswith("//"):
            attrs = [] if not line.startswith("#[") else attrs
        i += 1
    return visible, hidden, featured


def main():
    verbose = "-v" in sys.argv
    rev = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    print("| crate | exported names | doc(hidden) | behind a feature |")
    print("|---|---:|---:|---:|")
    for c in CRATES:
        lib = Path("crates") / c / "src" / "lib.rs"
        visible, hidden, featured = count(lib, rev)
        print(f"| mancala_{c} | {len(visible)} | {len(hidden)} | {len(featured)} |")
        if verbose:
            print("  ", " ".join(sorted(visible)))
            if hidden:
                print("   hidden:", " ".join(sorted(hidden)))
            if featured:
                print("   featured:", " ".join(sorted(featured)))


if __name__ == "__main__":
    main()
