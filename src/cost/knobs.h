/*
 * cost/knobs.h - the knob registry: one row per knob of a configuration.
 *
 * A row says what the knob is called (ppl_pins' field, the key of a configuration
 * object in JSON, the key errors give; the command line's flag is the name with
 * '-' for '_'), the kind and range of its values, where a pin of it lives in
 * ppl_pins, which files may state it (measured runs, plan files) and with what
 * default, when a configuration's JSON carries it, and how a plan's difference
 * from another shows it.  The command line's options, the runs reader, the
 * plan-file reader, the configuration's JSON, the diff and the library's
 * ppl_knobs_set all read these rows: adding a knob is a field in ppl_pins and
 * ppl_config, its row here, and its physics.
 */
#ifndef PARPLAN_KNOBS_H
#define PARPLAN_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jsonread.h"
#include "cost/config.h"
#include "parplan/error.h"
#include "model/model.h"

struct json_t;

typedef enum ppl_knob_kind {
    PPL_KNOB_INT,  /* int64_t in ppl_pins */
    PPL_KNOB_ENUM, /* int in ppl_pins: an index into values */
    PPL_KNOB_BOOL, /* int in ppl_pins: 0 or 1 */
    PPL_KNOB_SHARE /* double in ppl_pins: 0 to 1 */
} ppl_knob_kind;

/* Whether a file's configuration object may state the knob. */
typedef enum ppl_knob_read {
    PPL_KNOB_UNREAD = 0, /* the file has no such key */
    PPL_KNOB_OPTIONAL,
    PPL_KNOB_REQUIRED
} ppl_knob_read;

/* A configuration's value of a knob, as its JSON and its diff show it. */
typedef struct ppl_knob_value {
    ppl_knob_kind kind;
    bool null;        /* JSON null (recompute_layers when every layer is recomputed) */
    int64_t i;        /* INT */
    double share;     /* SHARE */
    bool on;          /* BOOL */
    const char *word; /* ENUM */
} ppl_knob_value;

typedef struct ppl_knob {
    const char *name;
    ppl_knob_kind kind;
    size_t pin;                /* offsetof(ppl_pins, field) */
    const char *const *values; /* ENUM: its words, in enum order, NULL-terminated */
    int64_t min, max;          /* INT: the range a pin may take */
    ppl_knob_read runs;        /* a measured run's config (runs.h): what it omits is searched */
    ppl_knob_read plan;        /* a plan file's config (plan --json): what it omits takes... */
    double plan_default;       /* ...this (an integer, an enum index, 0/1 or a share);
                                  PPL_UNSET: left free */
    /* the configuration's value; false when its JSON does not carry the knob */
    bool (*value)(const ppl_config *c, const ppl_model *m, ppl_knob_value *out);
    /* the diff between two plans: whether it shows the knob for this configuration
     * (NULL: never; it shows it when it does for either plan), and its text there
     * (NULL: the value's) */
    bool (*diffed)(const ppl_config *c);
    void (*diff_text)(const ppl_config *c, char *buf, size_t size);
} ppl_knob;

/* Every knob, in ppl_pins order; *count their number. */
const ppl_knob *ppl_knob_rows(size_t *count);
/* The row of a knob's name ("first_stage_layers"); NULL when no knob has it. */
const ppl_knob *ppl_knob_find(const char *name);

/* Reading and writing a pin of the knob in ppl_pins, as a number (an INT's value,
 * an ENUM's index, a BOOL's 0/1, a SHARE): PPL_UNSET (or < 0 for a share) is free. */
double ppl_knob_pin(const ppl_knob *knob, const ppl_pins *pins);
void ppl_knob_set_pin(const ppl_knob *knob, ppl_pins *pins, double value);

/* Parses `text` as a value of the knob (an integer in range; one of its words;
 * yes/no, true/false, on/off, 1/0; a share from 0 to 1) and pins it: a usage
 * error naming the knob otherwise. */
ppl_status ppl_knob_parse(const ppl_knob *knob, const char *text, ppl_pins *pins, ppl_error *err);

/* Reads the knob from a configuration object of a file (`need`: whether it must
 * be there) into pins: a key left out (or null) pins `fallback` (a number as
 * ppl_knob_pin gives it; PPL_UNSET leaves it free); an ENUM reads `words` (NULL:
 * the row's), a word past the row's own meaning `fallback`.  An error names the
 * file and the key path. */
ppl_status ppl_knob_from_json(ppl_jr_ctx *ctx, const struct json_t *config, const char *path,
                              const ppl_knob *knob, bool required, double fallback,
                              const char *const *words, ppl_pins *pins);

/* The knob's value in text as the diff shows it ("4", "on", "full:8", "0.5"). */
void ppl_knob_text(const ppl_knob *knob, const ppl_config *c, const ppl_model *m, char *buf,
                   size_t size);

#endif
