#!/usr/bin/env python3
"""Generate the ABI value test and the function list from the API reference.

Outputs (default: tests/abi/ next to this script's parent):
  test_abi_values.c  C11 translation unit with one _Static_assert per
                     enumerator of sections 2.1-2.3, sizeof/offsetof checks
                     of the section 3.1 structs, the section 2.4 constants,
                     the version macros of section 3.3 and (GCC/Clang) a
                     prototype-compatibility check of every Appendix A
                     function.  main() returns 0 when the run-time (floating
                     point) checks pass.
  function_list.txt  "name header" for all 264 functions (Appendix A order).

This script deliberately does NOT read include/ and does not share code with
tools/gen_headers.py: the expected values are parsed from the reference
document independently, so a wrong header makes the test fail.

Usage: tools/gen_abi_test.py [--reference FILE] [--out DIR]
"""

import argparse
import os
import re
import sys

REF_DEFAULT = os.environ.get("FREEDNN_REFERENCE", "/work/shared/reference/cudnn_v8_api.md")
EXPECTED_FUNCTIONS = 264
EXPECTED_API_VERSION = (8, 9, 7)
EXPECTED_FREEDNN_VERSION = (0, 1, 0)
SUBLIBS = ["OPS_INFER", "OPS_TRAIN", "CNN_INFER", "CNN_TRAIN", "ADV_INFER", "ADV_TRAIN"]


def between(text, start, end):
    i = text.index(start)
    j = text.find(end, i + len(start))
    return text[i:j if j >= 0 else len(text)]


def enums_from(text):
    """[(type, [(name, value)])] for 2.1 (v8 column), 2.2 and 2.3."""
    result = []
    s21 = between(text, "\n### 2.1 ", "\n### 2.2 ")
    status = re.findall(r"^\| `(CUDNN_STATUS_[A-Z0-9_]+)` \| (\d+) \|", s21, re.M)
    result.append(("cudnnStatus_t", [(n, int(v)) for n, v in status]))
    s22 = between(text, "\n### 2.2 ", "\n### 2.4 ")
    blocks = re.findall(r"^\*\*`(\w+)`\*\* \((?:[\w.]+; )?(\d+) enumerators\)[^\n]*\n\n`([^`]*)`", s22, re.M)
    for tname, count, body in blocks:
        members = []
        for item in body.split(","):
            name, _, val = item.strip().partition("=")
            members.append((name.strip(), int(val.strip().rstrip("U"))))
        if len(members) != int(count):
            sys.exit("enum %s: %d members, reference says %s" % (tname, len(members), count))
        result.append((tname, members))
    return result


def constants_from(text):
    """Scalar macros of section 2.4 -> [(name, python value)]."""
    sec = between(text, "\n### 2.4 ", "\n## 3.")
    out = []
    for names, values in re.findall(r"^\| `([^`(]+)` \| ([^|]+) \|", sec, re.M):
        names = [n.strip() for n in names.split("/")]
        values = [v.strip() for v in values.split("/")]
        if len(names) != len(values):
            continue
        base = names[0].split("_")
        parsed = []
        ok = True
        for k, (n, v) in enumerate(zip(names, values)):
            if k and n.startswith("_"):
                n = "_".join(base[:len(base) - len(n[1:].split("_"))]) + n
            m = re.fullmatch(r"(\d+)U?<<(\d+)", v.replace(" ", ""))
            if m:
                val = int(m.group(1)) << int(m.group(2))
            elif re.fullmatch(r"\d+", v):
                val = int(v)
            elif re.fullmatch(r"[0-9.]+(e-?\d+)?", v):
                val = float(v)
            else:
                ok = False
                break
            parsed.append((n, val))
        if ok:
            out.extend(parsed)
    return out


def structs_from(text):
    """Section 3.1 -> {typedef: (sizeof, [(field, offset)])}."""
    sec = between(text, "\n### 3.1 ", "\n### 3.2 ")
    perf_fields = [(f, int(o)) for o, f in re.findall(r"^\| (\d+) \| `(\w+)` \|", sec, re.M)]
    perf_size = int(re.search(r"^\| — \| sizeof \| (\d+) bytes", sec, re.M).group(1))
    out = {}
    for t in re.findall(r"`(cudnnConvolution\w+AlgoPerf_t)`", sec):
        out[t] = (perf_size, perf_fields)
    for item in re.split(r"\n\* ", sec)[1:]:
        m = re.match(r"`(\w+)` \(tag `\w+`", item)
        size = re.search(r"sizeof (\d+)", item)
        fields = re.findall(r"`[^`@]*?\b(\w+)(?:\[\d+\])?`@(\d+)", item)
        if m and size and fields:
            out[m.group(1)] = (int(size.group(1)), [(f, int(o)) for f, o in fields])
    return out


def sm_macros_from(text):
    sec = between(text, "\n### 3.3 ", "\n### 3.4 ")
    row = re.search(r"^\| SM macros \| ([^|]+)\|", sec, re.M).group(1)
    out = []
    m = re.search(r"`CUDNN_MAX_SM_MAJOR_NUMBER (\d+)`, `CUDNN_MAX_SM_MINOR_NUMBER (\d+)`", row)
    major, minor = int(m.group(1)), int(m.group(2))
    out += [("CUDNN_MAX_SM_MAJOR_NUMBER", major), ("CUDNN_MAX_SM_MINOR_NUMBER", minor),
            ("CUDNN_MAX_DEVICE_VERSION", major * 100 + minor * 10)]
    sms = re.search(r"\((\d+(?:,\d+)+)\)", row).group(1).split(",")
    out += [("CUDNN_SM_%s" % s, int(s) * 10) for s in sms]
    out.append(("CUDNN_SM_9X_END", int(re.search(r"`CUDNN_SM_9X_END (\d+)`", row).group(1))))
    out.append(("CUDNN_MIN_DEVICE_VERSION", int(sms[0]) * 10))
    return out


def functions_from(text):
    """Appendix A -> [(ret, name, params, header)]."""
    sec = text[text.index("\n## Appendix A."):]
    out = []
    header = None
    for line in sec.splitlines():
        h = re.fullmatch(r"\*\*(cudnn_\w+\.h)\*\*", line.strip())
        if h:
            header = h.group(1)
            continue
        m = re.match(r"^(.*?)\s*\b(cudnn\w+)\((.*)\);", line)
        if m and header:
            out.append((m.group(1).strip(), m.group(2), m.group(3), header))
    return out


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(text):
    enums = enums_from(text)
    consts = constants_from(text)
    structs = structs_from(text)
    sms = sm_macros_from(text)
    funcs = functions_from(text)
    if len(funcs) != EXPECTED_FUNCTIONS:
        sys.exit("Appendix A: %d functions, expected %d" % (len(funcs), EXPECTED_FUNCTIONS))
    n_enumerators = sum(len(m) for _, m in enums)

    L = []
    w = L.append
    w("/* Generated by tools/gen_abi_test.py from the FreeDNN API reference. Do not edit. */")
    w("/* Compile-time ABI checks of the public headers against the reference values:")
    w(" *   %d enum types, %d enumerators, %d structs, %d constants, %d functions." %
      (len(enums), n_enumerators, len(structs), len(consts) + len(sms), len(funcs)))
    w(" * Build: cc -std=c11 -I<include> test_abi_values.c && ./a.out */")
    w("")
    w("#include <stddef.h>")
    w("#include <stdio.h>")
    w("")
    w("#include <cudnn.h>")
    w("")
    w("#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L")
    w("#error test_abi_values.c needs C11 (_Static_assert)")
    w("#endif")
    w("")
    w("#define CHECK(cond, what) _Static_assert(cond, what)")
    w("/* Layout values in the reference were measured on an LP64/LLP64 64-bit target. */")
    w("#define CHECK64(cond, what) _Static_assert(sizeof(void *) != 8 || (cond), what)")
    w("")
    w("/* ---- version macros (section 3.3 / 2.4) ---- */")
    w("CHECK(CUDNN_VERSION == %d, \"CUDNN_VERSION\");" %
      (EXPECTED_API_VERSION[0] * 1000 + EXPECTED_API_VERSION[1] * 100 + EXPECTED_API_VERSION[2]))
    for mac, v in zip(("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"), EXPECTED_API_VERSION):
        w("CHECK(%s == %d, \"%s\");" % (mac, v, mac))
    for lib in SUBLIBS:
        for suf, v in zip(("MAJOR", "MINOR", "PATCH"), EXPECTED_API_VERSION):
            w("CHECK(CUDNN_%s_%s == %d, \"CUDNN_%s_%s\");" % (lib, suf, v, lib, suf))
    fv = EXPECTED_FREEDNN_VERSION
    for suf, v in zip(("MAJOR", "MINOR", "PATCH"), fv):
        w("CHECK(FREEDNN_VERSION_%s == %d, \"FREEDNN_VERSION_%s\");" % (suf, v, suf))
    w("CHECK(FREEDNN_VERSION == %d, \"FREEDNN_VERSION\");" % (fv[0] * 10000 + fv[1] * 100 + fv[2]))
    w("CHECK(sizeof(FREEDNN_VERSION_STRING) == sizeof(\"%d.%d.%d\"), \"FREEDNN_VERSION_STRING\");" % fv)
    for name, v in sms:
        w("CHECK(%s == %d, \"%s\");" % (name, v, name))
    w("")
    w("/* ---- constants (section 2.4) ---- */")
    float_consts = []
    for name, v in consts:
        if isinstance(v, float):
            float_consts.append((name, v))
        else:
            w("CHECK(%s == %d, \"%s\");" % (name, v, name))
    w("")
    w("/* ---- enumerators (sections 2.1-2.3) ---- */")
    for tname, members in enums:
        w("/* %s */" % tname)
        w("CHECK(sizeof(%s) == 4, \"sizeof(%s)\");" % (tname, tname))
        for n, v in members:
            w("CHECK(%s == %d, \"%s\");" % (n, v, n))
    w("")
    w("/* ---- structs (section 3.1) ---- */")
    for t in sorted(structs):
        size, fields = structs[t]
        w("CHECK64(sizeof(%s) == %d, \"sizeof(%s)\");" % (t, size, t))
        for f, o in fields:
            w("CHECK64(offsetof(%s, %s) == %d, \"offsetof(%s, %s)\");" % (t, f, o, t, f))
    w("CHECK(sizeof(cudnnAlgorithm_t) == 4, \"sizeof(cudnnAlgorithm_t)\");")
    w("")
    w("/* ---- prototypes (Appendix A), GCC/Clang only ---- */")
    w("#if defined(__GNUC__) || defined(__clang__)")
    w("#define SAME_TYPE(fn, T) _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), T), #fn)")
    for ret, name, params, _hdr in funcs:
        sep = "" if ret.endswith("*") else " "
        w("SAME_TYPE(%s, %s%s(CUDNNWINAPI *)(%s));" % (name, ret, sep, params))
    w("#endif")
    w("")
    w("int main(void)")
    w("{")
    w("    int failures = 0;")
    for name, v in float_consts:
        w("    if ((double)(%s) != %r) {" % (name, v))
        w("        printf(\"%%s: got %%g, expected %%g\\n\", %s, (double)(%s), %r);" % (c_string(name), name, v))
        w("        failures++;")
        w("    }")
    w("    if (failures == 0)")
    w("        printf(\"test_abi_values: %d enumerators, %d functions: OK\\n\");" % (n_enumerators, len(funcs)))
    w("    return failures == 0 ? 0 : 1;")
    w("}")
    test_c = "\n".join(L) + "\n"

    flist = "".join("%s %s\n" % (name, hdr) for _, name, _, hdr in funcs)
    return test_c, flist, n_enumerators, len(enums)


def main():
    ap = argparse.ArgumentParser(description="Generate tests/abi/test_abi_values.c and function_list.txt")
    ap.add_argument("--reference", default=REF_DEFAULT)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "abi"))
    a = ap.parse_args()
    with open(a.reference, encoding="utf-8") as f:
        text = f.read()
    test_c, flist, n_enum, n_types = generate(text)
    if not os.path.isdir(a.out):
        os.makedirs(a.out)
    with open(os.path.join(a.out, "test_abi_values.c"), "w", newline="\n") as f:
        f.write(test_c)
    with open(os.path.join(a.out, "function_list.txt"), "w", newline="\n") as f:
        f.write(flist)
    print("wrote %s: %d enum types, %d enumerators, %d functions" %
          (os.path.normpath(a.out), n_types, n_enum, flist.count("\n")))


if __name__ == "__main__":
    main()
