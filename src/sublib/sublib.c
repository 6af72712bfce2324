/* Body of the six cuDNN 8 sub-library files (libcudnn_ops_infer.so.8, ...). Everything is
 * implemented in libcudnn.so.8, which each of them depends on; they exist so that programs
 * and loaders that probe for the v8 file names find them. */
const char freednn_sublib_name[] = FDNN_SUBLIB_NAME;
