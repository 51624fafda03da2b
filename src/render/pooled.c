/*
 * pooled.c - a plan on a mixed cluster as a result object and as text (see
 * render/pooled.h).
 */
#include "render/pooled.h"

#include <jansson.h>
#include <stdio.h>

#include "base/output.h"
#include "render/launch.h"
#include "render/report.h"

/* deepspeed/runtime/pipe/module.py:403-415 (_partition_layers): uniform, by
 * parameters or by a layer type, never counts given stage by stage */
#define NO_DEEPSPEED                                                                               \
    "DeepSpeed's PipelineModule splits the layers by its partition_method (uniform, "              \
    "parameters or a layer type), not by the counts each pool's stages hold"

void ppl_pooled_layers_text(const int64_t *layers, int64_t n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int64_t k = 0; k < n && at < size;) {
        int64_t run = 1;
        while (k + run < n && layers[k + run] == layers[k])
            run++;
        int w = run > 1
                    ? snprintf(buf + at, size - at, "%s%lld x%lld", at ? ", " : "",
                               (long long)layers[k], (long long)run)
                    : snprintf(buf + at, size - at, "%s%lld", at ? ", " : "", (long long)layers[k]);
        if (w < 0)
            break;
        at += (size_t)w;
        k += run;
    }
}

void ppl_pooled_assignment_text(const ppl_pools *pools, const ppl_mixed_plan *p, char *buf,
                                size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->npools && at < size; i++) {
        int w = snprintf(buf + at, size - at, "%s%s x%lld", i ? " > " : "",
                         pools->pool[p->order[i]].name, (long long)p->stages[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

json_t *ppl_pooled_json(const ppl_pools *pools, const ppl_mixed_plan *p, const ppl_model *model)
{
    json_t *o = ppl_estimate_json(&p->estimate, model), *list = json_array();
    const bool across = p->npools > 1;
    if (!o || !list) {
        json_decref(o);
        json_decref(list);
        return NULL;
    }
    /* the layers as the plan splits them (the balancer's, across pools) */
    json_t *stages = json_array();
    for (int64_t k = 0; k < p->config.pp && k < PPL_MIXED_MAX_STAGES; k++)
        json_array_append_new(stages, json_integer(p->layers[k]));
    json_object_set_new(json_object_get(o, "config"), "stage_layers", stages);
    int64_t first = 0;
    for (int i = 0; i < p->npools; i++) {
        const ppl_topology *t = &pools->pool[p->order[i]];
        json_t *s = json_object(), *layers = json_array();
        json_object_set_new(s, "pool", json_string(t->name));
        json_object_set_new(s, "gpu", json_string(t->gpu.name));
        json_object_set_new(s, "first_stage", json_integer(first));
        json_object_set_new(s, "stages", json_integer(p->stages[i]));
        json_object_set_new(s, "gpus", json_integer(p->gpus[i]));
        for (int64_t k = first; k < first + p->stages[i] && k < PPL_MIXED_MAX_STAGES; k++)
            json_array_append_new(layers, json_integer(p->layers[k]));
        json_object_set_new(s, "layers", layers);
        json_object_set_new(s, "memory_bytes", ppl_json_real(p->memory[i]));
        json_object_set_new(s, "capacity_bytes", ppl_json_real(p->capacity[i]));
        json_array_append_new(list, s);
        first += p->stages[i];
    }
    json_object_set_new(o, "pools", list);
    json_object_set_new(o, "cross_send_s", ppl_json_real(across ? p->cross_send_s : 0.0));
    /* Megatron-LM with each stage's layers, and the nodes in rank order: its
     * ranks run tp fastest and pp slowest (parallel_state.py:617, order
     * "tp-cp-ep-dp-pp"), so pipeline stage k holds ranks k tp dp to
     * (k + 1) tp dp - 1, and torchrun numbers the ranks node after node: the first
     * pool's servers first, each pool's last node the rest (a job on one pool: its
     * servers, whose size the plan's top level does not give) */
    json_t *launch = json_object_get(o, "launch"), *nodes = json_array();
    if (across) {
        launch = ppl_launch_json(&p->estimate, model, p->layers);
        ppl_launch_refuse(launch, "deepspeed", NO_DEEPSPEED);
        json_object_set_new(o, "launch", launch);
    }
    first = 0;
    for (int i = 0; i < p->npools; i++) {
        const ppl_topology *t = &pools->pool[p->order[i]];
        json_t *n = json_object();
        const int64_t per = t->gpus_per_server;
        json_object_set_new(n, "pool", json_string(t->name));
        json_object_set_new(n, "gpus", json_integer(p->gpus[i]));
        json_object_set_new(n, "gpus_per_node", json_integer(per));
        json_object_set_new(n, "nodes", json_integer((p->gpus[i] + per - 1) / per));
        json_object_set_new(n, "first_stage", json_integer(first));
        json_object_set_new(n, "stages", json_integer(p->stages[i]));
        json_array_append_new(nodes, n);
        first += p->stages[i];
    }
    json_object_set_new(launch, "nodes", nodes);
    return o;
}
