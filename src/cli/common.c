/*
 * common.c - what every command shares: loading the model and topology a flag
 * names, the evaluation context under the flags' stack and memory options, the
 * pinned configuration, catalogue listings, and emitting a JSON document.
 * Commands call these; these call only the library (main.c calls the commands).
 */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <unistd.h>

#include "cli.h"

/* A name the catalogue does not hold: say which command lists it. */
static ppl_status catalog_hint(cli *c, ppl_status st, const char *arg, const char *list)
{
    if (st == PPL_EUSAGE && arg && arg[0]) {
        size_t n = strlen(c->err.message);
        snprintf(c->err.message + n, sizeof c->err.message - n, " (see 'parplan %s')", list);
    }
    return st;
}

/* Keeps doc (owned) as the last loaded model's or topology's document. */
static void keep_doc(json_t **slot, json_t *doc)
{
    json_decref(*slot);
    *slot = doc;
}

/* The key of the first value a and b differ in ("" when only a key's absence and
 * its default differ); name, source and schema_version are not the object. */
static const char *first_differing_key(const json_t *a, const json_t *b)
{
    const json_t *sides[2] = {a, b};
    for (int side = 0; side < 2; side++) {
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)sides[side], key, value)
        {
            if (strcmp(key, "name") == 0 || strcmp(key, "source") == 0 ||
                strcmp(key, "schema_version") == 0)
                continue;
            if (!json_equal(value, json_object_get(sides[1 - side], key)))
                return key;
        }
    }
    return "";
}

/* Whether two models (topologies) read from documents are the same object,
 * whatever their names, sources and files say. */
static bool same_model(const ppl_model *a, const ppl_model *b)
{
    ppl_model x = *b;
    memcpy(x.name, a->name, sizeof x.name);
    memcpy(x.source, a->source, sizeof x.source);
    return memcmp(a, &x, sizeof x) == 0;
}

static bool same_topology(const ppl_topology *a, const ppl_topology *b)
{
    ppl_topology x = *b;
    memcpy(x.name, a->name, sizeof x.name);
    memcpy(x.source, a->source, sizeof x.source);
    memcpy(x.file, a->file, sizeof x.file);
    return memcmp(a, &x, sizeof x) == 0;
}

/* A plan's embedded model (topology, `loaded` from doc) that the catalogue entry
 * of the same name differs from: said, since the name alone would cost the
 * catalogue's. */
static void say_if_catalogue_differs(cli *c, ppl_catalog_kind kind, const char *name,
                                     const json_t *doc, const void *loaded)
{
    char cat[PATH_MAX];
    if (!ppl_catalog_find(kind, name, cat, sizeof cat))
        return;
    json_t *other = NULL;
    ppl_error ignored;
    bool same = false;
    if (kind == PPL_CATALOG_MODELS) {
        ppl_model m;
        same = ppl_model_load_doc(cat, cat, NULL, &m, &other, &ignored) == PPL_OK &&
               same_model(loaded, &m);
    } else {
        ppl_topology t;
        same = ppl_topology_load_doc(cat, cat, NULL, &t, &other, &ignored) == PPL_OK &&
               same_topology(loaded, &t);
    }
    const char *what = kind == PPL_CATALOG_MODELS ? "model" : "topology";
    const char *key = other ? first_differing_key(doc, other) : "";
    char where[96];
    snprintf(where, sizeof where, "inputs.%s%s%s", what, key[0] ? "." : "", key);
    if (!same)
        ppl_diag_warn(&c->diag, c->from.file, where,
                      "the plan's %s '%s' is not the catalogue's of that name%s: costed as the "
                      "plan has it (give --%s %s for the catalogue's)",
                      what, name, key[0] ? "" : " (a default differs)", what, name);
    json_decref(other);
}

static void drop_seq_len_note(void *ctx, const char *file, const char *key, const char *message)
{
    const ppl_diag *inner = ctx;
    if (strcmp(key, "max_position_embeddings") != 0)
        ppl_diag_warn(inner, file, key, "%s", message);
}

ppl_status cli_load_model(cli *c, const char *arg, ppl_model *model)
{
    char path[PATH_MAX];
    json_t *doc = NULL;
    ppl_status st;
    if (c->from.model) {
        /* the plan's own model, read back as the loader read it */
        st = ppl_model_from_json(c->from.model, c->from.file, "inputs.model", &c->diag, model,
                                 &c->err);
        if (st == PPL_OK && !model->name[0])
            ppl_jr_file_stem(c->from.file, model->name, sizeof model->name);
        if (st == PPL_OK) {
            say_if_catalogue_differs(c, PPL_CATALOG_MODELS, model->name, c->from.model, model);
            doc = json_incref(c->from.model);
        }
    } else {
        st = ppl_catalog_resolve(PPL_CATALOG_MODELS, arg, path, sizeof path, &c->err);
        if (st != PPL_OK)
            return catalog_hint(c, st, arg, "models");
        /* with --seq-len, the Hugging Face import's note that it assumed a
         * training length is moot */
        ppl_diag quiet = {.warn = drop_seq_len_note, .ctx = &c->diag};
        st = ppl_model_load_doc(path, path, c->args->seq_len != PPL_UNSET ? &quiet : &c->diag,
                                model, &doc, &c->err);
    }
    if (st == PPL_OK)
        keep_doc(&c->model_doc, doc);
    if (st == PPL_OK && c->args->seq_len != PPL_UNSET)
        st = ppl_model_set_seq_len(model, c->args->seq_len, &c->err);
    return st;
}

/* A topology argument's file: a catalogue name or a path. */
static ppl_status topology_path(cli *c, const char *arg, char path[PATH_MAX])
{
    ppl_status st = ppl_catalog_resolve(PPL_CATALOG_TOPOLOGIES, arg, path, PATH_MAX, &c->err);
    return st == PPL_OK ? PPL_OK : catalog_hint(c, st, arg, "topologies");
}

ppl_status cli_load_topology(cli *c, const char *arg, ppl_topology *topo)
{
    char path[PATH_MAX];
    json_t *doc = NULL;
    ppl_status st;
    if (c->from.topology) {
        st = ppl_topology_from_json(c->from.topology, c->from.file, "inputs.topology", &c->diag,
                                    topo, &c->err);
        if (st == PPL_OK && !topo->name[0])
            ppl_jr_file_stem(c->from.file, topo->name, sizeof topo->name);
        if (st == PPL_OK) {
            say_if_catalogue_differs(c, PPL_CATALOG_TOPOLOGIES, topo->name, c->from.topology, topo);
            doc = json_incref(c->from.topology);
        }
    } else {
        st = topology_path(c, arg, path);
        if (st == PPL_OK)
            st = ppl_topology_load_doc(path, path, &c->diag, topo, &doc, &c->err);
    }
    if (st == PPL_OK)
        keep_doc(&c->topology_doc, doc);
    return st;
}

ppl_status cli_load_pools(cli *c, const char *arg, ppl_pools *pools)
{
    char path[PATH_MAX];
    json_t *doc = NULL;
    ppl_status st = topology_path(c, arg, path);
    if (st == PPL_OK)
        st = ppl_pools_load_doc(path, path, &c->diag, pools, &doc, &c->err);
    if (st == PPL_OK && doc)
        keep_doc(&c->topology_doc, doc);
    return st;
}

json_t *cli_plan_inputs_json(cli *c)
{
    json_t *o = json_object();
    if (c->model_doc)
        json_object_set(o, "model", c->model_doc);
    if (c->topology_doc)
        json_object_set(o, "topology", c->topology_doc);
    json_object_set_new(o, "constants", ppl_constants_json(&c->constants));
    return o;
}

void cli_from_clear(cli *c)
{
    json_decref(c->from.model);
    json_decref(c->from.topology);
    json_decref(c->from.stage_layers);
    memset(&c->from, 0, sizeof c->from);
}

void cli_eval_ctx(cli *c, ppl_eval_ctx *ctx, const ppl_model *model, const ppl_topology *topo)
{
    ppl_eval_ctx_init(ctx, model, topo, (ppl_stack)c->args->stack);
    /* a plan costed again: under the constants it was costed with */
    ppl_eval_ctx_set_constants(ctx, c->from.has_constants ? &c->from.constants : &c->constants,
                               (ppl_stack)c->args->stack);
    if (c->args->overhead_bytes >= 0)
        ctx->memory.overhead_bytes = c->args->overhead_bytes;
    if (c->args->fragmentation >= 0)
        ctx->memory.fragmentation = c->args->fragmentation;
    ctx->memory.headroom_fraction = c->args->headroom_fraction;
    ctx->memory.headroom_bytes = c->args->headroom_bytes;
    ctx->stack.conservative = c->args->conservative;
}

ppl_status cli_list_catalog(cli *c, ppl_catalog_kind kind, const char *key, size_t ncols,
                            const char *align, const char *const *header, cli_entry_fn entry)
{
    char **names;
    size_t count;
    ppl_status st = ppl_catalog_list(kind, &names, &count, &c->err);
    if (st != PPL_OK)
        return st;
    json_t *doc = NULL, *list = NULL;
    ppl_table t;
    ppl_table_init(&t, ncols, align);
    if (c->args->json) {
        doc = ppl_json_document();
        list = json_array();
        json_object_set_new(doc, key, list);
    } else {
        ppl_table_row(&t, header);
    }
    for (size_t i = 0; i < count && st == PPL_OK; i++)
        st = entry(c, names[i], list, &t);
    ppl_catalog_free(names, count);
    if (st == PPL_OK && doc)
        st = cli_emit_json(c, doc);
    else if (st == PPL_OK)
        ppl_table_render(&t, &c->out, "");
    else
        json_decref(doc);
    ppl_table_free(&t);
    return st;
}

const char *cli_flag_of(const char *knob, char *buf, size_t size)
{
    size_t n = 0;
    if (size < 3)
        return "";
    buf[n++] = '-';
    buf[n++] = '-';
    for (const char *k = knob; *k && n + 1 < size; k++)
        buf[n++] = *k == '_' ? '-' : *k;
    buf[n] = '\0';
    return buf;
}

ppl_status cli_load(cli *c, ppl_model *model, ppl_topology *topo)
{
    ppl_status st = cli_load_model(c, c->args->model, model);
    return st != PPL_OK ? st : cli_load_topology(c, c->args->topology, topo);
}

ppl_status cli_load_engine(cli *c, ppl_model *model, ppl_topology *topo, ppl_precision *precision,
                           int64_t *gpus)
{
    const ppl_args *a = c->args;
    ppl_status st = cli_load(c, model, topo);
    if (st != PPL_OK)
        return st;
    const int p = a->pins.precision != PPL_UNSET ? a->pins.precision : PPL_PRECISION_BF16;
    if ((st = ppl_precision_check(p, topo, &c->err)) != PPL_OK)
        return st;
    if (p != PPL_PRECISION_BF16 && p != PPL_PRECISION_FP8)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--precision",
                             "an engine is costed in bf16 or fp8 weights and cache");
    const int64_t all = topo->servers * topo->gpus_per_server;
    *precision = (ppl_precision)p;
    *gpus = a->pins.gpus != PPL_UNSET ? a->pins.gpus : all;
    if (*gpus > all)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--gpus", "%lld exceeds the topology's %lld",
                             (long long)*gpus, (long long)all);
    return PPL_OK;
}

void cli_summary_json(json_t *o, const ppl_calib_summary *s, bool counts)
{
    if (counts) {
        json_object_set_new(o, "runs", json_integer((json_int_t)s->runs));
        json_object_set_new(o, "not_predicted", json_integer((json_int_t)s->not_predicted));
    }
    json_object_set_new(o, "mean_abs_error", ppl_json_real(s->mean_abs));
    json_object_set_new(o, "max_abs_error", ppl_json_real(s->max_abs));
    json_object_set_new(o, "within_10_percent", ppl_json_real(s->share_within_10));
}

void cli_families_table_init(ppl_table *t)
{
    static const char *const header[] = {"source family", "runs", "mean abs. error", "max",
                                         "within 10%"};
    ppl_table_init(t, 5, "lrrrr");
    ppl_table_row(t, header);
}

void cli_families_table_row(ppl_table *t, const char *family, const ppl_calib_summary *s)
{
    char nr[24], mean[24], max[24], within[24];
    snprintf(nr, sizeof nr, "%zu", s->runs);
    snprintf(mean, sizeof mean, s->runs ? "%.1f%%" : "-", 100.0 * s->mean_abs);
    snprintf(max, sizeof max, s->runs ? "%.1f%%" : "-", 100.0 * s->max_abs);
    snprintf(within, sizeof within, s->runs ? "%.0f%%" : "-", 100.0 * s->share_within_10);
    const char *row[5] = {family, nr, mean, max, within};
    ppl_table_row(t, row);
}

const char *cli_family_allow(const ppl_family *f, char *buf, size_t size)
{
    char flag[64];
    cli_flag_of(f->allow_knob, flag, sizeof flag);
    if (!f->allow_values) {
        snprintf(buf, size, "%s", flag);
    } else {
        /* "2 or 3" -> "--zero 2 or --zero 3 (pinned)" */
        char first[16] = "", second[16] = "";
        if (sscanf(f->allow_values, "%15s or %15s", first, second) == 2)
            snprintf(buf, size, "%s %s or %s %s (pinned)", flag, first, flag, second);
        else
            snprintf(buf, size, "%s %s (pinned)", flag, f->allow_values);
    }
    return buf;
}

void cli_note_batch(int64_t batch, const ppl_model *model)
{
    if (batch == PPL_UNSET) {
        fprintf(stderr, "parplan: note: no --global-batch: assuming about 4.19 M tokens per step "
                        "at each swept seq_len, in a power of two of sequences\n");
        return;
    }
    fprintf(stderr,
            "parplan: note: no --global-batch: assuming %lld sequences of %lld tokens "
            "(%.3g M tokens) per step\n",
            (long long)batch, (long long)model->seq_len,
            (double)batch * (double)model->seq_len / 1e6);
}

ppl_status cli_emit_json(cli *c, json_t *doc)
{
    if (!doc)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_json_render(doc, &c->out);
    json_decref(doc);
    return PPL_OK;
}

ppl_status cli_config_error(cli *c, const char *file, const char *config_key)
{
    if (c->err.status != PPL_EUSAGE || c->err.file[0] || !ppl_knob_find(c->err.key))
        return c->err.status;
    char knob[64];
    snprintf(knob, sizeof knob, "%.63s",
             strcmp(c->err.key, "first_stage_layers") == 0 ||
                     strcmp(c->err.key, "last_stage_layers") == 0
                 ? "stage_layers"
                 : c->err.key);
    snprintf(c->err.file, sizeof c->err.file, "%s", file);
    snprintf(c->err.key, sizeof c->err.key, "%.63s.%.63s", config_key, knob);
    return c->err.status = PPL_EINPUT;
}

/* Loads the model and topology and builds the pinned configuration. */
ppl_status cli_setup(cli *c, ppl_model *model, ppl_topology *topo, ppl_eval_ctx *ctx,
                     ppl_config *config)
{
    ppl_status st = cli_load(c, model, topo);
    if (st == PPL_OK)
        cli_eval_ctx(c, ctx, model, topo);
    if (st == PPL_OK)
        st = ppl_config_from_pins(&c->args->pins, model, topo, config, &c->err);
    /* pins read from a plan: a value they refuse is the plan's, not a flag's */
    if (st == PPL_EUSAGE && c->from.file)
        st = cli_config_error(c, c->from.file, c->from.config_key);
    /* the split the plan states is the split costed (its middle stages follow
     * from the ends and the model's layers) */
    for (size_t s = 0;
         st == PPL_OK && c->from.own_model && s < json_array_size(c->from.stage_layers); s++) {
        json_int_t stated = json_integer_value(json_array_get(c->from.stage_layers, s));
        if (stated != ppl_stage_layers(config, (int64_t)s))
            st = ppl_error_set(&c->err, PPL_EINPUT, c->from.file, "",
                               "%lld layers in stage %zu, but %s's %lld layers split with these "
                               "ends give it %lld",
                               (long long)stated, s, model->name, (long long)model->layers,
                               (long long)ppl_stage_layers(config, (int64_t)s));
        if (st != PPL_OK)
            snprintf(c->err.key, sizeof c->err.key, "%.63s.stage_layers[%zu]", c->from.config_key,
                     s);
    }
    cli_from_clear(c);
    return st;
}

void cli_goodput_opts(const ppl_args *a, ppl_goodput_opts *out)
{
    ppl_goodput_opts_init(out);
    out->mtbf_gpu_hours = a->mtbf_gpu_hours;
    out->storage_bps = a->checkpoint_bps;
    out->restart_s = a->restart_s;
    out->spare_gpus = a->spare_gpus;
    out->spare_fraction = a->spare_fraction;
    out->spare_restart_s = a->spare_restart_s;
    out->repair_s = a->repair_s;
}

void cli_progress_show(void *ctx, double fraction)
{
    cli_progress *p = ctx;
    /* the clock first: a short search asks the terminal nothing (a system call
     * each, where the clock is read in user space) */
    double now = ppl_clock_s();
    if (p->start == 0.0)
        p->start = now;
    if (now - p->start < 0.5 || !isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\rparplan: %s... %3.0f%%", p->what ? p->what : "working",
            100.0 * (fraction < 0   ? 0
                     : fraction > 1 ? 1
                                    : fraction));
    fflush(stderr);
    p->shown = true;
}

void cli_progress_done(cli_progress *p)
{
    if (p->shown)
        fprintf(stderr, "\r%60s\r", "");
    p->shown = false;
}

/* --from PLAN.json[#K]: result K's configuration as pins, and the plan's model and
 * topology where the command line names none (kept in `names`). */
size_t cli_plan_file_len(const char *spec)
{
    const char *hash = strrchr(spec, '#');
    return hash ? (size_t)(hash - spec) : strlen(spec);
}

ppl_status cli_plan_spec(cli *c, const char *spec, char path[CLI_PLAN_PATH_MAX], long *rank)
{
    /* errors name --from for estimate and memory; compare's and report's specs are
     * positional */
    const char *flag = c->args->from_plan ? "--from" : "";
    const char *hash = strrchr(spec, '#');
    size_t len = cli_plan_file_len(spec);
    if (len == 0 || len >= CLI_PLAN_PATH_MAX)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", flag, "expected PLAN.json or PLAN.json#K");
    memcpy(path, spec, len);
    path[len] = '\0';
    *rank = 1;
    if (hash) {
        /* K as the ranked table prints it: digits, no sign, space or leading zero */
        const char *k = hash + 1;
        const size_t digits = strspn(k, "0123456789");
        *rank =
            digits > 0 && digits <= 6 && k[digits] == '\0' && k[0] != '0' ? strtol(k, NULL, 10) : 0;
        if (*rank < 1 || *rank > 100000)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", flag,
                                 "expected a result number from 1 after '#', found '%.20s'",
                                 hash + 1);
    }
    return PPL_OK;
}

/* The plan's model or topology (i: 0, 1) where the command line names none: the
 * document it embeds, else the catalogue's entry of the name it gives (plans made
 * before they embedded their inputs); never a path. */
static ppl_status plan_input(cli *c, const json_t *doc, const json_t *inputs, int i,
                             const char **dest, char name[256])
{
    static const char *const keys[2] = {"model", "topology"};
    const char *path = c->from.file;
    const json_t *embedded = json_object_get(inputs, keys[i]);
    const char *given = json_string_value(json_object_get(doc, keys[i]));
    if (embedded) {
        char where[32];
        snprintf(where, sizeof where, "inputs.%s", keys[i]);
        if (!json_is_object(embedded))
            return ppl_error_set(&c->err, PPL_EINPUT, path, where, "expected an object");
        json_t **slot = i == 0 ? &c->from.model : &c->from.topology;
        *slot = json_incref((json_t *)embedded);
        snprintf(name, 256, "%s", given ? given : "");
        *dest = name;
        return PPL_OK;
    }
    char cat[PATH_MAX];
    if (!given)
        return ppl_error_set(&c->err, PPL_EINPUT, path, keys[i], "missing: give --%s", keys[i]);
    if (!ppl_catalog_find(i == 0 ? PPL_CATALOG_MODELS : PPL_CATALOG_TOPOLOGIES, given, cat,
                          sizeof cat)) {
        char shown[64];
        ppl_jr_name_copy(shown, sizeof shown, given, strlen(given));
        return ppl_error_set(&c->err, PPL_EINPUT, path, keys[i],
                             "'%s' is not a catalogue %s and the plan does not embed it "
                             "(inputs.%s): give --%s",
                             shown, keys[i], keys[i], keys[i]);
    }
    snprintf(name, 256, "%s", given);
    *dest = name;
    return PPL_OK;
}

ppl_status cli_pins_from_plan_doc(cli *c, const json_t *doc, const char *path, long rank,
                                  ppl_args *a, char names[2][256])
{
    const char *flag = c->args->from_plan ? "--from" : "";
    ppl_jr_ctx jr = {.file = path, .err = &c->err, .diag = &c->diag};
    cli_from_clear(c);
    c->from.file = path;
    snprintf(c->from.config_key, sizeof c->from.config_key, "results[%ld].config", rank - 1);
    ppl_status st = ppl_jr_expect_object(&jr, doc, "");
    if (st == PPL_OK) /* the document's version, as every input's */
        st = ppl_jr_schema_version(&jr, doc, "");
    const json_t *results = json_object_get(doc, "results");
    const json_t *entry = json_array_get(results, (size_t)rank - 1);
    c->from.stage_layers =
        json_incref(json_object_get(json_object_get(entry, "config"), "stage_layers"));
    /* an empty array is the file's fault, as report has it: no K would do */
    if (st == PPL_OK && (!json_is_array(results) || json_array_size(results) == 0))
        st = ppl_error_set(&c->err, PPL_EINPUT, path, "results",
                           "expected the non-empty array of a plan's results (the --json "
                           "output of 'parplan plan')");
    else if (st == PPL_OK && !entry)
        st = ppl_error_set(&c->err, PPL_EUSAGE, "", flag, "%s has %zu results, not %ld", path,
                           json_array_size(results), rank);
    char where[64];
    /* a result of a mixed cluster ran on a pool, or across pools: no topology of the
     * plan's own is it, unless the caller names one */
    const json_t *pools = json_object_get(entry, "pools");
    if (st == PPL_OK && pools && !a->topology) {
        snprintf(where, sizeof where, "results[%ld].pools", rank - 1);
        const char *pool = json_string_value(json_object_get(json_array_get(pools, 0), "pool"));
        st = json_array_size(pools) != 1
                 ? ppl_error_set(&c->err, PPL_EINPUT, path, where,
                                 "a pipeline across pools: it is costed only as plan costs it "
                                 "on the mixed cluster; give --topology to re-cost its "
                                 "configuration on one topology")
                 : ppl_error_set(&c->err, PPL_EINPUT, path, where,
                                 "planned on pool '%s' of a mixed cluster: give --topology (a "
                                 "topology of that pool) to re-cost it",
                                 pool ? pool : "?");
    }
    snprintf(where, sizeof where, "results[%ld].config", rank - 1);
    if (st == PPL_OK)
        st = ppl_pins_from_config_json(json_object_get(entry, "config"), path, where, &c->diag,
                                       &a->pins, &c->err);
    /* the sequence length and the stack the plan was costed at, unless given: the
     * model's own length and the default stack would cost another configuration */
    if (st == PPL_OK && a->seq_len == PPL_UNSET)
        st = ppl_jr_int(&jr, doc, "", "seq_len", PPL_JR_OPTIONAL, PPL_UNSET, 1, PPL_MAX_SEQ_LEN,
                        &a->seq_len);
    int stack = PPL_UNSET;
    if (st == PPL_OK && !a->stack_given)
        st =
            ppl_jr_enum(&jr, doc, "", "stack", PPL_JR_OPTIONAL, ppl_stack_names, PPL_UNSET, &stack);
    if (stack != PPL_UNSET)
        a->stack = ppl_stack_from_name_index(stack);
    const json_t *inputs = json_object_get(doc, "inputs");
    if (st == PPL_OK && inputs)
        st = ppl_jr_expect_object(&jr, inputs, "inputs");
    /* the model and topology it was costed on, unless given */
    const char **dest[2] = {&a->model, &a->topology};
    c->from.own_model = !a->model;
    for (int i = 0; i < 2 && st == PPL_OK; i++)
        if (!*dest[i])
            st = plan_input(c, doc, inputs, i, dest[i], names[i]);
    /* and its constants, unless --constants names others: said where they are not
     * this parplan's */
    const json_t *k = json_object_get(inputs, "constants");
    if (st == PPL_OK && k && !a->constants_path) {
        st = ppl_constants_from_json(k, path, "inputs.constants", &c->diag, &c->from.constants,
                                     &c->err);
        c->from.has_constants = st == PPL_OK;
        double was, now;
        const char *name = st == PPL_OK ? ppl_constants_first_difference(&c->from.constants,
                                                                         &c->constants, &was, &now)
                                        : NULL;
        if (name) {
            snprintf(where, sizeof where, "inputs.constants.%s", name);
            ppl_diag_warn(&c->diag, path, where,
                          "the plan was costed with %.6g where this parplan has %.6g: costed "
                          "again with the plan's constants (--constants to choose)",
                          was, now);
        }
    }
    if (st != PPL_OK)
        cli_from_clear(c);
    return st;
}

/* PLAN.json[#K]'s file read and K: the file's name kept in a buffer that outlives
 * the document (c->from.file points at it). */
static ppl_status plan_open(cli *c, const char *spec, long *rank, json_t **doc, const char **file)
{
    static char name[CLI_PLAN_PATH_MAX];
    *rank = 1;
    *doc = NULL;
    *file = name;
    ppl_status st = cli_plan_spec(c, spec, name, rank);
    return st == PPL_OK ? ppl_jr_read(name, &c->diag, doc, &c->err) : st;
}

ppl_status cli_pins_from_plan(cli *c, const char *spec, ppl_args *a, char names[2][256])
{
    long rank;
    json_t *doc;
    const char *file;
    ppl_status st = plan_open(c, spec, &rank, &doc, &file);
    if (st == PPL_OK)
        st = cli_pins_from_plan_doc(c, doc, file, rank, a, names);
    json_decref(doc);
    return st;
}

ppl_status cli_args_from_plan(cli *c)
{
    static ppl_args local;
    static char names[2][256];
    if (!c->args->from_plan)
        return PPL_OK;
    local = *c->args;
    ppl_status st = cli_pins_from_plan(c, local.from_plan, &local, names);
    if (st == PPL_OK)
        c->args = &local;
    return st;
}

ppl_status cli_cost_plan_doc(cli *c, const json_t *doc, const char *path, long rank,
                             ppl_model *model, ppl_topology *topo, ppl_eval_ctx *ctx,
                             ppl_estimate *out)
{
    static ppl_args local;
    static char names[2][256];
    const ppl_args *saved = c->args;
    local = *saved;
    ppl_status st = cli_pins_from_plan_doc(c, doc, path, rank, &local, names);
    if (st != PPL_OK)
        return st;
    c->args = &local;
    ppl_eval_ctx own;
    ppl_config cfg;
    if (!ctx)
        ctx = &own;
    st = cli_setup(c, model, topo, ctx, &cfg);
    c->args = saved;
    if (st != PPL_OK)
        return st;
    ppl_estimate_config(ctx, &cfg, out);
    return ppl_estimate_check(out, &c->err);
}

ppl_status cli_cost_plan_result(cli *c, const char *spec, ppl_model *model, ppl_topology *topo,
                                ppl_eval_ctx *ctx, ppl_estimate *out)
{
    long rank;
    json_t *doc;
    const char *file;
    ppl_status st = plan_open(c, spec, &rank, &doc, &file);
    if (st == PPL_OK)
        st = cli_cost_plan_doc(c, doc, file, rank, model, topo, ctx, out);
    json_decref(doc);
    return st;
}

ppl_status cli_pins_check_mixed(cli *c)
{
    const ppl_pins *p = &c->args->pins;
    ppl_status st = ppl_pins_check_fp8(p, &c->err);
    if (st == PPL_OK && p->bf16_layers > 0)
        st = ppl_error_set(&c->err, PPL_EUSAGE, "", "bf16_layers",
                           "a pipeline across pools keeps no layers in bf16 yet");
    /* a mixed cluster is planned on its pools as they are (docs/limits.md) */
    if (st == PPL_OK && p->gpus != PPL_UNSET)
        st = ppl_error_set(&c->err, PPL_EUSAGE, "", "--gpus",
                           "does not apply to a mixed cluster, planned on its pools' GPUs; "
                           "sweep a pool's size with whatif --sweep 'pools[I].servers=...'");
    return st;
}
