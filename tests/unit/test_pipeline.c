/*
 * test_pipeline.c - the schedules that split the backward (pipeline.h): bubble
 * formulas against hand computations, activations in flight, DualPipe's second
 * copy of the parameters, the B/W split of a hand-computed layer, the wiring into
 * the step time, and the configuration rules; the stage classes and the
 * data-parallel times they share.
 */
#include "testutil.h"

#include "cost/estimate.h"
#include "cost/pipeline.h"
#include "cost/rules.h"

/* The passes of p - 1 equal stages of F = 1.0, B = 1.2, W = 0.8, FB = 2.6 s. */
static ppl_passes others(int64_t p)
{
    const double n = (double)(p - 1);
    ppl_passes o = {n * 1.0, n * 1.2, n * 0.8, n * 2.6};
    return o;
}

/*
 * p = 4, F = 1.0, B = 1.2, W = 0.8, FB = 2.6 (s a microbatch of one stage):
 *   1F1B         (p-1)(F+B+W)      = 3 x 3.0                 = 9.0
 *   interleaved  (p-1)(F+B+W)/v    = 9.0 / 2                 = 4.5   (v = 2)
 *   ZB-H1        (p-1)(F+B-W)      = 3 x 1.4                 = 4.2   (ICLR 2024 Table 2)
 *   ZB-H2        (p-1)(F+B-2W)     = 3 x 0.6                 = 1.8   (Table 2)
 *   ZB-V         (p-1)(F+B-2W)/2   = 1.8 / 2                 = 0.9
 *   DualPipe     (p/2-1)(FB+B-2W)  = 1 x (2.6 + 1.2 - 1.6)   = 2.2
 *                DeepSeek's form, B whole = 2.0: 1 x (2.6 + 2.0 - 3 x 0.8) = 2.2
 *   DualPipeV    (p-1)(FB+B-2W)/2  = 3 x 2.2 / 2             = 3.3
 *                README's form, PP = 8 stages of half: (8/2-1)(1.3 + 1.0 - 3 x 0.4) = 3.3
 */
static void test_bubble_p4(void **state)
{
    (void)state;
    ppl_passes o = others(4);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_1F1B, 4, 1, &o), 9.0, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_GPIPE, 4, 1, &o), 9.0, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_1F1B, 4, 2, &o), 4.5, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H1, 4, 1, &o), 4.2, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H2, 4, 1, &o), 1.8, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_V, 4, 2, &o), 0.9, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_DUALPIPE, 4, 1, &o), 2.2, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_DUALPIPEV, 4, 2, &o), 3.3, 1e-12);
}

/*
 * p = 16, the same passes:
 *   1F1B         15 x 3.0                = 45.0
 *   interleaved  45.0 / 4                = 11.25  (v = 4)
 *   ZB-H1        15 x 1.4                = 21.0
 *   ZB-H2        15 x 0.6                = 9.0
 *   ZB-V         9.0 / 2                 = 4.5
 *   DualPipe     (16/2-1) x 2.2 = 7 x 2.2 = 15.4
 *   DualPipeV    15 x 2.2 / 2            = 16.5; README's form, PP = 32:
 *                (32/2-1)(1.3 + 1.0 - 1.2) = 15 x 1.1 = 16.5
 */
static void test_bubble_p16(void **state)
{
    (void)state;
    ppl_passes o = others(16);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_1F1B, 16, 1, &o), 45.0, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_1F1B, 16, 4, &o), 11.25, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H1, 16, 1, &o), 21.0, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H2, 16, 1, &o), 9.0, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_V, 16, 2, &o), 4.5, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_DUALPIPE, 16, 1, &o), 15.4, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_DUALPIPEV, 16, 2, &o), 16.5, 1e-12);
}

/*
 * With T_F = T_B = T_W = 1 (the papers' assumption), p = 8: 1F1B 7 x 3 = 21, ZB-H1
 * a third of it, 7 (ICLR 2024 §2.1), ZB-H2 and ZB-V 0.  Where W outweighs
 * (F+B)/2 (W = 1.5) ZB-H2 stays at 0, not below.
 */
static void test_bubble_equal_passes(void **state)
{
    (void)state;
    ppl_passes o = {7.0, 7.0, 7.0, 21.0};
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_1F1B, 8, 1, &o), 21.0, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H1, 8, 1, &o), 7.0, 1e-12);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H2, 8, 1, &o), 0.0, 0);
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_V, 8, 2, &o), 0.0, 0);
    o.w_s = 7.0 * 1.5;
    assert_close(ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H2, 8, 1, &o), 0.0, 0);
}

/*
 * Microbatches of a stage's activations in flight, stage k of p (at most m):
 *   ZB-H1 p - k (§2.3, as 1F1B); ZB-H2 2(p - k) - 1 (§2.3: (2p-2i+1) M_B on worker
 *   i = k + 1); ZB-V p on every rank (§6); DualPipe p + 1 (DeepSeek-V3 Table 2);
 *   DualPipeV p + 1/2 (2p + 1 chunks of half a rank).
 * p = 4, m = 8: stage 0: 4, 7, 4, 5, 4.5; stage 3: 1, 1, 4, 5, 4.5.
 * p = 16, m = 64: stage 0: 16, 31, 16, 17, 16.5; stage 15: 1, 1, 16, 17, 16.5.
 * ZB-H2 with m = 4 < 7 on p = 4: 4 (all there are).
 */
static void test_in_flight(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_config c = test_config(32, 8, 4, 1, 8, &m); /* dp 1, m = 8 */
    const ppl_schedule s[] = {PPL_SCHEDULE_ZB_H1, PPL_SCHEDULE_ZB_H2, PPL_SCHEDULE_ZB_V,
                              PPL_SCHEDULE_DUALPIPE, PPL_SCHEDULE_DUALPIPEV};
    const double p4_first[] = {4, 7, 4, 5, 4.5}, p4_last[] = {1, 1, 4, 5, 4.5};
    const double p16_first[] = {16, 31, 16, 17, 16.5}, p16_last[] = {1, 1, 16, 17, 16.5};
    for (int i = 0; i < 5; i++) {
        c.schedule = s[i];
        assert_close(ppl_in_flight_microbatches(&c, 0), p4_first[i], 1e-12);
        assert_close(ppl_in_flight_microbatches(&c, 3), p4_last[i], 1e-12);
    }
    c = test_config(128, 8, 16, 1, 64, &m); /* dp 1, m = 64 */
    for (int i = 0; i < 5; i++) {
        c.schedule = s[i];
        assert_close(ppl_in_flight_microbatches(&c, 0), p16_first[i], 1e-12);
        assert_close(ppl_in_flight_microbatches(&c, 15), p16_last[i], 1e-12);
    }
    c = test_config(32, 8, 4, 1, 4, &m); /* m = 4 */
    c.schedule = PPL_SCHEDULE_ZB_H2;
    assert_close(ppl_in_flight_microbatches(&c, 0), 4.0, 0);
}

/*
 * DualPipe holds stage k and stage p-1-k: GPT-3 175B on 8 stages of 12 layers,
 * a middle rank twice the model states of 1F1B's, rank 0 those of 1F1B's stages 0
 * and 7 together (the embedding and the output layer both); activations p + 1 = 9
 * microbatches on rank 0 instead of 8.
 */
static void test_dualpipe_memory(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = test_config(64, 8, 8, 1, 64, &m);
    ppl_memory one0, one3, one7, dual0, dual3;
    ppl_memory_stage(&m, &t, &c, &o, 0, &one0);
    ppl_memory_stage(&m, &t, &c, &o, 3, &one3);
    ppl_memory_stage(&m, &t, &c, &o, 7, &one7);
    c.schedule = PPL_SCHEDULE_DUALPIPE;
    ppl_memory_stage(&m, &t, &c, &o, 0, &dual0);
    ppl_memory_stage(&m, &t, &c, &o, 3, &dual3);
    assert_close(dual3.weights, 2.0 * one3.weights, 1e-12);
    assert_close(dual3.gradients, 2.0 * one3.gradients, 1e-12);
    assert_close(dual3.optimizer, 2.0 * one3.optimizer, 1e-12);
    assert_close(dual0.params, one0.params + one7.params, 1e-12);
    assert_close(dual0.in_flight, 9.0, 0);
    assert_close(one0.in_flight, 8.0, 0);
}

/*
 * The B/W split of test_schedule.c's hand-computed layer (one H100, h = 4096, s =
 * 2048, b = 1, unfused attention, bf16, GEMMs at 0.615 of peak, w_half 58,
 * element-wise at 3.003 TB/s): the forward's GEMMs take 1.3750 ms, attention
 * 0.1788 ms (its scores' bytes), element-wise 0.5084 ms, the element-wise backward
 * 0.7039 ms, so
 *   F = 1.3750 + 0.1788 + 0.5084          = 2.0622 ms
 *   W = the weight-gradient GEMMs          = 1.3750 ms (the forward's GEMM FLOPs)
 *   B = 1.3750 + 2 x 0.1788 + 0.7039       = 2.4365 ms (input gradients, attention
 *       core backward 2x its forward, element-wise backward)
 * and F + B + W = 5.874 ms, the layer's 1F1B time.
 */
static void test_passes_hand_computed(void **state)
{
    (void)state;
    ppl_model m = test_gpt(1, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_constants k = *ppl_constants_committed();
    k.h100_gemm = 0.615;
    k.width_half = 58.0;
    ppl_eval_ctx_set_constants(&ctx, &k, PPL_STACK_MODERN);
    ppl_config c = test_config(1, 1, 1, 1, 1, &m);
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.passes.w_s, 1.3750e-3, 2e-3);
    assert_close(e.passes.f_s, 2.0622e-3, 2e-3);
    assert_close(e.passes.b_s, 2.4365e-3, 2e-3);
    assert_close(e.passes.f_s + e.passes.b_s + e.passes.w_s, e.time.compute, 1e-9);
}

/*
 * The step's pipeline is the executor's (executor.h), over the estimate's own
 * stage passes: 32 layers on p = 8 equal stages (the last one's output layer of
 * vocabulary 8 makes it the slowest by a hair), communication overlapped, m = 64.
 * The closed forms of ZB-H1, ZB-H2 and ZB-V (pipeline.h, with 7 x the slowest
 * stage's passes) are below what the executor reaches: they leave out the sends'
 * time to arrive and ZB-V's assumes T_F = T_B = T_W; DeepSeek's table for DualPipe
 * and DualPipeV is matched within 10% (it is exact only at T_F = T_B = T_W).
 * 1F1B's passes add up to its stage time: compute and, plain 1F1B's sends
 * blocking whatever the profile overlaps (Megatron-LM arguments.py:1010-1012
 * turns overlap_p2p_comm off without virtual stages), its pipeline sends;
 * interleaved (vp 2), compute alone.
 */
static void test_step_bubble(void **state)
{
    (void)state;
    ppl_model m = test_gpt(32, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ctx.stack.pp_overlap = 1.0;
    ctx.stack.overlap_cost = 0.0;
    ppl_config c = test_config(8, 1, 8, 1, 64, &m);
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    assert_true(e.time.pp_comm > 0.0);
    assert_close(e.passes.f_s + e.passes.b_s + e.passes.w_s,
                 (e.time.compute + e.time.pp_comm) / 64.0, 1e-9);
    /* interleaved (2 chunks a rank), the sends overlapped: compute alone */
    c.vp = 2;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.passes.f_s + e.passes.b_s + e.passes.w_s, e.time.compute / 64.0, 1e-9);
    /* per class of stages: 0, 1-6 and 7; the last is the slowest */
    assert_int_equal(e.n_stage_passes, 3);
    assert_int_equal(e.stage_passes[1].first_stage, 1);
    assert_int_equal(e.stage_passes[1].count, 6);
    assert_close(e.stage_passes[2].passes.w_s, e.passes.w_s, 0);
    assert_true(e.stage_passes[1].passes.w_s <= e.passes.w_s);
    const ppl_schedule s[] = {PPL_SCHEDULE_ZB_H1, PPL_SCHEDULE_ZB_H2, PPL_SCHEDULE_ZB_V,
                              PPL_SCHEDULE_DUALPIPE, PPL_SCHEDULE_DUALPIPEV};
    for (int i = 0; i < 5; i++) {
        c.schedule = s[i];
        c.vp = ppl_schedule_of(s[i])->chunks;
        ppl_estimate_config(&ctx, &c, &e);
        ppl_passes o = {7.0 * e.passes.f_s, 7.0 * e.passes.b_s, 7.0 * e.passes.w_s,
                        7.0 * e.passes.fb_s};
        double closed = ppl_pipeline_bubble_s(s[i], 8, c.vp, &o);
        assert_true(closed > 0.0);
        if (ppl_schedule_of(s[i])->overlaps_fb)
            assert_close(e.time.bubble, closed, 0.10);
        else
            assert_true(e.time.bubble >= closed);
        /* never below the pipeline's own lower bound */
        assert_true(e.pipeline_bound_s > 0.0);
        assert_true(e.step_time_s >= e.floor_s && e.floor_s >= e.pipeline_bound_s);
    }
}

/*
 * DualPipe's F&B hides the expert all-to-all: Mixtral 8x7B with ep 8 on 64 H100s
 * (tp 2 with sequence parallelism, pp 4, dp 8, 8 microbatches): the passes alone add up to 1F1B's
 * stage time, and FB, the stage time under DualPipe, is shorter by what the all-to-all showed.
 */
static void test_dualpipe_overlap(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    /* sends exposed under both schedules (plain 1F1B's block whatever the
     * profile says), so that the passes alone differ in nothing else */
    ctx.stack.pp_overlap = 0.0;
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.gpus = 64;
    pins.tp = 2;
    pins.pp = 4;
    pins.ep = 8;
    pins.mbs = 1;
    pins.sequence_parallel = 1; /* MoE with tp > 1 (Megatron-Core) */
    pins.global_batch = 64;
    ppl_config c;
    ppl_error err;
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_OK);
    ppl_estimate one, dual;
    ppl_estimate_config(&ctx, &c, &one);
    pins.schedule = PPL_SCHEDULE_DUALPIPE;
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_OK);
    ppl_estimate_config(&ctx, &c, &dual);
    double alone = dual.passes.f_s + dual.passes.b_s + dual.passes.w_s;
    assert_close(alone, one.passes.f_s + one.passes.b_s + one.passes.w_s, 1e-9);
    assert_true(one.time.ep_comm > 0.0);
    assert_true(dual.passes.fb_s < alone * 0.999);
}

/*
 * The data-parallel reduction after the last backward: under 1F1B the stages
 * after the first drain while it runs (Megatron-LM 2021, which overlaps nothing:
 * exposed = reduction - the later stages' backward); the zero-bubble schedules end
 * every stage with its W passes, so the same reduction shows whole.  GPT-3 175B,
 * tp 8, pp 8, dp 4 on 256 A100, stages of 4, 12 x 6 and 20 layers: the last stage
 * reduces the most gradients, which under 1F1B the 7 stages before it hide as they
 * drain; the stages are the same, so ZB-H1's exposed communication exceeds 1F1B's
 * by what the drain hid, at most the reduction.
 */
static void test_dp_no_drain(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_LEGACY);
    ppl_config c = test_config(256, 8, 8, 1, 64, &m);
    c.split.first = 4;
    c.split.middle = 12;
    c.split.last = 20;
    ppl_estimate one, zb;
    ppl_estimate_config(&ctx, &c, &one);
    c.schedule = PPL_SCHEDULE_ZB_H1;
    ppl_estimate_config(&ctx, &c, &zb);
    assert_close(zb.time.compute, one.time.compute, 1e-12);
    assert_true(one.time.dp_comm > 0.0);
    assert_true(zb.time.exposed_comm > one.time.exposed_comm + 0.01 * one.time.dp_comm);
    assert_true(zb.time.exposed_comm - one.time.exposed_comm <= one.time.dp_comm * (1.0 + 1e-9));
}

/*
 * How many passes hide the data-parallel communication (stack.c,
 * ppl_stack_dp_passes, after Megatron-Core's interleaved schedule, which reduces
 * and gathers each model chunk apart and runs the microbatches through each chunk
 * in groups, of pp when they are a multiple of it):
 * - plain 1F1B (vp 1): the last backward, 1 pass;
 * - pp 6, vp 8, 6 microbatches (MLPerf Training v4.0's GPT-3 layout on 10,752 H100):
 *   the group is pp = 6 (m a multiple of it); the last chunk's own pass, 1/8, and the group's
 *   passes over the 7 others, 7 x 6 / 8: (1 + 42) / 8 = 5.375;
 * - pp 4, vp 2, 10 microbatches, not a multiple of pp: Megatron-Core's group is
 *   the least N from pp whose last group is empty or at least pp (ppl_vp_group):
 *   10 % 4 = 2, 10 % 5 = 0, so 5: (1 + 1 x 5) / 2 = 3;
 * - pp 4, vp 2, 16 microbatches: the group is pp = 4: (1 + 4) / 2 = 2.5;
 * - a zero-bubble schedule: its own order, 1.
 * In the estimate the interleaved layout then shows less of its reduction than
 * one pass would let it: GPT-3 175B under NeMo 24.x's profile on 10,752 H100
 * (tp 4, pp 6, vp 8, mbs 1, batch 2688) moves 0.42 s of data-parallel traffic a
 * step and shows less than half of it.
 */
static void test_dp_passes_interleaved(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_config c = test_config(10752, 4, 6, 1, 2688, &m);
    assert_int_equal(c.microbatches, 6);
    assert_close(ppl_stack_dp_passes(&c), 1.0, 1e-12);
    c.vp = 8;
    assert_close(ppl_stack_dp_passes(&c), 5.375, 1e-12);
    ppl_config d = test_config(32, 4, 4, 1, 20, &m);
    d.vp = 2;
    assert_int_equal(d.microbatches, 10);
    assert_close(ppl_stack_dp_passes(&d), 3.0, 1e-12);
    ppl_config e = test_config(64, 4, 4, 1, 64, &m);
    e.vp = 2;
    assert_int_equal(e.microbatches, 16);
    assert_close(ppl_stack_dp_passes(&e), 2.5, 1e-12);
    e.schedule = PPL_SCHEDULE_ZB_H1;
    assert_close(ppl_stack_dp_passes(&e), 1.0, 1e-12);

    ppl_topology t = test_topology("h100-64k");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2024);
    c.precision = PPL_PRECISION_FP8;
    c.zero = 1;
    c.sequence_parallel = true;
    c.flash_attention = true;
    c.split = ppl_stage_split_default(m.layers, c.pp);
    ppl_estimate est;
    ppl_estimate_config(&ctx, &c, &est);
    assert_true(est.time.dp_comm > 0.3);
    assert_true(est.time.exposed_comm < 0.5 * est.time.dp_comm + est.time.tp_comm);
}

/* The rules, each a usage error naming the knob. */
static void test_checks(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_pins pins;
    ppl_config c;
    ppl_error err;
    ppl_pins_init(&pins);
    pins.gpus = 128;
    pins.tp = 8;
    pins.pp = 8;
    pins.global_batch = 32; /* dp 2: 16 microbatches */
    pins.schedule = PPL_SCHEDULE_ZB_H1;
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_OK);
    pins.vp = 2; /* ZB-H1: one chunk a rank */
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "vp");
    pins.schedule = PPL_SCHEDULE_ZB_V; /* two chunks: vp 2 given, and by default */
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_OK);
    pins.vp = PPL_UNSET;
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_OK);
    assert_int_equal(c.vp, 2);
    pins.vp = 3;
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "vp");
    pins.vp = PPL_UNSET;
    pins.schedule = PPL_SCHEDULE_DUALPIPE; /* 16 microbatches = 2 x 8: enough */
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_OK);
    pins.global_batch = 30; /* 15: fewer than 2 pp */
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "global_batch");
    pins.global_batch = 34; /* 17: odd */
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "global_batch");
    pins.global_batch = 32;
    pins.pp = 3; /* 48 GPUs: dp 2, 16 microbatches; 3 ranks cannot pair */
    pins.gpus = 48;
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "pp");
    pins.schedule = PPL_SCHEDULE_DUALPIPEV; /* no pairs: 3 ranks run it */
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_OK);
    pins.schedule = PPL_SCHEDULE_ZB_H2; /* no pipeline, no pipeline schedule */
    pins.pp = 1;
    pins.gpus = 16;
    assert_int_equal(ppl_config_from_pins(&pins, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "schedule");
}

/* The stage classes of a model whose layers are all of one kind (ppl_classes_init's
 * shortcut: the first stage, the middle ones alike, the last) are the runs of equal
 * stages that walking every stage finds: a dense model and one with every layer
 * MoE, pp 1 to 12, vp 1 to 3, even and uneven ends, with and without
 * multi-token prediction on the last stage. */
static void test_uniform_classes(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    size_t checked = 0;
    for (int kind = 0; kind < 4; kind++) {
        ppl_model m = test_model(kind < 2 ? "llama3-8b" : "mixtral-8x7b");
        m.mtp_layers = kind % 2;
        ppl_eval_ctx ctx;
        ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
        for (int64_t pp = 1; pp <= 12; pp++)
            for (int64_t vp = 1; vp <= 3; vp++)
                for (int64_t shift = 0; shift <= 2; shift++) {
                    ppl_config c = test_split_config(&m, pp, vp, shift);
                    ppl_classes cl;
                    ppl_classes_init(&ctx, &c, &cl);
                    size_t n = 0;
                    int64_t covered = 0;
                    for (int64_t k = 0; k < pp; k++) { /* runs of equal stages */
                        int64_t layers, moe;
                        ppl_stage_layer_counts(&m, &c, k, &layers, &moe);
                        bool ends = k == 0 || k == pp - 1 || k == 1;
                        if (ends || layers != cl.items[n - 1].layers) {
                            assert_true(n < cl.n);
                            assert_int_equal(cl.items[n].first_stage, k);
                            assert_int_equal(cl.items[n].layers, layers);
                            assert_int_equal(cl.items[n].moe_layers, moe);
                            assert_int_equal(cl.items[n].is_first, k == 0);
                            assert_int_equal(cl.items[n].is_last, k == pp - 1);
                            assert_int_equal(cl.items[n].bf16_layers,
                                             ppl_stage_bf16_layers(&c, k, layers));
                            n++;
                        }
                        covered++;
                    }
                    assert_int_equal(n, cl.n);
                    int64_t counted = 0;
                    for (size_t i = 0; i < cl.n; i++)
                        counted += cl.items[i].count;
                    assert_int_equal(counted, covered);
                    ppl_classes_free(&cl);
                    checked++;
                }
    }
    assert_int_equal(checked, 4 * 12 * 3 * 3);
}

/* The stage classes of a model with leading dense layers (ppl_classes_init takes
 * the middle stages past them at once where their counts repeat) are the runs of
 * equal middle stages that walking every stage finds, each end a class of its
 * own: DeepSeek-V3 (3 dense layers, then every layer MoE, one MTP module) and a
 * Mixtral with 1 to 5 dense layers and every 2nd or 3rd layer MoE after them,
 * pp 2 to 20, vp 1 to 3, even and uneven ends. */
static void test_mixed_classes(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    size_t checked = 0, runs = 0;
    for (int kind = 0; kind < 7; kind++) {
        ppl_model m = test_model(kind == 0 ? "deepseek-v3" : "mixtral-8x7b");
        if (kind > 0) {
            m.moe.first_dense_layers = kind % 5 + 1;
            m.moe.every = kind < 4 ? 2 : 3;
        }
        ppl_eval_ctx ctx;
        ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
        for (int64_t pp = 2; pp <= 20 && pp <= m.layers; pp++)
            for (int64_t vp = 1; vp <= 3; vp++)
                for (int64_t shift = 0; shift <= 2; shift++) {
                    ppl_config c = test_split_config(&m, pp, vp, shift);
                    ppl_classes cl;
                    ppl_classes_init(&ctx, &c, &cl);
                    size_t n = 0;
                    int64_t prev_layers = -1, prev_moe = -1;
                    for (int64_t k = 0; k < pp; k++) {
                        int64_t layers, moe;
                        ppl_stage_layer_counts(&m, &c, k, &layers, &moe);
                        bool end = k == 0 || k == pp - 1 || prev_layers < 0;
                        if (end || layers != prev_layers || moe != prev_moe) {
                            assert_true(n < cl.n);
                            assert_int_equal(cl.items[n].first_stage, k);
                            assert_int_equal(cl.items[n].layers, layers);
                            assert_int_equal(cl.items[n].moe_layers, moe);
                            assert_int_equal(cl.items[n].is_first, k == 0);
                            assert_int_equal(cl.items[n].is_last, k == pp - 1);
                            n++;
                        } else {
                            cl.items[n - 1].count--; /* taken back below */
                            runs++;
                        }
                        prev_layers = k == 0 || k == pp - 1 ? -1 : layers;
                        prev_moe = moe;
                    }
                    assert_int_equal(n, cl.n);
                    for (size_t i = 0; i < cl.n; i++) /* each run's stages counted */
                        assert_int_equal(cl.items[i].count, 1);
                    ppl_classes_free(&cl);
                    checked++;
                }
    }
    assert_true(checked > 1000);
    assert_true(runs > 1000); /* runs of alike middle stages were met */
}

/* A class's data-parallel times read its first stage, layers and MoE layers, the
 * ZeRO stage and the layout, not the split around it or the microbatch: the times
 * a split's classes leave in a ppl_stage_dp_cache (ppl_classes_dp_keep) are, for
 * each class of another split and microbatch size that takes them
 * (ppl_classes_dp_take), those ppl_class_dp computes for it afresh, to the bit.
 * DeepSeek-V3 (dense and MoE layers, the embedding and the MTP module at the
 * ends), pp 4, ZeRO 0 to 3, the default split and one with a layer moved from
 * each end to the middle stages. */
static void test_dp_cache(void **state)
{
    (void)state;
    ppl_model m = test_model("deepseek-v3");
    ppl_topology t = test_topology("deepseek-h800-2048");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.tp = 2, c.pp = 4, c.dp = 32, c.cp = 1, c.ep = 8, c.vp = 1, c.mbs = 1, c.gpus = 256;
    c.global_batch = 256, c.microbatches = 8;
    c.recompute = PPL_RECOMPUTE_FULL;
    c.sequence_parallel = true;
    c.flash_attention = true;
    const ppl_stage_split even = ppl_stage_split_default(m.layers, 4);
    const ppl_stage_split moved = {even.first - 1, even.middle, even.last + 1};
    int served = 0;
    for (int zero = 0; zero <= 3; zero++) {
        c.zero = zero;
        ppl_stage_dp_cache dp;
        dp.n = 0;
        for (int pass = 0; pass < 4; pass++) {
            c.split = pass % 2 ? moved : even;
            c.mbs = pass < 2 ? 1 : 2;
            c.microbatches = 8 / c.mbs;
            ppl_error cerr;
            if (ppl_config_check(&c, &m, &t, &cerr) != PPL_OK)
                fail_msg("zero %d pass %d: %s: %s", zero, pass, cerr.key, cerr.message);
            ppl_layout l;
            ppl_micro mi;
            test_laid_out(&ctx, &c, &l, &mi);
            ppl_classes cl;
            ppl_classes_init(&ctx, &c, &cl);
            ppl_classes_dp_take(&cl, &dp);
            for (size_t i = 0; i < cl.n; i++) {
                ppl_stage_class *k = &cl.items[i], fresh = *k;
                fresh.dp_ready = 0;
                ppl_memory mem;
                ppl_memory_at(&c, &ctx.memory, &mi.mem, t.gpu.memory_bytes, k->first_stage,
                              k->layers, k->moe_layers, &mem);
                ppl_class_dp(&ctx, &c, &l, &fresh, &mem);
                if (k->dp_ready) { /* taken: the same times */
                    served++;
                    const int kind = ppl_dp_kind(&ctx, &c);
                    assert_true(ppl_class_dp_kept(&ctx, &c, k));
                    assert_true(k->dp_reduce[kind] == fresh.dp_reduce[kind]);
                    assert_true(k->dp_gather[kind] == fresh.dp_gather[kind]);
                    assert_true(k->dp_last[kind] == fresh.dp_last[kind]);
                    assert_memory_equal(k->z3_ag, fresh.z3_ag, sizeof k->z3_ag);
                    assert_memory_equal(k->z3_rs, fresh.z3_rs, sizeof k->z3_rs);
                }
                ppl_class_dp(&ctx, &c, &l, k, &mem);
            }
            ppl_classes_dp_keep(&cl, &dp);
            ppl_classes_free(&cl);
        }
    }
    assert_true(served >= 4 * 3); /* each ZeRO stage: the unmoved classes, thrice */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bubble_p4),
        cmocka_unit_test(test_bubble_p16),
        cmocka_unit_test(test_bubble_equal_passes),
        cmocka_unit_test(test_in_flight),
        cmocka_unit_test(test_dualpipe_memory),
        cmocka_unit_test(test_passes_hand_computed),
        cmocka_unit_test(test_step_bubble),
        cmocka_unit_test(test_dualpipe_overlap),
        cmocka_unit_test(test_dp_no_drain),
        cmocka_unit_test(test_dp_passes_interleaved),
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_uniform_classes),
        cmocka_unit_test(test_mixed_classes),
        cmocka_unit_test(test_dp_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
