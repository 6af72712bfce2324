/* FreeDNN's independent test reference: plain loops over explicit strides, accumulating in
 * double. It includes nothing from src/ and nothing from the cuDNN headers: enums it needs
 * are restated as its own constants, so a wrong value in the library cannot leak in. */
#ifndef FDNN_TEST_REF_H
#define FDNN_TEST_REF_H
#include <stdint.h>
#include <stddef.h>

/* A strided view of a tensor of doubles: up to 8 dims, strides in elements. */
typedef struct ref_tensor {
    int nd;
    int dim[8];
    int64_t stride[8];
} ref_tensor;

/* Packed strides for dims in N,C,spatial... order; channels_last selects N,spatial...,C. */
void ref_packed(ref_tensor *t, int nd, const int *dim, int channels_last);
int64_t ref_elems(const ref_tensor *t);
int64_t ref_span(const ref_tensor *t);
#endif
