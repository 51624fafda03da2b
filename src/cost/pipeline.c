/*
 * pipeline.c - the schedules that split the backward pass (see parplan/pipeline.h).
 *
 * Bubbles (p ranks, passes F, B (to the input), W (to the weights), FB (DualPipe's
 * F&B) per microbatch of one stage):
 *   ZB-H1 and ZB-H2: Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024,
 *     Table 2: 1F1B (p-1)(T_F+T_B+T_W) at p M_B of activations, ZB-H1
 *     (p-1)(T_F+T_B-T_W) at p M_B, ZB-H2 (p-1)(T_F+T_B-2T_W) at (2p-1) M_B; §2.3
 *     gives worker i (1-based) (p-i+1) M_B + (i-1) M_W under ZB-H1 and
 *     (2p-2i+1) M_B + (2i-2) M_W under ZB-H2.  ZB-H2's bubble is no less than 0
 *     (W beyond (F+B)/2 cannot make idle time negative).
 *   ZB-V: the same paper's §6 (arXiv 2401.10241v2) places 2p chunks of half a
 *     stage in a V (rank k holds chunks k and 2p-1-k) and shows no bubble when
 *     T_F = T_B = T_W at 1F1B's peak memory, p M_B on every rank (also Qi et al.
 *     2024, "Pipeline Parallelism with Controllable Memory", NeurIPS, V-ZB: bubble
 *     0 and p microbatches of activations).  Neither gives a closed form for other
 *     times (torch/distributed/pipelining/schedules.py, ScheduleZBVZeroBubble: zero
 *     bubble "only if time forward == time backward input == time backward
 *     weights").  parplan takes ZB-H2's parallelogram with passes of half a stage,
 *     (p-1)(F/2 + B/2 - 2 W/2) = (p-1)(F+B-2W)/2, at least 0: zero where the
 *     paper's is, half ZB-H2's where it is not (an assumption).
 *   DualPipe: DeepSeek-V3 Technical Report (arXiv 2412.19437) Table 2:
 *     (PP/2-1)(F&B+B-3W) with B the whole backward chunk, 2x the parameters and
 *     PP+1 microbatches of activations per device; in B-to-the-input terms
 *     (p/2-1)(FB + (B+W) - 3W) = (p/2-1)(FB+B-2W).
 *   DualPipeV: github.com/deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory
 *     Usage Comparison": the bubble and activations of DualPipe on PP stages run
 *     by PP/2 devices, each holding two stages in a V (so one copy of each stage's
 *     parameters).  On p ranks the stages are 2p chunks of half a rank:
 *     (2p/2-1)(FB/2 + B/2 - 2W/2) = (p-1)(FB+B-2W)/2.
 * Unequal stages: the bubble is the formula over the stages other than the slowest,
 * as schedule.c's 1F1B takes one pass through them (so that equal stages give the
 * formulas above exactly): the sums of their passes in place of (p-1) x one stage's;
 * DualPipe scales its (p/2-1) by the same mean, (p/2-1)/(p-1) x the sum.
 */
#include "parplan/pipeline.h"

#include <stddef.h>

static double pos(double x)
{
    return x > 0.0 ? x : 0.0;
}

bool ppl_schedule_splits_backward(int s)
{
    return s == PPL_SCHEDULE_ZB_H1 || s == PPL_SCHEDULE_ZB_H2 || s == PPL_SCHEDULE_ZB_V ||
           s == PPL_SCHEDULE_DUALPIPE || s == PPL_SCHEDULE_DUALPIPEV;
}

int64_t ppl_schedule_chunks(int s)
{
    if (s == PPL_SCHEDULE_ZB_V || s == PPL_SCHEDULE_DUALPIPEV)
        return 2;
    return s == PPL_SCHEDULE_1F1B ? 0 : 1;
}

bool ppl_schedule_overlaps_fb(int s)
{
    return s == PPL_SCHEDULE_DUALPIPE || s == PPL_SCHEDULE_DUALPIPEV;
}

double ppl_pipeline_bubble_s(int s, int64_t pp, int64_t vp, const ppl_passes *o)
{
    const double p = (double)pp;
    switch (s) {
    case PPL_SCHEDULE_ZB_H1: return pos(o->f_s + o->b_s - o->w_s);
    case PPL_SCHEDULE_ZB_H2: return pos(o->f_s + o->b_s - 2.0 * o->w_s);
    case PPL_SCHEDULE_ZB_V: return 0.5 * pos(o->f_s + o->b_s - 2.0 * o->w_s);
    case PPL_SCHEDULE_DUALPIPE:
        return pp < 2 ? 0.0 : (p / 2.0 - 1.0) / (p - 1.0) * pos(o->fb_s + o->b_s - 2.0 * o->w_s);
    case PPL_SCHEDULE_DUALPIPEV: return 0.5 * pos(o->fb_s + o->b_s - 2.0 * o->w_s);
    default: /* 1F1B and GPipe; interleaving takes 1/v of the pass */
        return (o->f_s + o->b_s + o->w_s) / (vp > 1 ? (double)vp : 1.0);
    }
}

double ppl_pipeline_in_flight(const ppl_config *c, int64_t stage)
{
    const double m = (double)c->microbatches, p = (double)c->pp, k = (double)stage;
    double n;
    switch (c->schedule) {
    case PPL_SCHEDULE_ZB_H1: /* Table 2 / §2.3: 1F1B's p - k (the W-pending M_W not counted) */
        n = p - k;
        break;
    case PPL_SCHEDULE_ZB_H2: /* §2.3: worker k+1 holds (2p - 2k - 1) M_B */
        n = 2.0 * (p - k) - 1.0;
        break;
    case PPL_SCHEDULE_ZB_V: /* §6: p M_B on every rank, as 1F1B's first stage */ n = p; break;
    case PPL_SCHEDULE_DUALPIPE: /* DeepSeek-V3 Table 2: PP + 1 */ n = p + 1.0; break;
    case PPL_SCHEDULE_DUALPIPEV:
        /* dualpipev.py step 1 and 2: every rank r runs 2(p - r - 1) + 2(r + 1) = 2p
         * chunk forwards before its first backward, one more under the first F&B:
         * 2p + 1 chunks of half the rank's layers (the README's PP + 1, PP = 2p) */
        n = p + 0.5;
        break;
    default: n = p - k; break;
    }
    return n < m ? n : m;
}

double ppl_pipeline_param_copies(int s)
{
    /* DeepSeek-V3 Table 2: "Parameter 2x" (rank k holds stages k and p-1-k) */
    return s == PPL_SCHEDULE_DUALPIPE ? 2.0 : 1.0;
}

ppl_status ppl_pipeline_check(const ppl_config *c, ppl_error *err)
{
    const int s = c->schedule;
    if (!ppl_schedule_splits_backward(s))
        return PPL_OK;
    const char *name = ppl_schedule_name(s);
    const long long pp = (long long)c->pp, m = (long long)c->microbatches;
    if (c->pp < 2)
        return ppl_error_set(err, PPL_EUSAGE, "", "schedule",
                             "%s is a pipeline schedule: it needs pp >= 2 (pp is %lld)", name, pp);
    const int64_t chunks = ppl_schedule_chunks(s);
    if (c->vp != chunks)
        return ppl_error_set(err, PPL_EUSAGE, "", "vp",
                             chunks == 2 ? "%s places two model chunks on each rank in a V: vp "
                                           "must be 2 (found %lld)"
                                         : "%s holds one model chunk on each rank: vp must be 1 "
                                           "(found %lld)",
                             name, (long long)c->vp);
    /* deepseek-ai/DualPipe dualpipe/dualpipe.py step(): "assert num_ranks % 2 == 0",
     * "num_chunks % 2 == 0 and num_chunks >= num_ranks * 2"; dualpipev.py step():
     * "num_chunks >= num_ranks * 2" (num_chunks: the microbatches) */
    if (s == PPL_SCHEDULE_DUALPIPE && c->pp % 2 != 0)
        return ppl_error_set(err, PPL_EUSAGE, "", "pp",
                             "dualpipe pairs rank k with rank pp-1-k: pp must be even (found %lld)",
                             pp);
    if ((s == PPL_SCHEDULE_DUALPIPE || s == PPL_SCHEDULE_DUALPIPEV) && m < 2 * pp)
        return ppl_error_set(err, PPL_EUSAGE, "", "global_batch",
                             "%s needs at least 2*pp = %lld microbatches, global_batch/(dp*mbs) "
                             "gives %lld",
                             name, 2 * pp, m);
    if (s == PPL_SCHEDULE_DUALPIPE && m % 2 != 0)
        return ppl_error_set(err, PPL_EUSAGE, "", "global_batch",
                             "dualpipe splits the microbatches into two directions: "
                             "global_batch/(dp*mbs) = %lld must be even",
                             m);
    return PPL_OK;
}

const char *ppl_schedule_megatron_error(int s)
{
    /* Megatron-Core at d98e8a64dd runs 1F1B, interleaved or not; its combined 1F1B
     * (megatron/core/pipeline_parallel/combined_1f1b.py:35, :138) overlaps one
     * microbatch's forward with another's backward to hide the expert all-to-all
     * (--overlap-moe-expert-parallel-comm, costed as ep_overlap), and
     * --delay-wgrad-compute (model_parallel_config.py:348) defers weight gradients
     * inside that overlap: neither reorders the pipeline into these schedules */
    switch (s) {
    case PPL_SCHEDULE_GPIPE:
        return "Megatron-LM has no GPipe schedule; pin --schedule 1f1b for a plan it can run";
    case PPL_SCHEDULE_ZB_H1:
    case PPL_SCHEDULE_ZB_H2:
    case PPL_SCHEDULE_ZB_V:
        return "Megatron-LM has no zero-bubble schedule (zb-h1, zb-h2, zb-v); pin --schedule 1f1b "
               "for a plan it can run";
    case PPL_SCHEDULE_DUALPIPE:
    case PPL_SCHEDULE_DUALPIPEV:
        return "Megatron-LM has no DualPipe schedule (dualpipe, dualpipev); pin --schedule 1f1b "
               "for a plan it can run";
    default: return NULL;
    }
}

const char *ppl_schedule_launchers(int s)
{
    switch (s) {
    case PPL_SCHEDULE_GPIPE:
        return "DeepSpeed and PyTorch pipelining (ScheduleGPipe); not Megatron-LM";
    case PPL_SCHEDULE_ZB_H1:
        return "PyTorch pipelining (ScheduleInterleavedZeroBubble, the ZB1P schedule) and Sea AI "
               "Lab's zero-bubble Megatron-LM fork; not Megatron-LM or DeepSpeed";
    case PPL_SCHEDULE_ZB_H2:
        return "Sea AI Lab's zero-bubble Megatron-LM fork only; not Megatron-LM, DeepSpeed or "
               "PyTorch pipelining";
    case PPL_SCHEDULE_ZB_V:
        return "PyTorch pipelining (ScheduleZBVZeroBubble) and Sea AI Lab's fork; not Megatron-LM "
               "or DeepSpeed";
    case PPL_SCHEDULE_DUALPIPE:
        return "DeepSeek's DualPipe (deepseek-ai/DualPipe) only; not Megatron-LM, DeepSpeed or "
               "PyTorch pipelining";
    case PPL_SCHEDULE_DUALPIPEV:
        return "PyTorch pipelining (ScheduleDualPipeV) and deepseek-ai/DualPipe; not Megatron-LM "
               "or DeepSpeed";
    default:
        return "Megatron-LM (interleaved with --vp > 1), DeepSpeed (vp 1) and PyTorch pipelining";
    }
}
