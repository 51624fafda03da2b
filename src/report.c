/*
 * report.c - SPEC output objects shared by the commands.
 */
#include "parplan/report.h"

#include <jansson.h>
#include <stdio.h>

json_t *ppl_config_json(const ppl_config *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "gpus", json_integer(c->gpus));
    json_object_set_new(o, "tp", json_integer(c->tp));
    json_object_set_new(o, "pp", json_integer(c->pp));
    json_object_set_new(o, "dp", json_integer(c->dp));
    json_object_set_new(o, "cp", json_integer(c->cp));
    json_object_set_new(o, "ep", json_integer(c->ep));
    json_object_set_new(o, "vp", json_integer(c->vp));
    json_object_set_new(o, "mbs", json_integer(c->mbs));
    json_object_set_new(o, "global_batch", json_integer(c->global_batch));
    json_object_set_new(o, "microbatches", json_integer(c->microbatches));
    json_object_set_new(o, "zero", json_integer(c->zero));
    json_object_set_new(o, "recompute", json_string(ppl_recompute_name(c->recompute)));
    json_object_set_new(o, "sequence_parallel", json_boolean(c->sequence_parallel));
    json_object_set_new(o, "flash_attention", json_boolean(c->flash_attention));
    json_object_set_new(o, "precision", json_string(ppl_precision_name(c->precision)));
    json_object_set_new(o, "optimizer", json_string(ppl_optimizer_name(c->optimizer)));
    json_object_set_new(o, "schedule",
                        json_string(c->schedule == PPL_SCHEDULE_GPIPE ? "gpipe"
                                    : c->vp > 1                       ? "interleaved"
                                                                      : "1f1b"));
    json_t *stages = json_array();
    for (int64_t k = 0; k < c->pp; k++)
        json_array_append_new(stages, json_integer(ppl_stage_layers(c, k)));
    json_object_set_new(o, "stage_layers", stages);
    return o;
}

json_t *ppl_memory_json(const ppl_memory *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "weights", json_real(m->weights));
    json_object_set_new(o, "gradients", json_real(m->gradients));
    json_object_set_new(o, "optimizer", json_real(m->optimizer));
    json_object_set_new(o, "activations", json_real(m->activations));
    json_object_set_new(o, "other", json_real(m->other));
    json_object_set_new(o, "total", json_real(m->total));
    json_object_set_new(o, "capacity", json_real(m->capacity));
    json_object_set_new(o, "fits", json_boolean(m->fits));
    json_object_set_new(o, "worst_stage", json_integer(m->stage));
    return o;
}

void ppl_config_describe(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size,
             "tp %lld x pp %lld x dp %lld x cp %lld, ep %lld, vp %lld, mbs %lld, batch %lld "
             "(%lld microbatches), ZeRO %d, recompute %s, SP %s, flash %s, %s, %s",
             (long long)c->tp, (long long)c->pp, (long long)c->dp, (long long)c->cp,
             (long long)c->ep, (long long)c->vp, (long long)c->mbs, (long long)c->global_batch,
             (long long)c->microbatches, c->zero, ppl_recompute_name(c->recompute),
             c->sequence_parallel ? "on" : "off", c->flash_attention ? "on" : "off",
             ppl_precision_name(c->precision),
             c->schedule == PPL_SCHEDULE_GPIPE ? "GPipe"
             : c->vp > 1                       ? "interleaved 1F1B"
                                               : "1F1B");
}
