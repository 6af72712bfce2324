/* cudnnAddTensor on the GPU: C = alpha*A + beta*C, where every dim of A equals C's or is 1
 * (broadcast). One thread per C element (grid-stride), indices decoded over C's dims and
 * mapped through both tensors' strides (stride 0 on broadcast dims). Computed in double and
 * rounded once to the element type; beta == 0 never reads C. */
#include "cuda_dev.h"
#include "cuda_ops.h"
#include "ew_dense.cuh"

using namespace fdnn_dev;

namespace {

struct AddGeom {
    int nd;
    int dim[CUDNN_DIM_MAX];
    long long cs[CUDNN_DIM_MAX], as[CUDNN_DIM_MAX];
};

template <typename T>
__global__ void add_tensor_kernel(AddGeom G, long long total, double alpha, const T *__restrict__ A, double beta, T *C)
{
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long r = idx, co = 0, ao = 0;
        for (int d = G.nd - 1; d >= 0; d--) {
            const long long i = r % G.dim[d];
            r /= G.dim[d];
            co += i * G.cs[d];
            ao += i * G.as[d];
        }
        double v = alpha * (double)ld(A + ao);
        if (beta != 0.0) v += beta * (double)ld(C + co);
        st(C + co, v);
    }
}

template <typename T>
cudnnStatus_t launch(cudnnHandle_t h, const AddGeom &G, long long total, double alpha, const void *A, double beta, void *C)
{
    const int block = 256;
    add_tensor_kernel<T><<<grid_for(total, block), block, 0, (cudaStream_t)h->stream>>>(G, total, alpha, (const T *)A, beta,
                                                                                         (T *)C);
    return fdnn_cuda_check(cudaGetLastError(), "add_tensor_kernel");
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_add_tensor(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *a, const void *A,
                                              double beta, const struct cudnnTensorStruct *c, void *C)
{
    if (a->nb_dims != c->nb_dims || c->nb_dims < 1 || c->nb_dims > CUDNN_DIM_MAX)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "aDesc has %d dims but cDesc has %d; they must have the same rank", a->nb_dims,
                         c->nb_dims);
    if (a->dtype != c->dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "aDesc (%s) and cDesc (%s) must have the same data type",
                         fdnn_dtype_name(a->dtype), fdnn_dtype_name(c->dtype));
    if (a->vect > 1 || c->vect > 1)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "vectorised (NCHW_VECT_C) tensors are not supported by cudnnAddTensor on CUDA");
    AddGeom G;
    G.nd = c->nb_dims;
    long long total = 1;
    for (int d = 0; d < G.nd; d++) {
        if (a->dim[d] != c->dim[d] && a->dim[d] != 1)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "aDesc dim %d is %d; it must equal cDesc's (%d) or be 1", d, a->dim[d],
                             c->dim[d]);
        G.dim[d] = c->dim[d];
        G.cs[d] = c->stride[d];
        G.as[d] = a->dim[d] == 1 ? 0 : a->stride[d];
        total *= c->dim[d];
    }
    if (total == 0) return CUDNN_STATUS_SUCCESS;
    if (fdnn_ewd::dense_any_order(c) && fdnn_ewd::same_geom(c, a)) { /* no broadcast: flat vectorised kernel */
        fdnn_ewd::OpCopy<float>::P pf = {0};
        fdnn_ewd::OpCopy<double>::P pd = {0};
        cudnnStatus_t st;
        if (fdnn_ewd::dense_dispatch<1, fdnn_ewd::OpCopy>(h, "dense_kernel<add_tensor>", c->dtype, total, pf, pd, alpha, beta, C, A, NULL,
                                                          NULL, &st))
            return st;
    }
    switch (c->dtype) {
    case CUDNN_DATA_FLOAT: return launch<float>(h, G, total, alpha, A, beta, C);
    case CUDNN_DATA_DOUBLE: return launch<double>(h, G, total, alpha, A, beta, C);
    case CUDNN_DATA_HALF: return launch<__half>(h, G, total, alpha, A, beta, C);
    case CUDNN_DATA_BFLOAT16: return launch<__nv_bfloat16>(h, G, total, alpha, A, beta, C);
    case CUDNN_DATA_INT8: return launch<int8_t>(h, G, total, alpha, A, beta, C);
    default: break;
    }
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnAddTensor on CUDA supports FLOAT, DOUBLE, HALF, BFLOAT16 and INT8, not %s",
                     fdnn_dtype_name(c->dtype));
}
