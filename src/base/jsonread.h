/*
 * jsonread.h - strict, path-aware reading of JSON input files (internal).
 *
 * Every getter takes the object, the key path of that object ("" for the root,
 * "tiers[1]", ...) and the key, and on failure fills the ppl_error with the file,
 * the full key path ("tiers[1].servers") and a message of the form
 * "expected <what>, found <value>".  Optional keys that are absent or null take
 * their default.  Unknown keys are reported as warnings, with a suggestion when a
 * known key is a small edit away.
 */
#ifndef PARPLAN_JSONREAD_H
#define PARPLAN_JSONREAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "parplan/error.h"
#include "base/units.h"

typedef struct ppl_jr_ctx {
    const char *file; /* as shown to the user */
    ppl_error *err;
    const ppl_diag *diag;
} ppl_jr_ctx;

typedef enum ppl_jr_need { PPL_JR_OPTIONAL = 0, PPL_JR_REQUIRED = 1 } ppl_jr_need;

/* The accepted interval of a real value; open ends exclude the bound. */
typedef struct ppl_jr_range {
    double min, max;
    bool min_open, max_open;
} ppl_jr_range;

#define PPL_JR_POSITIVE(max) ((ppl_jr_range){0.0, (max), true, false})
#define PPL_JR_NON_NEGATIVE(max) ((ppl_jr_range){0.0, (max), false, false})
#define PPL_JR_BETWEEN(min, max) ((ppl_jr_range){(min), (max), false, false})
#define PPL_JR_FRACTION ((ppl_jr_range){0.0, 1.0, false, true}) /* 0 <= x < 1 */

/* Reads and parses a whole file, regular or a pipe (waited on for at most 10 s
 * between bytes), of at most 64 MiB; syntax errors carry line and column.  A pipe
 * read before gives the document it gave then. */
json_t *ppl_jr_load_file(ppl_jr_ctx *ctx, const char *path);
/* Frees the documents kept of the pipes read. */
void ppl_jr_release(void);
/* ppl_jr_load_file for a caller with no context of its own: *doc, or NULL and
 * PPL_EINPUT with the error naming path. */
ppl_status ppl_jr_read(const char *path, const ppl_diag *diag, json_t **doc, ppl_error *err);
/* A copy of doc whose "name" is name (what a loader named the object it read);
 * NULL when memory runs out. */
json_t *ppl_jr_named_copy(const json_t *doc, const char *name);

/* "parent.key" (or "key" at the root) and "parent[i]". */
void ppl_jr_path(char *out, size_t size, const char *parent, const char *key);
void ppl_jr_index(char *out, size_t size, const char *parent, size_t index);

/* The stem of a file name, the default name of a model or topology:
 * "models/gpt3-175b.json" -> "gpt3-175b". */
void ppl_jr_file_stem(const char *path, char *out, size_t size);
/* Copies the first n bytes of text into out (of size bytes) as a name: cut, where
 * it must be, at a character's start (UTF-8), and a control character shown as
 * '?', so that a name never breaks the JSON or the terminal it is printed to. */
void ppl_jr_name_copy(char *out, size_t size, const char *text, size_t n);

/* Renders a JSON value compactly for messages, truncated to fit. */
void ppl_jr_describe(const json_t *value, char *buf, size_t size);

ppl_status ppl_jr_fail(ppl_jr_ctx *ctx, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
ppl_status ppl_jr_expect_object(ppl_jr_ctx *ctx, const json_t *value, const char *path);
void ppl_jr_warn_unknown_keys(ppl_jr_ctx *ctx, const json_t *obj, const char *path,
                              const char *const *known);

/* The value at key, or NULL when absent or null (after checking the need). */
ppl_status ppl_jr_get(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                      ppl_jr_need need, json_t **out);

/* The object at key, its keys checked against known (NULL-terminated; unknown ones
 * warn); *out is NULL when an optional object is absent.  sub_path receives the
 * object's key path for the reads that follow. */
ppl_status ppl_jr_object(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                         ppl_jr_need need, const char *const *known, json_t **out, char *sub_path,
                         size_t sub_size);

ppl_status ppl_jr_int(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                      ppl_jr_need need, int64_t def, int64_t min, int64_t max, int64_t *out);
ppl_status ppl_jr_real(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                       ppl_jr_need need, double def, ppl_jr_range range, double *out);
ppl_status ppl_jr_quantity(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                           ppl_unit unit, ppl_jr_need need, double def, ppl_jr_range range,
                           double *out);
ppl_status ppl_jr_bool(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                       ppl_jr_need need, bool def, bool *out);
ppl_status ppl_jr_string(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                         ppl_jr_need need, const char *def, char *buf, size_t size);
/* names is NULL-terminated; out is the index of the match. */
ppl_status ppl_jr_enum(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                       ppl_jr_need need, const char *const *names, int def, int *out);

/* schema_version: 1, 1.x, "1" or "1.x"; absent means 1; another major is an error. */
ppl_status ppl_jr_schema_version(ppl_jr_ctx *ctx, const json_t *obj, const char *path);

/* Quantity from a JSON value already in hand (number in base units or unit string). */
ppl_status ppl_jr_quantity_value(ppl_jr_ctx *ctx, const json_t *value, const char *path,
                                 ppl_unit unit, ppl_jr_range range, double *out);

#endif
