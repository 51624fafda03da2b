/*
 * test_memory.c - the memory model against the figures of its sources.
 */
#include "testutil.h"

#include <stddef.h>
#include <stdlib.h>

#include "cost/config.h"
#include "cost/memory.h"

/*
 * ZeRO (Rajbhandari et al. SC'20) §5.1 worked example: Psi = 7.5B parameters, Nd = 64,
 * K = 12 (mixed-precision Adam), 2-byte gradients and no other gradient copy:
 *   baseline (2 + 2 + K) Psi         = 16 x 7.5e9            = 120 GB
 *   Pos      2Psi + 2Psi + K Psi/Nd  = 30e9 + 90e9/64        = 31.4 GB
 *   Pos+g    2Psi + (2 + K) Psi/Nd   = 15e9 + 105e9/64       = 16.6 GB
 *   Pos+g+p  (2 + 2 + K) Psi/Nd      = 120e9/64              = 1.9 GB
 * The paper prints one decimal: 1.875 GB is its 1.9 (1.3% apart), 31.40625 its 31.4.
 * Its accounting is fp16's without Megatron's fp32 gradient copy, set to 0 here:
 * this checks the sharding arithmetic.
 */
static void test_zero_worked_example(void **state)
{
    (void)state;
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    o.fp16_grad_copy_bytes = 0.0;
    const double expected[4] = {120e9, 31.40625e9, 16.640625e9, 1.875e9};
    const double published[4] = {120e9, 31.4e9, 16.6e9, 1.9e9};
    for (int z = 0; z <= 3; z++) {
        double w, g, opt;
        ppl_model_state_bytes(7.5e9, z, 64, &o, PPL_OPTIMIZER_ADAM, PPL_PRECISION_FP16, &w, &g,
                              &opt);
        assert_close(w + g + opt, expected[z], 1e-12);
        assert_close(round((w + g + opt) / 1e8) * 1e8, published[z], 1e-12);
    }
    /* SGD with momentum, fp16 as above: 2 + 2 + 4 (master) + 4 (momentum) = 12 bytes */
    double w, g, opt;
    ppl_model_state_bytes(1e9, 0, 1, &o, PPL_OPTIMIZER_SGD, PPL_PRECISION_FP16, &w, &g, &opt);
    assert_close(w + g + opt, 12e9, 1e-12);
}

/*
 * What Megatron-LM keeps (README, "Distributed Optimizer", bytes per parameter,
 * non-distributed / distributed over d data-parallel ranks):
 *   bf16 param, fp32 grads   18   6 + 12/d   (2 weights + 4 fp32 main grads + 12)
 *   fp16 param, fp16 grads   20   4 + 16/d   (2 + 2 + 16: master 4, fp32 grad copy 4, Adam 8)
 * parplan's ZeRO-0 and ZeRO-1 (the distributed optimizer): with d = 8, bf16 gives
 * 18 and 6 + 1.5 = 7.5 bytes; fp16 20 and 4 + 2 = 6.  fp8 trains with --bf16 and
 * keeps bf16's figures.  The time model reduces the same 4 (bf16) or 2 (fp16)
 * bytes per gradient.
 */
static void test_megatron_bytes_per_param(void **state)
{
    (void)state;
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    const struct {
        ppl_precision p;
        double zero0, zero1, grad;
    } rows[] = {{PPL_PRECISION_BF16, 18.0, 7.5, 4.0},
                {PPL_PRECISION_FP8, 18.0, 7.5, 4.0},
                {PPL_PRECISION_FP16, 20.0, 6.0, 2.0}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double w, g, opt;
        ppl_model_state_bytes(1.0, 0, 8, &o, PPL_OPTIMIZER_ADAM, rows[i].p, &w, &g, &opt);
        assert_close(w + g + opt, rows[i].zero0, 1e-12);
        ppl_model_state_bytes(1.0, 1, 8, &o, PPL_OPTIMIZER_ADAM, rows[i].p, &w, &g, &opt);
        assert_close(w + g + opt, rows[i].zero1, 1e-12);
        assert_close(ppl_grad_bytes(&o, rows[i].p), rows[i].grad, 1e-12);
    }
}

/*
 * Korthikanti et al. 2022 Table 2 for GPT-3 175B (s 2048, b 1, h 12288, a 96, L 96),
 * t = 8, p = 8: the first stage holds p = 8 microbatches of L/p = 12 layers, L layers'
 * worth (Eq.5).  sbh = 2048 x 12288 = 25,165,824; 5as/(ht) = 5*96*2048/(12288*8) = 10.
 *   none:        sbh(10 + 24/8 + 10) = 23 sbh per layer -> x96 = 55.57e9 B (51.75 GiB)
 *   SP:          (sbh/8)(34 + 80)    = 14.25 sbh         -> 34.43e9 B (32.06 GiB)
 *   selective+SP (sbh/8)34           = 4.25 sbh          -> 10.27e9 B (9.56 GiB)
 *   flash+SP     as selective+SP, plus the fp32 log-sum-exp 4(a/t)sb = 0.0039 sbh
 *   full         2sbh                                     ->  4.83e9 B (4.5 GiB)
 * The first stage adds the embedding's dropout mask, sbh per microbatch in flight
 * (/t with SP): 8 sbh = 0.19 GiB, 4% of the full-recompute figure, well under 1% of
 * the others.
 */
static void test_korthikanti_table2(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    const double sbh = 2048.0 * 12288.0, L = 96;
    struct {
        ppl_recompute recompute;
        bool sp, flash;
        double per_layer_sbh;
        double tolerance;
    } rows[] = {
        {PPL_RECOMPUTE_NONE, false, false, 23.0, 0.01},
        {PPL_RECOMPUTE_NONE, true, false, 114.0 / 8.0, 0.01},
        {PPL_RECOMPUTE_SELECTIVE, true, false, 34.0 / 8.0, 0.03},
        {PPL_RECOMPUTE_NONE, true, true, 34.0 / 8.0, 0.03},
        {PPL_RECOMPUTE_FULL, false, false, 2.0, 0.05},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ppl_config c = test_config(1024, 8, 8, 1, 1536, &m);
        c.recompute = rows[i].recompute;
        c.sequence_parallel = rows[i].sp;
        c.flash_attention = rows[i].flash;
        /* the per-layer formula itself is exact for the Table 2 rows */
        if (!rows[i].flash && rows[i].recompute != PPL_RECOMPUTE_SELECTIVE)
            assert_close(ppl_activation_bytes_per_layer(&m, &c, &o, false),
                         rows[i].per_layer_sbh * sbh, 1e-12);
        ppl_memory first;
        ppl_memory_stage(&m, &t, &c, &o, 0, &first);
        assert_int_equal(first.layers, 12);
        assert_close(first.in_flight, 8.0, 0);
        assert_close(first.activations, rows[i].per_layer_sbh * sbh * L, rows[i].tolerance);
    }
}

/*
 * Block recomputation (Megatron-LM --recompute-method block): 3 of the first
 * stage's 12 layers keep only their input (2sbh), the other 9 all of Table 2's
 * 23 sbh (t = 8, no SP); 8 microbatches in flight, plus the embedding's dropout
 * mask (sbh each):  8 x (3 x 2 + 9 x 23 + 1) sbh = 1712 sbh.
 */
static void test_block_recompute(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = test_config(1024, 8, 8, 1, 1536, &m);
    c.recompute = PPL_RECOMPUTE_FULL;
    c.recompute_layers = 3;
    ppl_memory first;
    ppl_memory_stage(&m, &t, &c, &o, 0, &first);
    const double sbh = 2048.0 * 12288.0;
    assert_close(first.activations, 1712.0 * sbh, 1e-12);
    /* all of them recomputed: 8 x (12 x 2 + 1) = 200 sbh */
    c.recompute_layers = 0;
    ppl_memory_stage(&m, &t, &c, &o, 0, &first);
    assert_close(first.activations, 200.0 * sbh, 1e-12);
    assert_close(ppl_recomputed_share(&c, 12), 1.0, 0);
    c.recompute_layers = 3;
    assert_close(ppl_recomputed_share(&c, 12), 0.25, 0);
    assert_close(ppl_recomputed_share(&c, 2), 1.0, 0); /* more than the stage holds: all */
}

/* Microbatches in flight on stage k: 1F1B p - k (at most m); interleaved with v
 * chunks: (2(p - k - 1) + (v - 1)p + 1)/v, on stage 0 p(1 + (p-1)/(pv)); GPipe m. */
static void test_in_flight(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_config c = test_config(64, 8, 8, 1, 64, &m); /* dp 1, m = 64 */
    for (int k = 0; k < 8; k++)
        assert_close(ppl_in_flight_microbatches(&c, k), 8.0 - k, 0);
    c.vp = 3; /* p = 8, v = 3: stage 0 holds 31 chunks of 4 layers = 10.33 stages' worth */
    assert_close(ppl_in_flight_microbatches(&c, 0), 8.0 * (1.0 + 7.0 / 24.0), 1e-12);
    assert_close(ppl_in_flight_microbatches(&c, 7), (2.0 * 8 + 1) / 3.0, 1e-12);
    c.vp = 1;
    c.microbatches = 3; /* fewer microbatches than stages */
    assert_close(ppl_in_flight_microbatches(&c, 0), 3.0, 0);
    c.schedule = PPL_SCHEDULE_GPIPE;
    c.microbatches = 64;
    assert_close(ppl_in_flight_microbatches(&c, 5), 64.0, 0);
}

/* Interleaving with microbatches not a multiple of pp (Megatron-Core 0.10+,
 * schedules.py forward_backward_pipelining_with_interleaving): the group N per
 * virtual stage is the smallest in [p, m] with m % N == 0 or m % N >= p.
 *   m 16, p 8: 8 (the default, depth-first).
 *   m 12, p 8: 8, 9, 10, 11 leave 4, 3, 2, 1 (< 8): 12.
 *   m 20, p 8: 8 leaves 4, 9 leaves 2, 10 leaves 0: 10.
 *   m 25, p 8: 8..12 leave 1, 7, 5, 3, 1; 13 leaves 12 (>= 8): 13.
 *   m 7, p 8: none (N <= m < p): 0, refused.
 * Warm-up of stage k: 2(p - k - 1) + (v - 1)N chunk-microbatches, + 1 in flight.
 * m 12, p 8, v 2: stage 0 27, capped at m v = 24 chunks: 12 microbatches' worth;
 * stage 7: 0 + 12 + 1 = 13 chunks: 6.5. */
static void test_uneven_interleaving(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_config c = test_config(64, 8, 8, 1, 64, &m);
    const int64_t ms[] = {16, 12, 20, 25, 7}, groups[] = {8, 12, 10, 13, 0};
    for (int i = 0; i < 5; i++) {
        c.microbatches = ms[i];
        assert_int_equal(ppl_vp_group(&c), groups[i]);
    }
    c.microbatches = 12;
    c.vp = 2;
    assert_close(ppl_in_flight_microbatches(&c, 0), 12.0, 1e-12);
    assert_close(ppl_in_flight_microbatches(&c, 7), 6.5, 1e-12);
}

/* A 1T model on one GPU, bf16: 18 bytes per parameter of model state (2 weights,
 * 4 fp32 main gradients, 12 optimizer), far beyond 80 GiB. */
static void test_1t_on_one_gpu(void **state)
{
    (void)state;
    ppl_model m = test_model("megatron-1t");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_model_figures f;
    ppl_model_derive(&m, &f);
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = test_config(1, 1, 1, 1, 1, &m);
    ppl_memory mem;
    ppl_memory_worst(&m, &t, &c, &o, &mem);
    assert_close(mem.params, f.params_total, 1e-15);
    assert_close((mem.weights + mem.gradients + mem.optimizer) / mem.params, 18.0, 1e-12);
    assert_false(mem.fits);
}

/*
 * GQA and gated MLP, Llama 3 70B (h 8192, 64 heads of 128, 8 KV heads, ffn 28672,
 * no dropout), t = 8, SP on, b = 1, s = 8192, no recomputation, flash attention:
 *   outside /t: norm inputs 4sbh + QKV input 2sbh + fc1 input 2sbh = 8sbh/8 = sbh
 *   inside: Q 2sbh/8; K and V 2*2*sb*(8/8 heads x 128) = 4sb*128; projection 2sbh/8;
 *           SwiGLU gate+up 4sbf/8 and product 2sbf/8 = 6*28672/8 sb = 21504 sb
 *   log-sum-exp 4 (64/8) sb = 32 sb
 *   total per layer = sb (8192 + 2048 + 512 + 2048 + 21504 + 32) = 34336 sb bytes
 */
static void test_gqa_gated(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = test_config(64, 8, 1, 1, 8, &m);
    c.sequence_parallel = true;
    c.flash_attention = true;
    double sb = 8192.0;
    assert_close(ppl_activation_bytes_per_layer(&m, &c, &o, false), 34336.0 * sb, 1e-12);
    /* fp8 keeps 1-byte GEMM inputs: QKV, fc1 (outside: -2sbh/8), projection (-sbh/8)
     * and fc2 input (-sbf/8) */
    c.precision = PPL_PRECISION_FP8;
    assert_close(ppl_activation_bytes_per_layer(&m, &c, &o, false),
                 (34336.0 - 2048.0 - 1024.0 - 28672.0 / 8.0) * sb, 1e-12);
}

/* Mixtral with ep = 8 on 8 GPUs (tp 1): one expert per GPU, so a layer holds its
 * attention (41,943,040), norms (8,192), router (32,768) and one expert
 * (176,160,768) = 218,144,768 parameters; the 32 layers 6,980,632,576, plus the
 * embedding and output (131,072,000 each) and the final norm (4,096). */
static void test_moe_expert_parallel(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = test_config(8, 1, 1, 1, 8, &m);
    c.ep = 8;
    ppl_memory mem;
    ppl_memory_stage(&m, &t, &c, &o, 0, &mem);
    assert_close(mem.params, 32.0 * 218144768.0 + 2.0 * 131072000.0 + 4096.0, 1e-12);
    /* ZeRO-1 shards dense state 8 ways but experts over dp/ep = 1 */
    c.zero = 1;
    ppl_memory z;
    ppl_memory_stage(&m, &t, &c, &o, 0, &z);
    double expert = 32.0 * 176160768.0, dense = mem.params - expert;
    assert_close(z.optimizer, 12.0 * (dense / 8.0 + expert), 1e-12);

    /* fp8 under ZeRO-3 on 64 GPUs (dp 64, ep 8): the 2-byte fp8 cache (weight and
     * transpose) is sharded as the weights are, dense GEMMs 64 ways, experts 8 ways.
     * Per layer, attention GEMMs 2 h^2 + 2 h kv = 2*4096^2 + 2*4096*1024 = 41,943,040;
     * one local expert 3 h f = 3*4096*14336 = 176,160,768; 32 layers:
     * 2 * (32*41,943,040/64 + 32*176,160,768/8) = 2 * (20,971,520 + 704,643,072). */
    ppl_config z3 = test_config(64, 1, 1, 1, 64, &m);
    z3.ep = 8;
    z3.zero = 3;
    ppl_memory bf16, fp8;
    ppl_memory_stage(&m, &t, &z3, &o, 0, &bf16);
    z3.precision = PPL_PRECISION_FP8;
    ppl_memory_stage(&m, &t, &z3, &o, 0, &fp8);
    assert_close(fp8.weights - bf16.weights, 2.0 * (20971520.0 + 704643072.0), 1e-9);
}

/* MoE every third layer: 32 layers on 8 stages of 4 put 2 MoE layers on some
 * stages and 1 on others, so the heaviest stage need not be the first, the first
 * middle one or the last; the worst is the largest of all stages (ties: earliest). */
static void test_worst_stage_moe_every(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    m.moe.every = 3;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = test_config(64, 8, 8, 1, 8, &m);
    /* small activations, so the stages' model states decide */
    c.recompute = PPL_RECOMPUTE_FULL;
    c.sequence_parallel = c.flash_attention = true;
    ppl_memory worst, stage;
    ppl_memory_worst(&m, &t, &c, &o, &worst);
    int64_t heaviest = 0;
    double most = -1.0;
    for (int64_t k = 0; k < c.pp; k++) {
        ppl_memory_stage(&m, &t, &c, &o, k, &stage);
        if (stage.total > most)
            most = stage.total, heaviest = k;
    }
    assert_int_equal(worst.stage, heaviest);
    assert_close(worst.total, most, 1e-12);
    assert_true(heaviest != 0); /* the case that needs every stage looked at */
}

/* Llama 3 ran 126 layers on 16 stages as 7, 8 x 14, 7 (first and last one short). */
static void test_stage_split(void **state)
{
    (void)state;
    ppl_stage_split s = ppl_stage_split_default(126, 16);
    assert_int_equal(s.first, 7);
    assert_int_equal(s.middle, 8);
    assert_int_equal(s.last, 7);
    s = ppl_stage_split_default(96, 8);
    assert_int_equal(s.first, 12);
    assert_int_equal(s.last, 12);
    /* 96 on 7: 13 + 5 x 14 + 13 */
    s = ppl_stage_split_default(96, 7);
    assert_int_equal(s.first + 5 * s.middle + s.last, 96);
    assert_int_equal(s.middle, 14);
    /* 10 on 8 has no split with lighter ends: the ends take the remainder,
     * 2, 1 x 6, 2, still what Megatron's first/last-stage flags build */
    s = ppl_stage_split_default(10, 8);
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.pp = 8;
    c.split = s;
    int64_t total = 0;
    for (int k = 0; k < 8; k++) {
        assert_true(ppl_stage_layers(&c, k) >= 1);
        assert_int_equal(ppl_stage_first_layer(&c, k), total);
        total += ppl_stage_layers(&c, k);
    }
    assert_int_equal(total, 10);
    assert_int_equal(ppl_stage_layers(&c, 0), 2);
    assert_int_equal(ppl_stage_layers(&c, 1), 1);
    assert_int_equal(ppl_stage_layers(&c, 7), 2);
}

/*
 * Which flags build an interleaved split (config.h ppl_split_form).  DeepSeek-V3's
 * 61 layers as Megatron-Bridge lays them on pp 4 x vp 4: 16, 16, 16, 13.  13 is no
 * multiple of 4 and the ends are not one layer short of the middle (the account
 * flags), so only an explicit layout builds it: each rank's layers over its 4
 * chunks, the larger first: 4, 4, 4, 4 and, on the last rank, 4, 3, 3, 3.  Even
 * stages of 12 (GPT-3's 96 on pp 8) with vp 4 need no flag; with vp 5 only the
 * layout; vp 13 exceeds a stage's 12 layers, which no flag builds.
 */
static void test_split_forms(void **state)
{
    (void)state;
    ppl_config c;
    bool e, l;
    memset(&c, 0, sizeof c);
    c.pp = 4;
    c.split = (ppl_stage_split){.first = 16, .last = 13, .middle = 16};
    assert_int_equal(ppl_split_form_of(&c, 4, &e, &l), PPL_SPLIT_LAYOUT);
    assert_false(e || l);
    assert_true(ppl_split_allows_vp(&c, 4));
    assert_false(ppl_split_flags_allow_vp(&c, 4));
    c.vp = 4;
    const int64_t want[4] = {4, 3, 3, 3};
    for (int64_t k = 0; k < 4; k++) {
        assert_int_equal(ppl_split_chunk_layers(&c, 0, k), 4);
        assert_int_equal(ppl_split_chunk_layers(&c, 3, k), want[k]);
    }
    c.pp = 8;
    c.split = (ppl_stage_split){12, 12, 12};
    assert_int_equal(ppl_split_form_of(&c, 4, &e, &l), PPL_SPLIT_EVEN);
    assert_int_equal(ppl_split_form_of(&c, 5, &e, &l), PPL_SPLIT_LAYOUT);
    assert_int_equal(ppl_split_form_of(&c, 13, &e, &l), PPL_SPLIT_NONE);
}

/* Pins written as the command line's flags (a pin's knob with dashes: "--tp" is
 * tp, "--global-batch" global_batch), for readable cases; only the knobs these
 * tests use.  The library is tested alone: no command-line parser. */
static ppl_status from_flags(const ppl_model *m, const ppl_topology *t, ppl_config *c,
                             ppl_error *err, char **argv)
{
    static const struct {
        const char *flag;
        size_t offset;
    } ints[] = {{"--gpus", offsetof(ppl_pins, gpus)},
                {"--tp", offsetof(ppl_pins, tp)},
                {"--pp", offsetof(ppl_pins, pp)},
                {"--dp", offsetof(ppl_pins, dp)},
                {"--cp", offsetof(ppl_pins, cp)},
                {"--ep", offsetof(ppl_pins, ep)},
                {"--etp", offsetof(ppl_pins, etp)},
                {"--vp", offsetof(ppl_pins, vp)},
                {"--mbs", offsetof(ppl_pins, mbs)},
                {"--global-batch", offsetof(ppl_pins, global_batch)},
                {"--first-stage-layers", offsetof(ppl_pins, first_stage_layers)}};
    ppl_pins pins;
    ppl_pins_init(&pins);
    for (size_t i = 0; argv[i]; i++) {
        size_t k = 0;
        while (k < sizeof ints / sizeof ints[0] && strcmp(argv[i], ints[k].flag) != 0)
            k++;
        if (k < sizeof ints / sizeof ints[0] && argv[i + 1])
            *(int64_t *)((char *)&pins + ints[k].offset) = atoll(argv[++i]);
        else if (strcmp(argv[i], "--precision") == 0 && argv[i + 1] &&
                 strcmp(argv[++i], "fp8") == 0)
            pins.precision = PPL_PRECISION_FP8;
        else if (strcmp(argv[i], "--sequence-parallel") == 0)
            pins.sequence_parallel = 1;
        else
            fail_msg("flag not known to this test: %s", argv[i]);
    }
    return ppl_config_from_pins(&pins, m, t, c, err);
}

#define FLAGS(...)                                                                                 \
    (char *[])                                                                                     \
    {                                                                                              \
        __VA_ARGS__, NULL                                                                          \
    }

static void test_config_rules(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology a100 = test_topology("dgx-a100-superpod");
    ppl_config c;
    ppl_error err;
    assert_int_equal(from_flags(&m, &a100, &c, &err,
                                FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--mbs", "1",
                                      "--global-batch", "1536")),
                     PPL_OK);
    assert_int_equal(c.dp, 16);
    assert_int_equal(c.microbatches, 96);
    struct {
        char **argv;
        const char *flag, *text;
    } bad[] = {
        {FLAGS("--gpus", "1024", "--tp", "7", "--pp", "8", "--mbs", "1", "--global-batch", "1536"),
         "gpus", "does not divide"},
        {FLAGS("--gpus", "896", "--tp", "7", "--pp", "8", "--mbs", "1", "--global-batch", "1536"),
         "tp", "does not divide the model's 96 attention heads"},
        {FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--dp", "8", "--mbs", "1",
               "--global-batch", "1536"),
         "dp", "but gpus is 1024"},
        {FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--mbs", "1", "--global-batch", "1000"),
         "global_batch", "not a multiple of dp*mbs"},
        {FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--vp", "13", "--mbs", "1",
               "--global-batch", "1536"),
         "vp", "at least a layer a chunk"},
        {FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--vp", "2", "--mbs", "1",
               "--global-batch", "16"),
         "vp", "needs at least pp (8) microbatches, found 1"},
        {FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--ep", "2", "--mbs", "1",
               "--global-batch", "1536"),
         "ep", "no experts"},
        {FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--mbs", "1", "--global-batch", "1536",
               "--precision", "fp8"),
         "precision", "not supported by A100"},
        {FLAGS("--gpus", "8192", "--tp", "8", "--pp", "8", "--mbs", "1", "--global-batch", "1536"),
         "gpus", "exceeds the topology's 4480"},
        {FLAGS("--gpus", "64", "--tp", "1", "--pp", "64", "--mbs", "1", "--global-batch", "64",
               "--sequence-parallel"),
         "sequence_parallel", "tensor parallelism of at least 2"},
        {FLAGS("--gpus", "1024", "--tp", "8", "--pp", "8", "--mbs", "1", "--global-batch", "1536",
               "--first-stage-layers", "90"),
         "first_stage_layers", "no even split"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ppl_status st = from_flags(&m, &a100, &c, &err, bad[i].argv);
        if (st != PPL_EUSAGE || strcmp(err.key, bad[i].flag) != 0 ||
            !strstr(err.message, bad[i].text) || strstr(err.message, "(null)"))
            fail_msg("case %zu: status %d, '%s: %s', wanted '%s: ...%s...'", i, st, err.key,
                     err.message, bad[i].flag, bad[i].text);
    }
    /* uneven stages pinned at one end: 126 layers, 16 stages, first 7 -> last 7 */
    ppl_model l = test_model("llama3-405b");
    ppl_topology h = test_topology("h100-64k");
    assert_int_equal(from_flags(&l, &h, &c, &err,
                                FLAGS("--gpus", "16384", "--tp", "8", "--pp", "16", "--mbs", "1",
                                      "--global-batch", "2048", "--first-stage-layers", "7")),
                     PPL_OK);
    assert_int_equal(c.split.first, 7);
    assert_int_equal(c.split.middle, 8);
    assert_int_equal(c.split.last, 7);
}

/* MoE parallel folding (Megatron-Core parallel_state.py:873-884): a stage's
 * tp*cp*dp ranks split again as etp x ep x edp, so etp*ep must divide them, not ep
 * dp.  Mixtral (8 experts, 32 heads, 8 K/V heads) on 16 GPUs, tp 4, cp 2, dp 2:
 * ep 8 with etp 2 takes 2 x 8 = 16 ranks, edp = 16 / 16 = 1, though 8 does not
 * divide dp = 2; ep 8 with etp 4 needs 32 ranks of the 16: refused, naming etp. */
static void test_expert_folding_rules(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_config c;
    ppl_error err;
    assert_int_equal(from_flags(&m, &t, &c, &err,
                                FLAGS("--gpus", "16", "--tp", "4", "--pp", "1", "--cp", "2", "--ep",
                                      "8", "--etp", "2", "--mbs", "1", "--global-batch", "16",
                                      "--sequence-parallel")),
                     PPL_OK);
    assert_int_equal(c.dp, 2);
    assert_int_equal(ppl_config_etp(&c), 2);
    assert_int_equal(ppl_config_edp(&c), 1);
    /* unset, etp is tp (arguments.py:587-588): 4 x 8 = 32 ranks, not 16 */
    struct {
        char **argv;
        const char *flag, *text;
    } bad[] = {
        {FLAGS("--gpus", "16", "--tp", "4", "--pp", "1", "--cp", "2", "--ep", "8", "--etp", "4",
               "--mbs", "1", "--global-batch", "16", "--sequence-parallel"),
         "etp", "etp*ep = 4*8 does not divide"},
        {FLAGS("--gpus", "16", "--tp", "4", "--pp", "1", "--cp", "2", "--ep", "8", "--mbs", "1",
               "--global-batch", "16", "--sequence-parallel"),
         "etp", "etp*ep = 4*8 does not divide"},
        {FLAGS("--gpus", "16", "--tp", "4", "--pp", "1", "--cp", "2", "--ep", "8", "--etp", "2",
               "--mbs", "1", "--global-batch", "16"),
         "sequence_parallel", "needs sequence parallelism"},
        {FLAGS("--gpus", "16", "--tp", "4", "--pp", "1", "--ep", "3", "--etp", "1", "--mbs", "1",
               "--global-batch", "16", "--sequence-parallel"),
         "ep", "does not divide the 8 experts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ppl_status st = from_flags(&m, &t, &c, &err, bad[i].argv);
        if (st != PPL_EUSAGE || strcmp(err.key, bad[i].flag) != 0 ||
            !strstr(err.message, bad[i].text))
            fail_msg("case %zu: status %d, '%s: %s', wanted '%s: ...%s...'", i, st, err.key,
                     err.message, bad[i].flag, bad[i].text);
    }
    /* a model without experts has no expert layout of its own */
    ppl_model g = test_model("gpt3-175b");
    assert_int_equal(from_flags(&g, &t, &c, &err,
                                FLAGS("--gpus", "64", "--tp", "8", "--pp", "8", "--etp", "4",
                                      "--mbs", "1", "--global-batch", "64")),
                     PPL_EUSAGE);
    assert_string_equal(err.key, "etp");
}

/* Expert weights per GPU follow etp, not tp.  Mixtral 8x7B (hidden 4096, expert
 * width 14336, gated: 3 matrices) on 16 GPUs, tp 2, dp 8, ep 8: one local expert a
 * GPU, 3 x 4096 x 14336 = 176,160,768 weights a layer, no biases.
 *   etp 1: the whole expert, 32 layers x 176,160,768 = 5,637,144,576 a GPU;
 *          edp = 16 / (1 x 8) = 2 replicas share its optimizer state under ZeRO-1;
 *   etp 2: half of it, 32 x 88,080,384 = 2,818,572,288; edp = 16 / (2 x 8) = 1.
 * ZeRO-1 optimizer state, 12 B a parameter (fp32 master, Adam's two moments):
 * the dense part, already split by tp 2, over dp = 8; experts 12 x 5,637,144,576 / 2
 * = 12 x 2,818,572,288 / 1: equal, the same experts split two ways either by
 * replicas or by columns. */
static void test_expert_weights_etp(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c;
    ppl_error err;
    ppl_memory one, two;
    assert_int_equal(
        from_flags(&m, &t, &c, &err,
                   FLAGS("--gpus", "16", "--tp", "2", "--pp", "1", "--ep", "8", "--etp", "1",
                         "--mbs", "1", "--global-batch", "16", "--sequence-parallel")),
        PPL_OK);
    c.zero = 1;
    ppl_memory_stage(&m, &t, &c, &o, 0, &one);
    assert_close(one.params_expert, 32.0 * 3.0 * 4096.0 * 14336.0, 1e-12);
    assert_close(one.params_expert, 5637144576.0, 1e-12);
    c.etp = 2;
    ppl_memory_stage(&m, &t, &c, &o, 0, &two);
    assert_close(two.params_expert, 2818572288.0, 1e-12);
    /* the dense part (attention, norms, router, embeddings) does not move */
    assert_close(one.params - one.params_expert, two.params - two.params_expert, 1e-12);
    double dense = one.params - one.params_expert;
    assert_close(one.optimizer, 12.0 * (dense / 8.0 + 5637144576.0 / 2.0), 1e-12);
    assert_close(two.optimizer, 12.0 * (dense / 8.0 + 2818572288.0 / 1.0), 1e-12);
    /* 16-bit weights are not sharded by ZeRO-1: half as many bytes at etp 2 */
    assert_close(one.weights - two.weights, 2.0 * 2818572288.0, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_worked_example),
        cmocka_unit_test(test_megatron_bytes_per_param),
        cmocka_unit_test(test_korthikanti_table2),
        cmocka_unit_test(test_in_flight),
        cmocka_unit_test(test_uneven_interleaving),
        cmocka_unit_test(test_1t_on_one_gpu),
        cmocka_unit_test(test_gqa_gated),
        cmocka_unit_test(test_moe_expert_parallel),
        cmocka_unit_test(test_stage_split),
        cmocka_unit_test(test_split_forms),
        cmocka_unit_test(test_config_rules),
        cmocka_unit_test(test_expert_folding_rules),
        cmocka_unit_test(test_expert_weights_etp),
        cmocka_unit_test(test_block_recompute),
        cmocka_unit_test(test_worst_stage_moe_every),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
