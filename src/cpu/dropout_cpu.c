/* Dropout on the CPU. The mask of element e (logical N,C,... row-major index, not the memory
 * offset, so every layout gets the same mask) is fdnn_dropout_keep(seed, 0, e, p); it is stored
 * one byte per element in the reserve space, so backward reproduces it exactly. */
#include "../core/norm_desc.h"
#include "../core/philox.h"
#include "ops_common.h"

void fdnn_cpu_dropout_fwd(const struct cudnnTensorStruct *xd, const void *x, const struct cudnnTensorStruct *yd, void *y, float p,
                          unsigned long long seed, uint8_t *mask)
{
    int64_t n = fdnn_tensor_elems(xd);
    double scale = 1.0 / (1.0 - (double)p);
    const int px = fdnn_ops_packed(xd), py = fdnn_ops_packed(yd); /* packed: logical index e is offset e */
#pragma omp parallel for if (n > 65536)
    for (int64_t e = 0; e < n; e++) {
        int keep = fdnn_dropout_keep(seed, 0, (uint64_t)e, p);
        mask[e] = (uint8_t)keep;
        double v = fdnn_load(x, xd->dtype, px ? e : fdnn_logical_offset(xd, e));
        fdnn_store(y, yd->dtype, py ? e : fdnn_logical_offset(yd, e), keep ? v * scale : 0.0);
    }
}

void fdnn_cpu_dropout_bwd(const struct cudnnTensorStruct *dyd, const void *dy, const struct cudnnTensorStruct *dxd, void *dx, float p,
                          const uint8_t *mask)
{
    int64_t n = fdnn_tensor_elems(dyd);
    double scale = 1.0 / (1.0 - (double)p);
    const int py = fdnn_ops_packed(dyd), px = fdnn_ops_packed(dxd);
#pragma omp parallel for if (n > 65536)
    for (int64_t e = 0; e < n; e++) {
        double v = fdnn_load(dy, dyd->dtype, py ? e : fdnn_logical_offset(dyd, e));
        fdnn_store(dx, dxd->dtype, px ? e : fdnn_logical_offset(dxd, e), mask[e] ? v * scale : 0.0);
    }
}
