/*
 * pipeline.c - the pipeline schedules, one row each (see cost/pipeline.h).
 *
 * 1F1B and GPipe: Narayanan et al. SC'21 §2.2, (p-1)(F+B+W) of bubble, 1F1B keeping
 * p - k microbatches in flight on stage k (Korthikanti et al. 2022 Eq.5), GPipe all
 * m; interleaved 1F1B takes 1/v of the bubble (§2.2.2) and keeps Megatron-Core's
 * warm-up (in_flight_1f1b).
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
#include "cost/pipeline.h"

#include "base/minmax.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#define INTERLEAVED_NAME "interleaved"

const char *const ppl_schedule_names[] = {
#define NAME(e, name, label) name,
    PPL_SCHEDULE_LIST(NAME)
#undef NAME
        NULL};

static const char *const labels[] = {
#define LABEL(e, name, label) label,
    PPL_SCHEDULE_LIST(LABEL)
#undef LABEL
};

const char *const ppl_schedule_config_names[] = {
#define NAME(e, name, label) name,
    PPL_SCHEDULE_LIST(NAME)
#undef NAME
        INTERLEAVED_NAME,
    NULL};

/* ---- bubbles (others: the passes of the stages but the slowest) -------- */

static double bubble_1f1b(int64_t pp, int64_t vp, const ppl_passes *o)
{
    (void)pp; /* interleaving takes 1/v of the pass */
    return (o->f_s + o->b_s + o->w_s) / (vp > 1 ? (double)vp : 1.0);
}

static double bubble_zb_h1(int64_t pp, int64_t vp, const ppl_passes *o)
{
    (void)pp, (void)vp;
    return ppl_pos(o->f_s + o->b_s - o->w_s);
}

static double bubble_zb_h2(int64_t pp, int64_t vp, const ppl_passes *o)
{
    (void)pp, (void)vp;
    return ppl_pos(o->f_s + o->b_s - 2.0 * o->w_s);
}

static double bubble_zb_v(int64_t pp, int64_t vp, const ppl_passes *o)
{
    (void)pp, (void)vp;
    return 0.5 * ppl_pos(o->f_s + o->b_s - 2.0 * o->w_s);
}

static double bubble_dualpipe(int64_t pp, int64_t vp, const ppl_passes *o)
{
    (void)vp;
    const double p = (double)pp;
    return pp < 2 ? 0.0 : (p / 2.0 - 1.0) / (p - 1.0) * ppl_pos(o->fb_s + o->b_s - 2.0 * o->w_s);
}

static double bubble_dualpipev(int64_t pp, int64_t vp, const ppl_passes *o)
{
    (void)pp, (void)vp;
    return 0.5 * ppl_pos(o->fb_s + o->b_s - 2.0 * o->w_s);
}

/* ---- activations in flight, capped at the m microbatches there are ------- */

static double cap_m(const ppl_config *c, double n)
{
    const double m = (double)c->microbatches;
    return n < m ? n : m;
}

static double in_flight_1f1b(const ppl_config *c, int64_t stage)
{
    const double m = (double)c->microbatches, p = (double)c->pp, k = (double)stage;
    if (c->vp <= 1)
        return ppl_min(p - k, m);
    /* Megatron-Core's warm-up (schedules.py get_pp_rank_microbatches):
     * 2 (p - k - 1) + (v - 1) N chunk-microbatches before the first backward, N the
     * group per virtual stage (ppl_vp_group: pp unless m is not a multiple of it) */
    const double v = (double)c->vp, n = (double)ppl_vp_group(c);
    double chunks = 2.0 * (p - k - 1.0) + (v - 1.0) * (n > 0 ? n : p) + 1.0;
    return ppl_min(chunks, m * v) / v;
}

static double in_flight_gpipe(const ppl_config *c, int64_t stage)
{
    (void)stage;
    return (double)c->microbatches;
}

/* Table 2 / §2.3: 1F1B's p - k (the W-pending M_W not counted) */
static double in_flight_zb_h1(const ppl_config *c, int64_t stage)
{
    return cap_m(c, (double)c->pp - (double)stage);
}

/* §2.3: worker k+1 holds (2p - 2k - 1) M_B */
static double in_flight_zb_h2(const ppl_config *c, int64_t stage)
{
    return cap_m(c, 2.0 * ((double)c->pp - (double)stage) - 1.0);
}

/* §6: p M_B on every rank, as 1F1B's first stage, once m >= 2p - 1; with fewer
 * microbatches the V's order (executor.c program_zb_v) holds (m + k + 1)/2 on rank
 * k: its 2(p-k)-1 first-chunk warm-up forwards are cut to m (test_executor runs it) */
static double in_flight_zb_v(const ppl_config *c, int64_t stage)
{
    double held = 0.5 * ((double)c->microbatches + (double)stage + 1.0);
    return cap_m(c, held < (double)c->pp ? held : (double)c->pp);
}

/* DeepSeek-V3 Table 2: PP + 1 */
static double in_flight_dualpipe(const ppl_config *c, int64_t stage)
{
    (void)stage;
    return cap_m(c, (double)c->pp + 1.0);
}

/* dualpipev.py step 1 and 2: every rank r runs 2(p - r - 1) + 2(r + 1) = 2p chunk
 * forwards before its first backward, one more under the first F&B: 2p + 1 chunks
 * of half the rank's layers (the README's PP + 1, PP = 2p) */
static double in_flight_dualpipev(const ppl_config *c, int64_t stage)
{
    (void)stage;
    return cap_m(c, (double)c->pp + 0.5);
}

/* ---- rules ---------------------------------------------------------------- */

#define bad(err, key, ...) ppl_error_set((err), PPL_EUSAGE, "", (key), __VA_ARGS__)

static ppl_status interleaving_needs_stages(const ppl_config *c, ppl_error *err)
{
    return bad(err, "vp", "interleaving needs at least 2 pipeline stages (vp is %lld)",
               (long long)c->vp);
}

/* Megatron-Core's interleaved 1F1B (megatron/core/transformer/transformer_config.py,
 * "Uneven PP"; schedules.py: the group size N per virtual stage lies in [pp, m]). */
static ppl_status check_1f1b(const ppl_config *c, ppl_error *err)
{
    if (c->vp <= 1)
        return PPL_OK;
    if (c->pp < 2)
        return interleaving_needs_stages(c, err);
    if (!ppl_split_allows_vp(c, c->vp))
        return bad(err, "vp",
                   "interleaving needs at least a layer a chunk (Megatron-Core's "
                   "--pipeline-model-parallel-layout): %lld chunks of stages of %lld, %lld "
                   "and %lld layers",
                   (long long)c->vp, (long long)c->split.first, (long long)c->split.middle,
                   (long long)c->split.last);
    if (ppl_vp_group(c) == 0)
        return bad(err, "vp", "interleaving needs at least pp (%lld) microbatches, found %lld",
                   (long long)c->pp, (long long)c->microbatches);
    return PPL_OK;
}

static ppl_status check_gpipe(const ppl_config *c, ppl_error *err)
{
    if (c->vp <= 1)
        return PPL_OK;
    if (c->pp < 2)
        return interleaving_needs_stages(c, err);
    return bad(err, "vp", "interleaving (vp %lld) is a 1F1B schedule, not GPipe", (long long)c->vp);
}

/* The schedules that split the backward: pp >= 2, the row's chunks a rank, and for
 * DualPipe and DualPipeV deepseek-ai/DualPipe's asserts (dualpipe/dualpipe.py
 * step(): "assert num_ranks % 2 == 0", "num_chunks % 2 == 0 and num_chunks >=
 * num_ranks * 2"; dualpipev.py step(): "num_chunks >= num_ranks * 2", num_chunks
 * being the microbatches). */
static ppl_status check_split(const ppl_config *c, ppl_error *err)
{
    const int s = c->schedule;
    const ppl_schedule_row *row = ppl_schedule_of(s);
    const char *name = ppl_schedule_name(s);
    const long long pp = (long long)c->pp, m = (long long)c->microbatches;
    if (c->pp < 2)
        return ppl_error_set(err, PPL_EUSAGE, "", "schedule",
                             "%s is a pipeline schedule: it needs pp >= 2 (pp is %lld)", name, pp);
    if (c->vp != row->chunks)
        return ppl_error_set(err, PPL_EUSAGE, "", "vp",
                             row->chunks == 2
                                 ? "%s places two model chunks on each rank in a V: vp "
                                   "must be 2 (found %lld)"
                                 : "%s holds one model chunk on each rank: vp must be "
                                   "1 (found %lld)",
                             name, (long long)c->vp);
    if (s == PPL_SCHEDULE_DUALPIPE && c->pp % 2 != 0)
        return ppl_error_set(err, PPL_EUSAGE, "", "pp",
                             "dualpipe pairs rank k with rank pp-1-k: pp must be even (found %lld)",
                             pp);
    if (row->overlaps_fb && m < 2 * pp)
        return ppl_error_set(err, PPL_EUSAGE, "", "global_batch",
                             "%s needs at least 2*pp = %lld microbatches, global_batch/(dp*mbs) "
                             "gives %lld",
                             name, 2 * pp, m);
    if (s == PPL_SCHEDULE_DUALPIPE && m % 2 != 0)
        return ppl_error_set(err, PPL_EUSAGE, "", "global_batch",
                             "dualpipe splits the microbatches into two directions: "
                             "global_batch/(dp*mbs) = %lld must be even",
                             m);
    /* the V-shaped ones: two chunks of every stage's layers */
    if (c->vp > 1 && !ppl_split_flags_allow_vp(c, c->vp))
        return bad(err, "vp",
                   "%s needs every stage's layers to divide into vp chunks: %lld chunks of "
                   "stages of %lld, %lld and %lld layers",
                   name, (long long)c->vp, (long long)c->split.first, (long long)c->split.middle,
                   (long long)c->split.last);
    return PPL_OK;
}

/* ---- the table -------------------------------------------------------------- */

/* Megatron-Core at d98e8a64dd runs 1F1B, interleaved or not; its combined 1F1B
 * (megatron/core/pipeline_parallel/combined_1f1b.py:35, :138) overlaps one
 * microbatch's forward with another's backward to hide the expert all-to-all
 * (--overlap-moe-expert-parallel-comm, costed as ep_overlap), and
 * --delay-wgrad-compute (model_parallel_config.py:348) defers weight gradients
 * inside that overlap: neither reorders the pipeline into the other schedules. */
#define NO_ZB                                                                                      \
    "Megatron-LM has no zero-bubble schedule (zb-h1, zb-h2, zb-v); pin --schedule 1f1b for a "     \
    "plan it can run"
#define NO_DUALPIPE                                                                                \
    "Megatron-LM has no DualPipe schedule (dualpipe, dualpipev); pin --schedule 1f1b for a "       \
    "plan it can run"

static const ppl_schedule_row rows[PPL_SCHEDULE_COUNT] = {
    [PPL_SCHEDULE_1F1B] = {.chunks = 0,
                           .param_copies = 1.0,
                           .bubble_s = bubble_1f1b,
                           .in_flight = in_flight_1f1b,
                           .check = check_1f1b,
                           .launchers = "Megatron-LM (interleaved with --vp > 1), DeepSpeed (vp 1 "
                                        "only) and PyTorch pipelining",
                           .torchtitan = "1F1B",
                           .torchtitan_vp = "Interleaved1F1B"},
    [PPL_SCHEDULE_GPIPE] = {.chunks = 1,
                            .forwards_first = true,
                            .param_copies = 1.0,
                            .bubble_s = bubble_1f1b,
                            .in_flight = in_flight_gpipe,
                            .check = check_gpipe,
                            .megatron_error = "Megatron-LM has no GPipe schedule; pin --schedule "
                                              "1f1b for a plan it can run",
                            .launchers = "PyTorch pipelining (ScheduleGPipe); not Megatron-LM, "
                                         "nor DeepSpeed (its pipeline engine trains 1F1B)",
                            .torchtitan = "GPipe"},
    [PPL_SCHEDULE_ZB_H1] = {.chunks = 1,
                            .splits_backward = true,
                            .param_copies = 1.0,
                            .bubble_s = bubble_zb_h1,
                            .in_flight = in_flight_zb_h1,
                            .check = check_split,
                            .megatron_error = NO_ZB,
                            .launchers = "PyTorch pipelining (ScheduleInterleavedZeroBubble, the "
                                         "ZB1P schedule) and Sea AI Lab's zero-bubble Megatron-LM "
                                         "fork; not Megatron-LM or DeepSpeed"},
    [PPL_SCHEDULE_ZB_H2] = {.chunks = 1,
                            .splits_backward = true,
                            .param_copies = 1.0,
                            .bubble_s = bubble_zb_h2,
                            .in_flight = in_flight_zb_h2,
                            .check = check_split,
                            .megatron_error = NO_ZB,
                            .launchers = "Sea AI Lab's zero-bubble Megatron-LM fork only; not "
                                         "Megatron-LM, DeepSpeed or PyTorch pipelining"},
    [PPL_SCHEDULE_ZB_V] = {.chunks = 2,
                           .splits_backward = true,
                           .param_copies = 1.0,
                           .bubble_s = bubble_zb_v,
                           .in_flight = in_flight_zb_v,
                           .check = check_split,
                           .megatron_error = NO_ZB,
                           .launchers = "PyTorch pipelining (ScheduleZBVZeroBubble) and Sea AI "
                                        "Lab's fork; not Megatron-LM or DeepSpeed",
                           .torchtitan = "ZBVZeroBubble"},
    /* DeepSeek-V3 Table 2: "Parameter 2x" (rank k holds stages k and p-1-k) */
    [PPL_SCHEDULE_DUALPIPE] = {.chunks = 1,
                               .splits_backward = true,
                               .overlaps_fb = true,
                               .param_copies = 2.0,
                               .bubble_s = bubble_dualpipe,
                               .in_flight = in_flight_dualpipe,
                               .check = check_split,
                               .megatron_error = NO_DUALPIPE,
                               .launchers = "DeepSeek's DualPipe (deepseek-ai/DualPipe) only; not "
                                            "Megatron-LM, DeepSpeed or PyTorch pipelining"},
    [PPL_SCHEDULE_DUALPIPEV] = {.chunks = 2,
                                .splits_backward = true,
                                .overlaps_fb = true,
                                .param_copies = 1.0,
                                .bubble_s = bubble_dualpipev,
                                .in_flight = in_flight_dualpipev,
                                .check = check_split,
                                .megatron_error = NO_DUALPIPE,
                                .launchers = "PyTorch pipelining (ScheduleDualPipeV) and "
                                             "deepseek-ai/DualPipe; not Megatron-LM or DeepSpeed",
                                .torchtitan = "DualPipeV"},
};

const ppl_schedule_row *ppl_schedule_of(int s)
{
    return &rows[(unsigned)s < PPL_SCHEDULE_COUNT ? s : PPL_SCHEDULE_1F1B];
}

bool ppl_schedule_is_line(int s)
{
    return ppl_schedule_of(s)->chunks != 2 && s != PPL_SCHEDULE_DUALPIPE;
}

const char *ppl_schedule_name(int s)
{
    return (unsigned)s < PPL_SCHEDULE_COUNT ? ppl_schedule_names[s] : "?";
}

const char *ppl_schedule_label(int s)
{
    return (unsigned)s < PPL_SCHEDULE_COUNT ? labels[s] : "?";
}

const char *ppl_config_schedule_name(const ppl_config *c)
{
    return ppl_schedule_of(c->schedule)->chunks == 0 && c->vp > 1 ? INTERLEAVED_NAME
                                                                  : ppl_schedule_name(c->schedule);
}

const char *ppl_config_schedule_label(const ppl_config *c)
{
    return ppl_schedule_of(c->schedule)->chunks == 0 && c->vp > 1 ? INTERLEAVED_NAME " 1F1B"
                                                                  : ppl_schedule_label(c->schedule);
}

double ppl_pipeline_bubble_s(int s, int64_t pp, int64_t vp, const ppl_passes *others)
{
    return ppl_schedule_of(s)->bubble_s(pp, vp, others);
}

ppl_status ppl_pipeline_check(const ppl_config *c, ppl_error *err)
{
    return ppl_schedule_of(c->schedule)->check(c, err);
}

/* ---- lower bounds (executor.h runs the pipeline itself) ------------------- */

double ppl_passes_fb_share(const ppl_passes *st)
{
    double sum = st->f_s + st->b_s + st->w_s;
    return sum > 0.0 && st->fb_s < sum ? st->fb_s / sum : 1.0;
}

double ppl_pipe_bound_s(const ppl_pipe_in *in)
{
    const ppl_schedule_row *row = ppl_schedule_of(in->schedule);
    const int64_t p = in->pp, m = in->microbatches;
    const bool dual = in->schedule == PPL_SCHEDULE_DUALPIPE;
    double sum_f = 0.0, sum_b = 0.0, sum_w = 0.0, hops = 0.0;
    for (int64_t k = 0; k < p; k++) {
        sum_f += in->stage[k].f_s;
        sum_b += in->stage[k].b_s;
        sum_w += in->stage[k].w_s;
        if (k + 1 < p && in->hop_s)
            hops += in->hop_s[k];
    }
    /* one microbatch's chain: every stage's F, then every B back (each stage's W
     * with it unless the schedule defers W, then the first stage's W last); a V
     * crosses every link twice each way, a line of vp chunks vp times */
    const double crossings = row->chunks == 2 ? 2.0 : dual ? 1.0 : (double)in->vp;
    double chain = sum_f + sum_b + (row->splits_backward ? 0.0 : sum_w) + 2.0 * crossings * hops;
    if (row->splits_backward) {
        double w_end = in->stage[0].w_s; /* the route ends on rank 0 */
        if (dual) /* either direction may be the last: the smaller end */
            w_end = ppl_min(in->stage[0].w_s, in->stage[p - 1].w_s);
        chain += w_end / (row->chunks == 2 ? 2.0 : 1.0);
    }
    double bound = row->overlaps_fb ? 0.0 : chain;
    /* each rank: the earliest its first forward can start, then its work (an F&B
     * op at most hides the smaller share); without deferred W, the last
     * microbatch's backward through the ranks before it after its own */
    const double chunk = row->chunks == 2 ? 0.5 : dual ? 1.0 : 1.0 / (double)in->vp;
    double head = 0.0, tail = 0.0, least_share = 1.0;
    for (int64_t k = 0; k < p; k++) {
        const ppl_passes *a = &in->stage[k];
        double work = (double)m * (a->f_s + a->b_s + a->w_s);
        double share = ppl_passes_fb_share(a);
        double start = head;
        if (dual) {
            const ppl_passes *b = &in->stage[p - 1 - k];
            work = 0.5 * work + 0.5 * (double)m * (b->f_s + b->b_s + b->w_s);
            share = ppl_min(share, ppl_passes_fb_share(b));
            /* the second direction reaches rank k through stages 0 .. p-2-k */
            double other = 0.0;
            for (int64_t j = 0; j < p - 1 - k; j++)
                other += in->stage[j].f_s + (in->hop_s ? in->hop_s[p - 2 - j] : 0.0);
            start = ppl_min(start, other);
        }
        if (row->overlaps_fb)
            work *= share;
        least_share = ppl_min(least_share, share);
        double r = start + work + (row->splits_backward ? 0.0 : tail);
        bound = ppl_max(bound, r);
        head += chunk * a->f_s + (k + 1 < p && in->hop_s ? in->hop_s[k] : 0.0);
        tail += chunk * (a->b_s + a->w_s) + (k + 1 < p && in->hop_s ? in->hop_s[k] : 0.0);
    }
    /* an F&B op takes at least the smallest F&B share of its passes alone */
    return row->overlaps_fb ? ppl_max(bound, least_share * chain) : bound;
}

void ppl_pipe_spans_expand(const ppl_pipe_span *sp, size_t n, int64_t pp, ppl_passes *stage,
                           double *hop_s)
{
    for (size_t i = 0; i < n; i++)
        for (int64_t j = 0; j < sp[i].count; j++) {
            int64_t at = sp[i].first_stage + j;
            if (at < 0 || at >= pp)
                continue;
            stage[at] = sp[i].passes;
            if (at + 1 < pp)
                hop_s[at] = j + 1 == sp[i].count ? sp[i].last_hop_s : sp[i].hop_s;
        }
}

double ppl_pipe_bound_spans_s(int schedule, int64_t pp, int64_t vp, int64_t m,
                              const ppl_pipe_span *sp, size_t n)
{
    const ppl_schedule_row *row = ppl_schedule_of(schedule);
    if (schedule == PPL_SCHEDULE_DUALPIPE || n == 0) { /* stage by stage */
        ppl_passes *stage = calloc((size_t)(pp > 0 ? pp : 1), sizeof *stage);
        double *hop = calloc((size_t)(pp > 0 ? pp : 1), sizeof *hop);
        double b = NAN;
        if (stage && hop) {
            ppl_pipe_spans_expand(sp, n, pp, stage, hop);
            ppl_pipe_in in = {schedule, pp, vp, m, 0, stage, hop};
            b = ppl_pipe_bound_s(&in);
        }
        free(stage), free(hop);
        return b;
    }
    /* the same terms as ppl_pipe_bound_s; within a run the start and the drain grow
     * stage by stage, so its last stage bounds it */
    double sum_f = 0.0, sum_b = 0.0, sum_w = 0.0, hops = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double c = (double)sp[i].count;
        sum_f += c * sp[i].passes.f_s;
        sum_b += c * sp[i].passes.b_s;
        sum_w += c * sp[i].passes.w_s;
        hops += (c - 1.0) * sp[i].hop_s + (i + 1 < n ? sp[i].last_hop_s : 0.0);
    }
    const double crossings = row->chunks == 2 ? 2.0 : (double)vp;
    double chain = sum_f + sum_b + (row->splits_backward ? 0.0 : sum_w) + 2.0 * crossings * hops;
    if (row->splits_backward)
        chain += sp[0].passes.w_s / (row->chunks == 2 ? 2.0 : 1.0);
    double bound = row->overlaps_fb ? 0.0 : chain;
    const double chunk = row->chunks == 2 ? 0.5 : 1.0 / (double)vp;
    double head = 0.0, tail = 0.0, least_share = 1.0;
    for (size_t i = 0; i < n; i++) {
        const ppl_passes *a = &sp[i].passes;
        const double c = (double)sp[i].count, out = i + 1 < n ? sp[i].last_hop_s : 0.0;
        double work = (double)m * (a->f_s + a->b_s + a->w_s);
        double share = ppl_passes_fb_share(a);
        if (row->overlaps_fb)
            work *= share;
        least_share = ppl_min(least_share, share);
        double head_last = head + (c - 1.0) * (chunk * a->f_s + sp[i].hop_s);
        double tail_last = tail + (c - 1.0) * (chunk * (a->b_s + a->w_s) + sp[i].hop_s);
        bound = ppl_max(bound, head_last + work + (row->splits_backward ? 0.0 : tail_last));
        head = head_last + chunk * a->f_s + out;
        tail = tail_last + chunk * (a->b_s + a->w_s) + out;
    }
    return row->overlaps_fb ? ppl_max(bound, least_share * chain) : bound;
}
