/*
 * test_balance.c - the stage splits (plan/balance.h): the integer program and the
 * first/last-stage split of Llama 3 405B against every split, the end split's
 * bisection against its scan, and the step bound over every split of the form.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "cost/rules.h"
#include "cost/stage.h"
#include "plan/bounds.h"
#include "plan/balance.h"

/* Llama 3 405B on 16 stages: 126 layers cannot split evenly.  The integer program
 * over any split holds every layer, and the stages carrying the embedding and the
 * output layer take no more than the others (Llama 3 ran 7, 8 x 14, 7).  The
 * split of the first/last-stage flags (ppl_balance_ends) is no slower by the same
 * stage lines than any other split of that form: checked against all of them. */
static void test_balance_llama(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-405b");
    ppl_topology t = test_topology("h100-64k");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.gpus = 16384;
    c.tp = 8;
    c.pp = 16;
    c.cp = c.ep = c.vp = 1;
    c.dp = 128;
    c.mbs = 1;
    c.global_batch = 2048;
    c.microbatches = 16;
    c.recompute = PPL_RECOMPUTE_FULL;
    c.sequence_parallel = true;
    c.flash_attention = true;
    c.split = ppl_stage_split_default(126, 16);
    int64_t layers[16];
    assert_int_equal(ppl_balance_stages(&ctx, &c, layers), PPL_OK);
    int64_t sum = 0, middle = 0;
    for (int k = 0; k < 16; k++) {
        sum += layers[k];
        if (k > 0 && k < 15 && layers[k] > middle)
            middle = layers[k];
    }
    assert_int_equal(sum, 126);
    assert_true(layers[15] <= middle);

    ppl_layout l;
    ppl_micro mi;
    test_laid_out(&ctx, &c, &l, &mi);
    ppl_stage_split b;
    assert_int_equal(ppl_balance_ends(&ctx, &c, &l, &mi, NULL, &b), PPL_OK);
    assert_int_equal(b.first + 14 * b.middle + b.last, 126);
    /* the slowest of stage 0, 1 and 15 per microbatch, as the balancer costs it */
    double t0[2], t1[2], t15[2];
    ppl_memory mem;
    for (int n = 0; n < 2; n++) {
        t0[n] = ppl_stage_time_cached(&ctx, &c, &l, &mi, 0, n + 1, 0, &mem, NULL);
        t1[n] = ppl_stage_time_cached(&ctx, &c, &l, &mi, 1, n + 1, 0, &mem, NULL);
        t15[n] = ppl_stage_time_cached(&ctx, &c, &l, &mi, 15, n + 1, 0, &mem, NULL);
    }
#define LINE(t, n) ((t)[0] + ((t)[1] - (t)[0]) * ((double)(n)-1.0))
    double got = fmax(fmax(LINE(t0, b.first), LINE(t1, b.middle)), LINE(t15, b.last));
    double least = INFINITY; /* over every split of that form, memory aside */
    for (int64_t mid = 1; 14 * mid <= 124; mid++)
        for (int64_t f = 1; f < 126 - 14 * mid; f++) {
            int64_t last = 126 - 14 * mid - f;
            double w = fmax(fmax(LINE(t0, f), LINE(t1, mid)), LINE(t15, last));
            assert_true(got <= w * (1.0 + 1e-12));
            least = fmin(least, w);
        }
#undef LINE
    /* the time lines kept across ZeRO stages below 3 (balance.h ppl_balance_memo):
     * each stage's split as without them, its memory costed anew (ZeRO 0 holds
     * more and may balance otherwise) */
    ppl_balance_memo memo = {0};
    for (int z = 2; z >= 0; z--) {
        ppl_stage_split kept, fresh;
        c.zero = z;
        ppl_status a = ppl_balance_ends(&ctx, &c, &l, &mi, &memo, &kept);
        assert_int_equal(a, ppl_balance_ends(&ctx, &c, &l, &mi, NULL, &fresh));
        if (a == PPL_OK)
            assert_true(kept.first == fresh.first && kept.middle == fresh.middle &&
                        kept.last == fresh.last);
    }
    assert_true(memo.known[0] && memo.known[1] && memo.known[2]);
    /* the balance's least slowest stage from the kept lines (balance.h
     * ppl_balance_least_s): the least over every split above, to rounding, and
     * below the slowest stage of the split the balance returns, each stage
     * costed at its own count (the lines are exact at 1 and 2 layers and below a
     * stage's convex time beyond) */
    const double kept_least = ppl_balance_least_s(&ctx, &c, &mi, &memo, true);
    assert_true(kept_least > 0.0);
    assert_true(fabs(kept_least - least) <= 1e-9 * least);
    const double slowest =
        fmax(fmax(ppl_stage_time_cached(&ctx, &c, &l, &mi, 0, b.first, 0, &mem, NULL),
                  ppl_stage_time_cached(&ctx, &c, &l, &mi, 1, b.middle, 0, &mem, NULL)),
             ppl_stage_time_cached(&ctx, &c, &l, &mi, 15, b.last, 0, &mem, NULL));
    assert_true(kept_least <= slowest);
    c.zero = 3; /* ZeRO-3's times read the sharding group: no lines are kept */
    assert_true(ppl_balance_least_s(&ctx, &c, &mi, &memo, true) == 0.0);
    c.zero = 0;
    c.split = b;
    ppl_error err;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_OK);
    /* a split that loses a layer (125 of 126) is refused, naming the count */
    c.split.first--;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_EUSAGE);
    assert_non_null(strstr(err.message, "the stages hold 125 layers, the model has 126"));
}

/* c laid out: the end split ppl_balance_ends bisects for is the one the scan over
 * every count returns; its status */
static ppl_status ends_as_scanned(const ppl_eval_ctx *ctx, const ppl_config *c)
{
    ppl_layout l;
    ppl_micro mi;
    test_laid_out(ctx, c, &l, &mi);
    ppl_stage_split a, b;
    ppl_status sa = ppl_balance_ends(ctx, c, &l, &mi, NULL, &a),
               sb = ppl_balance_ends_scanned(ctx, c, &l, &mi, &b);
    assert_int_equal(sa, sb);
    if (sa == PPL_OK) {
        assert_int_equal(a.first, b.first);
        assert_int_equal(a.middle, b.middle);
        assert_int_equal(a.last, b.last);
    }
    return sa;
}

/* The end split bisects on the middle stages' layers where no stage line falls
 * (ppl_balance_ends) and returns the split the scan over every count returns
 * (ppl_balance_ends_scanned), the fewest middle layers among equally slow ones:
 * Llama 3 405B (126 layers) and 70B (80) and GPT-3 175B (96) on 3 to 12 stages, tp
 * 4 and 8, 8 and 64 replicas, microbatches of one and four sequences, recomputation none and full,
 * ZeRO 0 and 1, where memory bounds the ends and where it does not. */
static void test_bisect_equals_scan(void **state)
{
    (void)state;
    const char *models[] = {"llama3-405b", "llama3-70b", "gpt3-175b"};
    ppl_topology t = test_topology("h100-64k");
    int compared = 0, long_scans = 0;
    for (int i = 0; i < 3; i++) {
        ppl_model m = test_model(models[i]);
        ppl_eval_ctx ctx;
        ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
        for (int64_t pp = 3; pp <= 12; pp++)
            for (int64_t tp = 4; tp <= 8; tp *= 2)
                for (int64_t dp = 8; dp <= 64; dp *= 8)
                    for (int64_t mbs = 1; mbs <= 4; mbs *= 4)
                        for (int r = 0; r < 2; r++)
                            for (int zero = 0; zero <= 1; zero++) {
                                ppl_config c;
                                memset(&c, 0, sizeof c);
                                c.tp = tp, c.pp = pp, c.dp = dp, c.cp = c.ep = c.vp = 1;
                                c.gpus = tp * pp * dp;
                                c.mbs = mbs;
                                c.global_batch = 16 * dp;
                                c.microbatches = 16 / mbs;
                                c.zero = zero;
                                c.recompute = r ? PPL_RECOMPUTE_FULL : PPL_RECOMPUTE_NONE;
                                c.sequence_parallel = true;
                                c.flash_attention = true;
                                c.split = ppl_stage_split_default(m.layers, pp);
                                if (ppl_config_check(&c, &m, &t, NULL) != PPL_OK)
                                    continue;
                                (void)ends_as_scanned(&ctx, &c);
                                compared++;
                                long_scans += (m.layers - 2) / (pp - 2) > 16;
                            }
    }
    /* GPT-3 175B on Meta's 24K cluster, 3 stages, tp 8, cp 4, every CP algorithm,
     * ZeRO 1 and 2: the ends' least
     * slowest stage is flat over the counts before the crossing, and the scan
     * keeps the fewest middle layers among them */
    ppl_model m = test_model("gpt3-175b");
    ppl_topology meta = test_topology("meta-24k-roce");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &meta, PPL_STACK_MODERN);
    for (int x = 0; x < PPL_CP_COMM_COUNT * 2; x++) {
        ppl_config c;
        memset(&c, 0, sizeof c);
        c.tp = 8, c.pp = 3, c.dp = 256, c.cp = 4, c.ep = c.vp = 1;
        c.gpus = 8 * 3 * 256 * 4;
        c.mbs = 1, c.global_batch = 1024, c.microbatches = 4;
        c.zero = 1 + x % 2;
        c.cp_comm = (ppl_cp_comm)(x / 2);
        c.recompute = PPL_RECOMPUTE_FULL;
        c.sequence_parallel = true;
        c.split = ppl_stage_split_default(m.layers, 3);
        if (ppl_config_check(&c, &m, &meta, NULL) != PPL_OK)
            continue;
        assert_int_equal(ends_as_scanned(&ctx, &c), PPL_OK);
        compared++;
    }
    assert_true(compared >= 250);
    assert_true(long_scans >= 200); /* where the bisection runs */
}

/* ppl_bound_split_form_s (vp 1) is the least over every split of the search's
 * form (a first stage of f layers, pp - 2 middle ones of m each, a last of the
 * rest, one at least each) of ppl_bound_split_s at that split, or below it: the
 * microbatches times the busiest stage, each layer at its own kind, the output
 * layer and the MTP modules on the last stage.  Checked against every (f, m):
 *   - at most the least always (a bound of every plan the search can make);
 *   - equal to it (to 1e-12) where every layer is of one kind: the middle stages
 *     then weigh m layers wherever they lie, and the ends' least is exact;
 *   - with dense layers ahead of MoE ones (DeepSeek-V3's form, and every second
 *     layer MoE past them) the middle stage's least over its places is taken
 *     apart from the ends', so it may fall below: never above.
 * The mutations it catches: the head or the MTP modules left off the last
 * stage (below the least where one kind), a middle place or an end count not
 * tried (above it). */
static void test_split_form_bound(void **state)
{
    (void)state;
    struct {
        const char *model;
        int64_t first_dense, every, mtp;
        bool one_kind;
    } cases[] = {
        {"llama3-8b", 0, 1, 2, true},     {"mixtral-8x7b", 0, 1, 1, true},
        {"deepseek-v3", 3, 1, 1, false},  {"qwen3-30b-a3b", 6, 2, 1, false},
        {"qwen3-30b-a3b", 0, 1, 0, true},
    };
    ppl_topology t = test_topology("dgx-h100-superpod");
    int exact = 0, checked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ppl_model m = test_model(cases[i].model);
        if (m.has_moe) {
            m.moe.first_dense_layers = cases[i].first_dense;
            m.moe.every = cases[i].every;
        }
        m.mtp_layers = cases[i].mtp;
        ppl_eval_ctx ctx;
        ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
        const int64_t pps[] = {2, 3, 4, 5, 7, 8, 13, 16};
        for (size_t k = 0; k < sizeof pps / sizeof pps[0]; k++)
            for (int r = 0; r < 2; r++) {
                const int64_t pp = pps[k];
                ppl_config c;
                memset(&c, 0, sizeof c);
                c.tp = 2, c.pp = pp, c.dp = 8, c.cp = c.vp = 1;
                c.ep = m.has_moe ? 8 : 1;
                c.gpus = c.tp * pp * c.dp;
                c.mbs = 2, c.global_batch = 256, c.microbatches = 16;
                c.recompute = r ? PPL_RECOMPUTE_FULL : PPL_RECOMPUTE_NONE;
                c.sequence_parallel = c.flash_attention = true;
                c.split = ppl_stage_split_default(m.layers, pp);
                ppl_layout l;
                ppl_micro mi;
                test_laid_out(&ctx, &c, &l, &mi);
                const int64_t L = m.layers, top = pp == 2 ? 0 : (L - 2) / (pp - 2);
                double least = INFINITY;
                for (int64_t mid = pp == 2 ? 0 : 1; mid <= top; mid++) {
                    const int64_t R = L - (pp - 2) * mid;
                    for (int64_t f = 1; f < R; f++) {
                        ppl_config b = c;
                        b.split = (ppl_stage_split){f, R - f, mid};
                        assert_int_equal(ppl_config_check(&b, &m, &t, NULL), PPL_OK);
                        ppl_classes cl;
                        ppl_classes_init(&ctx, &b, &cl);
                        least = fmin(least, ppl_bound_split_s(&ctx, &b, &mi, &cl));
                        ppl_classes_free(&cl);
                    }
                }
                const double form = ppl_bound_split_form_s(&ctx, &c, &mi, 0.0);
                if (!(form <= least))
                    fail_msg("%s pp %lld: %.17g above the least split's %.17g", cases[i].model,
                             (long long)pp, form, least);
                if (cases[i].one_kind)
                    assert_true(form >= least * (1.0 - 1e-12));
                exact += form >= least * (1.0 - 1e-12);
                checked++;
            }
    }
    assert_int_equal(checked, 80);
    assert_true(exact >= 60); /* the one-kind cases and most of the others */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_balance_llama),
        cmocka_unit_test(test_bisect_equals_scan),
        cmocka_unit_test(test_split_form_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
