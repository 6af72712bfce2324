/* cudnnReduceTensor and its descriptor on the CPU and CUDA (src/cuda/ops_reduce.cu) backends. C's dims are each A's or 1; the
 * dims where C is 1 (and A is not) are reduced. C = alpha*reduce(A) + beta*C.
 * ADD, MUL, MIN, MAX, AMAX (max |a|), AVG, NORM1 (sum |a|), NORM2 (sqrt sum a^2), MUL_NO_ZEROS
 * (product of the nonzero elements; 1 when all are zero). MIN/MAX/AMAX with FLATTENED indices
 * also write, per C element (packed, C's logical order), the row-major index within the
 * reduced dims of the first extreme element, as 32-bit integers (cuDNN supports only those).
 * NOT_PROPAGATE_NAN makes MIN/MAX/AMAX skip NaN inputs; PROPAGATE_NAN returns the first NaN
 * (and its index). The other ops propagate NaN arithmetically. The CPU backend needs no
 * workspace: cudnnGetReductionWorkspaceSize reports 0. A dense FLOAT A into a dense FLOAT C (compute FLOAT) takes
 * the fast path of src/cpu/reduce_fast.c, which reads A in place. */
#include <math.h>
#include <stdlib.h>
#include "../core/fdnn.h"
#include "../core/ops_desc.h"
#include "../cpu/ops_fast.h"

#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#endif

static cudnnStatus_t check_live(const struct cudnnReduceTensorStruct *d)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorDesc is NULL");
    if (d->magic != FDNN_MAGIC_REDUCE) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorDesc is not a live reduce-tensor descriptor");
    return CUDNN_STATUS_SUCCESS;
}
static cudnnStatus_t check_set(const struct cudnnReduceTensorStruct *d)
{
    FDNN_CHECK(check_live(d));
    if (!d->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorDesc was created but never set");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateReduceTensorDescriptor(cudnnReduceTensorDescriptor_t *reduceTensorDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(reduceTensorDesc, "reduceTensorDesc");
    struct cudnnReduceTensorStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_REDUCE;
    *reduceTensorDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetReduceTensorDescriptor(cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                                     cudnnReduceTensorOp_t reduceTensorOp, cudnnDataType_t reduceTensorCompType,
                                                                     cudnnNanPropagation_t reduceTensorNanOpt,
                                                                     cudnnReduceTensorIndices_t reduceTensorIndices,
                                                                     cudnnIndicesType_t reduceTensorIndicesType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(reduceTensorDesc));
    if ((int)reduceTensorOp < 0 || reduceTensorOp > CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorOp=%d is not a cudnnReduceTensorOp_t", (int)reduceTensorOp);
    if (reduceTensorCompType != CUDNN_DATA_FLOAT && reduceTensorCompType != CUDNN_DATA_DOUBLE && reduceTensorCompType != CUDNN_DATA_HALF &&
        reduceTensorCompType != CUDNN_DATA_BFLOAT16)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorCompType=%d must be FLOAT, DOUBLE, HALF or BFLOAT16", (int)reduceTensorCompType);
    if (reduceTensorNanOpt != CUDNN_NOT_PROPAGATE_NAN && reduceTensorNanOpt != CUDNN_PROPAGATE_NAN)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorNanOpt=%d is not a cudnnNanPropagation_t", (int)reduceTensorNanOpt);
    if (reduceTensorIndices != CUDNN_REDUCE_TENSOR_NO_INDICES && reduceTensorIndices != CUDNN_REDUCE_TENSOR_FLATTENED_INDICES)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorIndices=%d is not a cudnnReduceTensorIndices_t", (int)reduceTensorIndices);
    if ((int)reduceTensorIndicesType < 0 || reduceTensorIndicesType > CUDNN_8BIT_INDICES)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reduceTensorIndicesType=%d is not a cudnnIndicesType_t", (int)reduceTensorIndicesType);
    struct cudnnReduceTensorStruct *d = reduceTensorDesc;
    d->op = reduceTensorOp;
    d->comp_type = reduceTensorCompType;
    d->nan_opt = reduceTensorNanOpt;
    d->indices = reduceTensorIndices;
    d->indices_type = reduceTensorIndicesType;
    d->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetReduceTensorDescriptor(const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                                     cudnnReduceTensorOp_t *reduceTensorOp, cudnnDataType_t *reduceTensorCompType,
                                                                     cudnnNanPropagation_t *reduceTensorNanOpt,
                                                                     cudnnReduceTensorIndices_t *reduceTensorIndices,
                                                                     cudnnIndicesType_t *reduceTensorIndicesType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_set(reduceTensorDesc));
    if (!reduceTensorOp || !reduceTensorCompType || !reduceTensorNanOpt || !reduceTensorIndices || !reduceTensorIndicesType)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *reduceTensorOp = reduceTensorDesc->op;
    *reduceTensorCompType = reduceTensorDesc->comp_type;
    *reduceTensorNanOpt = reduceTensorDesc->nan_opt;
    *reduceTensorIndices = reduceTensorDesc->indices;
    *reduceTensorIndicesType = reduceTensorDesc->indices_type;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyReduceTensorDescriptor(cudnnReduceTensorDescriptor_t reduceTensorDesc)
{
    FDNN_API_ENTER();
    if (reduceTensorDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_live(reduceTensorDesc));
    reduceTensorDesc->magic = FDNN_MAGIC_DEAD;
    free(reduceTensorDesc);
    return CUDNN_STATUS_SUCCESS;
}

static int is_arg_op(cudnnReduceTensorOp_t op)
{
    return op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX;
}

/* Shapes, types and descriptor combination; shared by the size queries and the reduction. */
static cudnnStatus_t check_problem(const struct cudnnReduceTensorStruct *d, const fdnn_tensor *a, const fdnn_tensor *c)
{
    FDNN_CHECK(fdnn_ops_broadcastable(c, "cDesc", a, "aDesc"));
    cudnnDataType_t at = a->dtype, ct = c->dtype;
    FDNN_CHECK(fdnn_ops_float_type(a, "aDesc"));
    FDNN_CHECK(fdnn_ops_float_type(c, "cDesc"));
    int ok;
    if (at == CUDNN_DATA_DOUBLE || ct == CUDNN_DATA_DOUBLE) ok = at == ct && d->comp_type == CUDNN_DATA_DOUBLE;
    else ok = d->comp_type == CUDNN_DATA_FLOAT && (at == ct || ct == CUDNN_DATA_FLOAT);
    if (!ok)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "types A=%s C=%s compute=%s are not a combination cudnnReduceTensor accepts",
                         fdnn_dtype_name(at), fdnn_dtype_name(ct), fdnn_dtype_name(d->comp_type));
    if (d->indices == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES && is_arg_op(d->op) && d->indices_type != CUDNN_32BIT_INDICES)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "only CUDNN_32BIT_INDICES are supported for reduction indices");
    return CUDNN_STATUS_SUCCESS;
}

static size_t indices_bytes(const struct cudnnReduceTensorStruct *d, const fdnn_tensor *c)
{
    if (d->indices != CUDNN_REDUCE_TENSOR_FLATTENED_INDICES || !is_arg_op(d->op)) return 0;
    return (size_t)fdnn_tensor_elems(c) * sizeof(int32_t);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetReductionIndicesSize(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                                   const cudnnTensorDescriptor_t aDesc, const cudnnTensorDescriptor_t cDesc,
                                                                   size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_set(reduceTensorDesc));
    FDNN_CHECK(fdnn_check_tensor(aDesc, "aDesc"));
    FDNN_CHECK(fdnn_check_tensor(cDesc, "cDesc"));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    FDNN_CHECK(check_problem(reduceTensorDesc, aDesc, cDesc));
    *sizeInBytes = indices_bytes(reduceTensorDesc, cDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetReductionWorkspaceSize(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                                     const cudnnTensorDescriptor_t aDesc, const cudnnTensorDescriptor_t cDesc,
                                                                     size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_set(reduceTensorDesc));
    FDNN_CHECK(fdnn_check_tensor(aDesc, "aDesc"));
    FDNN_CHECK(fdnn_check_tensor(cDesc, "cDesc"));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    FDNN_CHECK(check_problem(reduceTensorDesc, aDesc, cDesc));
    *sizeInBytes = 0; /* neither the CPU nor the CUDA implementation uses caller workspace */
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnReduceTensor(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t reduceTensorDesc, void *indices,
                                                        size_t indicesSizeInBytes, void *workspace, size_t workspaceSizeInBytes,
                                                        const void *alpha, const cudnnTensorDescriptor_t aDesc, const void *A,
                                                        const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    FDNN_API_ENTER();
    (void)workspace;
    (void)workspaceSizeInBytes;
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_set(reduceTensorDesc));
    FDNN_CHECK(fdnn_check_tensor(aDesc, "aDesc"));
    FDNN_CHECK(fdnn_check_tensor(cDesc, "cDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(A, "A");
    FDNN_CHECK_PTR(C, "C");
    FDNN_CHECK(check_problem(reduceTensorDesc, aDesc, cDesc));
    size_t need = indices_bytes(reduceTensorDesc, cDesc);
    if (need && (indices == NULL || indicesSizeInBytes < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "indices needs %zu bytes (cudnnGetReductionIndicesSize), got %zu%s", need, indicesSizeInBytes,
                         indices ? "" : " and a NULL pointer");
    const double al = fdnn_scalar(alpha, cDesc->dtype), be = fdnn_scalar(beta, cDesc->dtype);
    const cudnnReduceTensorOp_t op = reduceTensorDesc->op;
    const int prop = reduceTensorDesc->nan_opt == CUDNN_PROPAGATE_NAN;
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_reduce_tensor(handle, (int)op, prop, need ? (int *)indices : NULL, al, aDesc, A, be, cDesc, C);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnReduceTensor: this build has no CUDA backend");
#endif
    }
    if (reduceTensorDesc->comp_type == CUDNN_DATA_FLOAT &&
        fdnn_cpu_reduce_f32((int)op, prop, al, aDesc, A, be, cDesc, C, need ? (int32_t *)indices : NULL))
        return CUDNN_STATUS_SUCCESS;
    const int nd = aDesc->nb_dims;
    /* packed strides of A; reduced dims in row-major order */
    int64_t ast[CUDNN_DIM_MAX], s = 1, rn = 1;
    int rdim[CUDNN_DIM_MAX], rpos[CUDNN_DIM_MAX], rk = 0;
    for (int i = nd - 1; i >= 0; i--) { ast[i] = s; s *= aDesc->dim[i]; }
    for (int i = 0; i < nd; i++)
        if (cDesc->dim[i] == 1 && aDesc->dim[i] != 1) { rdim[rk] = aDesc->dim[i]; rpos[rk++] = i; rn *= aDesc->dim[i]; }
    int64_t cn = fdnn_tensor_elems(cDesc);
    double *pa = fdnn_ops_gather(aDesc, A);
    double *res = malloc(sizeof(double) * (size_t)cn);
    int64_t *roff = malloc(sizeof(int64_t) * (size_t)rn);
    if (!pa || !res || !roff) {
        free(pa); free(res); free(roff);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    for (int64_t r = 0; r < rn; r++) {
        int ri[CUDNN_DIM_MAX];
        fdnn_ops_unravel(rdim, rk, r, ri);
        int64_t o = 0;
        for (int j = 0; j < rk; j++) o += ri[j] * ast[rpos[j]];
        roff[r] = o;
    }
    int32_t *idx = need ? (int32_t *)indices : NULL;
#pragma omp parallel for schedule(static) if (cn * rn > 65536)
    for (int64_t ci = 0; ci < cn; ci++) {
        int cidx[CUDNN_DIM_MAX];
        fdnn_ops_unravel(cDesc->dim, nd, ci, cidx);
        int64_t base = 0;
        for (int i = 0; i < nd; i++) base += cidx[i] * ast[i];
        const double *p = pa + base;
        double acc;
        int64_t best = 0;
        switch (op) {
        case CUDNN_REDUCE_TENSOR_ADD:
        case CUDNN_REDUCE_TENSOR_AVG:
            acc = 0;
            for (int64_t r = 0; r < rn; r++) acc += p[roff[r]];
            if (op == CUDNN_REDUCE_TENSOR_AVG) acc /= (double)rn;
            break;
        case CUDNN_REDUCE_TENSOR_MUL:
            acc = 1;
            for (int64_t r = 0; r < rn; r++) acc *= p[roff[r]];
            break;
        case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS:
            acc = 1;
            for (int64_t r = 0; r < rn; r++)
                if (p[roff[r]] != 0) acc *= p[roff[r]];
            break;
        case CUDNN_REDUCE_TENSOR_NORM1:
            acc = 0;
            for (int64_t r = 0; r < rn; r++) acc += fabs(p[roff[r]]);
            break;
        case CUDNN_REDUCE_TENSOR_NORM2:
            acc = 0;
            for (int64_t r = 0; r < rn; r++) acc += p[roff[r]] * p[roff[r]];
            acc = sqrt(acc);
            break;
        default: { /* MIN, MAX, AMAX */
            int seen = 0;
            acc = NAN;
            for (int64_t r = 0; r < rn; r++) {
                double v = op == CUDNN_REDUCE_TENSOR_AMAX ? fabs(p[roff[r]]) : p[roff[r]];
                if (isnan(v)) {
                    if (prop) { acc = v; best = r; seen = 1; break; }
                    continue;
                }
                if (!seen || (op == CUDNN_REDUCE_TENSOR_MIN ? v < acc : v > acc)) { acc = v; best = r; seen = 1; }
            }
            if (idx) idx[ci] = (int32_t)best;
        }
        }
        res[ci] = acc;
    }
    fdnn_ops_blend(cDesc, C, res, al, be);
    free(pa); free(res); free(roff);
    return CUDNN_STATUS_SUCCESS;
}
