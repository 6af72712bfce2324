#!/usr/bin/env python3
"""Check the dynamic symbol table of libcudnn.so.8 against the list of the 264 cuDNN 8.9
functions: every one is exported with version node libcudnn.so.8, and nothing else is
exported except our own freednn* extensions and cudnnGetLastErrorString."""
import subprocess, sys

lib, listfile = sys.argv[1], sys.argv[2]
want = set(l.split()[0] for l in open(listfile) if l.strip() and not l.startswith("#"))
out = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", lib], capture_output=True, text=True, check=True).stdout
have = {}
for line in out.splitlines():
    parts = line.split()
    if len(parts) < 3:
        continue
    sym = parts[2]
    name, _, ver = sym.partition("@")
    have[name] = ver.lstrip("@")
errors = []
if len(want) != 264:
    errors.append("function list has %d names, expected 264" % len(want))
for n in sorted(want):
    if n not in have:
        errors.append("missing export: %s" % n)
    elif have[n] != "libcudnn.so.8":
        errors.append("%s has version '%s', expected libcudnn.so.8" % (n, have[n]))
extra = [n for n in have if n not in want and not n.startswith("freednn") and n != "cudnnGetLastErrorString" and n != "libcudnn.so.8"]
for n in sorted(extra):
    errors.append("unexpected export: %s" % n)
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("exports OK: %d cuDNN functions, all versioned libcudnn.so.8" % len(want))
