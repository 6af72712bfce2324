/* Data-type facts (sizes, names, vector widths), fp16/bf16 conversions with round to
 * nearest even, and the generic element load/store used by reference paths. */
#include <math.h>
#include <string.h>
#include "fdnn.h"

size_t fdnn_dtype_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return 4;
    case CUDNN_DATA_DOUBLE: return 8;
    case CUDNN_DATA_HALF: return 2;
    case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8: return 1;
    case CUDNN_DATA_UINT8: return 1;
    case CUDNN_DATA_INT32: return 4;
    case CUDNN_DATA_INT64: return 8;
    case CUDNN_DATA_BOOLEAN: return 1;
    case CUDNN_DATA_INT8x4: return 4;
    case CUDNN_DATA_UINT8x4: return 4;
    case CUDNN_DATA_INT8x32: return 32;
    case CUDNN_DATA_FP8_E4M3: return 1;
    case CUDNN_DATA_FP8_E5M2: return 1;
    default: return 0;
    }
}

const char *fdnn_dtype_name(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return "FLOAT";
    case CUDNN_DATA_DOUBLE: return "DOUBLE";
    case CUDNN_DATA_HALF: return "HALF";
    case CUDNN_DATA_INT8: return "INT8";
    case CUDNN_DATA_INT32: return "INT32";
    case CUDNN_DATA_INT8x4: return "INT8x4";
    case CUDNN_DATA_UINT8: return "UINT8";
    case CUDNN_DATA_UINT8x4: return "UINT8x4";
    case CUDNN_DATA_INT8x32: return "INT8x32";
    case CUDNN_DATA_BFLOAT16: return "BFLOAT16";
    case CUDNN_DATA_INT64: return "INT64";
    case CUDNN_DATA_BOOLEAN: return "BOOLEAN";
    case CUDNN_DATA_FP8_E4M3: return "FP8_E4M3";
    case CUDNN_DATA_FP8_E5M2: return "FP8_E5M2";
    case CUDNN_DATA_FAST_FLOAT_FOR_FP8: return "FAST_FLOAT_FOR_FP8";
    }
    return "UNKNOWN";
}

int fdnn_dtype_vect(cudnnDataType_t t)
{
    if (t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_UINT8x4) return 4;
    if (t == CUDNN_DATA_INT8x32) return 32;
    return 1;
}

int fdnn_dtype_is_float_scaling(cudnnDataType_t t) { return t != CUDNN_DATA_DOUBLE; }

float fdnn_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do { man <<= 1; e++; } while (!(man & 0x400));
            man &= 0x3ff;
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | (man << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t fdnn_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
    if (absx < 0x38800000u) { /* result is subnormal or zero */
        if (absx < 0x33000000u) return (uint16_t)sign; /* < 2^-25: rounds to 0 */
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffff) | 0x800000;
        /* value = m * 2^(e-150); the half subnormal unit is 2^-24, so q = m >> (126 - e) */
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t e = (absx >> 23) - 127 + 15;
    uint32_t m = absx & 0x7fffff;
    uint32_t q = (e << 10) | (m >> 13);
    uint32_t rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) q++;
    return (uint16_t)(sign | q);
}

float fdnn_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t fdnn_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
    uint32_t lsb = (x >> 16) & 1;
    x += 0x7fff + lsb;
    return (uint16_t)(x >> 16);
}

static double sat(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    v = nearbyint(v);
    return v < lo ? lo : v > hi ? hi : v;
}

double fdnn_load(const void *base, cudnnDataType_t t, int64_t i)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return ((const float *)base)[i];
    case CUDNN_DATA_DOUBLE: return ((const double *)base)[i];
    case CUDNN_DATA_HALF: return fdnn_half_to_float(((const uint16_t *)base)[i]);
    case CUDNN_DATA_BFLOAT16: return fdnn_bf16_to_float(((const uint16_t *)base)[i]);
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32: return ((const int8_t *)base)[i];
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_UINT8x4:
    case CUDNN_DATA_BOOLEAN: return ((const uint8_t *)base)[i];
    case CUDNN_DATA_INT32: return ((const int32_t *)base)[i];
    case CUDNN_DATA_INT64: return (double)((const int64_t *)base)[i];
    default: return 0;
    }
}

void fdnn_store(void *base, cudnnDataType_t t, int64_t i, double v)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: ((float *)base)[i] = (float)v; break;
    case CUDNN_DATA_DOUBLE: ((double *)base)[i] = v; break;
    case CUDNN_DATA_HALF: ((uint16_t *)base)[i] = fdnn_float_to_half((float)v); break;
    case CUDNN_DATA_BFLOAT16: ((uint16_t *)base)[i] = fdnn_float_to_bf16((float)v); break;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32: ((int8_t *)base)[i] = (int8_t)sat(v, -128, 127); break;
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_UINT8x4: ((uint8_t *)base)[i] = (uint8_t)sat(v, 0, 255); break;
    case CUDNN_DATA_BOOLEAN: ((uint8_t *)base)[i] = v != 0; break;
    case CUDNN_DATA_INT32: ((int32_t *)base)[i] = (int32_t)sat(v, -2147483648.0, 2147483647.0); break;
    case CUDNN_DATA_INT64: ((int64_t *)base)[i] = (int64_t)nearbyint(v); break;
    default: break;
    }
}

double fdnn_scalar(const void *p, cudnnDataType_t tensor_type)
{
    if (tensor_type == CUDNN_DATA_DOUBLE) return *(const double *)p;
    return *(const float *)p;
}
