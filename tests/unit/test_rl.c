/*
 * test_rl.c - an RL post-training step (studies/rl.c): the rollout's two bounds,
 * the weight-sync volume and time, the step of each placement, derived by hand.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "studies/rl.h"

/* Llama 3 8B's 8,030,261,248 weights in bf16 */
#define L8_WEIGHTS_B (8030261248.0 * 2.0)
/* dgx-h100-superpod: 8 rails of 400 Gb/s for 8 GPUs: 50 GB/s a GPU, a direction */
#define NIC_BPS 50e9

static ppl_rl_workload workload(int64_t prompts, int64_t samples, int64_t in, int64_t out,
                                int64_t max)
{
    ppl_rl_workload w = {.prompts = prompts,
                         .samples = samples,
                         .input_tokens = in,
                         .output_tokens = out,
                         .output_max = max,
                         .updates = 1,
                         .forward_passes = 2,
                         .precision = PPL_PRECISION_BF16};
    return w;
}

/*
 * 4 prompts x 2 samples = 8 sequences on 2 GPUs, one engine of tp 1 each, batch 4:
 * 2 replicas take 4 sequences each (2 prompts, each prefilled once, in one chunk
 * with the other: 8,192 tokens hold 8 prompts of 1,024, at most the batch of 4, so
 * each costs a quarter of a 4-prompt forward, serve.h prefill_share_s), decoded 4 a
 * step: 4 x 512 tokens / 4 = 512 steps at the batch-4 step (mean context
 * 1,024 + 256).  The longest response, 2,048 tokens, alone: its prefill and
 * 2,048 steps of one sequence, each reading
 *   7,504,924,672 weights x 2 B (all but the input embedding's table)
 *   + 2,048 tokens of mean context (1,024 + 2,048 / 2) x 131,072 B of cache
 *   = 15,009,849,344 + 268,435,456 = 15,278,284,800 B
 * at the streaming share of 3.35 TB/s (its GEMMs are far shorter).  2,048 steps
 * of that (about 9.3 s) outlast the 512 steps of four (about 2.4 s): the rollout
 * is the tail's.
 */
static void test_rollout_bounds(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_rl_workload w = workload(4, 2, 1024, 512, 2048);
    ppl_serve_layout e = {.tp = 1, .batch = 4, .precision = PPL_PRECISION_BF16};
    ppl_rl_rollout r;
    assert_true(ppl_rl_rollout_of(&ctx, &w, 2, &e, &r));
    assert_true(r.replicas == 2 && r.batch == 4);
    ppl_serve_workload mean = {1024, 512};
    ppl_serve_estimate at4;
    ppl_serve_cost(&ctx, &e, &mean, &at4);
    assert_true(at4.prefill_prompts == 4);
    assert_close(r.work_s, 2.0 * at4.prefill_share_s + 512.0 * at4.decode_step_s, 1e-12);
    const double step1 = 15278284800.0 / (3.35e12 * ctx.eff.hbm);
    const double tail = 2048.0 * step1; /* and the prefill */
    assert_true(r.tail_s > tail && r.tail_s < tail + 0.5);
    assert_close(r.time_s, r.tail_s, 1e-15);
    /* the batch larger than a replica's share decodes the share */
    ppl_serve_layout big = {.tp = 1, .batch = 64, .precision = PPL_PRECISION_BF16};
    assert_true(ppl_rl_rollout_of(&ctx, &w, 2, &big, &r));
    assert_true(r.batch == 4);
    /* no tail: the work bound */
    w.output_max = 512;
    assert_true(ppl_rl_rollout_of(&ctx, &w, 2, &e, &r));
    assert_close(r.time_s, r.work_s, 1e-15);
}

/*
 * Disaggregated: 16 rollout GPUs (two servers) after 48 training ones; each
 * receives every weight, so 16 x 16,060,522,496 B = 256,968,359,936 B in all.
 * The broadcast runs over 17 GPUs on three servers: each receives 16/17 of the
 * weights through its server's network at no more than its NIC's 50 GB/s, so at
 * least 16/17 x 16.06 GB / 50 GB/s = 0.302 s; a ring at line rate stays within a
 * quarter above that.  The engine then writes its shard (1/8 at tp 8).
 */
static void test_sync_disaggregated(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_rl_plan p;
    memset(&p, 0, sizeof p);
    p.placement = PPL_RL_DISAGGREGATED;
    p.rollout_gpus = 16;
    p.train_gpus = 48;
    p.rollout.engine.tp = 8; /* bf16: its GPUs hold an eighth of the weights each */
    p.rollout.cost.weight_bytes = L8_WEIGHTS_B / 8.0;
    double bytes, s;
    ppl_rl_sync(&ctx, &p, &bytes, &s);
    assert_true(bytes == 256968359936.0);
    assert_true(L8_WEIGHTS_B == 16060522496.0);
    const double line = 16.0 / 17.0 * L8_WEIGHTS_B / NIC_BPS;
    const double load = 2.0 * L8_WEIGHTS_B / 8.0 / (3.35e12 * ctx.eff.hbm);
    assert_true(s >= line + load);
    assert_true(s <= 1.25 * line + load);
}

/*
 * Colocated, the trainer at tp 2, pp 2, dp 16 (ZeRO-1) on 64 GPUs: each GPU holds
 * a quarter of the weights and gathers the other three quarters, 64 x 3/4 x
 * 16.06 GB = 770,905,079,808 B in all.  The stages sit 32 GPUs apart, on other
 * servers: a quarter more comes in at no more than 50 GB/s; the tensor-parallel
 * half over NVLink at no more than 450 GB/s.  A trainer without tensor or
 * pipeline parallelism holds every weight: nothing moves but the engine's copy.
 */
static void test_sync_colocated(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_rl_plan p;
    memset(&p, 0, sizeof p);
    p.placement = PPL_RL_COLOCATED;
    p.rollout_gpus = p.train_gpus = 64;
    p.rollout.engine.tp = 8; /* bf16: its GPUs hold an eighth of the weights each */
    p.rollout.cost.weight_bytes = L8_WEIGHTS_B / 8.0;
    ppl_config *c = &p.train.config;
    c->gpus = 64, c->tp = 2, c->pp = 2, c->dp = 16, c->cp = 1, c->zero = 1;
    double bytes, s;
    ppl_rl_sync(&ctx, &p, &bytes, &s);
    assert_true(bytes == 770905079808.0);
    const double load = 2.0 * L8_WEIGHTS_B / 8.0 / (3.35e12 * ctx.eff.hbm);
    const double floor = L8_WEIGHTS_B / 4.0 / NIC_BPS + L8_WEIGHTS_B / 2.0 / 450e9 + load;
    assert_true(s >= floor && s <= 1.5 * floor);
    c->tp = c->pp = 1, c->dp = 64;
    ppl_rl_sync(&ctx, &p, &bytes, &s);
    assert_true(bytes == 0.0);
    assert_close(s, load, 1e-12);
}

/*
 * The search on 32 GPUs (4 servers), 500-token prompts and 1,000-token responses:
 * the trainer's packed sequences of 1,500 tokens padded to 1,536 (a multiple of
 * 128); one colocated plan on all of them; the
 * splits in whole servers (1, 2 and 3 to the engine); each step is its parts in
 * sequence (sync) or the longer of rollout and update plus the sync (one step
 * off-policy); the plans come fastest first; without off-policy no asynchronous
 * plan.
 */
static void test_search(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_rl_opts o = {.workload = workload(64, 8, 500, 1000, 4096), .gpus = 32, .off_policy = true};
    o.workload.reward_s = 2.0;
    o.search.objective = PPL_OBJECTIVE_TIME;
    ppl_rl_result r;
    ppl_error err;
    assert_int_equal(ppl_rl_search(&ctx, &o, &r, &err), PPL_OK);
    assert_true(r.splits == 3);
    size_t colocated = 0, async = 0;
    for (size_t i = 0; i < r.count; i++) {
        const ppl_rl_plan *p = &r.plans[i];
        if (i > 0)
            assert_true(p->step_s >= r.plans[i - 1].step_s);
        assert_true(p->train.config.global_batch == 512);
        /* tokens a second x step / sequences: the trainer's sequence length */
        assert_close(p->train.tokens_per_s * p->train.step_time_s / 512.0, 1536.0, 1e-9);
        assert_true(p->reward_s == 2.0);
        if (p->placement == PPL_RL_COLOCATED) {
            colocated++;
            assert_true(p->rollout_gpus == 32 && p->train_gpus == 32);
            assert_close(p->step_s, p->rollout.time_s + 2.0 + p->train_s + p->sync_s + p->offload_s,
                         1e-12);
        } else {
            assert_true(p->rollout_gpus % 8 == 0 && p->rollout_gpus + p->train_gpus == 32);
            assert_true(p->offload_s == 0.0);
            if (p->pipeline == PPL_RL_ASYNC) {
                async++;
                assert_close(p->step_s, fmax(p->rollout.time_s + 2.0, p->train_s) + p->sync_s,
                             1e-12);
            } else {
                assert_close(p->step_s, p->rollout.time_s + 2.0 + p->train_s + p->sync_s, 1e-12);
            }
        }
        assert_close(p->train_s, p->train.step_time_s + p->forward_s, 1e-12);
        assert_true(p->forward_s > 0.0 && p->forward_s < p->train.step_time_s);
        assert_true(p->idle_share >= 0.0 && p->idle_share < 1.0);
    }
    assert_true(colocated == 1 && async == 3);
    ppl_rl_result_free(&r);
    o.off_policy = false;
    assert_int_equal(ppl_rl_search(&ctx, &o, &r, &err), PPL_OK);
    for (size_t i = 0; i < r.count; i++)
        assert_true(r.plans[i].pipeline == PPL_RL_SYNC);
    ppl_rl_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollout_bounds),
        cmocka_unit_test(test_sync_disaggregated),
        cmocka_unit_test(test_sync_colocated),
        cmocka_unit_test(test_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
