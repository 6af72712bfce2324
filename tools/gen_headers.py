#!/usr/bin/env python3
"""Generate FreeDNN's public cuDNN-8.9-compatible headers (include/*.h).

Facts (function prototypes, enum values, which header owns what) are parsed
from the reference inventory /work/shared/reference/cudnn_v8_api.md
(override with --reference or $FREEDNN_REFERENCE): Appendix A for the
prototypes, section 1.2 for the per-function header/area/deprecation table
(cross-checked against Appendix A), sections 2.1-2.3 for the enums.
Types, structs and macros whose layout the reference describes in prose
(sections 2.4, 3.1, 3.2, 3.3) are written out below by hand.

Usage: tools/gen_headers.py [--reference FILE] [--out DIR]   (default DIR: include/)
"""

import os
import re

DEFAULT_REFERENCE = os.environ.get(
    "FREEDNN_REFERENCE", "/work/shared/reference/cudnn_v8_api.md")

HEADERS = [
    "cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_cnn_infer.h",
    "cudnn_cnn_train.h", "cudnn_adv_infer.h", "cudnn_adv_train.h",
    "cudnn_backend.h",
]


def read_reference(path=None):
    with open(path or DEFAULT_REFERENCE, encoding="utf-8") as f:
        return f.read()


def _section(text, start_pat, end_pat):
    m = re.search(start_pat, text, re.M)
    if not m:
        raise ValueError("section not found: %s" % start_pat)
    rest = text[m.end():]
    e = re.search(end_pat, rest, re.M)
    return rest[:e.start()] if e else rest


class Function(object):
    def __init__(self, ret, name, params, header, d8, area=None):
        self.ret = ret
        self.name = name
        self.params = params
        self.header = header
        self.d8 = d8
        self.area = area

    def __repr__(self):
        return "Function(%s)" % self.name


def parse_function_table(text):
    """Section 1.2: name -> (header, area, d8)."""
    sec = _section(text, r"^### 1\.2 ", r"^## 2\.")
    out = {}
    order = []
    for line in sec.splitlines():
        m = re.match(r"^\|\s*(\d+)\s*\|\s*`(\w+)`\s*\|\s*(\w+)\s*\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|", line)
        if not m:
            continue
        name = m.group(2)
        out[name] = (m.group(3) + ".h", m.group(4), m.group(5) == "D")
        order.append(name)
    return out, order


_PROTO_RE = re.compile(r"^(?P<ret>.+?)\b(?P<name>cudnn\w+)\s*\((?P<params>.*)\)\s*;\s*(?:/\*(?P<comment>.*?)\*/)?\s*$")


def parse_prototypes(text):
    """Appendix A: list of Function in header order."""
    sec = _section(text, r"^## Appendix A\.", r"^## (?!Appendix A)")
    funcs = []
    header = None
    in_code = False
    for line in sec.splitlines():
        m = re.match(r"^\*\*(cudnn_\w+\.h)\*\*\s*$", line)
        if m:
            header = m.group(1)
            continue
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code or not line.strip():
            continue
        m = _PROTO_RE.match(line.strip())
        if not m:
            raise ValueError("cannot parse prototype: %r" % line)
        comment = m.group("comment") or ""
        d8 = bool(re.search(r"\bD8\b", comment))
        funcs.append(Function(m.group("ret").strip(), m.group("name"),
                              m.group("params").strip(), header, d8))
    return funcs


def load_functions(text):
    """Appendix A prototypes, cross-checked against the 1.2 table."""
    funcs = parse_prototypes(text)
    table, _ = parse_function_table(text)
    names = [f.name for f in funcs]
    if len(set(names)) != len(names):
        raise ValueError("duplicate function names in Appendix A")
    if set(names) != set(table):
        raise ValueError("Appendix A and table 1.2 disagree: %s" %
                         sorted(set(names) ^ set(table)))
    for f in funcs:
        hdr, area, d8 = table[f.name]
        if hdr != f.header:
            raise ValueError("%s: header %s vs %s" % (f.name, hdr, f.header))
        if d8 != f.d8:
            raise ValueError("%s: D8 flag mismatch" % f.name)
        f.area = area
    return funcs


class Enum(object):
    def __init__(self, name, header, members, declared_count):
        self.name = name
        self.header = header
        self.members = members  # list of (enumerator, int value)
        self.declared_count = declared_count

    def __repr__(self):
        return "Enum(%s, %d)" % (self.name, len(self.members))


def parse_status_enum(text):
    sec = _section(text, r"^### 2\.1 ", r"^### 2\.2 ")
    members = []
    for line in sec.splitlines():
        m = re.match(r"^\|\s*`(CUDNN_STATUS_\w+)`\s*\|\s*(\d+)\s*\|", line)
        if m:
            members.append((m.group(1), int(m.group(2))))
    return Enum("cudnnStatus_t", "cudnn_ops_infer.h", members, len(members))


def parse_enums(text):
    """All enums of sections 2.1, 2.2 and 2.3 in document order."""
    enums = [parse_status_enum(text)]
    sec = _section(text, r"^### 2\.2 ", r"^### 2\.4 ")
    lines = sec.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^\*\*`(\w+)`\*\*\s*\((?:(cudnn_\w+\.h);\s*)?(\d+) enumerators\)", lines[i])
        if not m:
            i += 1
            continue
        name, header, count = m.group(1), m.group(2) or "cudnn_backend.h", int(m.group(3))
        j = i + 1
        while j < len(lines) and not lines[j].startswith("`"):
            j += 1
        body = lines[j].strip().strip("`")
        members = []
        for item in body.split(","):
            item = item.strip()
            mm = re.match(r"^(\w+)\s*=\s*(-?\d+)U?$", item)
            if not mm:
                raise ValueError("bad enumerator %r in %s" % (item, name))
            members.append((mm.group(1), int(mm.group(2))))
        if len(members) != count:
            raise ValueError("%s: %d enumerators parsed, %d declared" % (name, len(members), count))
        enums.append(Enum(name, header, members, count))
        i = j + 1
    return enums


def _eval_const(expr):
    expr = expr.strip()
    m = re.match(r"^(\d+)U?\s*<<\s*(\d+)$", expr)
    if m:
        return int(m.group(1)) << int(m.group(2))
    if re.match(r"^\d+U?$", expr):
        return int(expr.rstrip("U"))
    return float(expr)


def parse_constants(text):
    """Section 2.4: list of (macro, value) for scalar constants (int or float)."""
    sec = _section(text, r"^### 2\.4 ", r"^## 3\.")
    out = []
    for line in sec.splitlines():
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|", line)
        if not m:
            continue
        names_s, values_s = m.group(1), m.group(2)
        if "(" in names_s:   # per-library version macros, handled separately
            continue
        names = [n.strip() for n in names_s.split("/")]
        values = [v.strip() for v in values_s.split("/")]
        if len(names) != len(values):
            continue
        first = names[0]
        full = [first]
        for n in names[1:]:
            if n.startswith("_"):
                nseg = len(n.strip("_").split("_"))
                prefix = "_".join(first.split("_")[:-nseg])
                n = prefix + n
            full.append(n)
        try:
            vals = [_eval_const(v) for v in values]
        except ValueError:
            continue
        out.extend(zip(full, vals))
    return out


def parse_struct_layouts(text):
    """Section 3.1: dict struct typedef -> (sizeof, [(field, offset)])."""
    sec = _section(text, r"^### 3\.1 ", r"^### 3\.2 ")
    layouts = {}
    perf = []
    perf_size = None
    for line in sec.splitlines():
        m = re.match(r"^\|\s*(\d+)\s*\|\s*`(\w+)`\s*\|", line)
        if m:
            perf.append((m.group(2), int(m.group(1))))
        m = re.match(r"^\|\s*—\s*\|\s*sizeof\s*\|\s*(\d+) bytes", line)
        if m:
            perf_size = int(m.group(1))
    for t in ("cudnnConvolutionFwdAlgoPerf_t", "cudnnConvolutionBwdDataAlgoPerf_t",
              "cudnnConvolutionBwdFilterAlgoPerf_t"):
        if t not in sec:
            raise ValueError("perf struct %s not in 3.1" % t)
        layouts[t] = (perf_size, list(perf))
    # bullet items: `type name`@offset ... sizeof N
    for m in re.finditer(r"^\* `(\w+)` \(tag `\w+`[^)]*\):(.*?)(?=^\* |\Z)", sec, re.M | re.S):
        name, body = m.group(1), m.group(2)
        fields = [(f, int(o)) for f, o in re.findall(r"`[^`]*?(\w+)(?:\[\d+\])?`@(\d+)", body)]
        sm = re.search(r"sizeof (\d+)", body)
        if fields and sm:
            layouts[name] = (int(sm.group(1)), fields)
    return layouts


# ---------------------------------------------------------------------------
# Emitter
# ---------------------------------------------------------------------------

VERSION = (8, 9, 7)
FREEDNN_VERSION = (0, 1, 0)

GEN_NOTE = ("/* Generated by tools/gen_headers.py from the FreeDNN API reference; "
            "edit the generator, not this file. */")

LIB_PREFIX = {
    "cudnn_ops_infer.h": "CUDNN_OPS_INFER",
    "cudnn_ops_train.h": "CUDNN_OPS_TRAIN",
    "cudnn_cnn_infer.h": "CUDNN_CNN_INFER",
    "cudnn_cnn_train.h": "CUDNN_CNN_TRAIN",
    "cudnn_adv_infer.h": "CUDNN_ADV_INFER",
    "cudnn_adv_train.h": "CUDNN_ADV_TRAIN",
}

# Section 3.5: what each sub-header includes (besides cudnn_version.h/stdint.h).
DEPENDS = {
    "cudnn_ops_infer.h": [],
    "cudnn_ops_train.h": ["cudnn_ops_infer.h"],
    "cudnn_cnn_infer.h": ["cudnn_ops_infer.h"],
    "cudnn_cnn_train.h": ["cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_cnn_infer.h"],
    "cudnn_adv_infer.h": ["cudnn_ops_infer.h"],
    "cudnn_adv_train.h": ["cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_adv_infer.h"],
    "cudnn_backend.h": ["cudnn_ops_infer.h", "cudnn_cnn_infer.h"],
}

DESCRIPTION = {
    "cudnn_ops_infer.h": "core types, handle, tensor/filter descriptors and inference-time tensor operations",
    "cudnn_ops_train.h": "training-time (backward) tensor operations",
    "cudnn_cnn_infer.h": "convolution descriptors, forward and backward-data convolution, fused-ops types",
    "cudnn_cnn_train.h": "backward-filter convolution and the fused-ops API",
    "cudnn_adv_infer.h": "RNN, sequence data and multi-head attention (inference)",
    "cudnn_adv_train.h": "RNN, multi-head attention and CTC loss (training)",
    "cudnn_backend.h": "backend (graph) API",
}

# Section 3.2: opaque handle typedefs (typedef, struct tag, header).
OPAQUE = [
    ("cudnnHandle_t", "cudnnContext", "cudnn_ops_infer.h"),
    ("cudnnTensorDescriptor_t", "cudnnTensorStruct", "cudnn_ops_infer.h"),
    ("cudnnPoolingDescriptor_t", "cudnnPoolingStruct", "cudnn_ops_infer.h"),
    ("cudnnFilterDescriptor_t", "cudnnFilterStruct", "cudnn_ops_infer.h"),
    ("cudnnLRNDescriptor_t", "cudnnLRNStruct", "cudnn_ops_infer.h"),
    ("cudnnActivationDescriptor_t", "cudnnActivationStruct", "cudnn_ops_infer.h"),
    ("cudnnSpatialTransformerDescriptor_t", "cudnnSpatialTransformerStruct", "cudnn_ops_infer.h"),
    ("cudnnOpTensorDescriptor_t", "cudnnOpTensorStruct", "cudnn_ops_infer.h"),
    ("cudnnReduceTensorDescriptor_t", "cudnnReduceTensorStruct", "cudnn_ops_infer.h"),
    ("cudnnCTCLossDescriptor_t", "cudnnCTCLossStruct", "cudnn_ops_infer.h"),
    ("cudnnTensorTransformDescriptor_t", "cudnnTensorTransformStruct", "cudnn_ops_infer.h"),
    ("cudnnDropoutDescriptor_t", "cudnnDropoutStruct", "cudnn_ops_infer.h"),
    ("cudnnAlgorithmDescriptor_t", "cudnnAlgorithmStruct", "cudnn_ops_infer.h"),
    ("cudnnAlgorithmPerformance_t", "cudnnAlgorithmPerformanceStruct", "cudnn_ops_infer.h"),
    ("cudnnConvolutionDescriptor_t", "cudnnConvolutionStruct", "cudnn_cnn_infer.h"),
    ("cudnnFusedOpsConstParamPack_t", "cudnnFusedOpsConstParamStruct", "cudnn_cnn_infer.h"),
    ("cudnnFusedOpsVariantParamPack_t", "cudnnFusedOpsVariantParamStruct", "cudnn_cnn_infer.h"),
    ("cudnnFusedOpsPlan_t", "cudnnFusedOpsPlanStruct", "cudnn_cnn_infer.h"),
    ("cudnnRNNDescriptor_t", "cudnnRNNStruct", "cudnn_adv_infer.h"),
    ("cudnnPersistentRNNPlan_t", "cudnnPersistentRNNPlan", "cudnn_adv_infer.h"),
    ("cudnnRNNDataDescriptor_t", "cudnnRNNDataStruct", "cudnn_adv_infer.h"),
    ("cudnnSeqDataDescriptor_t", "cudnnSeqDataStruct", "cudnn_adv_infer.h"),
    ("cudnnAttnDescriptor_t", "cudnnAttnStruct", "cudnn_adv_infer.h"),
]


def perf_struct(tag, algo_type, name):
    return """typedef struct %s {
    %s algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} %s;
""" % (tag, algo_type, name)


CUDA_BLOCK = """/* CUDA runtime types.  cudaStream_t comes from the CUDA toolkit when its
 * headers are reachable; otherwise (or with -DFREEDNN_NO_CUDA_HEADERS) an
 * ABI-identical opaque declaration is used so the API can be compiled
 * without a CUDA installation. */
#if !defined(FREEDNN_NO_CUDA_HEADERS) && defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>
#endif
#endif
#if !defined(__DRIVER_TYPES_H__) && !defined(FREEDNN_CUDA_STREAM_DECLARED)
#define FREEDNN_CUDA_STREAM_DECLARED 1
typedef struct CUstream_st *cudaStream_t;
#endif
"""

ABI_MACROS = """/* Calling convention of every exported function. */
#ifndef CUDNNWINAPI
#ifdef _WIN32
#define CUDNNWINAPI __stdcall
#else
#define CUDNNWINAPI
#endif
#endif

/* Marks entry points that cuDNN 8.9 already flags as deprecated.  Warnings
 * are only produced when the user defines CUDNN_WARN_DEPRECATED. */
#ifndef CUDNN_DEPRECATED
#if defined(CUDNN_WARN_DEPRECATED) && (defined(__GNUC__) || defined(__clang__))
#define CUDNN_DEPRECATED __attribute__((deprecated))
#elif defined(CUDNN_WARN_DEPRECATED) && defined(_MSC_VER)
#define CUDNN_DEPRECATED __declspec(deprecated)
#else
#define CUDNN_DEPRECATED
#endif
#endif
"""

SM_MACROS = """/* Compute capabilities known to this API level (major*100 + minor*10). */
#define CUDNN_MAX_SM_MAJOR_NUMBER 9
#define CUDNN_MAX_SM_MINOR_NUMBER 0
#define CUDNN_MAX_DEVICE_VERSION (CUDNN_MAX_SM_MAJOR_NUMBER * 100 + CUDNN_MAX_SM_MINOR_NUMBER * 10)
""" + "".join("#define CUDNN_SM_%d %d\n" % (sm, sm * 10)
              for sm in (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90)) + \
"""#define CUDNN_SM_9X_END 999
#define CUDNN_MIN_DEVICE_VERSION CUDNN_SM_50
"""

LIBRARY_TYPES = """/* Library property selector for cudnnGetProperty(); the CUDA toolkit's
 * library_types.h declares the same type, so only declare it if that header
 * has not been seen. */
#ifndef __LIBRARY_TYPES_H__
typedef enum libraryPropertyType_t {
    MAJOR_VERSION = 0,
    MINOR_VERSION = 1,
    PATCH_LEVEL = 2
} libraryPropertyType;
#endif
"""

OPS_INFER_CONSTS = """/* Limits. */
#define CUDNN_DIM_MAX 8
#define CUDNN_LRN_MIN_N 1
#define CUDNN_LRN_MAX_N 16
#define CUDNN_LRN_MIN_K 1e-5
#define CUDNN_LRN_MIN_BETA 0.01
#define CUDNN_BN_MIN_EPSILON 0.0

/* Severity masks for cudnnSetCallback() (bit index = cudnnSeverity_t). */
#define CUDNN_SEV_ERROR_EN (1U << CUDNN_SEV_ERROR)
#define CUDNN_SEV_WARNING_EN (1U << CUDNN_SEV_WARNING)
#define CUDNN_SEV_INFO_EN (1U << CUDNN_SEV_INFO)
"""

OPS_INFER_STRUCTS = """/* Algorithm selector used by the (deprecated) algorithm-descriptor API. */
typedef struct cudnnAlgorithmUnionStruct {
    union Algorithm {
        cudnnConvolutionFwdAlgo_t convFwdAlgo;
        cudnnConvolutionBwdFilterAlgo_t convBwdFilterAlgo;
        cudnnConvolutionBwdDataAlgo_t convBwdDataAlgo;
        cudnnRNNAlgo_t RNNAlgo;
        cudnnCTCLossAlgo_t CTCLossAlgo;
    } algo;
} cudnnAlgorithm_t;

/* Record passed to the logging callback. */
typedef struct cudnnDebugStruct {
    unsigned cudnn_version;
    cudnnStatus_t cudnnStatus;
    unsigned time_sec;
    unsigned time_usec;
    unsigned time_delta;
    cudnnHandle_t handle;
    cudaStream_t stream;
    unsigned long long pid;
    unsigned long long tid;
    int cudaDeviceId;
    int reserved[15];
} cudnnDebug_t;

/* Logging callback. */
typedef void (*cudnnCallback_t)(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg);
"""

ADV_INFER_CONSTS = """/* auxFlags bits of cudnnSetRNNDescriptor_v8(). */
#define CUDNN_RNN_PADDED_IO_DISABLED 0
#define CUDNN_RNN_PADDED_IO_ENABLED (1U << 0)

/* Number of axes of a sequence data descriptor (cudnnSeqDataAxis_t). */
#define CUDNN_SEQDATA_DIM_COUNT 4

/* attnMode bits of cudnnSetAttnDescriptor(). */
#define CUDNN_ATTN_QUERYMAP_ALL_TO_ONE 0
#define CUDNN_ATTN_QUERYMAP_ONE_TO_ONE (1U << 0)
#define CUDNN_ATTN_DISABLE_PROJ_BIASES 0
#define CUDNN_ATTN_ENABLE_PROJ_BIASES (1U << 1)

/* Number of cudnnMultiHeadAttnWeightKind_t values. */
#define CUDNN_ATTN_WKIND_COUNT 8
"""

BACKEND_TYPES = """/* Every backend descriptor is an untyped handle. */
typedef void *cudnnBackendDescriptor_t;

/* Rational number attribute value (CUDNN_TYPE_FRACTION). */
typedef struct cudnnFractionStruct {
    int64_t numerator;
    int64_t denominator;
} cudnnFraction_t;
"""


def emit_enum(e):
    lines = ["typedef enum {"]
    for k, (n, v) in enumerate(e.members):
        lines.append("    %s = %d%s" % (n, v, "," if k + 1 < len(e.members) else ""))
    lines.append("} %s;" % e.name)
    return "\n".join(lines) + "\n"


def emit_opaque(header):
    rows = [(t, s) for t, s, h in OPAQUE if h == header and t != "cudnnHandle_t"]
    if not rows:
        return ""
    out = ["/* Opaque descriptor handles. */"]
    for t, s in rows:
        out.append("typedef struct %s *%s;" % (s, t))
    return "\n".join(out) + "\n"


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
        continue
    if cur.strip():
        out.append(cur.strip())
    return out


def emit_function(f):
    ret = f.ret
    head = (ret + ("" if ret.endswith("*") else " ") + "CUDNNWINAPI " + f.name + "(")
    if f.d8:
        head = "CUDNN_DEPRECATED " + head
    one = head + f.params + ");"
    if len(one) <= 110:
        return one + "\n"
    params = split_params(f.params)
    return head + "\n" + ",\n".join("    " + p for p in params) + ");\n"


def emit_functions(funcs):
    out = []
    area = None
    for f in funcs:
        if f.area != area:
            area = f.area
            out.append("\n/* --- %s --- */\n" % area)
        out.append(emit_function(f))
    return "".join(out)


def guard_of(header):
    return header.replace(".", "_").upper() + "_"


def version_check(header):
    p = LIB_PREFIX.get(header)
    if not p:
        return ""
    return """/* Sub-library version; must match cudnn_version.h. */
#define {p}_MAJOR 8
#define {p}_MINOR 9
#define {p}_PATCH 7

#if ({p}_MAJOR != CUDNN_MAJOR) || ({p}_MINOR != CUDNN_MINOR) || ({p}_PATCH != CUDNN_PATCHLEVEL)
#error Version mismatch between {h} and cudnn_version.h
#endif
""".format(p=p, h=header)


def sub_header(header, funcs, enums):
    g = guard_of(header)
    parts = []
    parts.append("""/*
 * FreeDNN - open implementation of the cuDNN 8.9 C API.
 * %s: %s.
 */
%s

#ifndef %s
#define %s

""" % (header, DESCRIPTION[header], GEN_NOTE, g, g))
    if header == "cudnn_ops_infer.h":
        parts.append(CUDA_BLOCK + "\n")
    parts.append("#include <stddef.h>\n#include <stdint.h>\n\n#include \"cudnn_version.h\"\n")
    for d in DEPENDS[header]:
        parts.append("#include \"%s\"\n" % d)
    parts.append("\n")
    vc = version_check(header)
    if vc:
        parts.append(vc + "\n")
    if header == "cudnn_ops_infer.h":
        parts.append(ABI_MACROS + "\n" + SM_MACROS + "\n")
    parts.append("#if defined(__cplusplus)\nextern \"C\" {\n#endif\n\n")

    my_enums = [e for e in enums if e.header == header and e.name != "libraryPropertyType"]
    if header == "cudnn_ops_infer.h":
        parts.append("/* Library context. */\ntypedef struct cudnnContext *cudnnHandle_t;\n\n")
        status = [e for e in my_enums if e.name == "cudnnStatus_t"][0]
        parts.append("/* Status codes (cuDNN 8 numbering). */\n" + emit_enum(status) + "\n")
        parts.append("/* Tag filled in by cudnnQueryRuntimeError(); only used through a pointer. */\n"
                     "typedef struct cudnnRuntimeTag_t cudnnRuntimeTag_t;\n\n")
        parts.append(LIBRARY_TYPES + "\n")
        my_enums = [e for e in my_enums if e.name != "cudnnStatus_t"]
    if header == "cudnn_backend.h":
        parts.append(BACKEND_TYPES + "\n")
    op = emit_opaque(header)
    if op:
        parts.append(op + "\n")
    if my_enums:
        parts.append("/* Enumerations. */\n")
        for e in my_enums:
            parts.append(emit_enum(e) + "\n")
    if header == "cudnn_ops_infer.h":
        parts.append(OPS_INFER_CONSTS + "\n" + OPS_INFER_STRUCTS)
    if header == "cudnn_cnn_infer.h":
        parts.append("/* Per-algorithm result of the convolution algorithm queries. */\n")
        parts.append(perf_struct("cudnnConvolutionFwdAlgoPerfStruct", "cudnnConvolutionFwdAlgo_t",
                                 "cudnnConvolutionFwdAlgoPerf_t") + "\n")
        parts.append(perf_struct("cudnnConvolutionBwdDataAlgoPerfStruct", "cudnnConvolutionBwdDataAlgo_t",
                                 "cudnnConvolutionBwdDataAlgoPerf_t"))
    if header == "cudnn_cnn_train.h":
        parts.append("/* Per-algorithm result of the backward-filter algorithm queries. */\n")
        parts.append(perf_struct("cudnnConvolutionBwdFilterAlgoPerfStruct", "cudnnConvolutionBwdFilterAlgo_t",
                                 "cudnnConvolutionBwdFilterAlgoPerf_t"))
    if header == "cudnn_adv_infer.h":
        parts.append(ADV_INFER_CONSTS)
    parts.append(emit_functions([f for f in funcs if f.header == header]))
    parts.append("\n#if defined(__cplusplus)\n}\n#endif\n\n#endif /* %s */\n" % g)
    return "".join(parts).replace("\n\n\n", "\n\n")


def version_header():
    return """/*
 * FreeDNN - open implementation of the cuDNN 8.9 C API.
 * cudnn_version.h: API level implemented (cuDNN 8.9.7) and FreeDNN's own version.
 */

#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

/* cuDNN API level.  Build systems grep for these three lines. */
#define CUDNN_MAJOR %d
#define CUDNN_MINOR %d
#define CUDNN_PATCHLEVEL %d

/* cuDNN 8 encoding: 8.9.7 -> 8907. */
#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

/* Version of the FreeDNN implementation itself. */
#define FREEDNN_VERSION_MAJOR %d
#define FREEDNN_VERSION_MINOR %d
#define FREEDNN_VERSION_PATCH %d
#define FREEDNN_VERSION (FREEDNN_VERSION_MAJOR * 10000 + FREEDNN_VERSION_MINOR * 100 + FREEDNN_VERSION_PATCH)
#define FREEDNN_VERSION_STRING "%d.%d.%d"

#endif /* CUDNN_VERSION_H_ */
""" % (VERSION + FREEDNN_VERSION + FREEDNN_VERSION)


def umbrella_header():
    inc = "".join('#include "%s"\n' % h for h in HEADERS)
    return """/*
 * FreeDNN - open implementation of the cuDNN 8.9 C API.
 * cudnn.h: umbrella header; pulls in the version header and all seven
 * sub-library headers, exactly like the cuDNN 8.9 layout.
 */

#ifndef CUDNN_H_
#define CUDNN_H_

#include "cudnn_version.h"
%s
#endif /* CUDNN_H_ */
""" % inc


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--reference", default=None)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include"))
    a = ap.parse_args(argv)
    text = read_reference(a.reference)
    funcs = load_functions(text)
    enums = parse_enums(text)
    if len(funcs) != 264:
        raise SystemExit("expected 264 functions, parsed %d" % len(funcs))
    if not os.path.isdir(a.out):
        os.makedirs(a.out)
    files = {"cudnn_version.h": version_header(), "cudnn.h": umbrella_header()}
    for h in HEADERS:
        files[h] = sub_header(h, funcs, enums)
    for name, body in sorted(files.items()):
        with open(os.path.join(a.out, name), "w", newline="\n") as f:
            f.write(body)
    print("wrote %d headers to %s (%d functions, %d enums)" %
          (len(files), os.path.normpath(a.out), len(funcs), len(enums)))


if __name__ == "__main__":
    main()
