/*
 * parplan/error.h - status codes and the error record every library call fills.
 *
 * Library functions never print and never exit: they return a ppl_status and,
 * on failure, describe the problem in a caller-allocated ppl_error (file,
 * line/column for syntax errors, key path for schema errors, and a message that
 * says what was expected and what was found).  Only the command-line front end
 * turns an error into one line on stderr and an exit code.
 */
#ifndef PARPLAN_ERROR_H
#define PARPLAN_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses fixed by the SPEC; library calls return the same numbers. */
typedef enum ppl_status {
    PPL_OK = 0,         /* success */
    PPL_INFEASIBLE = 1, /* ran, but nothing feasible */
    PPL_EUSAGE = 2,     /* bad flag or value */
    PPL_EINPUT = 3,     /* invalid input file: parse or schema error */
    PPL_EINTERNAL = 4   /* solver error, out of memory, write failure, not built yet */
} ppl_status;

/* Sizes of a name (model, topology, tier, GPU) and of a source citation, with
 * the terminating NUL: loaders refuse longer ones. */
#define PPL_NAME_MAX 64
#define PPL_SOURCE_MAX 4096

#define PPL_ERROR_FILE_MAX 512
#define PPL_ERROR_KEY_MAX 256
#define PPL_ERROR_MSG_MAX 512

typedef struct ppl_error {
    ppl_status status;
    char file[PPL_ERROR_FILE_MAX]; /* "" when the error is not about a file */
    int line;                      /* 1-based; 0 when not a syntax error */
    int column;                    /* 1-based; 0 when unknown */
    char key[PPL_ERROR_KEY_MAX];   /* key path such as "tiers[1].servers", or "" */
    char message[PPL_ERROR_MSG_MAX];
} ppl_error;

/* Warnings (unknown keys, cross-check mismatches) go through a callback so the
 * library stays silent; a NULL callback drops them. */
typedef void (*ppl_warn_fn)(void *ctx, const char *file, const char *key, const char *message);

typedef struct ppl_diag {
    ppl_warn_fn warn;
    void *ctx;
} ppl_diag;

void ppl_error_clear(ppl_error *err);

/* Fills err and returns status; message is printf-style. */
ppl_status ppl_error_set(ppl_error *err, ppl_status status, const char *file, const char *key,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* "file:line:col: message", "file: key: message", "key: message" or "message". */
void ppl_error_format(const ppl_error *err, char *buf, size_t size);

void ppl_diag_warn(const ppl_diag *diag, const char *file, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
