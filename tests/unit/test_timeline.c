/*
 * test_timeline.c - one step's pipeline drawn from the executor (timeline.h) against
 * hand computations, and the chart axes (svg.h): log2 ticks at powers of two,
 * nice linear ticks, escaping.
 */
#include "testutil.h"

#include "cost/pipeline.h"
#include "render/svg.h"
#include "render/timeline.h"

static ppl_passes equal[16];

static void fill(double f, double b, double w)
{
    for (size_t i = 0; i < sizeof equal / sizeof equal[0]; i++)
        equal[i] = (ppl_passes){f, b, w, 0.0};
}

/*
 * 1F1B, p = 4, m = 8, F = 1, B + W = 2 (B 1.5, W 0.5): the last stage's first
 * forward starts at 3 F = 3 and the pipeline runs steady from there; the first
 * stage's last backward ends at (m + p - 1)(F + B + W) = 11 x 3 = 33 s (Narayanan
 * et al. SC'21 §2.2).  The busiest stage works m x 3 = 24 s; the bubble is 9 s =
 * (p - 1)(F + B + W), the step model's.
 */
static void test_1f1b(void **state)
{
    (void)state;
    fill(1.0, 1.5, 0.5);
    ppl_timeline t;
    ppl_error err;
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_1F1B, 4, 1, 8, 0, equal, NULL, 1000, &t, &err),
                     PPL_OK);
    assert_int_equal(t.n, 2 * 4 * 8);
    assert_close(t.makespan_s, 33.0, 1e-12);
    assert_close(t.busy_s, 24.0, 1e-12);
    /* stage 3 (the last) runs F0 at 3..4, then B0 at 4..6 */
    const ppl_block *last = &t.blocks[3 * 16];
    assert_int_equal(last[0].kind, PPL_BLOCK_FORWARD);
    assert_close(last[0].start_s, 3.0, 1e-12);
    assert_int_equal(last[1].kind, PPL_BLOCK_BACKWARD);
    assert_close(last[1].end_s, 6.0, 1e-12);
    /* stage 0 holds p - 1 = 3 warm-up forwards before its first backward */
    assert_int_equal(t.blocks[0].kind, PPL_BLOCK_FORWARD);
    assert_int_equal(t.blocks[3].kind, PPL_BLOCK_FORWARD);
    assert_int_equal(t.blocks[4].kind, PPL_BLOCK_BACKWARD);
    ppl_timeline_free(&t);
}

/*
 * Interleaved, p = 4, v = 2, m = 8, F = 1, B = 2 a stage (a chunk: 0.5 and 1):
 * m (F + B) + (p - 1)(F + B)/v = 24 + 4.5 = 28.5 s (Narayanan et al. §2.2.2).
 * GPipe, the same stages, v = 1: every forward then every backward; the first
 * stage's last forward ends at m F = 8, the last stage's at 8 + 3 = 11, its
 * backwards run 11..27, and the first stage's last backward ends at 27 + 3 x 2
 * = 33 = (m + p - 1)(F + B), as 1F1B.
 */
static void test_interleaved_and_gpipe(void **state)
{
    (void)state;
    fill(1.0, 2.0, 0.0);
    ppl_timeline t;
    ppl_error err;
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_1F1B, 4, 2, 8, 4, equal, NULL, 1000, &t, &err),
                     PPL_OK);
    assert_int_equal(t.n, 2 * 4 * 2 * 8);
    assert_int_equal(t.chunks, 2);
    assert_close(t.makespan_s, 28.5, 1e-12);
    ppl_timeline_free(&t);
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_GPIPE, 4, 1, 8, 0, equal, NULL, 1000, &t, &err),
                     PPL_OK);
    assert_close(t.makespan_s, 33.0, 1e-12);
    ppl_timeline_free(&t);
}

/*
 * Unequal stages, 1F1B, p = 2, m = 4: stage 0 F = 1, B = 1; stage 1 F = 2,
 * B = 2.  Stage 1 is the slowest: its F0 starts at 1; it then runs F B F B ...
 * without a gap (each forward it needs is ready long before), 4 x 4 = 16 s, so it
 * ends at 17; stage 0's last backward follows at 17..18.  The step model's
 * (m - 1) x 4 + (1 + 1 + 2 + 2) = 18 s.
 */
static void test_unequal(void **state)
{
    (void)state;
    ppl_passes p[2] = {{1.0, 1.0, 0.0, 0.0}, {2.0, 2.0, 0.0, 0.0}};
    ppl_timeline t;
    ppl_error err;
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_1F1B, 2, 1, 4, 0, p, NULL, 1000, &t, &err), PPL_OK);
    assert_close(t.makespan_s, 18.0, 1e-12);
    assert_close(t.busy_s, 16.0, 1e-12);
    ppl_timeline_free(&t);
}

/*
 * ZB-H1, p = 4, m = 8, F = B = W = 1: m (F + B + W) + (p - 1)(F + B - W) = 24 + 3
 * = 27 s (Qi et al. ICLR 2024, Table 2), against 1F1B's (m + p - 1)(F + B + W) =
 * 33.  Stage 0 holds at most p = 4 microbatches (1F1B's memory): its first four
 * passes are forwards, its fifth the first B.  With B = 1.2, W = 0.8 the deferred
 * W passes fill less than the paper's hand-made schedule (24 + 3 x 1.4 = 28.2,
 * Table 2): the run lies between the lower bound (the last stage's 3 s wait for
 * its first forward and its 24 s of work) and 1F1B's (m + p - 1) x 3 = 33.
 */
static void test_zb_h1(void **state)
{
    (void)state;
    fill(1.0, 1.0, 1.0);
    ppl_timeline t;
    ppl_error err;
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_ZB_H1, 4, 1, 8, 0, equal, NULL, 1000, &t, &err),
                     PPL_OK);
    assert_int_equal(t.n, 3 * 4 * 8);
    assert_close(t.makespan_s, 27.0, 1e-12);
    for (int i = 0; i < 4; i++)
        assert_int_equal(t.blocks[i].kind, PPL_BLOCK_FORWARD);
    assert_int_equal(t.blocks[4].kind, PPL_BLOCK_BACKWARD);
    int weights = 0;
    for (size_t i = 0; i < t.n; i++)
        weights += t.blocks[i].kind == PPL_BLOCK_WEIGHT;
    assert_int_equal(weights, 4 * 8);
    ppl_timeline_free(&t);
    fill(1.0, 1.2, 0.8);
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_ZB_H1, 4, 1, 8, 0, equal, NULL, 1000, &t, &err),
                     PPL_OK);
    assert_true(t.makespan_s <= 33.0 - 1e-9);
    assert_true(t.makespan_s >= 27.0 - 1e-9);
    ppl_timeline_free(&t);
}

/* Every schedule is drawn in its own order, the executor's run: ZB-H2 at p = 4,
 * m = 8, F = B = W = 1 ends at 24 + max((p-1)(F+B-2W), (p-1)F) = 27 s
 * (test_executor derives it), DualPipe's blocks include F&B ones.  Too many
 * blocks and an empty pipeline are refused. */
static void test_limits(void **state)
{
    (void)state;
    fill(1.0, 1.0, 1.0);
    ppl_timeline t;
    ppl_error err;
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_ZB_H2, 4, 1, 8, 0, equal, NULL, 1000, &t, &err),
                     PPL_OK);
    assert_close(t.makespan_s, 27.0, 1e-12);
    ppl_timeline_free(&t);
    for (int i = 0; i < 16; i++)
        equal[i].fb_s = 2.5;
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_DUALPIPE, 4, 1, 8, 0, equal, NULL, 1000, &t,
                                        &err),
                     PPL_OK);
    size_t fb = 0;
    for (size_t i = 0; i < t.n; i++)
        fb += t.blocks[i].kind == PPL_BLOCK_OVERLAPPED;
    assert_true(fb > 0);
    ppl_timeline_free(&t);
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_1F1B, 4, 1, 8, 0, equal, NULL, 63, &t, &err),
                     PPL_EUSAGE);
    assert_null(t.blocks);
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_1F1B, 0, 1, 8, 0, equal, NULL, 1000, &t, &err),
                     PPL_EUSAGE);
    assert_int_equal(ppl_timeline_build(PPL_SCHEDULE_1F1B, 4, 2, 2, 4, equal, NULL, 1000, &t, &err),
                     PPL_EUSAGE); /* interleaving needs m >= p */
}

/* log2 ticks for 992..2048 GPUs: the powers of two from the one at or below 992
 * to the one at or above 2048 (the axis covers the data): 512, 1024, 2048.  Linear ticks
 * over 0..7.3: steps of 1 (7.3 / 8 parts rounds up to 1): 0, 1, ..., 8. */
static void test_ticks(void **state)
{
    (void)state;
    double t[16];
    int n = ppl_svg_ticks(992, 2048, true, 9, t);
    assert_int_equal(n, 3);
    assert_close(t[0], 512, 0);
    assert_close(t[1], 1024, 0);
    assert_close(t[2], 2048, 0);
    n = ppl_svg_ticks(8, 65536, true, 9, t); /* 2^3 .. 2^16: 14 powers, every other */
    assert_int_equal(n, 7);
    assert_close(t[0], 8, 0);
    assert_close(t[1], 32, 0);
    n = ppl_svg_ticks(0, 7.3, false, 9, t);
    assert_int_equal(n, 9);
    assert_close(t[8], 8.0, 1e-12);
    ppl_buf b;
    ppl_buf_init(&b);
    ppl_svg_escape(&b, "a<b & \"c\"");
    assert_string_equal(b.data, "a&lt;b &amp; &quot;c&quot;");
    ppl_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1f1b),    cmocka_unit_test(test_interleaved_and_gpipe),
        cmocka_unit_test(test_unequal), cmocka_unit_test(test_zb_h1),
        cmocka_unit_test(test_limits),  cmocka_unit_test(test_ticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
