#!/usr/bin/env python3
"""Run the compat probe built against FreeDNN and against NVIDIA's cuDNN and compare their
lines: statuses by name, checksums and sampled values within a relative tolerance per dtype.
Usage: compare.py FREEDNN_BINARY NVIDIA_BINARY. Exit 1 on any difference."""
import subprocess, sys

def run(binary):
    out = subprocess.run([binary], capture_output=True, text=True, timeout=600)
    res = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "status":
            vals = [float(v) for v in parts[6:7] + parts[8:9] + parts[10:]] if parts[2] == "CUDNN_STATUS_SUCCESS" else []
            res[parts[0]] = (parts[2], vals)
    return res, out.stdout

ours, ours_txt = run(sys.argv[1])
theirs, theirs_txt = run(sys.argv[2])
for txt, who in ((ours_txt, "FreeDNN"), (theirs_txt, "NVIDIA cuDNN")):
    if "create CUDNN_STATUS_SUCCESS" not in txt:
        print("skipped: %s could not create a handle (no GPU?):\n%s" % (who, txt))
        sys.exit(77)
bad = 0
print("%-36s %-28s %-28s %s" % ("case", "FreeDNN", "NVIDIA", "max rel diff"))
for case in sorted(theirs):
    s2, v2 = theirs[case]
    s1, v1 = ours.get(case, ("MISSING", []))
    tol = 2e-2 if case.startswith(("f16", "bf16")) else 1e-5
    if s1 != s2:
        diff = "status differs"
        bad += 1
    elif s1 != "CUDNN_STATUS_SUCCESS":
        diff = "-"
    else:
        scale = max([1.0] + [abs(v) for v in v2])
        d = max(abs(a - b) for a, b in zip(v1, v2)) / scale if v1 else 0.0
        diff = "%.2e%s" % (d, "" if d <= tol else "  > tol %.0e" % tol)
        bad += d > tol
    print("%-36s %-28s %-28s %s" % (case, s1.replace("CUDNN_STATUS_", ""), s2.replace("CUDNN_STATUS_", ""), diff))
print("%d passed, %d failed" % (len(theirs) - bad, bad))
sys.exit(1 if bad else 0)
