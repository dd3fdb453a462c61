/* file.h - a whole file into memory, for the loaders of io/npy.h and run/progfile.h (which parse
 * from memory, so their parsers are fuzzed without files). */
#ifndef NPU_IO_FILE_H
#define NPU_IO_FILE_H

#include <stddef.h>

/* The whole file at path (pipes too) into *buf (malloc'd, the caller frees it, also on failure)
 * and *n. 0, or -1 with the reason, naming the file, in err. */
int npu_read_file(const char *path, unsigned char **buf, size_t *n, char *err, size_t errn);

/* path read whole and handed to parse (buf, n, obj, err, errn); 0, or -1 with the reason in err,
 * prefixed with the path when parse refused the contents. */
/* The loaders' refusal: the printf-style reason into err (nothing when errn is 0); returns -1. */
int npu_io_fail(char *err, size_t errn, const char *fmt, ...);

/* A file shipped in the repository (rel, e.g. "sw/data/digits.csv.gz"): found from the working
 * directory, else from the executable's (build/<config>/npu, two folders below the top). Writes
 * the path into out; 0, or -1 when neither exists (out: rel). */
int npu_repo_file(const char *rel, char *out, size_t n);

typedef int (*npu_parse_fn)(const unsigned char *buf, size_t n, void *obj, char *err, size_t errn);
int npu_load_file(const char *path, npu_parse_fn parse, void *obj, char *err, size_t errn);

#endif
