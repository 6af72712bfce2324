#!/usr/bin/env python3
"""Turn `freednn bench --vs-lib ...` logs into the markdown tables of docs/performance.md.

  perf_report.py LOG [LOG...]

Reads the per-entry summary lines (`ConvFwdAlgo: ... lib: FreeDNN problem: ... MedianTime: ...
Theirs: X ms Ratio(ours/theirs): Y`) and the header line naming type and layout, and prints
one table per log plus the geometric mean of the ratios and how many entries reach 30% of the
other library's throughput (ratio <= 3.33), the speed floor of the CUDA convolution issue."""
import math, re, sys

DIRS = {"ConvFwdAlgo": "fwd", "ConvBwdDataAlgo": "bwd-data", "ConvBwdFilterAlgo": "bwd-filter"}


def parse(path):
    head, rows = "", []
    for line in open(path, errors="replace"):
        if line.startswith("FreeDNN ") and "type" in line:
            head = line.strip()
        m = re.match(r"(Conv\w+Algo): (\d+) \((\w+)\) lib: FreeDNN problem: (\S+) .*?MedianTime: ([\d.]+) ms TFLOP/s: ([\d.]+)"
                     r".*?HostTime/call: ([\d.]+) us(?: .*?Theirs: ([\d.]+) ms(?: \(algo \d+\))? Ratio\(ours/theirs\): ([\d.]+))?", line)
        if m:
            rows.append(dict(dir=DIRS[m.group(1)], algo=m.group(2), problem=m.group(4), ms=float(m.group(5)),
                             tflops=float(m.group(6)), host_us=float(m.group(7)),
                             theirs=float(m.group(8)) if m.group(8) else None,
                             ratio=float(m.group(9)) if m.group(9) else None))
    return head, rows


def main():
    for path in sys.argv[1:]:
        head, rows = parse(path)
        print("### %s\n" % (head or path))
        print("| layer | dir | algo | FreeDNN ms | NVIDIA ms | FreeDNN/NVIDIA | FreeDNN TFLOP/s | host us/call |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        ratios = []
        for r in rows:
            ratio = "%.2f" % r["ratio"] if r["ratio"] is not None else "n/a"
            theirs = "%.4f" % r["theirs"] if r["theirs"] is not None else "n/a"
            if r["ratio"] is not None:
                ratios.append(r["ratio"])
            print("| %s | %s | %s | %.4f | %s | %s | %.2f | %.1f |" % (r["problem"], r["dir"], r["algo"], r["ms"], theirs, ratio,
                                                                     r["tflops"], r["host_us"]))
        if ratios:
            gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            floor = sum(1 for x in ratios if x <= 1 / 0.3)
            print("\nGeometric mean FreeDNN/NVIDIA time: %.2f over %d entries; %d of %d reach 30%% of NVIDIA's throughput.\n"
                  % (gm, len(ratios), floor, len(ratios)))


if __name__ == "__main__":
    main()
