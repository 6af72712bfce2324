/*
 * FreeDNN - open implementation of the cuDNN 8.9 C API.
 * cudnn.h: umbrella header; pulls in the version header and all seven
 * sub-library headers, exactly like the cuDNN 8.9 layout.
 */

#ifndef CUDNN_H_
#define CUDNN_H_

#include "cudnn_version.h"
#include "cudnn_ops_infer.h"
#include "cudnn_ops_train.h"
#include "cudnn_cnn_infer.h"
#include "cudnn_cnn_train.h"
#include "cudnn_adv_infer.h"
#include "cudnn_adv_train.h"
#include "cudnn_backend.h"

#endif /* CUDNN_H_ */
