/* The generic algorithm-descriptor API (descriptors, performance objects, Save/Restore with the
 * format of docs/algorithm-descriptor.md) and the RNN algorithm functions built on it:
 * cudnnSetRNNAlgorithmDescriptor, cudnnGetRNN*AlgorithmMaxCount, cudnnFindRNN*AlgorithmEx.
 * Find*Ex outputs are compared bit for bit with the plain v7 calls on the same inputs, and one
 * small LSTM case against the independent reference (tests/ref/rnn_ref.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "rnn_ref.h"

static cudnnHandle_t h;

static int last_error_has(const char *word)
{
    char msg[512];
    cudnnGetLastErrorString(msg, sizeof msg);
    return strstr(msg, word) != NULL;
}

static cudnnAlgorithm_t algo_of(int v)
{
    cudnnAlgorithm_t a;
    memset(&a, 0, sizeof a);
    a.algo.convFwdAlgo = (cudnnConvolutionFwdAlgo_t)v;
    return a;
}

/* CRC-32 (IEEE, reflected) written here from the format description, to check saved bytes. */
static uint32_t crc32_test(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}
static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void test_descriptors(void)
{
    cudnnAlgorithmDescriptor_t d = NULL, e = NULL;
    cudnnAlgorithm_t a;
    TH_STATUS(cudnnCreateAlgorithmDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnCreateAlgorithmDescriptor(&d));
    TH_OK(cudnnCreateAlgorithmDescriptor(&e));
    TH_STATUS(cudnnGetAlgorithmDescriptor(d, &a), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_STATUS(cudnnCopyAlgorithmDescriptor(d, e), CUDNN_STATUS_BAD_PARAM);
    /* every member of the union, every value */
    int counts[5] = {CUDNN_CONVOLUTION_FWD_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                     CUDNN_RNN_ALGO_COUNT, 2};
    int ok = 1;
    for (int m = 0; m < 5; m++)
        for (int v = 0; v < counts[m]; v++) {
            cudnnAlgorithm_t s;
            memset(&s, 0, sizeof s);
            if (m == 0) s.algo.convFwdAlgo = (cudnnConvolutionFwdAlgo_t)v;
            if (m == 1) s.algo.convBwdFilterAlgo = (cudnnConvolutionBwdFilterAlgo_t)v;
            if (m == 2) s.algo.convBwdDataAlgo = (cudnnConvolutionBwdDataAlgo_t)v;
            if (m == 3) s.algo.RNNAlgo = (cudnnRNNAlgo_t)v;
            if (m == 4) s.algo.CTCLossAlgo = (cudnnCTCLossAlgo_t)v;
            ok &= cudnnSetAlgorithmDescriptor(d, s) == CUDNN_STATUS_SUCCESS;
            memset(&a, 0xff, sizeof a);
            ok &= cudnnGetAlgorithmDescriptor(d, &a) == CUDNN_STATUS_SUCCESS && memcmp(&a, &s, sizeof a) == 0;
            ok &= cudnnCopyAlgorithmDescriptor(d, e) == CUDNN_STATUS_SUCCESS;
            memset(&a, 0xff, sizeof a);
            ok &= cudnnGetAlgorithmDescriptor(e, &a) == CUDNN_STATUS_SUCCESS && memcmp(&a, &s, sizeof a) == 0;
        }
    TH_CHECK(ok, "Set/Get/Copy round trip every algorithm value of every union member");
    TH_CHECK(sizeof(cudnnAlgorithm_t) == 4, "cudnnAlgorithm_t is 4 bytes");
    /* invalid values leave the descriptor unchanged */
    TH_OK(cudnnSetAlgorithmDescriptor(d, algo_of(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD)));
    TH_STATUS(cudnnSetAlgorithmDescriptor(d, algo_of(-1)), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetAlgorithmDescriptor(d, algo_of(CUDNN_CONVOLUTION_FWD_ALGO_COUNT)), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetAlgorithmDescriptor(d, algo_of(1000)), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(last_error_has("algorithm"), "the message names the algorithm");
    TH_OK(cudnnGetAlgorithmDescriptor(d, &a));
    TH_CHECK(a.algo.convFwdAlgo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, "a rejected Set leaves the descriptor unchanged");
    TH_STATUS(cudnnSetAlgorithmDescriptor(NULL, algo_of(0)), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmDescriptor(NULL, &a), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmDescriptor(d, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCopyAlgorithmDescriptor(NULL, e), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCopyAlgorithmDescriptor(d, NULL), CUDNN_STATUS_BAD_PARAM);
    /* a pointer that is not a descriptor */
    uint32_t junk[8] = {0};
    TH_STATUS(cudnnSetAlgorithmDescriptor((cudnnAlgorithmDescriptor_t)(void *)junk, algo_of(0)), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDestroyAlgorithmDescriptor((cudnnAlgorithmDescriptor_t)(void *)junk), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroyAlgorithmDescriptor(NULL));
    TH_OK(cudnnDestroyAlgorithmDescriptor(d));
    TH_OK(cudnnDestroyAlgorithmDescriptor(e));
}

static void test_performance(void)
{
    cudnnAlgorithmPerformance_t p[3], sentinel = (cudnnAlgorithmPerformance_t)(void *)&h;
    for (int i = 0; i < 3; i++) p[i] = sentinel;
    TH_STATUS(cudnnCreateAlgorithmPerformance(NULL, 3), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCreateAlgorithmPerformance(p, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCreateAlgorithmPerformance(p, -2), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(p[0] == sentinel && p[1] == sentinel, "failed Create leaves the array unchanged");
    TH_OK(cudnnCreateAlgorithmPerformance(p, 3));
    TH_CHECK(p[0] && p[1] && p[2] && p[0] != p[1] && p[1] != p[2] && p[0] != sentinel, "three distinct objects");
    cudnnAlgorithmDescriptor_t got = NULL, d;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    float t = 0;
    size_t mem = 7;
    TH_OK(cudnnGetAlgorithmPerformance(p[0], &got, &st, &t, &mem));
    TH_CHECK(got != NULL && st == CUDNN_STATUS_NOT_INITIALIZED && t < 0 && mem == 0, "fresh perf object: NOT_INITIALIZED, time < 0, memory 0");
    TH_OK(cudnnCreateAlgorithmDescriptor(&d));
    TH_STATUS(cudnnSetAlgorithmPerformance(p[0], d, CUDNN_STATUS_SUCCESS, 1.0f, 0), CUDNN_STATUS_BAD_PARAM); /* d never set */
    cudnnAlgorithm_t a;
    memset(&a, 0, sizeof a);
    a.algo.convBwdDataAlgo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING;
    TH_OK(cudnnSetAlgorithmDescriptor(d, a));
    TH_OK(cudnnSetAlgorithmPerformance(p[1], d, CUDNN_STATUS_NOT_SUPPORTED, 2.5f, (size_t)1 << 33));
    TH_OK(cudnnGetAlgorithmPerformance(p[1], &got, &st, &t, &mem));
    cudnnAlgorithm_t b;
    TH_OK(cudnnGetAlgorithmDescriptor(got, &b));
    TH_CHECK(st == CUDNN_STATUS_NOT_SUPPORTED && t == 2.5f && mem == ((size_t)1 << 33) && b.algo.convBwdDataAlgo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING,
             "Set/Get performance round trip");
    TH_CHECK(got != d, "the perf object keeps its own copy of the descriptor");
    TH_OK(cudnnSetAlgorithmDescriptor(d, algo_of(0)));
    TH_OK(cudnnGetAlgorithmDescriptor(got, &b));
    TH_CHECK(b.algo.convBwdDataAlgo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, "changing the caller's descriptor later does not change the result");
    TH_STATUS(cudnnDestroyAlgorithmDescriptor(got), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(last_error_has("cudnnDestroyAlgorithmPerformance"), "the message says who owns it");
    /* error paths leave the object unchanged */
    TH_STATUS(cudnnSetAlgorithmPerformance(p[1], d, (cudnnStatus_t)99, 1.0f, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetAlgorithmPerformance(p[1], d, CUDNN_STATUS_SUCCESS, NAN, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetAlgorithmPerformance(NULL, d, CUDNN_STATUS_SUCCESS, 1.0f, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetAlgorithmPerformance(p[1], NULL, CUDNN_STATUS_SUCCESS, 1.0f, 0), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetAlgorithmPerformance(p[1], &got, &st, &t, &mem));
    TH_CHECK(st == CUDNN_STATUS_NOT_SUPPORTED && t == 2.5f, "rejected Set leaves the perf object unchanged");
    TH_STATUS(cudnnGetAlgorithmPerformance(NULL, &got, &st, &t, &mem), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmPerformance(p[1], NULL, &st, &t, &mem), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmPerformance(p[1], &got, NULL, &t, &mem), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmPerformance(p[1], &got, &st, NULL, &mem), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmPerformance(p[1], &got, &st, &t, NULL), CUDNN_STATUS_BAD_PARAM);
    /* destroy */
    TH_STATUS(cudnnDestroyAlgorithmPerformance(p, -1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDestroyAlgorithmPerformance(NULL, 2), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroyAlgorithmPerformance(NULL, 0));
    cudnnAlgorithmPerformance_t dup[2] = {p[0], p[0]};
    TH_STATUS(cudnnDestroyAlgorithmPerformance(dup, 2), CUDNN_STATUS_BAD_PARAM);
    cudnnAlgorithmPerformance_t bad[2] = {p[0], (cudnnAlgorithmPerformance_t)(void *)&a};
    TH_STATUS(cudnnDestroyAlgorithmPerformance(bad, 2), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetAlgorithmPerformance(p[0], &got, &st, &t, &mem)); /* still alive after the rejected destroys */
    TH_OK(cudnnDestroyAlgorithmPerformance(p, 3));
    TH_CHECK(p[0] == NULL && p[1] == NULL && p[2] == NULL, "destroyed entries are set to NULL");
    TH_OK(cudnnDestroyAlgorithmPerformance(p, 3)); /* NULL entries are skipped */
    TH_OK(cudnnDestroyAlgorithmDescriptor(d));
}

static void test_save_restore(void)
{
    cudnnAlgorithmDescriptor_t d, e;
    TH_OK(cudnnCreateAlgorithmDescriptor(&d));
    TH_OK(cudnnCreateAlgorithmDescriptor(&e));
    size_t sz = 0;
    TH_OK(cudnnGetAlgorithmSpaceSize(h, d, &sz));
    TH_CHECK(sz == 24, "algorithm space is 24 bytes (format version 1), got %zu", sz);
    TH_STATUS(cudnnGetAlgorithmSpaceSize(NULL, d, &sz), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmSpaceSize(h, NULL, &sz), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetAlgorithmSpaceSize(h, d, NULL), CUDNN_STATUS_BAD_PARAM);
    unsigned char buf[64], keep[64];
    memset(buf, 0xA5, sizeof buf);
    TH_STATUS(cudnnSaveAlgorithm(h, d, buf, sz), CUDNN_STATUS_BAD_PARAM); /* never set */
    int ok = 1, fmt = 1;
    for (int v = 0; v < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; v++) {
        TH_OK(cudnnSetAlgorithmDescriptor(d, algo_of(v)));
        memset(buf, 0xA5, sizeof buf);
        ok &= cudnnSaveAlgorithm(h, d, buf, sz) == CUDNN_STATUS_SUCCESS;
        fmt &= memcmp(buf, "FDAS", 4) == 0 && buf[4] == 1 && buf[5] == 0 && buf[6] == 24 && buf[7] == 0 && le32(buf + 8) == (uint32_t)v &&
               le32(buf + 12) == CUDNN_VERSION && le32(buf + 16) == 0 && le32(buf + 20) == crc32_test(buf, 20) && buf[24] == 0xA5;
        TH_OK(cudnnSetAlgorithmDescriptor(e, algo_of((v + 3) % 8)));
        ok &= cudnnRestoreAlgorithm(h, buf, sz, e) == CUDNN_STATUS_SUCCESS;
        cudnnAlgorithm_t a;
        ok &= cudnnGetAlgorithmDescriptor(e, &a) == CUDNN_STATUS_SUCCESS && (int)a.algo.convFwdAlgo == v;
    }
    TH_CHECK(ok, "Save/Restore round trip of every value");
    TH_CHECK(fmt, "saved bytes follow the documented format (magic, version, size, value, CRC-32)");
    /* restore into a descriptor that was never set, with a larger buffer size */
    cudnnAlgorithmDescriptor_t f;
    TH_OK(cudnnCreateAlgorithmDescriptor(&f));
    TH_OK(cudnnRestoreAlgorithm(h, buf, sizeof buf, f));
    cudnnAlgorithm_t a;
    TH_OK(cudnnGetAlgorithmDescriptor(f, &a));
    TH_CHECK((int)a.algo.convFwdAlgo == 7, "restore into a fresh descriptor");
    TH_OK(cudnnDestroyAlgorithmDescriptor(f));
    /* too small */
    memset(keep, 0x5A, sizeof keep);
    memcpy(buf, keep, sizeof buf);
    TH_STATUS(cudnnSaveAlgorithm(h, d, buf, sz - 1), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(memcmp(buf, keep, sizeof buf) == 0, "a too-small Save writes nothing");
    TH_STATUS(cudnnSaveAlgorithm(h, d, NULL, sz), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSaveAlgorithm(NULL, d, buf, sz), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSaveAlgorithm(h, NULL, buf, sz), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetAlgorithmDescriptor(d, algo_of(CUDNN_CONVOLUTION_FWD_ALGO_FFT)));
    TH_OK(cudnnSaveAlgorithm(h, d, buf, sz));
    TH_OK(cudnnSetAlgorithmDescriptor(e, algo_of(2)));
    TH_STATUS(cudnnRestoreAlgorithm(h, buf, sz - 1, e), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRestoreAlgorithm(h, NULL, sz, e), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRestoreAlgorithm(NULL, buf, sz, e), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRestoreAlgorithm(h, buf, sz, NULL), CUDNN_STATUS_BAD_PARAM);
    /* every single-bit corruption is rejected and leaves the descriptor unchanged */
    int rejected = 1;
    for (int i = 0; i < 24; i++)
        for (int bit = 0; bit < 8; bit++) {
            unsigned char c[24];
            memcpy(c, buf, 24);
            c[i] ^= (unsigned char)(1u << bit);
            rejected &= cudnnRestoreAlgorithm(h, c, 24, e) == CUDNN_STATUS_BAD_PARAM;
        }
    TH_CHECK(rejected, "every single-bit corruption of the saved algorithm is rejected with BAD_PARAM");
    {
        unsigned char c[24];
        memcpy(c, buf, 24);
        c[9] ^= 0x10;
        TH_STATUS(cudnnRestoreAlgorithm(h, c, 24, e), CUDNN_STATUS_BAD_PARAM);
        TH_CHECK(last_error_has("corrupt"), "a checksum mismatch is reported as corrupt");
    }
    TH_OK(cudnnGetAlgorithmDescriptor(e, &a));
    TH_CHECK((int)a.algo.convFwdAlgo == 2, "rejected restores leave the descriptor unchanged");
    /* well-formed buffers (valid checksum) with a bad version or a bad value */
    unsigned char c[24];
    memcpy(c, buf, 24);
    c[4] = 2;
    put_le32(c + 20, crc32_test(c, 20));
    TH_STATUS(cudnnRestoreAlgorithm(h, c, 24, e), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(last_error_has("version"), "an unknown version is named");
    memcpy(c, buf, 24);
    put_le32(c + 8, 42);
    put_le32(c + 20, crc32_test(c, 20));
    TH_STATUS(cudnnRestoreAlgorithm(h, c, 24, e), CUDNN_STATUS_BAD_PARAM);
    memcpy(c, buf, 24);
    put_le32(c + 8, (uint32_t)-1);
    put_le32(c + 20, crc32_test(c, 20));
    TH_STATUS(cudnnRestoreAlgorithm(h, c, 24, e), CUDNN_STATUS_BAD_PARAM);
    memcpy(c, buf, 24);
    put_le32(c + 8, 3);
    put_le32(c + 20, crc32_test(c, 20));
    TH_OK(cudnnRestoreAlgorithm(h, c, 24, e)); /* a buffer built from the documented format is accepted */
    TH_OK(cudnnGetAlgorithmDescriptor(e, &a));
    TH_CHECK((int)a.algo.convFwdAlgo == 3, "restored the hand-built buffer");
    TH_OK(cudnnDestroyAlgorithmDescriptor(d));
    TH_OK(cudnnDestroyAlgorithmDescriptor(e));
}

/* ------------------------------------------------------------------ RNN */
static void *dev_copy(const void *host, size_t n)
{
    void *p = th_alloc(h, n ? n : 1);
    if (n) th_upload(h, p, host, n);
    return p;
}
static void down(void *host, const void *dev, size_t n) { th_download(h, host, dev, n); }
static int same_bits(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

static void fill_nan(float *p, long n)
{
    for (long i = 0; i < n; i++) p[i] = NAN;
}

static void test_rnn_algo_desc(void)
{
    cudnnRNNDescriptor_t r;
    TH_OK(cudnnCreateRNNDescriptor(&r));
    TH_OK(cudnnSetRNNDescriptor_v6(h, r, 4, 1, NULL, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM, CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    cudnnAlgorithmDescriptor_t d;
    TH_OK(cudnnCreateAlgorithmDescriptor(&d));
    TH_STATUS(cudnnSetRNNAlgorithmDescriptor(h, r, d), CUDNN_STATUS_BAD_PARAM); /* never set */
    int hs, nl;
    cudnnDropoutDescriptor_t dr;
    cudnnRNNInputMode_t im;
    cudnnDirectionMode_t dm;
    cudnnRNNMode_t cm;
    cudnnRNNAlgo_t al;
    cudnnDataType_t mp;
    for (int v = CUDNN_RNN_ALGO_COUNT - 1; v >= 0; v--) {
        cudnnAlgorithm_t a;
        memset(&a, 0, sizeof a);
        a.algo.RNNAlgo = (cudnnRNNAlgo_t)v;
        TH_OK(cudnnSetAlgorithmDescriptor(d, a));
        TH_OK(cudnnSetRNNAlgorithmDescriptor(h, r, d)); /* the range cudnnSetRNNDescriptor_v6 accepts */
        TH_OK(cudnnGetRNNDescriptor_v6(h, r, &hs, &nl, &dr, &im, &dm, &cm, &al, &mp));
        TH_CHECK((int)al == v && hs == 4 && cm == CUDNN_LSTM, "cudnnSetRNNAlgorithmDescriptor sets algo %d and nothing else", v);
    }
    TH_OK(cudnnSetAlgorithmDescriptor(d, algo_of(CUDNN_RNN_ALGO_COUNT))); /* a valid convolution value, not an RNN one */
    TH_STATUS(cudnnSetRNNAlgorithmDescriptor(h, r, d), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetRNNDescriptor_v6(h, r, &hs, &nl, &dr, &im, &dm, &cm, &al, &mp));
    TH_CHECK(al == CUDNN_RNN_ALGO_STANDARD, "a rejected algorithm leaves the RNN descriptor unchanged");
    TH_STATUS(cudnnSetRNNAlgorithmDescriptor(NULL, r, d), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNAlgorithmDescriptor(h, NULL, d), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNAlgorithmDescriptor(h, r, NULL), CUDNN_STATUS_BAD_PARAM);
    /* the max counts agree: one algorithm */
    int c[4] = {0, 0, 0, 0};
    TH_OK(cudnnGetRNNForwardInferenceAlgorithmMaxCount(h, r, &c[0]));
    TH_OK(cudnnGetRNNForwardTrainingAlgorithmMaxCount(h, r, &c[1]));
    TH_OK(cudnnGetRNNBackwardDataAlgorithmMaxCount(h, r, &c[2]));
    TH_OK(cudnnGetRNNBackwardWeightsAlgorithmMaxCount(h, r, &c[3]));
    TH_CHECK(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 1, "every RNN *AlgorithmMaxCount is 1 (STANDARD)");
    TH_STATUS(cudnnGetRNNForwardTrainingAlgorithmMaxCount(h, r, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroyAlgorithmDescriptor(d));
    TH_OK(cudnnDestroyRNNDescriptor(r));
}

/* Checks one perf result of a Find. */
static void check_perf(cudnnAlgorithmPerformance_t p, size_t want_mem, const char *what)
{
    cudnnAlgorithmDescriptor_t d = NULL;
    cudnnStatus_t st = CUDNN_STATUS_NOT_INITIALIZED;
    float t = -1;
    size_t mem = 0;
    TH_OK(cudnnGetAlgorithmPerformance(p, &d, &st, &t, &mem));
    cudnnAlgorithm_t a;
    memset(&a, 0xff, sizeof a);
    TH_OK(cudnnGetAlgorithmDescriptor(d, &a));
    TH_CHECK(st == CUDNN_STATUS_SUCCESS && t > 0 && t < 60000 && mem == want_mem && a.algo.RNNAlgo == CUDNN_RNN_ALGO_STANDARD,
             "%s perf: status %d, time %g ms, memory %zu (want %zu), algo %d", what, (int)st, (double)t, mem, want_mem, (int)a.algo.RNNAlgo);
}

/* One configuration: every Find*Ex against the plain call, bit for bit. With ref != 0 (one
 * layer, unidirectional, LSTM) also y against the independent reference. */
static void rnn_case(int mode, int L, int D, int H, int in, int N, int maxT, int ref)
{
    int len[8];
    for (int n = 0; n < N; n++) len[n] = th_randint(1, maxT);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (len[j] > len[i]) { int t = len[i]; len[i] = len[j]; len[j] = t; }
    len[0] = maxT;
    int T = maxT;
    char what[96];
    snprintf(what, sizeof what, "mode %d L %d D %d H %d in %d N %d T %d", mode, L, D, H, in, N, T);
    cudnnRNNDescriptor_t r;
    TH_OK(cudnnCreateRNNDescriptor(&r));
    TH_OK(cudnnSetRNNDescriptor_v6(h, r, H, L, NULL, CUDNN_LINEAR_INPUT, D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, (cudnnRNNMode_t)mode,
                                   CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    cudnnTensorDescriptor_t xd[16], yd[16], hd, cd;
    int bt[16];
    long tot = 0;
    for (int t = 0; t < T; t++) {
        int b = 0;
        for (int n = 0; n < N; n++) b += len[n] > t;
        bt[t] = b;
        tot += b;
        int dx[3] = {b, in, 1}, sx[3] = {in, 1, 1}, dy[3] = {b, D * H, 1}, sy[3] = {D * H, 1, 1};
        cudnnCreateTensorDescriptor(&xd[t]);
        cudnnCreateTensorDescriptor(&yd[t]);
        TH_OK(cudnnSetTensorNdDescriptor(xd[t], CUDNN_DATA_FLOAT, 3, dx, sx));
        TH_OK(cudnnSetTensorNdDescriptor(yd[t], CUDNN_DATA_FLOAT, 3, dy, sy));
    }
    int hdim[3] = {L * D, N, H}, hst[3] = {N * H, H, 1};
    cudnnCreateTensorDescriptor(&hd);
    cudnnCreateTensorDescriptor(&cd);
    TH_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, hdim, hst));
    TH_OK(cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 3, hdim, hst));
    size_t wb = 0, wsb = 0, rsb = 0;
    TH_OK(cudnnGetRNNParamsSize(h, r, xd[0], &wb, CUDNN_DATA_FLOAT));
    TH_OK(cudnnGetRNNWorkspaceSize(h, r, T, xd, &wsb));
    TH_OK(cudnnGetRNNTrainingReserveSize(h, r, T, xd, &rsb));
    cudnnFilterDescriptor_t wd;
    cudnnCreateFilterDescriptor(&wd);
    int wdim[3] = {(int)(wb / 4), 1, 1};
    TH_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, wdim));
    long nw = (long)(wb / 4), nx = tot * in, ny = tot * D * H, nh = (long)L * D * N * H;
    float *w = malloc(wb), *x = malloc(nx * 4), *hx = malloc(nh * 4), *cx = malloc(nh * 4), *dy = malloc(ny * 4), *dhy = malloc(nh * 4),
          *dcy = malloc(nh * 4);
    for (long i = 0; i < nw; i++) w[i] = (float)th_uniform(-0.6, 0.6);
    for (long i = 0; i < nx; i++) x[i] = (float)th_uniform(-1, 1);
    for (long i = 0; i < ny; i++) dy[i] = (float)th_uniform(-1, 1);
    for (long i = 0; i < nh; i++) {
        hx[i] = (float)th_uniform(-1, 1);
        cx[i] = (float)th_uniform(-1, 1);
        dhy[i] = (float)th_uniform(-1, 1);
        dcy[i] = (float)th_uniform(-1, 1);
    }
    void *W = dev_copy(w, wb), *X = dev_copy(x, nx * 4), *HX = dev_copy(hx, nh * 4), *CX = dev_copy(cx, nh * 4), *DY = dev_copy(dy, ny * 4),
         *DHY = dev_copy(dhy, nh * 4), *DCY = dev_copy(dcy, nh * 4);
    float *nanbuf = malloc((size_t)(nx > ny ? nx : ny) * 4 + (size_t)nh * 4 + (size_t)nw * 4);
    fill_nan(nanbuf, (nx > ny ? nx : ny) + nh + nw);
    /* plain calls: A; Find calls: B (outputs pre-filled with NaN: Find must write them) */
    void *YA = dev_copy(nanbuf, ny * 4), *HYA = dev_copy(nanbuf, nh * 4), *CYA = dev_copy(nanbuf, nh * 4), *RA = th_alloc(h, rsb),
         *WS = th_alloc(h, wsb);
    void *YB = dev_copy(nanbuf, ny * 4), *HYB = dev_copy(nanbuf, nh * 4), *CYB = dev_copy(nanbuf, nh * 4), *RB = th_alloc(h, rsb);
    cudnnAlgorithmPerformance_t perf[2];
    TH_OK(cudnnCreateAlgorithmPerformance(perf, 2));
    int ret = -1;
    /* forward training */
    TH_OK(cudnnRNNForwardTraining(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YA, hd, HYA, cd, CYA, WS, wsb, RA, rsb));
    TH_OK(cudnnFindRNNForwardTrainingAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YB, hd, HYB, cd, CYB, 1.0f, 2, &ret, perf, WS, wsb, RB, rsb));
    TH_CHECK(ret == 1, "%s: forward training Find returns 1 algorithm (got %d)", what, ret);
    check_perf(perf[0], wsb, "forward training");
    float *ya = malloc(ny * 4), *yb = malloc(ny * 4), *ha = malloc(nh * 4), *hb = malloc(nh * 4), *ca = malloc(nh * 4), *cb = malloc(nh * 4);
    down(ya, YA, ny * 4); down(yb, YB, ny * 4); down(ha, HYA, nh * 4); down(hb, HYB, nh * 4); down(ca, CYA, nh * 4); down(cb, CYB, nh * 4);
    int nz = 0;
    for (long i = 0; i < ny; i++) nz |= ya[i] != 0 && !isnan(ya[i]);
    TH_CHECK(nz && same_bits(ya, yb, ny * 4) && same_bits(ha, hb, nh * 4) && (mode != CUDNN_LSTM || same_bits(ca, cb, nh * 4)),
             "%s: FindRNNForwardTrainingAlgorithmEx writes y, hy, cy identical to cudnnRNNForwardTraining", what);
    if (ref) {
        /* independent reference: the weights through cudnnGetRNNLinLayer*Params (pointer offsets are host-valid) */
        int G = mode == CUDNN_LSTM ? 4 : mode == CUDNN_GRU ? 3 : 1;
        double *wdbl = malloc((size_t)nw * sizeof(double));
        for (long i = 0; i < nw; i++) wdbl[i] = w[i];
        ref_rnn_layer ly;
        memset(&ly, 0, sizeof ly);
        cudnnFilterDescriptor_t md;
        cudnnCreateFilterDescriptor(&md);
        for (int id = 0; id < 2 * G; id++) {
            void *m = NULL, *b = NULL;
            TH_OK(cudnnGetRNNLinLayerMatrixParams(h, r, 0, xd[0], wd, w, id, md, &m));
            TH_OK(cudnnGetRNNLinLayerBiasParams(h, r, 0, xd[0], wd, w, id, md, &b));
            const double *pm = wdbl + ((float *)m - w), *pb = wdbl + ((float *)b - w);
            if (id < G) { ly.W[id] = pm; ly.bW[id] = pb; }
            else { ly.R[id - G] = pm; ly.bR[id - G] = pb; }
        }
        cudnnDestroyFilterDescriptor(md);
        ref_rnn m;
        memset(&m, 0, sizeof m);
        m.mode = mode; /* the reference restates the same mode numbers */
        m.H = H; m.P = H; m.L = 1; m.D = 1; m.in0 = in; m.layers = &ly;
        double *rx = calloc((size_t)T * N * in, sizeof(double)), *ry = calloc((size_t)T * N * H, sizeof(double)), *rhx = malloc((size_t)N * H * sizeof(double)),
               *rcx = malloc((size_t)N * H * sizeof(double)), *rhy = calloc((size_t)N * H, sizeof(double)), *rcy = calloc((size_t)N * H, sizeof(double));
        long row = 0;
        for (int t = 0; t < T; t++)
            for (int n = 0; n < bt[t]; n++, row++)
                for (int v = 0; v < in; v++) rx[((long)t * N + n) * in + v] = x[row * in + v];
        for (long i = 0; i < (long)N * H; i++) { rhx[i] = hx[i]; rcx[i] = cx[i]; }
        ref_rnn_forward(&m, T, N, len, rx, rhx, rcx, ry, rhy, rcy);
        double *got = malloc((size_t)ny * sizeof(double)), *want = malloc((size_t)ny * sizeof(double));
        row = 0;
        for (int t = 0; t < T; t++)
            for (int n = 0; n < bt[t]; n++, row++)
                for (int v = 0; v < H; v++) {
                    got[row * H + v] = yb[row * H + v];
                    want[row * H + v] = ry[((long)t * N + n) * H + v];
                }
        th_compare("Find forward training y vs reference", got, want, (size_t)ny, th_is_gpu(h) ? 2e-5 : 2e-6);
        for (long i = 0; i < (long)N * H; i++) { got[i] = hb[i]; want[i] = rhy[i]; }
        th_compare("Find forward training hy vs reference", got, want, (size_t)N * H, th_is_gpu(h) ? 2e-5 : 2e-6);
        free(wdbl); free(rx); free(ry); free(rhx); free(rcx); free(rhy); free(rcy); free(got); free(want);
    }
    /* forward inference */
    void *YI = dev_copy(nanbuf, ny * 4), *HYI = dev_copy(nanbuf, nh * 4), *CYI = dev_copy(nanbuf, nh * 4);
    void *YJ = dev_copy(nanbuf, ny * 4), *HYJ = dev_copy(nanbuf, nh * 4), *CYJ = dev_copy(nanbuf, nh * 4);
    TH_OK(cudnnRNNForwardInference(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YI, hd, HYI, cd, CYI, WS, wsb));
    ret = -1;
    TH_OK(cudnnFindRNNForwardInferenceAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YJ, hd, HYJ, cd, CYJ, -0.5f, 1, &ret, perf + 1, WS, wsb));
    TH_CHECK(ret == 1, "forward inference Find returns 1");
    check_perf(perf[1], wsb, "forward inference");
    down(ya, YI, ny * 4); down(yb, YJ, ny * 4); down(ha, HYI, nh * 4); down(hb, HYJ, nh * 4); down(ca, CYI, nh * 4); down(cb, CYJ, nh * 4);
    TH_CHECK(same_bits(ya, yb, ny * 4) && same_bits(ha, hb, nh * 4) && (mode != CUDNN_LSTM || same_bits(ca, cb, nh * 4)),
             "%s: FindRNNForwardInferenceAlgorithmEx identical to cudnnRNNForwardInference", what);
    /* backward data (each from its own forward's reserve space) */
    void *DXA = dev_copy(nanbuf, nx * 4), *DHXA = dev_copy(nanbuf, nh * 4), *DCXA = dev_copy(nanbuf, nh * 4);
    void *DXB = dev_copy(nanbuf, nx * 4), *DHXB = dev_copy(nanbuf, nh * 4), *DCXB = dev_copy(nanbuf, nh * 4);
    TH_OK(cudnnRNNBackwardData(h, r, T, yd, YA, yd, DY, hd, DHY, cd, DCY, wd, W, hd, HX, cd, CX, xd, DXA, hd, DHXA, cd, DCXA, WS, wsb, RA, rsb));
    ret = -1;
    TH_OK(cudnnFindRNNBackwardDataAlgorithmEx(h, r, T, yd, YB, yd, DY, hd, DHY, cd, DCY, wd, W, hd, HX, cd, CX, xd, DXB, hd, DHXB, cd, DCXB, 1.0f, 1, &ret,
                                              perf, WS, wsb, RB, rsb));
    TH_CHECK(ret == 1, "backward data Find returns 1");
    check_perf(perf[0], wsb, "backward data");
    float *dxa = malloc(nx * 4), *dxb = malloc(nx * 4);
    down(dxa, DXA, nx * 4); down(dxb, DXB, nx * 4); down(ha, DHXA, nh * 4); down(hb, DHXB, nh * 4); down(ca, DCXA, nh * 4); down(cb, DCXB, nh * 4);
    nz = 0;
    for (long i = 0; i < nx; i++) nz |= dxa[i] != 0 && !isnan(dxa[i]);
    TH_CHECK(nz && same_bits(dxa, dxb, nx * 4) && same_bits(ha, hb, nh * 4) && (mode != CUDNN_LSTM || same_bits(ca, cb, nh * 4)),
             "%s: FindRNNBackwardDataAlgorithmEx writes dx, dhx, dcx identical to cudnnRNNBackwardData", what);
    /* backward weights: both accumulate into the same starting dw */
    float *dw0 = malloc(wb), *dwa = malloc(wb), *dwb = malloc(wb);
    for (long i = 0; i < nw; i++) dw0[i] = (float)th_randint(-3, 3);
    void *DWA = dev_copy(dw0, wb), *DWB = dev_copy(dw0, wb);
    TH_OK(cudnnRNNBackwardWeights(h, r, T, xd, X, hd, HX, yd, YA, WS, wsb, wd, DWA, RA, rsb));
    ret = -1;
    TH_OK(cudnnFindRNNBackwardWeightsAlgorithmEx(h, r, T, xd, X, hd, HX, yd, YB, 1.0f, 1, &ret, perf, WS, wsb, wd, DWB, RB, rsb));
    TH_CHECK(ret == 1, "backward weights Find returns 1");
    check_perf(perf[0], wsb, "backward weights");
    down(dwa, DWA, wb); down(dwb, DWB, wb);
    int changed = 0;
    for (long i = 0; i < nw; i++) changed |= dwa[i] != dw0[i];
    TH_CHECK(changed && same_bits(dwa, dwb, wb), "%s: FindRNNBackwardWeightsAlgorithmEx accumulates dw identically to cudnnRNNBackwardWeights", what);
    /* error paths: nothing is run or written */
    void *YC = dev_copy(nanbuf, ny * 4);
    cudnnAlgorithmPerformance_t fresh[1];
    TH_OK(cudnnCreateAlgorithmPerformance(fresh, 1));
    ret = -7;
    TH_STATUS(cudnnFindRNNForwardTrainingAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YC, hd, HYB, cd, CYB, 1.0f, 0, &ret, fresh, WS, wsb, RB, rsb),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindRNNForwardTrainingAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YC, hd, HYB, cd, CYB, 1.0f, -1, &ret, fresh, WS, wsb, RB, rsb),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindRNNForwardTrainingAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YC, hd, HYB, cd, CYB, 1.0f, 1, NULL, fresh, WS, wsb, RB, rsb),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindRNNForwardTrainingAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YC, hd, HYB, cd, CYB, 1.0f, 1, &ret, NULL, WS, wsb, RB, rsb),
              CUDNN_STATUS_BAD_PARAM);
    cudnnAlgorithmPerformance_t nullperf[1] = {NULL};
    TH_STATUS(cudnnFindRNNForwardTrainingAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YC, hd, HYB, cd, CYB, 1.0f, 1, &ret, nullperf, WS, wsb, RB,
                                                     rsb),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindRNNForwardTrainingAlgorithmEx(h, r, T, xd, X, hd, HX, cd, CX, wd, W, yd, YC, hd, HYB, cd, CYB, 1.0f, 1, &ret, fresh, WS, wsb, RB,
                                                     rsb - 1),
              CUDNN_STATUS_BAD_PARAM); /* reserve too small */
    TH_STATUS(cudnnFindRNNForwardInferenceAlgorithmEx(h, r, 0, xd, X, hd, HX, cd, CX, wd, W, yd, YC, hd, HYB, cd, CYB, 1.0f, 1, &ret, fresh, WS, wsb),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindRNNBackwardDataAlgorithmEx(h, r, T, yd, YB, yd, DY, hd, DHY, cd, DCY, wd, W, hd, HX, cd, CX, xd, DXB, hd, DHXB, cd, DCXB, 1.0f, 0,
                                                  &ret, fresh, WS, wsb, RB, rsb),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindRNNBackwardWeightsAlgorithmEx(h, r, T, xd, X, hd, HX, yd, YB, 1.0f, 1, &ret, fresh, WS, wsb, wd, NULL, RB, rsb), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindRNNBackwardWeightsAlgorithmEx(NULL, r, T, xd, X, hd, HX, yd, YB, 1.0f, 1, &ret, fresh, WS, wsb, wd, DWB, RB, rsb),
              CUDNN_STATUS_BAD_PARAM);
    down(ya, YC, ny * 4);
    int untouched = ret == -7;
    for (long i = 0; i < ny; i++) untouched &= isnan(ya[i]);
    cudnnAlgorithmDescriptor_t fd;
    cudnnStatus_t fst;
    float ft;
    size_t fm;
    TH_OK(cudnnGetAlgorithmPerformance(fresh[0], &fd, &fst, &ft, &fm));
    TH_CHECK(untouched && fst == CUDNN_STATUS_NOT_INITIALIZED, "rejected Finds write neither y, returnedAlgoCount nor the perf results");
    /* the found algorithm goes back into the RNN descriptor */
    cudnnAlgorithmDescriptor_t best;
    cudnnStatus_t bst;
    float btime;
    size_t bmem;
    TH_OK(cudnnGetAlgorithmPerformance(perf[1], &best, &bst, &btime, &bmem));
    TH_OK(cudnnSetRNNAlgorithmDescriptor(h, r, best));
    TH_OK(cudnnDestroyAlgorithmPerformance(fresh, 1));
    TH_OK(cudnnDestroyAlgorithmPerformance(perf, 2));
    void *bufs[] = {W, X, HX, CX, DY, DHY, DCY, YA, HYA, CYA, RA, WS, YB, HYB, CYB, RB, YI, HYI, CYI, YJ, HYJ, CYJ, DXA, DHXA, DCXA, DXB, DHXB, DCXB, DWA, DWB, YC};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) th_free(h, bufs[i]);
    free(w); free(x); free(hx); free(cx); free(dy); free(dhy); free(dcy); free(nanbuf); free(ya); free(yb); free(ha); free(hb); free(ca); free(cb);
    free(dxa); free(dxb); free(dw0); free(dwa); free(dwb);
    for (int t = 0; t < T; t++) { cudnnDestroyTensorDescriptor(xd[t]); cudnnDestroyTensorDescriptor(yd[t]); }
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyTensorDescriptor(cd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyRNNDescriptor(r);
}

int main(void)
{
    th_seed(20261130);
    h = th_create_handle();
    test_descriptors();
    test_performance();
    test_save_restore();
    test_rnn_algo_desc();
    rnn_case(CUDNN_LSTM, 1, 1, 5, 4, 3, 4, 1); /* against the reference */
    rnn_case(CUDNN_LSTM, 2, th_randint(1, 2), th_randint(3, 8), th_randint(2, 6), 3, 5, 0);
    rnn_case(CUDNN_GRU, 2, th_randint(1, 2), th_randint(3, 8), th_randint(2, 6), 4, 5, 0);
    rnn_case(CUDNN_RNN_TANH, 2, 2, 4, 3, 2, 3, 0);
    cudnnDestroy(h);
    return th_finish();
}
