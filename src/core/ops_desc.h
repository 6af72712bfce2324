/* Internal structs behind the op-tensor, reduce-tensor, tensor-transform, pooling and LRN
 * descriptors (cudnn_ops_infer). Magic values follow the FDNN_MAGIC_* scheme of fdnn.h. */
#ifndef FDNN_OPS_DESC_H
#define FDNN_OPS_DESC_H
#include "fdnn.h"

enum {
    FDNN_MAGIC_OPTENSOR = 0x46444f50,  /* "FDOP" */
    FDNN_MAGIC_REDUCE = 0x46445244,    /* "FDRD" */
    FDNN_MAGIC_TRANSFORM = 0x46445446, /* "FDTF" */
    FDNN_MAGIC_POOLING = 0x4644504c,   /* "FDPL" */
    FDNN_MAGIC_LRN = 0x46444c52        /* "FDLR" */
};

struct cudnnOpTensorStruct {
    uint32_t magic;
    int is_set;
    cudnnOpTensorOp_t op;
    cudnnDataType_t comp_type;
    cudnnNanPropagation_t nan_opt;
};

struct cudnnReduceTensorStruct {
    uint32_t magic;
    int is_set;
    cudnnReduceTensorOp_t op;
    cudnnDataType_t comp_type;
    cudnnNanPropagation_t nan_opt;
    cudnnReduceTensorIndices_t indices;
    cudnnIndicesType_t indices_type;
};

struct cudnnTensorTransformStruct {
    uint32_t magic;
    int is_set;
    int nb_dims;
    cudnnTensorFormat_t dest_format;
    int32_t pad_before[CUDNN_DIM_MAX];
    int32_t pad_after[CUDNN_DIM_MAX];
    uint32_t fold[CUDNN_DIM_MAX];   /* per spatial dim (index 2..); 1 = no folding */
    cudnnFoldingDirection_t direction;
};

struct cudnnPoolingStruct {
    uint32_t magic;
    int is_set;
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan_opt;
    int nb_spatial;                 /* 2 or 3 */
    int window[FDNN_MAX_SPATIAL];
    int pad[FDNN_MAX_SPATIAL];
    int stride[FDNN_MAX_SPATIAL];
};

struct cudnnLRNStruct {
    uint32_t magic;
    int is_set;
    unsigned n;
    double alpha, beta, k;
};
#endif
