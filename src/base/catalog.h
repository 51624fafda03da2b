/*
 * base/catalog.h - finding model and topology files by name.
 *
 * `--model gpt3-175b` names models/gpt3-175b.json in the catalogue.  The catalogue
 * directory is, in order: $PARPLAN_DATA_DIR (holding models/ and topologies/); the
 * source tree when the running binary is the one in the build tree; the installed
 * data directory (<prefix>/share/parplan) otherwise.  An argument that contains a
 * '/' or ends in ".json" is a path and is used as it is.
 */
#ifndef PARPLAN_CATALOG_H
#define PARPLAN_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "parplan/error.h"

typedef enum ppl_catalog_kind {
    PPL_CATALOG_MODELS = 0,
    PPL_CATALOG_TOPOLOGIES = 1
} ppl_catalog_kind;

/* The catalogue file of a name, and only of a name (never a path): false when the
 * catalogue has none. */
bool ppl_catalog_find(ppl_catalog_kind kind, const char *name, char *path, size_t size);

/* Maps a name or path to a readable file path: PPL_EINPUT for a path that names
 * nothing, PPL_EUSAGE for a name that is neither in the catalogue nor a file. */
ppl_status ppl_catalog_resolve(ppl_catalog_kind kind, const char *arg, char *path, size_t size,
                               ppl_error *err);

/* Sorted catalogue names (file stems); free with ppl_catalog_free. */
ppl_status ppl_catalog_list(ppl_catalog_kind kind, char ***names, size_t *count, ppl_error *err);
void ppl_catalog_free(char **names, size_t count);

#endif
