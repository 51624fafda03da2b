/*
 * test_executor.c - the pipeline executor (cost/executor.h): hand-worked
 * timelines, the papers' closed forms where their assumptions hold, the lower
 * bounds everywhere, activations in flight, and random pipelines.
 */
#include "testutil.h"

#include "cost/executor.h"
#include "cost/linesweep.h"

static ppl_pipe_out run(int schedule, int64_t pp, int64_t vp, int64_t m, const ppl_passes *st,
                        const double *hop, bool events)
{
    ppl_pipe_in in = {schedule, pp, vp, m, 0, st, hop};
    ppl_pipe_out out;
    ppl_error err;
    assert_int_equal(ppl_pipe_run(&in, events, &out, &err), PPL_OK);
    return out;
}

/* Whether a run without events gives the run with them: the same peak in flight
 * on the same rank, and the same time but for the rounding a 1F1B line's carried
 * periods may add (cost/linesweep.h, ppl_steady_bound_s) */
static bool same_run(const ppl_pipe_out *walked, const ppl_pipe_out *events, int64_t m)
{
    return fabs(walked->time_s - events->time_s) <= ppl_steady_bound_s(m, events->time_s) &&
           walked->peak_in_flight == events->peak_in_flight &&
           walked->peak_rank == events->peak_rank;
}

static void equal(ppl_passes *st, int64_t pp, double f, double b, double w)
{
    for (int64_t k = 0; k < pp; k++)
        st[k] = (ppl_passes){f, b, w, f + b + w};
}

/* the event of rank k running op `op` of microbatch mb (chunk c) */
static const ppl_pipe_event *find(const ppl_pipe_out *o, int k, int op, int mb, int c)
{
    for (size_t i = 0; i < o->n_events; i++) {
        const ppl_pipe_event *e = &o->events[i];
        if (e->rank == k && e->op == op && e->microbatch == mb && e->chunk == c)
            return e;
    }
    fail_msg("no event for rank %d op %d microbatch %d chunk %d", k, op, mb, c);
    return NULL;
}

/*
 * 1F1B by hand, p = 4, m = 4, F = 1, B + W = 2 (the whole backward), no sends.
 * Rank k holds p - k - 1 warm-up forwards, so rank 0 runs F0..F3 at 0..4 and rank
 * k starts F0 at k.  Microbatch 0's backward starts on rank 3 after its forward
 * (3..4), so B+W 0 runs at 4..6 on rank 3, 6..8 on rank 2, 8..10 on rank 1 and
 * 10..12 on rank 0.  Rank 0 then runs its three backwards left one cycle of F + B
 * + W = 3 apart: the last ends at (m + p - 1)(F + B + W) = 7 x 3 = 21.
 * With a send of 0.5 each way (p = 2, m = 1): F on rank 0 at 0..1, arrives at 1.5,
 * F on rank 1 at 1.5..2.5, B+W at 2.5..4.5, back at 5, B+W on rank 0 at 5..7.
 */
static void test_1f1b_by_hand(void **state)
{
    (void)state;
    ppl_passes st[4];
    equal(st, 4, 1.0, 1.0, 1.0);
    ppl_pipe_out o = run(PPL_SCHEDULE_1F1B, 4, 1, 4, st, NULL, true);
    assert_close(o.time_s, 21.0, 1e-12);
    assert_int_equal(o.n_events, 32);
    assert_close(find(&o, 0, PPL_OP_F, 3, 0)->start_s, 3.0, 0);
    assert_close(find(&o, 3, PPL_OP_BW, 0, 0)->start_s, 4.0, 0);
    assert_close(find(&o, 2, PPL_OP_BW, 0, 0)->start_s, 6.0, 0);
    assert_close(find(&o, 0, PPL_OP_BW, 0, 0)->start_s, 10.0, 0);
    assert_close(find(&o, 0, PPL_OP_BW, 3, 0)->end_s, 21.0, 0);
    /* rank 0 holds 4 microbatches before its first backward (Korthikanti Eq. 5: p) */
    assert_close(o.peak_in_flight, 4.0, 0);
    assert_int_equal(o.peak_rank, 0);
    ppl_pipe_out_free(&o);

    double hop = 0.5;
    equal(st, 2, 1.0, 1.0, 1.0);
    o = run(PPL_SCHEDULE_1F1B, 2, 1, 1, st, &hop, true);
    assert_close(find(&o, 1, PPL_OP_F, 0, 0)->start_s, 1.5, 0);
    assert_close(find(&o, 0, PPL_OP_BW, 0, 0)->start_s, 5.0, 0);
    assert_close(o.time_s, 7.0, 1e-12);
    assert_close(o.bound_s, 7.0, 1e-12); /* the chain: 1 + .5 + 1 + 2 + .5 + 2 */
    ppl_pipe_out_free(&o);
}

/*
 * ZB-H1 by hand, p = 4, F = B = W = 1, m = 8.  Rank k defers up to k weight
 * passes (Qi et al. §3: (i-1) M_W on worker i); the last rank's final B ends 3 W
 * earlier than under 1F1B, and the backward reaches rank 0 through the 3 ranks
 * before it: m (F + B + W) + (p - 1)(F + B - W) = 24 + 3 = 27 (Table 2).  The last
 * rank's first W waits for its 3 deferred ones: F0 B0 F1 B1 F2 B2 F3 B3 W0, so W0
 * starts at 3 + 8 = 11.
 */
static void test_zb_h1_by_hand(void **state)
{
    (void)state;
    ppl_passes st[4];
    equal(st, 4, 1.0, 1.0, 1.0);
    ppl_pipe_out o = run(PPL_SCHEDULE_ZB_H1, 4, 1, 8, st, NULL, true);
    assert_close(o.time_s, 27.0, 1e-12);
    assert_close(find(&o, 3, PPL_OP_W, 0, 0)->start_s, 11.0, 0);
    assert_close(find(&o, 0, PPL_OP_W, 0, 0)->start_s, find(&o, 0, PPL_OP_B, 0, 0)->end_s, 0);
    ppl_pipe_out_free(&o);
}

/*
 * Equal stages and enough microbatches (the papers' assumptions, pipeline.h):
 * the executor meets the closed forms of 1F1B, GPipe and interleaved 1F1B (m a
 * multiple of p) exactly; for the times below ZB-H1 and ZB-H2 (m >= 2p) give the
 * larger of their formula and (p-1) F, the last rank's wait for its first
 * forward, which no synchronous step avoids (the paper hides it behind the
 * previous step's optimizer, §4) (with other times the deferred W passes may fill
 * less than the paper's hand-made schedule: test_timeline); ZB-V is never below
 * its formula; DualPipe and DualPipeV meet DeepSeek's table at F = B = W.
 */
static void test_closed_forms(void **state)
{
    (void)state;
    const double times[][3] = {{1, 1, 1}, {1, 2, 1}, {2, 3, 1}, {1, 1, 0.5}, {1, 1, 2}};
    ppl_passes st[8];
    for (size_t t = 0; t < sizeof times / sizeof *times; t++) {
        const double f = times[t][0], b = times[t][1], w = times[t][2];
        for (int64_t p = 2; p <= 8; p *= 2) {
            equal(st, p, f, b, w);
            ppl_passes others = {(double)(p - 1) * f, (double)(p - 1) * b, (double)(p - 1) * w,
                                 (double)(p - 1) * (f + b + w)};
            for (int64_t m = p; m <= 4 * p; m *= 2) {
                const double ideal = (double)m * (f + b + w);
                ppl_pipe_out o = run(PPL_SCHEDULE_1F1B, p, 1, m, st, NULL, false);
                assert_close(o.time_s - ideal, ppl_pipeline_bubble_s(0, p, 1, &others), 1e-9);
                o = run(PPL_SCHEDULE_GPIPE, p, 1, m, st, NULL, false);
                assert_close(o.time_s - ideal, ppl_pipeline_bubble_s(1, p, 1, &others), 1e-9);
                o = run(PPL_SCHEDULE_1F1B, p, 2, m, st, NULL, false);
                assert_close(o.time_s - ideal, ppl_pipeline_bubble_s(0, p, 2, &others), 1e-9);
                if (m < 2 * p)
                    continue;
                const double head = (double)(p - 1) * f;
                o = run(PPL_SCHEDULE_ZB_H1, p, 1, m, st, NULL, false);
                assert_close(o.time_s - ideal,
                             fmax(head, ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H1, p, 1, &others)),
                             1e-9);
                o = run(PPL_SCHEDULE_ZB_H2, p, 1, m, st, NULL, false);
                assert_close(o.time_s - ideal,
                             fmax(head, ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_H2, p, 1, &others)),
                             1e-9);
                o = run(PPL_SCHEDULE_ZB_V, p, 2, m, st, NULL, false);
                assert_true(o.time_s - ideal >=
                            ppl_pipeline_bubble_s(PPL_SCHEDULE_ZB_V, p, 2, &others) - 1e-9);
                if (f == b && b == w) {
                    o = run(PPL_SCHEDULE_DUALPIPE, p, 1, m, st, NULL, false);
                    assert_close(o.time_s - ideal,
                                 ppl_pipeline_bubble_s(PPL_SCHEDULE_DUALPIPE, p, 1, &others),
                                 1e-9);
                    o = run(PPL_SCHEDULE_DUALPIPEV, p, 2, m, st, NULL, false);
                    assert_close(o.time_s - ideal,
                                 ppl_pipeline_bubble_s(PPL_SCHEDULE_DUALPIPEV, p, 2, &others),
                                 1e-9);
                }
            }
        }
    }
}

/*
 * Every schedule at m < p, m = p and m = 2p: never below its chain (one
 * microbatch's F through every stage and B back, plus the first stage's W), where
 * the closed forms of ZB-H2 and ZB-V fall below it: p = 8, F = B = W = 1, m = 4
 * gives a chain of 8 + 8 + 1 = 17 s, and ZB-H2's formula m x 3 + 7 x 0 = 12 s.
 * The last rank's work bounds it too: it starts after 7 forwards and runs 4 x 3,
 * 19 s.
 * DualPipe needs m >= 2p (deepseek-ai/DualPipe's assert): refused below.
 */
static void test_chain_bound(void **state)
{
    (void)state;
    ppl_passes st[8];
    equal(st, 8, 1.0, 1.0, 1.0);
    ppl_pipe_out o = run(PPL_SCHEDULE_ZB_H2, 8, 1, 4, st, NULL, false);
    assert_true(o.time_s >= 19.0);
    assert_close(o.bound_s, 19.0, 1e-12);
    for (int s = 0; s < PPL_SCHEDULE_COUNT; s++) {
        const ppl_schedule_row *row = ppl_schedule_of(s);
        int64_t vp = row->chunks ? row->chunks : 1;
        for (int64_t m = 4; m <= 16; m *= 2) { /* m < p, m = p, m = 2p */
            ppl_pipe_in in = {s, 8, vp, m, 0, st, NULL};
            ppl_error err;
            ppl_status rc = ppl_pipe_run(&in, false, &o, &err);
            if (row->overlaps_fb && m < 16) {
                assert_int_equal(rc, PPL_EUSAGE);
                continue;
            }
            assert_int_equal(rc, PPL_OK);
            assert_true(o.time_s >= o.bound_s - 1e-12);
            /* the chain: 17 s, or 16.5 in a V (its last W is half a stage's) */
            if (!row->overlaps_fb)
                assert_true(o.bound_s >= (row->chunks == 2 ? 16.5 : 17.0));
        }
    }
}

/*
 * Activations in flight, the most any rank held, against pipeline.c's counts
 * (the papers'): p = 4, m = 16, F = B = W = 1: 1F1B p = 4 (Korthikanti Eq. 5),
 * GPipe m = 16, ZB-H1 p = 4, ZB-H2 2p - 1 = 7 (Qi et al. §3), ZB-V p = 4 (§6),
 * DualPipe p + 1 = 5 (DeepSeek-V3 Table 2), DualPipeV p + 1/2 (dualpipev.py: 2p + 1
 * half-stage chunks), interleaved v = 2, N = p: (2(p-1) + (v-1)p + 1)/v = 5.5.
 */
static void test_in_flight(void **state)
{
    (void)state;
    ppl_passes st[4];
    equal(st, 4, 1.0, 1.0, 1.0);
    const struct {
        int s;
        int64_t vp;
        double peak;
    } want[] = {{PPL_SCHEDULE_1F1B, 1, 4},     {PPL_SCHEDULE_GPIPE, 1, 16},
                {PPL_SCHEDULE_ZB_H1, 1, 4},    {PPL_SCHEDULE_ZB_H2, 1, 7},
                {PPL_SCHEDULE_ZB_V, 2, 4},     {PPL_SCHEDULE_DUALPIPE, 1, 5},
                {PPL_SCHEDULE_DUALPIPEV, 2, 4.5}, {PPL_SCHEDULE_1F1B, 2, 5.5}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ppl_pipe_out o = run(want[i].s, 4, want[i].vp, 16, st, NULL, false);
        assert_close(o.peak_in_flight, want[i].peak, 1e-12);
    }
}

/*
 * A rank's activations in flight depend on its order of forwards and backwards
 * alone, never on the times: so the memory model's counts per stage (pipeline.c
 * in_flight, the papers') are the executor's, on every rank, for every schedule,
 * at m < p, m = p and m > p (interleaved: groups of N = p, m a multiple of p, as
 * Megatron-Core runs it; ZB-V and DualPipe at m >= 2p).
 */
static void test_in_flight_by_rank(void **state)
{
    (void)state;
    ppl_passes st[8];
    for (int64_t k = 0; k < 8; k++)
        st[k] = (ppl_passes){1.0 + 0.1 * (double)k, 2.0 - 0.1 * (double)k, 0.7, 3.0};
    for (int s = 0; s < PPL_SCHEDULE_COUNT; s++) {
        const ppl_schedule_row *row = ppl_schedule_of(s);
        for (int64_t vp = 1; vp <= (row->chunks == 0 ? 3 : 1); vp++) {
            for (int64_t p = 2; p <= 8; p *= 2) {
                for (int64_t m = 1; m <= 3 * p; m += p / 2 + 1) {
                    int64_t v = row->chunks ? row->chunks : vp;
                    if ((row->overlaps_fb && m < 2 * p) || (vp > 1 && m % p != 0) ||
                        (s == PPL_SCHEDULE_DUALPIPE && m % 2))
                        continue;
                    ppl_config c;
                    memset(&c, 0, sizeof c);
                    c.schedule = s;
                    c.pp = p;
                    c.vp = v;
                    c.microbatches = m;
                    ppl_pipe_in in = {s, p, v, m, ppl_vp_group(&c), st, NULL};
                    ppl_pipe_out o;
                    ppl_error err;
                    assert_int_equal(ppl_pipe_run(&in, true, &o, &err), PPL_OK);
                    for (int64_t k = 0; k < p; k++)
                        if (fabs(o.in_flight_by_rank[k] - row->in_flight(&c, k)) > 1e-9)
                            fail_msg("%s p %lld v %lld m %lld rank %lld: ran %g, counted %g",
                                     ppl_schedule_name(s), (long long)p, (long long)v,
                                     (long long)m, (long long)k, o.in_flight_by_rank[k],
                                     row->in_flight(&c, k));
                    ppl_pipe_out_free(&o);
                }
            }
        }
    }
}

/* A small deterministic generator for the random pipelines below. */
static uint64_t rng = 88172645463325252ull;
static double uniform(double lo, double hi)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

/*
 * Random stage times, sends and schedules: every op runs once, no rank runs two
 * ops at once, every op starts after its input arrived (the previous stage's F,
 * the next stage's B, its own B for a W), and the pipeline respects its bounds.
 */
static void test_random(void **state)
{
    (void)state;
    ppl_passes st[8];
    double hop[8];
    for (int it = 0; it < 300; it++) {
        int s = (int)uniform(0, PPL_SCHEDULE_COUNT);
        const ppl_schedule_row *row = ppl_schedule_of(s);
        int64_t p = 2 + 2 * (int64_t)uniform(0, 4); /* even: DualPipe */
        int64_t vp = row->chunks ? row->chunks : (s == PPL_SCHEDULE_1F1B ? 1 + (int64_t)uniform(0, 3) : 1);
        int64_t m = row->overlaps_fb ? 2 * p * (1 + (int64_t)uniform(0, 2))
                                     : 1 + (int64_t)uniform(0, (double)(3 * p));
        if (vp > 1 && row->chunks == 0)
            m = p * (1 + (int64_t)uniform(0, 3)); /* Megatron-Core: m >= p */
        for (int64_t k = 0; k < p; k++) {
            double f = uniform(0.5, 2), b = uniform(0.5, 3), w = uniform(0, 2);
            st[k] = (ppl_passes){f, b, w, (f + b + w) * uniform(0.7, 1.0)};
            hop[k] = uniform(0, 0.3);
        }
        ppl_pipe_out o = run(s, p, vp, m, st, hop, true);
        assert_true(o.time_s >= o.bound_s * (1 - 1e-12));
        /* without its events a line runs in one loop (run_line) or a sweep, its
         * steady cycles carried: the same figures */
        ppl_pipe_out q = run(s, p, vp, m, st, hop, false);
        assert_true(same_run(&q, &o, m));
        double busy[8] = {0};
        for (size_t i = 0; i < o.n_events; i++) {
            const ppl_pipe_event *e = &o.events[i];
            assert_true(e->end_s >= e->start_s && e->end_s <= o.time_s);
            busy[e->rank] += e->end_s - e->start_s;
            for (size_t j = i + 1; j < o.n_events; j++) { /* one op at a time a rank */
                const ppl_pipe_event *x = &o.events[j];
                if (x->rank == e->rank)
                    assert_true(x->start_s >= e->end_s - 1e-12 || x->end_s <= e->start_s + 1e-12);
            }
        }
        for (int64_t k = 0; k < p; k++)
            assert_true(busy[k] <= o.time_s + 1e-9);
        ppl_pipe_out_free(&o);
    }
}

/* The runs the executor remembers (its memo: 256 slots, filled in order, then
 * overwritten) give what a fresh run gives, to the bit: 400 random 1F1B lines,
 * of 8 shapes, half without hops, run once each, then again in the reverse order (the last
 * ones found, the first ones long overwritten), each against a run with events,
 * which is never remembered.  A memo that answered another run's inputs, or
 * kept a slot's stages or hops wrong, fails it. */
static void test_memo(void **state)
{
    (void)state;
    enum { RUNS = 400 };
    static ppl_passes st[RUNS][6];
    static double hop[RUNS][6];
    int64_t p[RUNS], m[RUNS];
    for (int r = 0; r < RUNS; r++) {
        p[r] = 2 + (int64_t)uniform(0, 2); /* few shapes: slots met by others' */
        m[r] = 1 + (int64_t)uniform(0, 4);
        for (int64_t k = 0; k < p[r]; k++) {
            double f = uniform(0.5, 2), b = uniform(0.5, 3), w = uniform(0, 2);
            st[r][k] = (ppl_passes){f, b, w, f + b + w};
            hop[r][k] = uniform(0, 0.3);
        }
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < RUNS; i++) {
            const int r = pass ? RUNS - 1 - i : i;
            const double *h = r % 2 ? hop[r] : NULL;
            ppl_pipe_out fresh = run(PPL_SCHEDULE_1F1B, p[r], 1, m[r], st[r], h, true);
            ppl_pipe_out kept = run(PPL_SCHEDULE_1F1B, p[r], 1, m[r], st[r], h, false);
            assert_true(kept.time_s == fresh.time_s && kept.bound_s == fresh.bound_s &&
                        kept.peak_in_flight == fresh.peak_in_flight &&
                        kept.peak_rank == fresh.peak_rank);
            ppl_pipe_out_free(&fresh);
        }
}

/* A 1F1B line run without events (in groups of n), after the same line with every
 * duration and send 1,000 times as long, which leaves its times in the pages the
 * executor hands the next run of the size. */
static ppl_pipe_out slow_then(const ppl_passes *st, const double *hop, int64_t p, int64_t v,
                              int64_t m, int64_t n)
{
    ppl_passes slow[12];
    double slow_hop[12];
    for (int64_t k = 0; k < p; k++) {
        slow[k] = (ppl_passes){1e3 * st[k].f_s, 1e3 * st[k].b_s, 1e3 * st[k].w_s, 1e3 * st[k].fb_s};
        slow_hop[k] = 1e3 * hop[k];
    }
    ppl_pipe_in in = {PPL_SCHEDULE_1F1B, p, v, m, n, slow, slow_hop};
    ppl_pipe_out out;
    ppl_error err;
    assert_int_equal(ppl_pipe_run(&in, false, &out, &err), PPL_OK);
    in.stage = st, in.hop_s = hop;
    assert_int_equal(ppl_pipe_run(&in, false, &out, &err), PPL_OK);
    return out;
}

/*
 * A long 1F1B line carried past its transient (cost/linesweep.h).  Equal stages, no
 * sends, p = 4, m = 1000, F = 1, B + W = 2: every rank is busy from its first
 * backward on, so the step is (m + p - 1)(F + B + W) = 1003 x 3 = 3009 s (Narayanan
 * et al. 2021 §2.2, the bubble (p - 1)(F + B + W)), and the sweep carries all but the
 * transient's and the drain's cycles: more than 900 of the 1,000.  Then 40 random
 * lines of uneven stages with sends, p from 2 to 12, m from 200 to 600: each run
 * without events, carried where its state repeated, against the run with them, op
 * by op (same_run); most carry (a line whose transient outlasts its forwards is
 * swept to the end).
 */
static void test_steady(void **state)
{
    (void)state;
    ppl_passes st[12];
    double hop[12];
    equal(st, 4, 1.0, 1.0, 1.0);
    ppl_pipe_out o = run(PPL_SCHEDULE_1F1B, 4, 1, 1000, st, NULL, false);
    assert_close(o.time_s, 3009.0, 3009.0 * 1e-11);
    assert_true(o.cycles_carried > 900);
    int carried = 0;
    for (int it = 0; it < 40; it++) {
        const int64_t p = 2 + (int64_t)uniform(0, 11), m = 200 + (int64_t)uniform(0, 400);
        for (int64_t k = 0; k < p; k++) {
            double f = uniform(0.5, 2), b = uniform(0.5, 3);
            st[k] = (ppl_passes){f, b, 0.0, f + b};
            hop[k] = uniform(0, 0.3);
        }
        /* walked after a line of the same shape 1,000 times as long: an entry read but
         * not carried would hold that line's time, late enough to show */
        ppl_pipe_out walked = slow_then(st, hop, p, 1, m, 0);
        ppl_pipe_out events = run(PPL_SCHEDULE_1F1B, p, 1, m, st, hop, true);
        if (!same_run(&walked, &events, m))
            fail_msg("p %lld m %lld: %.17g (peak %g on %lld) against %.17g (%g on %lld)",
                     (long long)p, (long long)m, walked.time_s, walked.peak_in_flight,
                     (long long)walked.peak_rank, events.time_s, events.peak_in_flight,
                     (long long)events.peak_rank);
        carried += walked.cycles_carried > 0;
        ppl_pipe_out_free(&events);
    }
    print_message("%d of 40 random lines carried\n", carried);
    assert_true(carried >= 30);
    /* interleaved, in Megatron-Core's groups of n (p to p + 2; the last group n or
     * p, ppl_vp_group): a period is a group's n microbatches through every chunk */
    carried = 0;
    for (int it = 0; it < 40; it++) {
        const int64_t p = 2 + (int64_t)uniform(0, 7), v = 2 + (int64_t)uniform(0, 3);
        const int64_t n = p + it % 7, m = n * (20 + (int64_t)uniform(0, 20)) + (it % 2 ? p : 0);
        for (int64_t k = 0; k < p; k++) {
            double f = uniform(0.5, 2), b = uniform(0.5, 3);
            st[k] = (ppl_passes){f, b, 0.0, f + b};
            hop[k] = uniform(0, 0.3);
        }
        ppl_pipe_in in = {PPL_SCHEDULE_1F1B, p, v, m, n, st, hop};
        ppl_pipe_out events, walked = slow_then(st, hop, p, v, m, n);
        ppl_error err;
        assert_int_equal(ppl_pipe_run(&in, true, &events, &err), PPL_OK);
        if (!same_run(&walked, &events, m))
            fail_msg("p %lld v %lld m %lld n %lld: %.17g (peak %g on %lld) against %.17g (%g "
                     "on %lld)",
                     (long long)p, (long long)v, (long long)m, (long long)n, walked.time_s,
                     walked.peak_in_flight, (long long)walked.peak_rank, events.time_s,
                     events.peak_in_flight, (long long)events.peak_rank);
        carried += walked.cycles_carried > 0;
        ppl_pipe_out_free(&events);
    }
    print_message("%d of 40 random interleaved lines carried\n", carried);
    assert_true(carried >= 30);
}

/*
 * The carry by hand (ppl_line_steady_carry): two ranks, m = 10, after six ops each
 * (rank 0 five forwards, one backward; rank 1 four and two), free since 8 and 9 s and
 * now at 10 and 11: d = 2.  What the next ops read: rank 0's forward 4 (rank 1's
 * next), rank 1's forwards 2 and 3 (its own next backwards), rank 1's backward 1
 * (rank 0's next).  Each moved by 2 s from the microbatch before, so the state is
 * carried by min(10 - 5, 10 - 4) = 5 cycles, every time 10 s later: rank 0's
 * forward 4 as forward 9, rank 1's backward 1 as 6.  Any one of those entries off
 * the shift, or a rank's free time off it, and nothing is carried.
 */
static void test_steady_carry(void **state)
{
    (void)state;
    for (int off = 0; off <= 5; off++) {
        double free_s[2] = {10, 11}, before_s[2] = {8, 9}, done_f[20] = {0}, done_b[20] = {0};
        int64_t forwards[2] = {5, 4};
        done_f[3] = 5, done_f[4] = 7;           /* rank 0: its forward 4 and the one before */
        done_f[10 + 1] = 2, done_f[10 + 2] = 4; /* rank 1: forwards 1..3 */
        done_f[10 + 3] = 6;
        done_b[10 + 0] = 7, done_b[10 + 1] = 9; /* rank 1: backward 1 and 0 */
        double *bad[] = {NULL, &done_f[4], &done_f[12], &done_f[13], &done_b[11], &free_s[1]};
        if (bad[off])
            *bad[off] += 0.5;
        ppl_line_state ls = {2, 10, 1, 1, free_s, done_f, done_b, forwards, 6};
        ppl_line_window room[4];
        const int64_t q = ppl_line_steady_carry(&ls, before_s, room);
        if (off) {
            assert_int_equal(q, 0);
            assert_int_equal(ls.ops, 6);
            continue;
        }
        assert_int_equal(q, 5);
        assert_int_equal(ls.ops, 16);
        assert_int_equal(forwards[0], 10);
        assert_int_equal(forwards[1], 9);
        assert_close(free_s[0], 20.0, 0);
        assert_close(free_s[1], 21.0, 0);
        assert_close(done_f[9], 17.0, 0);  /* 7 + 10 */
        assert_close(done_f[17], 14.0, 0); /* 4 + 10 */
        assert_close(done_f[18], 16.0, 0); /* 6 + 10 */
        assert_close(done_b[16], 19.0, 0); /* 9 + 10 */
    }
}

/*
 * The sweep gives up where an input would be read before it ran: two ranks, two
 * chunks, m = 2 in one group (the table: (0, 0), (1, 0), (0, 1), (1, 1)), no
 * warm-up.  Rank 0's op 1 is then the backward of microbatch 0 on its chunk 1
 * (virtual stage 2), whose input, stage 3's backward on rank 1, has not run.  With
 * Megatron-Core's warm-up (4 and 2 forwards) the same line is swept.
 */
static void test_sweep_gives_up(void **state)
{
    (void)state;
    const int32_t table[8] = {0, 0, 1, 0, 0, 1, 1, 1};
    const double dur[4] = {1, 1, 1, 1}, hop[4] = {0};
    for (int megatron = 0; megatron < 2; megatron++) {
        const int64_t warm[2] = {megatron ? 4 : 0, megatron ? 2 : 0};
        double done_f[8] = {0}, done_b[8] = {0}, free_s[2] = {0}, held[2] = {0};
        int64_t forwards[2] = {0}, ops[2] = {0};
        ppl_line_sweep sw = {.p = 2,
                             .m = 2,
                             .v = 2,
                             .group = 2,
                             .table = table,
                             .warm = warm,
                             .dur_f = dur,
                             .dur_bw = dur,
                             .hop_f = hop,
                             .hop_b = hop,
                             .frac = 0.5,
                             .done_f = done_f,
                             .done_b = done_b,
                             .free_s = free_s,
                             .held = held,
                             .forwards = forwards,
                             .ops = ops};
        assert_int_equal(ppl_line_sweep_run(&sw), megatron);
    }
}

/* A line run without events gives what the run with events gives: 1F1B at one to
 * three chunks a rank (interleaved in groups of p and of more) swept in a fixed
 * order (cost/linesweep.h; same_run: to the bit but for carried periods), and
 * GPipe's order kept by shape (cost/recall.h) and walked again; 60 shapes, each run
 * five times with new stage times and sends, every GPipe run but the first walking
 * the first's order.  An order or a sweep that skipped, repeated or misplaced an op,
 * read an input before it was written or kept another shape's, fails it; so would
 * one that counted the peak in flight on another rank. */
static void test_orders(void **state)
{
    (void)state;
    ppl_passes st[8];
    double hop[8];
    for (int shape = 0; shape < 60; shape++) {
        const int s = shape % 4 == 3 ? PPL_SCHEDULE_GPIPE : PPL_SCHEDULE_1F1B;
        const int64_t p = 2 + (int64_t)uniform(0, 7);
        const int64_t vp = s == PPL_SCHEDULE_GPIPE ? 1 : 1 + shape % 3;
        int64_t m = 1 + (int64_t)uniform(0, (double)(3 * p)), group = 0;
        if (vp > 1) {
            m = p * (1 + (int64_t)uniform(0, 3));
            group = shape % 2 ? m : 0; /* one group of m, or groups of p */
        }
        for (int run = 0; run < 5; run++) {
            for (int64_t k = 0; k < p; k++) {
                double f = uniform(0.5, 2), b = uniform(0.5, 3);
                st[k] = (ppl_passes){f, b, 0.0, f + b};
                hop[k] = run % 2 ? uniform(0, 0.3) : 0.0;
            }
            ppl_pipe_in in = {s, p, vp, m, group, st, run % 2 ? hop : NULL};
            ppl_pipe_out events, walked;
            ppl_error err;
            assert_int_equal(ppl_pipe_run(&in, true, &events, &err), PPL_OK);
            assert_int_equal(ppl_pipe_run(&in, false, &walked, &err), PPL_OK);
            if (!same_run(&walked, &events, m))
                fail_msg("%s p %lld vp %lld m %lld group %lld run %d: %.17g (peak %g on %lld) "
                         "against %.17g (%g on %lld)",
                         ppl_schedule_name(s), (long long)p, (long long)vp, (long long)m,
                         (long long)group, run, walked.time_s, walked.peak_in_flight,
                         (long long)walked.peak_rank, events.time_s, events.peak_in_flight,
                         (long long)events.peak_rank);
            ppl_pipe_out_free(&events);
        }
    }
}

/*
 * The bound over runs of equal stages (what the search prunes with, O(runs)) is the
 * bound stage by stage: random runs, sends within and between them, every
 * schedule.
 */
static void test_bound_spans(void **state)
{
    (void)state;
    ppl_passes st[16];
    double hop[16];
    ppl_pipe_span sp[16];
    for (int it = 0; it < 500; it++) {
        int s = (int)uniform(0, PPL_SCHEDULE_COUNT);
        const ppl_schedule_row *row = ppl_schedule_of(s);
        size_t n = 0;
        int64_t p = 0;
        while (p < 14) {
            int64_t c = 1 + (int64_t)uniform(0, 5);
            double f = uniform(0.5, 2), b = uniform(0.5, 3), w = uniform(0, 2);
            sp[n] = (ppl_pipe_span){p, c, {f, b, w, (f + b + w) * uniform(0.7, 1.0)},
                                    uniform(0, 0.2), uniform(0, 0.5)};
            p += c;
            n++;
            if (uniform(0, 1) < 0.3)
                break;
        }
        if (p > 16)
            p = 16, sp[n - 1].count = 16 - sp[n - 1].first_stage;
        sp[n - 1].last_hop_s = 0.0;
        ppl_pipe_spans_expand(sp, n, p, st, hop);
        int64_t vp = row->chunks ? row->chunks : 1 + (int64_t)uniform(0, 3);
        int64_t m = 1 + (int64_t)uniform(0, 40);
        ppl_pipe_in in = {s, p, vp, m, 0, st, hop};
        assert_close(ppl_pipe_bound_spans_s(s, p, vp, m, sp, n), ppl_pipe_bound_s(&in), 1e-12);
    }
}

/* Inputs the executor cannot run: a one-line usage error naming the knob. */
static void test_refusals(void **state)
{
    (void)state;
    ppl_passes st[4];
    equal(st, 4, 1.0, 1.0, 1.0);
    ppl_pipe_out o;
    ppl_error err;
    ppl_pipe_in in = {PPL_SCHEDULE_1F1B, 4, 1, 0, 0, st, NULL};
    assert_int_equal(ppl_pipe_run(&in, false, &o, &err), PPL_EUSAGE);
    in = (ppl_pipe_in){PPL_SCHEDULE_DUALPIPE, 4, 1, 6, 0, st, NULL};
    assert_int_equal(ppl_pipe_run(&in, false, &o, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "global_batch");
    st[2].b_s = NAN;
    in = (ppl_pipe_in){PPL_SCHEDULE_1F1B, 4, 1, 8, 0, st, NULL};
    assert_int_equal(ppl_pipe_run(&in, false, &o, &err), PPL_EINTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1f1b_by_hand), cmocka_unit_test(test_zb_h1_by_hand),
        cmocka_unit_test(test_closed_forms), cmocka_unit_test(test_chain_bound),
        cmocka_unit_test(test_in_flight),    cmocka_unit_test(test_in_flight_by_rank),
        cmocka_unit_test(test_random),       cmocka_unit_test(test_bound_spans),
        cmocka_unit_test(test_refusals),     cmocka_unit_test(test_memo),
        cmocka_unit_test(test_orders),       cmocka_unit_test(test_steady),
        cmocka_unit_test(test_steady_carry), cmocka_unit_test(test_sweep_gives_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
