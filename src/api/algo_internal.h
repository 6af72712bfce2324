/* The generic algorithm descriptor and algorithm performance objects (deprecated in 8.9, gone
 * in 9): pure host objects. Shared by src/api/algo_desc.c and the RNN Find*Ex entry points. */
#ifndef FDNN_ALGO_INTERNAL_H
#define FDNN_ALGO_INTERNAL_H
#include "../core/fdnn.h"

enum {
    FDNN_MAGIC_ALGODESC = 0x46444144, /* "FDAD" */
    FDNN_MAGIC_ALGOPERF = 0x46444150  /* "FDAP" */
};

struct cudnnAlgorithmStruct {
    uint32_t magic;
    int is_set;
    int owned;                /* 1: belongs to a cudnnAlgorithmPerformance_t, freed with it */
    cudnnAlgorithm_t algo;
};

/* A perf result owns one algorithm descriptor (returned by cudnnGetAlgorithmPerformance and
 * valid until the perf object is destroyed); cudnnSetAlgorithmPerformance copies into it. */
struct cudnnAlgorithmPerformanceStruct {
    uint32_t magic;
    struct cudnnAlgorithmStruct *desc;
    cudnnStatus_t status;
    float time;
    size_t memory;
};

/* Largest value of any member of the cudnnAlgorithm_t union (convFwdAlgo has the most). */
#define FDNN_ALGO_VALUE_MAX (CUDNN_CONVOLUTION_FWD_ALGO_COUNT - 1)

cudnnStatus_t fdnn_algo_desc_check(const struct cudnnAlgorithmStruct *d, const char *name, int need_set);
cudnnStatus_t fdnn_algo_perf_check(const struct cudnnAlgorithmPerformanceStruct *p, const char *name);
/* Fills a live perf object (no checks). */
void fdnn_algo_perf_fill(struct cudnnAlgorithmPerformanceStruct *p, int algo_value, cudnnStatus_t status, float time, size_t memory);
#endif
