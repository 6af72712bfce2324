/* Shape helpers of the test reference (see ref.h). */
#include "ref.h"

void ref_packed(ref_tensor *t, int nd, const int *dim, int channels_last)
{
    t->nd = nd;
    for (int i = 0; i < nd; i++) t->dim[i] = dim[i];
    int64_t s = 1;
    if (channels_last) {
        t->stride[1] = 1;
        s = dim[1];
        for (int i = nd - 1; i >= 2; i--) { t->stride[i] = s; s *= dim[i]; }
        t->stride[0] = s;
    } else {
        for (int i = nd - 1; i >= 0; i--) { t->stride[i] = s; s *= dim[i]; }
    }
}

int64_t ref_elems(const ref_tensor *t)
{
    int64_t e = 1;
    for (int i = 0; i < t->nd; i++) e *= t->dim[i];
    return e;
}

int64_t ref_span(const ref_tensor *t)
{
    int64_t s = 1;
    for (int i = 0; i < t->nd; i++) s += (int64_t)(t->dim[i] - 1) * t->stride[i];
    return s;
}
