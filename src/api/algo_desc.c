/* The generic algorithm-descriptor API of cuDNN 8 (deprecated in 8.9, removed in 9): algorithm
 * descriptors holding one cudnnAlgorithm_t, performance results, and Save/Restore of a
 * descriptor into a caller buffer. All are host objects; algoSpace is host memory on every
 * backend. The serialised form is documented in docs/algorithm-descriptor.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algo_internal.h"

cudnnStatus_t fdnn_algo_desc_check(const struct cudnnAlgorithmStruct *d, const char *name, int need_set)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    if (d->magic != FDNN_MAGIC_ALGODESC) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live algorithm descriptor", name);
    if (need_set && !d->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_algo_perf_check(const struct cudnnAlgorithmPerformanceStruct *p, const char *name)
{
    if (p == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    if (p->magic != FDNN_MAGIC_ALGOPERF) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live algorithm performance object", name);
    return CUDNN_STATUS_SUCCESS;
}

void fdnn_algo_perf_fill(struct cudnnAlgorithmPerformanceStruct *p, int algo_value, cudnnStatus_t status, float time, size_t memory)
{
    memset(&p->desc->algo, 0, sizeof p->desc->algo);
    p->desc->algo.algo.convFwdAlgo = (cudnnConvolutionFwdAlgo_t)algo_value; /* every member is a 4-byte enum at offset 0 */
    p->desc->is_set = 1;
    p->status = status;
    p->time = time;
    p->memory = memory;
}

/* The union's members all start at offset 0 and are 4-byte enums: read it as an int. */
static int algo_value(const cudnnAlgorithm_t *a) { return (int)a->algo.convFwdAlgo; }

static cudnnStatus_t check_value(int v, const char *name)
{
    if (v < 0 || v > FDNN_ALGO_VALUE_MAX)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s=%d is not a valid algorithm of any kind (convolution, RNN or CTC algorithms are 0..%d)", name,
                         v, FDNN_ALGO_VALUE_MAX);
    return CUDNN_STATUS_SUCCESS;
}

static struct cudnnAlgorithmStruct *new_desc(int owned)
{
    struct cudnnAlgorithmStruct *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->magic = FDNN_MAGIC_ALGODESC;
    d->owned = owned;
    return d;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateAlgorithmDescriptor(cudnnAlgorithmDescriptor_t *algoDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(algoDesc, "algoDesc");
    struct cudnnAlgorithmStruct *d = new_desc(0);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    *algoDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetAlgorithmDescriptor(cudnnAlgorithmDescriptor_t algoDesc, cudnnAlgorithm_t algorithm)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 0));
    FDNN_API_LOG(NULL, "    algorithm: %d", algo_value(&algorithm));
    FDNN_CHECK(check_value(algo_value(&algorithm), "algorithm.algo"));
    algoDesc->algo = algorithm;
    algoDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetAlgorithmDescriptor(const cudnnAlgorithmDescriptor_t algoDesc, cudnnAlgorithm_t *algorithm)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 1));
    FDNN_CHECK_PTR(algorithm, "algorithm");
    *algorithm = algoDesc->algo;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCopyAlgorithmDescriptor(const cudnnAlgorithmDescriptor_t src, cudnnAlgorithmDescriptor_t dest)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_algo_desc_check(src, "src", 1));
    FDNN_CHECK(fdnn_algo_desc_check(dest, "dest", 0));
    dest->algo = src->algo;
    dest->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyAlgorithmDescriptor(cudnnAlgorithmDescriptor_t algoDesc)
{
    FDNN_API_ENTER();
    if (algoDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 0));
    if (algoDesc->owned)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM,
                         "algoDesc belongs to an algorithm performance object (from cudnnGetAlgorithmPerformance); it is freed by "
                         "cudnnDestroyAlgorithmPerformance");
    algoDesc->magic = FDNN_MAGIC_DEAD;
    free(algoDesc);
    return CUDNN_STATUS_SUCCESS;
}

static void perf_free(struct cudnnAlgorithmPerformanceStruct *p)
{
    if (!p) return;
    if (p->desc) {
        p->desc->magic = FDNN_MAGIC_DEAD;
        free(p->desc);
    }
    p->magic = FDNN_MAGIC_DEAD;
    free(p);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateAlgorithmPerformance(cudnnAlgorithmPerformance_t *algoPerf, int numberToCreate)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(algoPerf, "algoPerf");
    if (numberToCreate <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "numberToCreate=%d must be positive", numberToCreate);
    struct cudnnAlgorithmPerformanceStruct **tmp = calloc((size_t)numberToCreate, sizeof *tmp);
    if (!tmp) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    for (int i = 0; i < numberToCreate; i++) {
        struct cudnnAlgorithmPerformanceStruct *p = calloc(1, sizeof *p);
        if (p) p->desc = new_desc(1);
        if (!p || !p->desc) {
            free(p);
            for (int j = 0; j < i; j++) perf_free(tmp[j]);
            free(tmp);
            return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory creating %d performance objects", numberToCreate);
        }
        p->magic = FDNN_MAGIC_ALGOPERF;
        p->status = CUDNN_STATUS_NOT_INITIALIZED; /* until set or filled by a Find */
        p->time = -1.0f;
        p->memory = 0;
        tmp[i] = p;
    }
    for (int i = 0; i < numberToCreate; i++) algoPerf[i] = tmp[i];
    free(tmp);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetAlgorithmPerformance(cudnnAlgorithmPerformance_t algoPerf, cudnnAlgorithmDescriptor_t algoDesc,
                                                                   cudnnStatus_t status, float time, size_t memory)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_algo_perf_check(algoPerf, "algoPerf"));
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 1));
    if ((int)status < 0 || status > CUDNN_STATUS_VERSION_MISMATCH)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "status=%d is not a cudnnStatus_t", (int)status);
    if (isnan(time)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "time is NaN");
    fdnn_algo_perf_fill(algoPerf, algo_value(&algoDesc->algo), status, time, memory);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetAlgorithmPerformance(const cudnnAlgorithmPerformance_t algoPerf, cudnnAlgorithmDescriptor_t *algoDesc,
                                                                   cudnnStatus_t *status, float *time, size_t *memory)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_algo_perf_check(algoPerf, "algoPerf"));
    if (!algoDesc || !status || !time || !memory) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoDesc, status, time or memory is NULL");
    *algoDesc = algoPerf->desc;
    *status = algoPerf->status;
    *time = algoPerf->time;
    *memory = algoPerf->memory;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyAlgorithmPerformance(cudnnAlgorithmPerformance_t *algoPerf, int numberToDestroy)
{
    FDNN_API_ENTER();
    if (numberToDestroy < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "numberToDestroy=%d is negative", numberToDestroy);
    if (numberToDestroy == 0) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK_PTR(algoPerf, "algoPerf");
    for (int i = 0; i < numberToDestroy; i++)
        if (algoPerf[i] && algoPerf[i]->magic != FDNN_MAGIC_ALGOPERF)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoPerf[%d] is not a live algorithm performance object (nothing was destroyed)", i);
    for (int i = 0; i < numberToDestroy; i++)
        for (int j = 0; j < i; j++)
            if (algoPerf[i] && algoPerf[i] == algoPerf[j])
                return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoPerf[%d] and algoPerf[%d] are the same object (nothing was destroyed)", j, i);
    for (int i = 0; i < numberToDestroy; i++) {
        perf_free(algoPerf[i]);
        algoPerf[i] = NULL;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------ save / restore */
/* Format version 1, 24 bytes, all integers little-endian:
 *   0  'F','D','A','S'   magic
 *   4  uint16 version (1)     6  uint16 total size (24)
 *   8  int32  algorithm value (the cudnnAlgorithm_t union read as an int)
 *   12 uint32 writer's CUDNN_VERSION     16 uint32 reserved (0)
 *   20 uint32 CRC-32 (IEEE 802.3, reflected, init/xorout 0xFFFFFFFF) of bytes 0..19 */
enum { ALGO_SPACE_BYTES = 24, ALGO_SPACE_VERSION = 1 };
static const unsigned char ALGO_SPACE_MAGIC[4] = {'F', 'D', 'A', 'S'};

static uint32_t crc32_ieee(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetAlgorithmSpaceSize(cudnnHandle_t handle, cudnnAlgorithmDescriptor_t algoDesc, size_t *algoSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 0));
    FDNN_CHECK_PTR(algoSpaceSizeInBytes, "algoSpaceSizeInBytes");
    *algoSpaceSizeInBytes = ALGO_SPACE_BYTES;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSaveAlgorithm(cudnnHandle_t handle, cudnnAlgorithmDescriptor_t algoDesc, void *algoSpace,
                                                         size_t algoSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 1));
    FDNN_CHECK_PTR(algoSpace, "algoSpace");
    if (algoSpaceSizeInBytes < ALGO_SPACE_BYTES)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpaceSizeInBytes=%zu is less than the %d bytes cudnnGetAlgorithmSpaceSize reports",
                         algoSpaceSizeInBytes, (int)ALGO_SPACE_BYTES);
    unsigned char b[ALGO_SPACE_BYTES];
    memcpy(b, ALGO_SPACE_MAGIC, 4);
    b[4] = ALGO_SPACE_VERSION & 0xff;
    b[5] = ALGO_SPACE_VERSION >> 8;
    b[6] = ALGO_SPACE_BYTES & 0xff;
    b[7] = ALGO_SPACE_BYTES >> 8;
    put32(b + 8, (uint32_t)algo_value(&algoDesc->algo));
    put32(b + 12, (uint32_t)CUDNN_VERSION);
    put32(b + 16, 0);
    put32(b + 20, crc32_ieee(b, 20));
    memcpy(algoSpace, b, sizeof b);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRestoreAlgorithm(cudnnHandle_t handle, void *algoSpace, size_t algoSpaceSizeInBytes,
                                                            cudnnAlgorithmDescriptor_t algoDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK_PTR(algoSpace, "algoSpace");
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 0));
    if (algoSpaceSizeInBytes < ALGO_SPACE_BYTES)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpaceSizeInBytes=%zu is less than the %d bytes of a saved algorithm", algoSpaceSizeInBytes,
                         (int)ALGO_SPACE_BYTES);
    const unsigned char *b = algoSpace;
    if (memcmp(b, ALGO_SPACE_MAGIC, 4) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpace does not hold an algorithm saved by cudnnSaveAlgorithm (bad magic)");
    unsigned version = (unsigned)b[4] | (unsigned)b[5] << 8, size = (unsigned)b[6] | (unsigned)b[7] << 8;
    if (version != ALGO_SPACE_VERSION) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpace has format version %u; this library reads version %d", version, (int)ALGO_SPACE_VERSION);
    if (size != ALGO_SPACE_BYTES) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpace records a size of %u bytes; version 1 is %d bytes", size, (int)ALGO_SPACE_BYTES);
    uint32_t want = get32(b + 20), got = crc32_ieee(b, 20);
    if (want != got) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpace is corrupt: checksum 0x%08x, stored 0x%08x", (unsigned)got, (unsigned)want);
    int v = (int)get32(b + 8);
    FDNN_CHECK(check_value(v, "the saved algorithm"));
    memset(&algoDesc->algo, 0, sizeof algoDesc->algo);
    algoDesc->algo.algo.convFwdAlgo = (cudnnConvolutionFwdAlgo_t)v;
    algoDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}
