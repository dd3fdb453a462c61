/*
 * npy.h - NumPy .npy files (format versions 1.0, 2.0 and 3.0): the tensors a designer brings in
 * and takes out of `npu` runs. Little-endian signed integers of 2, 4 or 8 bytes ('<i2', '<i4',
 * '<i8'), C order, up to NPU_NPY_MAX_DIMS dimensions: what the NPU's int16 operands and int32
 * results need. Anything else (another dtype, big-endian, Fortran order, a truncated or malformed
 * file) is refused with a message that names what was found and what is accepted.
 *
 * The format (numpy.lib.format): "\x93NUMPY", major, minor, the header length (2 bytes LE in
 * 1.0, 4 in 2.0 / 3.0), a Python dict literal {'descr': '<i2', 'fortran_order': False,
 * 'shape': (3, 4), } padded with spaces and a newline so the data starts at a multiple of 64.
 */
#ifndef NPU_NPY_H
#define NPU_NPY_H

#include <stddef.h>
#include <stdint.h>

#define NPU_NPY_MAX_DIMS 8

typedef struct npu_npy {
    int elem;                          /* element bytes: 2, 4 or 8 (signed, little-endian) */
    int ndim;
    int64_t shape[NPU_NPY_MAX_DIMS];
    size_t count;                      /* elements: the product of shape (1 for a 0-d array) */
    void *data;                        /* count elements as int16_t / int32_t / int64_t (malloc) */
} npu_npy_t;

/* Parses a whole .npy file held in buf[0..n). 0, or -1 with the reason in err (a->data NULL). */
int npu_npy_parse(const unsigned char *buf, size_t n, npu_npy_t *a, char *err, size_t errn);
/* Reads path and parses it. 0, or -1 with the reason in err (naming the file). */
int npu_npy_load(const char *path, npu_npy_t *a, char *err, size_t errn);
/* The file as a 2-D int16 matrix (the NPU's operand type): 0 with *rows, *cols and *data
 * (malloc'd, the caller frees), or -1 naming the dtype or rank found. */
int npu_npy_load_i16_2d(const char *path, int *rows, int *cols, int16_t **data, char *err,
                        size_t errn);
/* Writes count = prod(shape) elements of elem bytes (2, 4, 8) as a version 1.0 file, C order.
 * 0, or -1 with the reason in err. */
int npu_npy_save(const char *path, int elem, int ndim, const int64_t *shape, const void *data,
                 char *err, size_t errn);
void npu_npy_free(npu_npy_t *a);

#endif
