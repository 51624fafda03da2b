/*
 * base/output.h - building output and writing it whole.
 *
 * Commands render into a ppl_buf; only when the whole document is ready is it
 * written, to stdout or atomically to a file (temporary file in the same
 * directory, then rename), so a failure never leaves half an output behind.
 * Tables are aligned by ppl_table; JSON documents start with the SPEC header.
 */
#ifndef PARPLAN_OUTPUT_H
#define PARPLAN_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "parplan/error.h"

struct json_t;

#define PPL_VERSION_STRING_MAX 32

typedef struct ppl_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the content is incomplete */
} ppl_buf;

void ppl_buf_init(ppl_buf *buf);
void ppl_buf_free(ppl_buf *buf);
void ppl_buf_append(ppl_buf *buf, const char *text, size_t len);
void ppl_buf_printf(ppl_buf *buf, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Writes buf to stdout (path NULL or "-") or to path, never half:
 *   - a regular file is replaced atomically (a temporary file beside it, renamed
 *     over it) keeping its mode and, where the process may set it, its owner; one
 *     with other hard links, or in a directory that takes no new file, is
 *     rewritten in place after its new length is reserved;
 *   - a symbolic link is followed: the file it names is written;
 *   - a FIFO or device (-o /dev/null) is written through, never replaced;
 *   - a directory is a usage error (PPL_EUSAGE);
 * a write that fails (full disk, file-size limit) leaves the old file as it was
 * and no temporary file behind (PPL_EINTERNAL). */
ppl_status ppl_output_write(const char *path, const ppl_buf *buf, ppl_error *err);

/* PPL_EUSAGE when path cannot be an output at all (a directory): checked before a
 * command's work, so a long search does not end in a refused write. */
ppl_status ppl_output_check(const char *path, ppl_error *err);

/* True when both paths exist and name the same file (after symbolic links). */
bool ppl_same_file(const char *a, const char *b);

/* Returns the parplan version ("0.1.0"). */
const char *ppl_version(void);

/* A new JSON object with "schema_version" and "tool" set (SPEC "Output JSON"). */
struct json_t *ppl_json_document(void);
/* A JSON number; null for NaN or an infinity, so that a key is never dropped
 * (callers check figures finite first: see ppl_estimate_check). */
struct json_t *ppl_json_real(double value);
/* Appends the document, indented, with stable number formatting and a newline. */
void ppl_json_render(const struct json_t *doc, ppl_buf *buf);

/* Aligned text tables: the first row is the header; columns listed in
 * right_align (a string of 'l'/'r' per column) are aligned accordingly. */
#define PPL_TABLE_MAX_COLS 24
typedef struct ppl_table {
    size_t ncols;
    size_t nrows, cap;
    char **cells; /* nrows * ncols, owned */
    const char *align;
    bool failed;
} ppl_table;

void ppl_table_init(ppl_table *t, size_t ncols, const char *align);
void ppl_table_row(ppl_table *t, const char *const *cells);
/* The same from ncols fixed-width strings laid out one after another, `width`
 * bytes apart (a char cells[ncols][width] array). */
void ppl_table_row_fixed(ppl_table *t, const char *cells, size_t width);
void ppl_table_render(const ppl_table *t, ppl_buf *buf, const char *indent);
void ppl_table_free(ppl_table *t);

#endif
