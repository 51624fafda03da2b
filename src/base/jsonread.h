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
#include "parplan/units.h"

typedef struct jr_ctx {
    const char *file; /* as shown to the user */
    ppl_error *err;
    const ppl_diag *diag;
} jr_ctx;

typedef enum jr_need { JR_OPTIONAL = 0, JR_REQUIRED = 1 } jr_need;

/* The accepted interval of a real value; open ends exclude the bound. */
typedef struct jr_range {
    double min, max;
    bool min_open, max_open;
} jr_range;

#define JR_POSITIVE(max) ((jr_range){0.0, (max), true, false})
#define JR_NON_NEGATIVE(max) ((jr_range){0.0, (max), false, false})
#define JR_BETWEEN(min, max) ((jr_range){(min), (max), false, false})
#define JR_FRACTION ((jr_range){0.0, 1.0, false, true}) /* 0 <= x < 1 */

/* Reads and parses a whole file; syntax errors carry line and column. */
json_t *jr_load_file(jr_ctx *ctx, const char *path);

/* "parent.key" (or "key" at the root) and "parent[i]". */
void jr_path(char *out, size_t size, const char *parent, const char *key);
void jr_index(char *out, size_t size, const char *parent, size_t index);

/* The stem of a file name, the default name of a model or topology:
 * "models/gpt3-175b.json" -> "gpt3-175b". */
void jr_file_stem(const char *path, char *out, size_t size);

/* Renders a JSON value compactly for messages, truncated to fit. */
void jr_describe(const json_t *value, char *buf, size_t size);

ppl_status jr_fail(jr_ctx *ctx, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
ppl_status jr_expect_object(jr_ctx *ctx, const json_t *value, const char *path);
void jr_warn_unknown_keys(jr_ctx *ctx, const json_t *obj, const char *path,
                          const char *const *known);

/* The value at key, or NULL when absent or null (after checking the need). */
ppl_status jr_get(jr_ctx *ctx, const json_t *obj, const char *path, const char *key, jr_need need,
                  json_t **out);

/* The object at key, its keys checked against known (NULL-terminated; unknown ones
 * warn); *out is NULL when an optional object is absent.  sub_path receives the
 * object's key path for the reads that follow. */
ppl_status jr_object(jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                     jr_need need, const char *const *known, json_t **out, char *sub_path,
                     size_t sub_size);

ppl_status jr_int(jr_ctx *ctx, const json_t *obj, const char *path, const char *key, jr_need need,
                  int64_t def, int64_t min, int64_t max, int64_t *out);
ppl_status jr_real(jr_ctx *ctx, const json_t *obj, const char *path, const char *key, jr_need need,
                   double def, jr_range range, double *out);
ppl_status jr_quantity(jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                       ppl_unit unit, jr_need need, double def, jr_range range, double *out);
ppl_status jr_bool(jr_ctx *ctx, const json_t *obj, const char *path, const char *key, jr_need need,
                   bool def, bool *out);
ppl_status jr_string(jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                     jr_need need, const char *def, char *buf, size_t size);
/* names is NULL-terminated; out is the index of the match. */
ppl_status jr_enum(jr_ctx *ctx, const json_t *obj, const char *path, const char *key, jr_need need,
                   const char *const *names, int def, int *out);

/* schema_version: 1, 1.x, "1" or "1.x"; absent means 1; another major is an error. */
ppl_status jr_schema_version(jr_ctx *ctx, const json_t *obj, const char *path);

/* Quantity from a JSON value already in hand (number in base units or unit string). */
ppl_status jr_quantity_value(jr_ctx *ctx, const json_t *value, const char *path, ppl_unit unit,
                             jr_range range, double *out);

#endif
