/*
 * config.c - building and checking one training configuration.
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
 * group: Transformer Engine's rule (ppl_cp_heads_split).
 */
#include "parplan/config.h"

#include "parplan/pipeline.h"
#include "parplan/shard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int64_t ppl_config_etp(const ppl_config *c)
{
    return c->etp > 0 ? c->etp : c->tp;
}

int64_t ppl_config_edp(const ppl_config *c)
{
    int64_t fold = ppl_config_etp(c) * c->ep;
    return fold > 0 ? c->tp * c->cp * c->dp / fold : 0;
}

int64_t ppl_config_shard_group(const ppl_config *c)
{
    return c->shard_group > 0 && c->shard_group <= c->dp ? c->shard_group : c->dp;
}

int64_t ppl_config_shard_replicas(const ppl_config *c)
{
    int64_t n = ppl_config_shard_group(c);
    return n > 0 && c->dp % n == 0 ? c->dp / n : 1;
}

double ppl_recomputed_share(const ppl_config *c, int64_t layers)
{
    if (c->recompute != PPL_RECOMPUTE_FULL)
        return 1.0;
    if (c->recompute_layers <= 0 || c->recompute_layers >= layers || layers <= 0)
        return 1.0;
    return (double)c->recompute_layers / (double)layers;
}

int64_t ppl_stage_layers(const ppl_config *c, int64_t stage)
{
    if (c->pp == 1 || stage == 0)
        return c->split.first;
    if (stage == c->pp - 1)
        return c->split.last;
    return c->split.middle;
}

int64_t ppl_stage_first_layer(const ppl_config *c, int64_t stage)
{
    return stage == 0 ? 0 : c->split.first + (stage - 1) * c->split.middle;
}

/* True when the split is not pp equal stages. */
static bool split_uneven(const ppl_config *c)
{
    if (c->pp < 2)
        return false;
    int64_t even = c->pp == 2 ? c->split.first : c->split.middle;
    return c->split.first != even || c->split.last != even;
}

ppl_split_form ppl_split_form_of(const ppl_config *c, int64_t vp, bool *embedding, bool *loss)
{
    const ppl_stage_split *s = &c->split;
    *embedding = *loss = false;
    if (vp < 1 || (vp > 1 && c->pp < 2))
        return PPL_SPLIT_NONE;
    if (!split_uneven(c))
        return s->first % vp == 0 ? PPL_SPLIT_EVEN : PPL_SPLIT_NONE;
    /* --decoder-first/last-pipeline-num-layers: every stage divides into vp chunks */
    if (s->first % vp == 0 && s->last % vp == 0 && (c->pp == 2 || s->middle % vp == 0))
        return PPL_SPLIT_ENDS;
    /* --account-for-embedding/loss-in-pipeline-split: the embedding and the loss
     * count as a layer of the first and last stage, so ends one layer short of
     * the others make equal stages */
    int64_t n = c->pp > 2 ? s->middle : (s->first > s->last ? s->first : s->last);
    int64_t e = n - s->first, l = n - s->last;
    if (e < 0 || e > 1 || l < 0 || l > 1 || n % vp != 0)
        return PPL_SPLIT_NONE;
    *embedding = e == 1;
    *loss = l == 1;
    return PPL_SPLIT_ACCOUNT;
}

int64_t ppl_vp_group(const ppl_config *c)
{
    const int64_t m = c->microbatches, p = c->pp;
    if (p < 1 || m < p)
        return 0;
    /* megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_
     * with_interleaving: pp <= N <= m, and the last group (m % N) empty or of at
     * least pp microbatches; N = m always qualifies */
    for (int64_t n = p; n < m; n++)
        if (m % n == 0 || m % n >= p)
            return n;
    return m;
}

bool ppl_split_allows_vp(const ppl_config *c, int64_t vp)
{
    bool e, l;
    return ppl_split_form_of(c, vp, &e, &l) != PPL_SPLIT_NONE;
}

ppl_stage_split ppl_stage_split_default(int64_t L, int64_t pp)
{
    ppl_stage_split s = {L, L, 0};
    if (pp <= 1)
        return s;
    if (pp == 2) {
        s.first = L / 2;
        s.last = L - s.first;
        return s;
    }
    if (L % pp == 0) {
        s.first = s.last = s.middle = L / pp;
        return s;
    }
    /* first + (pp-2)*middle + last = L with first, last <= middle, as even as can be */
    for (int64_t m = (L + pp - 1) / pp; m >= 1; m--) {
        int64_t r = L - (pp - 2) * m;
        if (r > 2 * m)
            break;
        if (r >= 2) {
            s.first = r / 2;
            s.last = r - s.first;
            s.middle = m;
            return s;
        }
    }
    /* no lighter ends (5 layers on 4 stages): the ends take the remainder */
    s.middle = L / pp;
    int64_t r = L - (pp - 2) * s.middle;
    s.last = r / 2;
    s.first = r - s.last;
    return s;
}

/* A usage error naming the knob at fault (the command line maps it to its flag). */
#define bad(err, flag, ...) ppl_error_set((err), PPL_EUSAGE, "", (flag), __VA_ARGS__)

bool ppl_precision_low(ppl_precision p)
{
    return p == PPL_PRECISION_FP8 || p == PPL_PRECISION_MXFP8 || p == PPL_PRECISION_NVFP4;
}

double ppl_precision_gemm_bytes(ppl_precision p)
{
    switch (p) {
    case PPL_PRECISION_FP8: return 1.0; /* per-tensor scale: nothing per element */
    case PPL_PRECISION_MXFP8:
        return 1.0 + 1.0 / 32.0; /* OCP MX v1.0: an 8-bit E8M0 scale per 32 elements */
    case PPL_PRECISION_NVFP4:
        return 0.5 + 1.0 / 16.0; /* 4 bits, and an FP8 E4M3 scale per 16 elements */
    default: return 2.0;
    }
}

double ppl_config_gemm_bytes(const ppl_config *c)
{
    /* DeepSeek-V3 report §3.3.2: activations scaled per 1x128 tile, an fp32 scale each */
    if (c->precision == PPL_PRECISION_FP8 && c->fp8_recipe == PPL_FP8_BLOCKWISE)
        return 1.0 + 4.0 / 128.0;
    return ppl_precision_gemm_bytes(c->precision);
}

int64_t ppl_stage_bf16_layers(const ppl_config *c, int64_t stage, int64_t layers)
{
    int64_t n = 0;
    if (c->bf16_layers <= 0)
        return 0;
    if (stage == 0)
        n += c->bf16_layers;
    if (stage == c->pp - 1)
        n += c->bf16_layers;
    return n < layers ? n : layers;
}

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
    ppl_status sched = ppl_pipeline_check(c, err);
    if (sched != PPL_OK)
        return sched;
    if (c->vp > 1) {
        if (c->pp < 2)
            return bad(err, "vp", "interleaving needs at least 2 pipeline stages (vp is %lld)",
                       (long long)c->vp);
        if (c->schedule == PPL_SCHEDULE_GPIPE)
            return bad(err, "vp", "interleaving (vp %lld) is a 1F1B schedule, not GPipe",
                       (long long)c->vp);
        if (!ppl_split_allows_vp(c, c->vp))
            return bad(
                err, "vp",
                "%s needs every stage's layers to divide into vp chunks%s: %lld chunks of "
                "stages of %lld, %lld and %lld layers",
                c->schedule == PPL_SCHEDULE_1F1B ? "interleaving" : ppl_schedule_name(c->schedule),
                c->schedule == PPL_SCHEDULE_1F1B ? " (Megatron-Core)" : "", (long long)c->vp,
                (long long)c->split.first, (long long)c->split.middle, (long long)c->split.last);
        /* schedules.py: the group size N per virtual stage lies in [pp, m] */
        if (c->schedule == PPL_SCHEDULE_1F1B && ppl_vp_group(c) == 0)
            return bad(err, "vp", "interleaving needs at least pp (%lld) microbatches, found %lld",
                       (long long)c->pp, (long long)c->microbatches);
    }
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
    return ppl_shard_check(c, m, err);
}

int64_t ppl_default_global_batch(const ppl_model *m)
{
    double seqs = 4194304.0 / (double)m->seq_len;
    return seqs < 1 ? 1 : (int64_t)pow(2.0, round(log2(seqs)));
}

static int64_t pin(int64_t value, int64_t fallback)
{
    return value == PPL_UNSET ? fallback : value;
}

/* The stage split with --first-stage-layers and/or --last-stage-layers pinned
 * (PPL_UNSET: free): one end pinned, the other takes what keeps the middle
 * stages equal; both pinned, the middle stages share the rest evenly. */
ppl_status ppl_stage_split_pinned(int64_t layers, int64_t pp, int64_t first_pin, int64_t last_pin,
                                  ppl_stage_split *split, ppl_error *err)
{
    *split = ppl_stage_split_default(layers, pp);
    if (first_pin == PPL_UNSET && last_pin == PPL_UNSET)
        return PPL_OK;
    if (pp < 2)
        return bad(err, first_pin != PPL_UNSET ? "first_stage_layers" : "last_stage_layers",
                   "needs at least 2 pipeline stages (pp is %lld)", (long long)pp);
    int64_t first = pin(first_pin, -1), last = pin(last_pin, -1);
    int64_t rest_stages = pp - 2;
    if (first < 0 || last < 0) {
        /* one end pinned: the other takes what keeps the middle stages equal */
        int64_t fixed = first >= 0 ? first : last;
        int64_t best = -1;
        for (int64_t mid = 1; rest_stages > 0 && mid * rest_stages <= layers - fixed; mid++) {
            int64_t other = layers - fixed - mid * rest_stages;
            if (other >= 1 && other <= mid + 1)
                best = mid;
        }
        if (rest_stages == 0)
            best = 0;
        int64_t other = layers - fixed - (best > 0 ? best : 0) * rest_stages;
        if (best < 0 || other < 1)
            return bad(err, first >= 0 ? "first_stage_layers" : "last_stage_layers",
                       "%lld leaves no even split of the other %lld layers", (long long)fixed,
                       (long long)(layers - fixed));
        first = first >= 0 ? first : other;
        last = last >= 0 ? last : other;
        split->middle = best > 0 ? best : 0;
    } else {
        int64_t rest = layers - first - last;
        if (rest_stages == 0 ? rest != 0 : (rest < rest_stages || rest % rest_stages != 0))
            return ppl_error_set(err, PPL_EUSAGE, "", "first_stage_layers",
                                 "%lld + %lld leaves %lld layers, which %lld middle stages "
                                 "cannot share evenly",
                                 (long long)first, (long long)last, (long long)rest,
                                 (long long)rest_stages);
        split->middle = rest_stages > 0 ? rest / rest_stages : 0;
    }
    split->first = first;
    split->last = last;
    return PPL_OK;
}

const char *const ppl_recompute_names[] = {"none", "selective", "full", NULL};
/* in enum order: the training precisions lead ppl_precision (topology.h) */
const char *const ppl_precision_names[] = {"bf16", "fp16", "fp8", "mxfp8", "nvfp4", NULL};
const char *const ppl_fp8_recipe_names[] = {"delayed", "tensorwise", "blockwise", NULL};
const char *const ppl_optimizer_names[] = {"adam", "sgd", NULL};
const char *const ppl_schedule_names[] = {"1f1b", "gpipe",    "zb-h1",     "zb-h2",
                                          "zb-v", "dualpipe", "dualpipev", NULL};
/* Megatron-LM's --cp-comm-type values (megatron/training/arguments.py) */
const char *const ppl_cp_comm_names[] = {"p2p", "a2a", "allgather", "a2a+p2p", NULL};

const char *ppl_recompute_name(int v)
{
    return (unsigned)v < 3 ? ppl_recompute_names[v] : "?";
}
const char *ppl_optimizer_name(int v)
{
    return (unsigned)v < 2 ? ppl_optimizer_names[v] : "?";
}
const char *ppl_schedule_name(int v)
{
    return (unsigned)v < PPL_SCHEDULE_COUNT ? ppl_schedule_names[v] : "?";
}
const char *ppl_cp_comm_name(int v)
{
    return (unsigned)v < PPL_CP_COMM_COUNT ? ppl_cp_comm_names[v] : "?";
}

bool ppl_cp_heads_split(const ppl_model *m, int64_t tp, int64_t ranks)
{
    if (ranks < 1 || tp < 1)
        return false;
    int64_t q = m->heads / tp, kv = m->kv_heads > tp ? m->kv_heads / tp : 1;
    return q % ranks == 0 && kv % ranks == 0;
}

int64_t ppl_cp_a2a_size(const ppl_model *m, const ppl_topology *t, int64_t tp, int64_t cp)
{
    /* the GPUs NVLink joins, as the network model counts them (net.c) */
    int64_t node =
        t->nvlink.domain_gpus > t->gpus_per_server ? t->nvlink.domain_gpus : t->gpus_per_server;
    for (int64_t a = cp; a >= 2; a--)
        if (cp % a == 0 && tp * a <= node && node % (tp * a) == 0 && ppl_cp_heads_split(m, tp, a))
            return a;
    return 1;
}

const char *const ppl_pin_names[] = {"gpus",
                                     "tp",
                                     "pp",
                                     "dp",
                                     "cp",
                                     "ep",
                                     "etp",
                                     "vp",
                                     "mbs",
                                     "global_batch",
                                     "zero",
                                     "recompute",
                                     "sequence_parallel",
                                     "flash_attention",
                                     "ep_overlap",
                                     "precision",
                                     "optimizer",
                                     "schedule",
                                     "cp_comm",
                                     "first_stage_layers",
                                     "last_stage_layers",
                                     "recompute_layers",
                                     "shard_group",
                                     "offload_optimizer",
                                     "fp8_recipe",
                                     "bf16_layers",
                                     NULL};

void ppl_pins_init(ppl_pins *p)
{
    memset(p, 0, sizeof *p);
    p->gpus = p->tp = p->pp = p->dp = p->cp = p->ep = p->vp = p->mbs = p->global_batch = PPL_UNSET;
    p->etp = PPL_UNSET;
    p->zero = p->recompute = p->sequence_parallel = p->flash_attention = PPL_UNSET;
    p->ep_overlap = PPL_UNSET;
    p->precision = PPL_PRECISION_BF16;
    p->optimizer = PPL_OPTIMIZER_ADAM;
    p->schedule = PPL_SCHEDULE_1F1B;
    p->cp_comm = PPL_UNSET;
    p->first_stage_layers = p->last_stage_layers = p->recompute_layers = PPL_UNSET;
    p->shard_group = PPL_UNSET;
    p->offload_optimizer = PPL_UNSET;
    p->fp8_recipe = PPL_FP8_DELAYED;
    p->bf16_layers = 0;
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
    c->vp = pin(a->vp, ppl_schedule_chunks(a->schedule) == 2 ? 2 : 1);
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
    c->ep_overlap = a->ep_overlap == 1;
    c->precision = (ppl_precision)a->precision;
    c->optimizer = (ppl_optimizer)a->optimizer;
    c->schedule = (ppl_schedule)a->schedule;
    /* Megatron-LM's default --cp-comm-type is p2p (megatron/training/arguments.py) */
    c->cp_comm = a->cp_comm == PPL_UNSET ? PPL_CP_COMM_P2P : (ppl_cp_comm)a->cp_comm;
    c->cp_a2a = ppl_cp_a2a_size(m, t, c->tp, c->cp);
    c->shard_group = a->shard_group == PPL_UNSET ? 0 : a->shard_group;
    c->offload_optimizer = a->offload_optimizer < 0 ? 0.0 : a->offload_optimizer;
    c->fp8_recipe = (ppl_fp8_recipe)a->fp8_recipe;
    c->bf16_layers = a->bf16_layers < 0 ? 0 : a->bf16_layers;
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
