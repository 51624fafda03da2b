/*
 * rules.c - one configuration built from pins and checked against every rule of
 * the frameworks that would run it (see cost/rules.h).
 *
 * The divisibility rules are Megatron-LM's (megatron/training/arguments.py):
 * tp divides the attention heads and the key/value groups (or is a multiple of
 * them: K/V heads are then replicated), the global batch divides into
 * dp x mbs x m, the interleaved schedule needs each stage's layers divisible by
 * vp and m a multiple of pp, context parallelism splits the sequence in 2*cp chunks
 * (load-balanced causal attention), expert parallelism divides the experts.
 * MoE layers fold a stage's tp*cp*dp ranks into etp x ep x edp (Megatron-Core at
 * d98e8a64dd): etp*ep must divide them (megatron/core/parallel_state.py:873-884,
 * "world_size is not divisible by expert_tensor_model_pipeline_parallel size"),
 * so ep may span context- and tensor-parallel ranks as well as data-parallel ones.
 * Context parallelism's all-to-all (a2a, a2a+p2p) splits each rank's heads over its
 * group: Transformer Engine's rule (ppl_cp_heads_split).  A schedule's own rules
 * are its row's (pipeline.c); the sharding group's and the offload's, shard.c's.
 */
#include "cost/rules.h"

#include <stdio.h>
#include <string.h>

#include "cost/pipeline.h"
#include "cost/shard.h"

/* A usage error naming the knob at fault (the command line maps it to its flag). */
#define bad(err, flag, ...) ppl_error_set((err), PPL_EUSAGE, "", (flag), __VA_ARGS__)

/* The fp8 recipe and the bf16 layers (transformer_config.py __post_init__, fp8
 * branch, lines 1528-1556 at d98e8a64dd). */
/* What the precision, the recipe and the bf16 layers allow of each other, whatever
 * the layout. */
static ppl_status fp8_rules(int precision, int recipe, int64_t bf16_layers, ppl_error *err)
{
    if ((unsigned)recipe > PPL_FP8_BLOCKWISE)
        return bad(err, "fp8_recipe", "unknown fp8 recipe %d", recipe);
    if (recipe != PPL_FP8_DELAYED && precision != PPL_PRECISION_FP8)
        return bad(err, "fp8_recipe", "%s scaling is an fp8 recipe, the precision is %s",
                   ppl_fp8_recipe_names[recipe], ppl_precision_name((ppl_precision)precision));
    if (bf16_layers == 0)
        return PPL_OK;
    if (bf16_layers < 0)
        return bad(err, "bf16_layers", "expected 0 or more, found %lld", (long long)bf16_layers);
    if (precision != PPL_PRECISION_FP8 && precision != PPL_PRECISION_MXFP8)
        return bad(err, "bf16_layers",
                   "keeps layers in bf16 under fp8 or mxfp8 (Megatron-Core's fp8 recipes), the "
                   "precision is %s",
                   ppl_precision_name((ppl_precision)precision));
    if (precision == PPL_PRECISION_FP8 && recipe == PPL_FP8_DELAYED)
        return bad(err, "bf16_layers",
                   "Megatron-Core refuses bf16 first/last layers with delayed scaling: pin "
                   "--fp8-recipe tensorwise or blockwise");
    return PPL_OK;
}

ppl_status ppl_pins_check_fp8(const ppl_pins *p, ppl_error *err)
{
    return fp8_rules(p->precision, p->fp8_recipe, p->bf16_layers < 0 ? 0 : p->bf16_layers, err);
}

static ppl_status fp8_check(const ppl_config *c, const ppl_model *m, ppl_error *err)
{
    ppl_status st = fp8_rules(c->precision, c->fp8_recipe, c->bf16_layers, err);
    if (st != PPL_OK || c->bf16_layers == 0)
        return st;
    /* at most num_layers // pp at each end (the check Megatron-Core makes) */
    if (c->bf16_layers > m->layers / c->pp)
        return bad(err, "bf16_layers",
                   "%lld, more than the layers per pipeline stage (%lld / %lld)",
                   (long long)c->bf16_layers, (long long)m->layers, (long long)c->pp);
    /* the costing places them on the first and last stage: inside the first and the
     * last model chunk of an interleaved pipeline, and apart on one stage */
    int64_t first = c->pp == 1 ? m->layers : c->split.first,
            last = c->pp == 1 ? m->layers : c->split.last;
    int64_t ends = c->pp == 1 ? 2 * c->bf16_layers : c->bf16_layers;
    if (ends > first / c->vp || ends > last / c->vp)
        return bad(err, "bf16_layers",
                   "%lld at each end do not fit in the first and last model chunk (%lld and %lld "
                   "layers): parplan costs them only there",
                   (long long)c->bf16_layers, (long long)(first / c->vp),
                   (long long)(last / c->vp));
    return PPL_OK;
}

/* What Megatron-Core captures in CUDA graphs, and with what (core_v0.16.0,
 * transformer_config.py __post_init__, lines 1716-1800): the MoE scopes only for a
 * model with experts (1751-1755); a whole MoE layer only with drop-padding
 * routing (1763-1769), which parplan does not cost (its MoE is dropless), and so
 * neither a whole layer nor a whole step of a model with MoE layers (parplan's
 * reading: the dispatcher's token counts, which the host reads, change from one
 * microbatch to the next); full recomputation only under the whole-step graph
 * (1779-1783); selective recomputation of the experts not inside the router's
 * graph (1785-1794; parplan's selective recomputation is the attention core's). */
static ppl_status graphs_rules(int graphs, bool full_recompute, const ppl_model *m, ppl_error *err)
{
    if ((unsigned)graphs >= PPL_CUDA_GRAPHS_COUNT)
        return bad(err, "cuda_graphs", "unknown CUDA graph scope %d", graphs);
    if (graphs == PPL_CUDA_GRAPHS_NONE)
        return PPL_OK;
    const ppl_cuda_graphs_row *g = ppl_cuda_graphs_of(graphs);
    const char *name = ppl_cuda_graphs_name(graphs);
    if (g->router && !m->has_moe)
        return bad(err, "cuda_graphs", "%s captures MoE routers, but the model has no experts",
                   name);
    if ((g->layer || g->step) && m->has_moe)
        return bad(err, "cuda_graphs",
                   "%s captures whole MoE layers, which Megatron-Core graphs only with "
                   "drop-padding routing (parplan costs dropless MoE): use moe_router or "
                   "attn+moe_router",
                   name);
    if (full_recompute && !g->step)
        return bad(err, "cuda_graphs",
                   "%s with full recomputation: Megatron-Core recomputes fully under CUDA "
                   "graphs only with the whole-step graph (iteration)",
                   name);
    return PPL_OK;
}

static ppl_status graphs_check(const ppl_config *c, const ppl_model *m, ppl_error *err)
{
    return graphs_rules(c->cuda_graphs, c->recompute == PPL_RECOMPUTE_FULL, m, err);
}

ppl_status ppl_pins_check_graphs(const ppl_pins *p, const ppl_model *m, ppl_error *err)
{
    return graphs_rules(p->cuda_graphs, p->recompute == PPL_RECOMPUTE_FULL, m, err);
}

ppl_status ppl_precision_check(int precision, const ppl_topology *t, ppl_error *err)
{
    /* bf16 and fp16 run everywhere (the loader insists on a 16-bit peak); fp8,
     * mxfp8 and nvfp4 only where the topology gives their peak */
    if (precision == PPL_PRECISION_BF16 || precision == PPL_PRECISION_FP16)
        return PPL_OK;
    if (!ppl_precision_low((ppl_precision)precision)) /* not a training precision */
        return ppl_error_set(err, PPL_EUSAGE, "", "precision",
                             "expected bf16, fp16, fp8, mxfp8 or nvfp4");
    if (t->gpu.flops[precision] > 0)
        return PPL_OK;
    /* MXFP4 is not NVFP4 (32-element blocks with a power-of-two scale, against
     * 16 with an FP8 one), and Megatron-LM's only fp4 recipe is nvfp4
     * (core/enums.py Fp4Recipe): refused, not mapped */
    if (precision == PPL_PRECISION_NVFP4 && t->gpu.flops[PPL_PRECISION_MXFP4] > 0)
        return ppl_error_set(err, PPL_EUSAGE, "", "precision",
                             "nvfp4 is not supported by %s: it has MXFP4, not NVFP4, and "
                             "Megatron-LM has no MXFP4 recipe (use mxfp8 or fp8)",
                             t->gpu.name);
    return ppl_error_set(err, PPL_EUSAGE, "", "precision",
                         "%s is not supported by %s (no %s peak in the topology)",
                         ppl_precision_name((ppl_precision)precision), t->gpu.name,
                         ppl_precision_name((ppl_precision)precision));
}

ppl_status ppl_config_check(const ppl_config *c, const ppl_model *m, const ppl_topology *t,
                            ppl_error *err)
{
    int64_t topo_gpus = t->servers * t->gpus_per_server;
    if (c->gpus > topo_gpus)
        return bad(err, "gpus", "%lld exceeds the topology's %lld GPUs", (long long)c->gpus,
                   (long long)topo_gpus);
    if (c->tp > c->gpus || c->pp > c->gpus || c->cp > c->gpus)
        return bad(err, "tp", "tp*pp*cp exceeds the %lld GPUs", (long long)c->gpus);
    int64_t product, partial;
    if (__builtin_mul_overflow(c->tp, c->pp, &partial) ||
        __builtin_mul_overflow(partial, c->cp, &partial) ||
        __builtin_mul_overflow(partial, c->dp, &product) || product != c->gpus)
        return ppl_error_set(err, PPL_EUSAGE, "", "dp",
                             "tp*pp*cp*dp = %lld*%lld*%lld*%lld, but gpus is %lld",
                             (long long)c->tp, (long long)c->pp, (long long)c->cp, (long long)c->dp,
                             (long long)c->gpus);
    if (m->heads % c->tp != 0)
        return bad(err, "tp", "%lld does not divide the model's %lld attention heads",
                   (long long)c->tp, (long long)m->heads);
    if (m->kv_heads % c->tp != 0 && c->tp % m->kv_heads != 0)
        return bad(err, "tp", "%lld neither divides nor is a multiple of the %lld key/value heads",
                   (long long)c->tp, (long long)m->kv_heads);
    if (c->pp > m->layers)
        return bad(err, "pp", "%lld exceeds the model's %lld layers", (long long)c->pp,
                   (long long)m->layers);
    /* the stage split must cover the layers with at least one on every stage */
    const ppl_stage_split *sp = &c->split;
    if (sp->first < 1 || (c->pp > 1 && sp->last < 1) || (c->pp > 2 && sp->middle < 1))
        return bad(err, "first_stage_layers", "every pipeline stage needs at least one layer");
    int64_t total = sp->first;
    if (c->pp > 1)
        total += sp->last + (c->pp - 2) * sp->middle;
    if (total != m->layers)
        return bad(err, "first_stage_layers", "the stages hold %lld layers, the model has %lld",
                   (long long)total, (long long)m->layers);
    if (c->global_batch % (c->dp * c->mbs) != 0)
        return ppl_error_set(err, PPL_EUSAGE, "", "global_batch",
                             "%lld is not a multiple of dp*mbs = %lld*%lld = %lld",
                             (long long)c->global_batch, (long long)c->dp, (long long)c->mbs,
                             (long long)(c->dp * c->mbs));
    /* the schedule's own rules, interleaving's among them (pipeline.c) */
    ppl_status sched = ppl_pipeline_check(c, err);
    if (sched != PPL_OK)
        return sched;
    if (c->cp > 1 && m->seq_len % (2 * c->cp) != 0)
        return bad(err, "cp", "the sequence (%lld) must split into 2*cp = %lld equal chunks",
                   (long long)m->seq_len, (long long)(2 * c->cp));
    if ((unsigned)c->cp_comm >= PPL_CP_COMM_COUNT)
        return bad(err, "cp_comm", "unknown context-parallel algorithm %d", (int)c->cp_comm);
    if (c->cp > 1 && c->cp_comm == PPL_CP_COMM_A2A && !ppl_cp_heads_split(m, c->tp, c->cp))
        return bad(err, "cp_comm",
                   "a2a splits the attention heads over the %lld CP ranks, but each "
                   "tensor-parallel rank holds %lld query and %lld key/value heads "
                   "(Transformer Engine needs both divisible by cp)",
                   (long long)c->cp, (long long)(m->heads / c->tp),
                   (long long)(m->kv_heads > c->tp ? m->kv_heads / c->tp : 1));
    if (c->cp > 1 && c->cp_comm == PPL_CP_COMM_A2A_P2P &&
        (c->cp_a2a < 2 || c->cp % c->cp_a2a != 0 || !ppl_cp_heads_split(m, c->tp, c->cp_a2a)))
        return bad(err, "cp_comm",
                   "a2a+p2p needs an all-to-all group of at least 2 of the %lld CP ranks inside "
                   "one NVLink domain that divides the %lld query and %lld key/value heads of "
                   "each tensor-parallel rank",
                   (long long)c->cp, (long long)(m->heads / c->tp),
                   (long long)(m->kv_heads > c->tp ? m->kv_heads / c->tp : 1));
    const int64_t etp = ppl_config_etp(c);
    if (etp < 1)
        return bad(err, "etp", "expected at least 1, found %lld", (long long)etp);
    if (!m->has_moe) {
        if (c->ep > 1)
            return bad(err, "ep", "%lld, but the model has no experts", (long long)c->ep);
        if (etp != c->tp)
            return bad(err, "etp",
                       "%lld, but the model has no experts (its MLPs split by tp, %lld)",
                       (long long)etp, (long long)c->tp);
    } else {
        if (m->moe.experts % c->ep != 0)
            return bad(err, "ep", "%lld does not divide the %lld experts", (long long)c->ep,
                       (long long)m->moe.experts);
        /* parallel_state.py:873-884: world_size % (etp*ep*pp) == 0, the expert
         * decomposition of the stage's tp*cp*dp ranks */
        int64_t fold, stage;
        if (__builtin_mul_overflow(etp, c->ep, &fold) ||
            __builtin_mul_overflow(c->tp * c->cp, c->dp, &stage) || stage % fold != 0)
            return bad(err, "etp",
                       "etp*ep = %lld*%lld does not divide the tp*cp*dp = %lld*%lld*%lld ranks "
                       "of a pipeline stage",
                       (long long)etp, (long long)c->ep, (long long)c->tp, (long long)c->cp,
                       (long long)c->dp);
        /* transformer_config.py:2612-2615: "Bias in Moe is only supported when ETP==1" */
        if (m->bias && etp > 1)
            return bad(err, "etp", "%lld, but Megatron-Core runs experts with biases only at etp 1",
                       (long long)etp);
        /* moe_layer.py:636-640 refuses MoE training with tp > 1 without sequence
         * parallelism: the router and dispatcher take each rank's sequence shard */
        if (c->tp > 1 && !c->sequence_parallel)
            return bad(err, "sequence_parallel",
                       "MoE with tp %lld needs sequence parallelism (Megatron-Core refuses it "
                       "without)",
                       (long long)c->tp);
    }
    if (c->sequence_parallel && c->tp < 2)
        return bad(err, "sequence_parallel", "needs tensor parallelism of at least 2 (tp is %lld)",
                   (long long)c->tp);
    ppl_status st = ppl_precision_check(c->precision, t, err);
    if (st == PPL_OK)
        st = fp8_check(c, m, err);
    if (st != PPL_OK)
        return st;
    if (c->recompute_layers != 0) {
        if (c->recompute != PPL_RECOMPUTE_FULL)
            return bad(err, "recompute_layers", "needs full recomputation");
        if (c->recompute_layers < 0 || c->recompute_layers % c->vp != 0)
            return bad(err, "recompute_layers",
                       "%lld is not a whole number of layers per virtual stage (vp %lld)",
                       (long long)c->recompute_layers, (long long)c->vp);
    }
    if (c->zero < 0 || c->zero > 3)
        return bad(err, "zero", "expected 0 to 3, found %lld", (long long)c->zero);
    if ((st = graphs_check(c, m, err)) != PPL_OK)
        return st;
    return ppl_shard_check(c, m, err);
}

static int64_t pin(int64_t value, int64_t fallback)
{
    return value == PPL_UNSET ? fallback : value;
}

ppl_status ppl_config_from_pins(const ppl_pins *a, const ppl_model *m, const ppl_topology *t,
                                ppl_config *c, ppl_error *err)
{
    memset(c, 0, sizeof *c);
    c->gpus = pin(a->gpus, t->servers * t->gpus_per_server);
    c->tp = pin(a->tp, 1);
    c->pp = pin(a->pp, 1);
    c->cp = pin(a->cp, 1);
    c->ep = pin(a->ep, 1);
    c->etp = pin(a->etp, c->tp); /* arguments.py:587-588: etp defaults to tp */
    /* the V-shaped schedules hold two chunks a rank (pipeline.h) */
    c->vp = pin(a->vp, ppl_schedule_of(a->schedule)->chunks == 2 ? 2 : 1);
    c->mbs = pin(a->mbs, 1);
    c->global_batch = pin(a->global_batch, 1);
    int64_t model_parallel = c->tp * c->pp * c->cp;
    if (a->dp == PPL_UNSET) {
        if (model_parallel > c->gpus || c->gpus % model_parallel != 0)
            return ppl_error_set(err, PPL_EUSAGE, "", "gpus",
                                 "tp*pp*cp = %lld does not divide the %lld GPUs",
                                 (long long)model_parallel, (long long)c->gpus);
        c->dp = c->gpus / model_parallel;
    } else {
        c->dp = a->dp;
    }
    c->zero = a->zero == PPL_UNSET ? 0 : a->zero;
    c->recompute = a->recompute == PPL_UNSET ? PPL_RECOMPUTE_NONE : (ppl_recompute)a->recompute;
    c->recompute_layers = a->recompute_layers == PPL_UNSET ? 0 : a->recompute_layers;
    c->sequence_parallel = a->sequence_parallel == 1;
    c->flash_attention = a->flash_attention == 1;
    ppl_config_take_fixed(c, a);
    c->schedule = (ppl_schedule)a->schedule;
    /* Megatron-LM's default --cp-comm-type is p2p (megatron/training/arguments.py) */
    c->cp_comm = a->cp_comm == PPL_UNSET ? PPL_CP_COMM_P2P : (ppl_cp_comm)a->cp_comm;
    c->cp_a2a = ppl_cp_a2a_size(m, t, c->tp, c->cp);
    c->shard_group = a->shard_group == PPL_UNSET ? 0 : a->shard_group;
    c->offload_optimizer = a->offload_optimizer < 0 ? 0.0 : a->offload_optimizer;
    if (c->dp < 1 || c->mbs < 1)
        return bad(err, "dp", "expected at least 1");
    c->microbatches = c->global_batch / (c->dp * c->mbs);

    if (c->pp > m->layers)
        return bad(err, "pp", "%lld exceeds the model's %lld layers", (long long)c->pp,
                   (long long)m->layers);
    ppl_status st = ppl_stage_split_pinned(m->layers, c->pp, a->first_stage_layers,
                                           a->last_stage_layers, &c->split, err);
    if (st != PPL_OK)
        return st;
    return ppl_config_check(c, m, t, err);
}
