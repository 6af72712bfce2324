/* Independent CTC reference: forward-backward recursion in log space, double precision. */
#ifndef FDNN_CTC_REF_H
#define FDNN_CTC_REF_H
/* act: T x A activations (row t at act[t*A]); softmax=1: act are pre-softmax activations,
 * else probabilities. Blank = 0. Returns the loss -log p(label|x) (INFINITY if no alignment)
 * and, if grad != NULL, the gradient (T x A; rows t >= Tn are 0). softmax=1: d loss / d activation,
 * y - gamma (gamma = posterior occupancy of the symbol at t). softmax=0 (NVIDIA's measured rule
 * for CUDNN_LOSS_NORMALIZATION_NONE): -gamma/y = d loss / d y where gamma > 0, and y itself
 * (not a derivative) where gamma == 0. */
double ref_ctc(const double *act, int Tn, int T, int A, const int *label, int L, int softmax, double *grad);
#endif
