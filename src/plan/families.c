/*
 * families.c - the families of configurations the default search leaves out (see
 * plan/families.h), one row each, and the rule that puts a configuration in one.
 */
#include "plan/families.h"

static const ppl_family families[PPL_FAMILY_COUNT] = {
    {"tp_across_servers",
     "tensor parallelism across servers runs its all-reduces over the NICs, not NVLink",
     "allow_tp_across_servers", NULL},
    {"sharded_with_pp",
     "ZeRO-2/3 with pipelining: Megatron-LM's distributed optimizer shards only the "
     "optimizer state, and DeepSpeed's pipeline engine refuses stages 2 and 3",
     "zero", "2 or 3"},
};

/* The default search's rules, one per family (the enumeration applies them). */
bool ppl_tp_across_servers(const ppl_eval_ctx *ctx, int64_t tp)
{
    return tp > ctx->net.node_gpus;
}

bool ppl_sharded_with_pp(const ppl_config *c)
{
    return c->zero >= 2 && c->pp > 1;
}

bool ppl_search_in_family(const ppl_eval_ctx *ctx, ppl_family_id id, const ppl_config *c)
{
    return id == PPL_FAMILY_TP_ACROSS_SERVERS ? ppl_tp_across_servers(ctx, c->tp)
                                              : ppl_sharded_with_pp(c);
}

const ppl_family *ppl_search_family(ppl_family_id id)
{
    return &families[id];
}

const ppl_family *ppl_search_outside(const ppl_eval_ctx *ctx, const ppl_config *c)
{
    for (int id = 0; id < PPL_FAMILY_COUNT; id++)
        if (ppl_search_in_family(ctx, (ppl_family_id)id, c))
            return &families[id];
    return NULL;
}
