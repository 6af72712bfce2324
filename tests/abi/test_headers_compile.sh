#!/bin/sh
# Compile-time test of FreeDNN's public headers.
#
# Usage: test_headers_compile.sh <our-include-dir>
#
# For each of the nine cuDNN 8.9 headers plus freednn.h, compiles a
# translation unit that includes only that header (twice, to exercise the
# include guard), as C (-std=c99, -std=c11) and as C++ (-std=c++11,
# -std=c++17), with -Wall -Wextra -pedantic -Werror, in three setups:
#   nocuda   only our include dir on the path
#   fallback CUDA include dir on the path but -DFREEDNN_NO_CUDA_HEADERS
#   cuda     -I<ours> -I<cuda include> (ours first, so our cudnn.h wins over
#            the toolkit's cuDNN 9 headers); must pick up CUDA's cudaStream_t
# plus a -DCUDNN_WARN_DEPRECATED pass, and builds test_cxx_mangle.cpp.
# Every TU #errors unless CUDNN_VERSION == 8907, proving our header won.
#
# Environment:
#   CC            C compiler(s), space separated (default: gcc)
#   CXX           C++ compiler(s), space separated (default: g++)
#   CUDA_INCLUDE  CUDA include dir (default: /usr/local/cuda/include if present)
#
# Note: CUDA's own driver_types.h uses anonymous unions, which
# "-std=c99 -pedantic" rejects; for the c99+CUDA combination the CUDA dir is
# therefore passed with -isystem (our dir stays first via -I).

set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 <our-include-dir>" >&2
    exit 2
fi
OURS=$(cd "$1" && pwd) || { echo "no such directory: $1" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
CC_LIST=${CC:-gcc}
CXX_LIST=${CXX:-g++}
if [ -z "${CUDA_INCLUDE+x}" ]; then
    if [ -f /usr/local/cuda/include/cuda_runtime.h ]; then
        CUDA_INCLUDE=/usr/local/cuda/include
    else
        CUDA_INCLUDE=
    fi
fi

HEADERS="cudnn.h cudnn_version.h cudnn_ops_infer.h cudnn_ops_train.h cudnn_cnn_infer.h
cudnn_cnn_train.h cudnn_adv_infer.h cudnn_adv_train.h cudnn_backend.h freednn.h"
WARN="-Wall -Wextra -pedantic -Werror"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/freednn_hdr.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM

pass=0
fail=0

# write_tu <header> <mode> <file>
write_tu() {
    {
        echo "#include <$1>"
        echo "#include <$1>"
        echo "#if !defined(CUDNN_VERSION) || CUDNN_VERSION != 8907"
        echo "#error \"$1: not FreeDNN's cuDNN 8.9.7 headers\""
        echo "#endif"
        if [ "$1" != cudnn_version.h ]; then
            case $2 in
            cuda)
                echo "#ifndef __DRIVER_TYPES_H__"
                echo "#error \"$1: CUDA's cudaStream_t was not used\""
                echo "#endif" ;;
            fallback)
                echo "#if !defined(FREEDNN_CUDA_STREAM_DECLARED) || defined(__DRIVER_TYPES_H__)"
                echo "#error \"$1: FREEDNN_NO_CUDA_HEADERS did not select the fallback\""
                echo "#endif" ;;
            esac
            echo "cudnnStatus_t freednn_hdr_test(cudnnHandle_t h, cudaStream_t s);"
        else
            echo "int freednn_hdr_test(void);"
        fi
    } > "$3"
}

# run <label> <command...>
run() {
    label=$1
    shift
    if "$@" > "$TMP/log" 2>&1; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $label"
        echo "  \$ $*"
        sed 's/^/  | /' "$TMP/log" | head -n 40
    fi
}

modes="nocuda"
if [ -n "$CUDA_INCLUDE" ] && [ -f "$CUDA_INCLUDE/cuda_runtime.h" ]; then
    modes="nocuda fallback cuda"
else
    echo "note: no CUDA include dir found; testing without CUDA headers only"
fi

for mode in $modes; do
    for h in $HEADERS; do
        base=$(echo "$h" | sed 's/\.h$//')
        write_tu "$h" "$mode" "$TMP/$base.$mode.c"
        cp "$TMP/$base.$mode.c" "$TMP/$base.$mode.cpp"
        for cc in $CC_LIST; do
            for std in c99 c11; do
                case $mode in
                nocuda)   inc="-I$OURS" ;;
                fallback) inc="-I$OURS -I$CUDA_INCLUDE -DFREEDNN_NO_CUDA_HEADERS" ;;
                cuda)     if [ $std = c99 ]; then inc="-I$OURS -isystem $CUDA_INCLUDE";
                          else inc="-I$OURS -I$CUDA_INCLUDE"; fi ;;
                esac
                run "$cc -std=$std [$mode] $h" $cc -std=$std $WARN $inc \
                    -c "$TMP/$base.$mode.c" -o "$TMP/out.o"
            done
        done
        for cxx in $CXX_LIST; do
            for std in c++11 c++17; do
                case $mode in
                nocuda)   inc="-I$OURS" ;;
                fallback) inc="-I$OURS -I$CUDA_INCLUDE -DFREEDNN_NO_CUDA_HEADERS" ;;
                cuda)     inc="-I$OURS -I$CUDA_INCLUDE" ;;
                esac
                run "$cxx -std=$std [$mode] $h" $cxx -std=$std $WARN $inc \
                    -c "$TMP/$base.$mode.cpp" -o "$TMP/out.o"
            done
        done
    done
done

# Deprecation markers must not warn merely by being declared.
for h in $HEADERS; do
    base=$(echo "$h" | sed 's/\.h$//')
    for cc in $CC_LIST; do
        run "$cc -DCUDNN_WARN_DEPRECATED $h" $cc -std=c11 $WARN -DCUDNN_WARN_DEPRECATED \
            -I"$OURS" -c "$TMP/$base.nocuda.c" -o "$TMP/out.o"
    done
    for cxx in $CXX_LIST; do
        run "$cxx -DCUDNN_WARN_DEPRECATED $h" $cxx -std=c++11 $WARN -DCUDNN_WARN_DEPRECATED \
            -I"$OURS" -c "$TMP/$base.nocuda.cpp" -o "$TMP/out.o"
    done
done

# ... but must warn when a deprecated function is used.
printf '#include <cudnn.h>\nint f(void) { return (int)cudnnSetRNNMatrixMathType(0, CUDNN_DEFAULT_MATH); }\n' \
    > "$TMP/depr_use.c"
for cc in $CC_LIST; do
    if $cc -std=c11 -DCUDNN_WARN_DEPRECATED -Werror=deprecated-declarations -I"$OURS" \
        -c "$TMP/depr_use.c" -o "$TMP/out.o" > "$TMP/log" 2>&1; then
        fail=$((fail + 1))
        echo "FAIL: $cc: CUDNN_WARN_DEPRECATED does not mark deprecated functions"
    else
        pass=$((pass + 1))
    fi
done

# C++ struct-tag / mangling test.
for cxx in $CXX_LIST; do
    for std in c++11 c++17; do
        run "$cxx -std=$std test_cxx_mangle.cpp" $cxx -std=$std $WARN -I"$OURS" \
            -c "$HERE/test_cxx_mangle.cpp" -o "$TMP/mangle.o"
    done
    if command -v nm > /dev/null 2>&1 && [ -f "$TMP/mangle.o" ]; then
        missing=""
        for tag in 12cudnnContext 17cudnnTensorStruct 17cudnnFilterStruct 22cudnnConvolutionStruct \
                   18cudnnDropoutStruct 14cudnnRNNStruct 18cudnnCTCLossStruct \
                   29cudnnSpatialTransformerStruct 18cudnnRNNDataStruct 15cudnnAttnStruct \
                   18cudnnSeqDataStruct 33cudnnConvolutionFwdAlgoPerfStruct 17cudnnRuntimeTag_t; do
            nm "$TMP/mangle.o" | grep -q "P$tag" || missing="$missing $tag"
        done
        if [ -n "$missing" ]; then
            fail=$((fail + 1))
            echo "FAIL: $cxx mangled names lack:$missing"
        else
            pass=$((pass + 1))
        fi
    fi
done

echo "test_headers_compile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
