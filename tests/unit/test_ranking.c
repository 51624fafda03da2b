/*
 * test_ranking.c - the list of the best plans (plan/ranking.c).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "plan/ranking.h"

/* The best-K list (ranking.c) kept as a heap with a table of knobs must keep what
 * a brute force keeps: the K best of each knob setting's best entry, in order.
 * 4,000 random entries over few knob settings, splits, step times and memories
 * (ties on purpose), for K = 1, 7, 64 and 5000, with the table and by scan. */
static bool knobs_equal(const ppl_config *a, const ppl_config *b)
{
    return a->tp == b->tp && a->pp == b->pp && a->mbs == b->mbs && a->zero == b->zero;
}

static int objective_for_sort;
static int by_rank(const void *a, const void *b)
{
    return ppl_ranking_compare(objective_for_sort, a, b);
}

static void test_ranking_heap_equals_brute_force(void **state)
{
    (void)state;
    enum { N = 4000 };
    static ppl_estimate all[N], best_of[N];
    unsigned seed = 12345;
    for (size_t i = 0; i < N; i++) {
        ppl_estimate *e = &all[i];
        memset(e, 0, sizeof *e);
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 8;
        e->config.gpus = 64;
        e->config.tp = 1 << (r % 4);
        e->config.pp = 1 << ((r / 4) % 3);
        e->config.mbs = 1 + (r / 12) % 2;
        e->config.zero = (int)((r / 24) % 3);
        e->config.cp = e->config.ep = e->config.vp = 1;
        e->config.split.first = (int64_t)((r / 72) % 3);
        e->step_time_s = 1.0 + (double)((r / 216) % 50) * 0.01;
        e->memory.total = (double)((r / 10800) % 4);
        e->tokens_per_s = 1e6 / e->step_time_s;
    }
    static const size_t caps[] = {1, 7, 64, 5000};
    for (int objective = 0; objective < 3; objective++)
        for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++)
            for (int table = 0; table < 2; table++) {
                size_t cap = caps[ci];
                ppl_ranking l;
                ppl_error err;
                if (table) {
                    assert_int_equal(ppl_ranking_init(&l, cap, &err), PPL_OK);
                } else {
                    l = (ppl_ranking){.items = calloc(cap, sizeof(ppl_estimate)), .cap = cap};
                    assert_non_null(l.items);
                }
                for (size_t i = 0; i < N; i++) {
                    ppl_ranking_keep(objective, &l, &all[i]);
                    /* the best is tracked through every move */
                    const ppl_estimate *b = ppl_ranking_best(&l);
                    for (size_t j = 0; i % 13 == 0 && j < l.count; j++)
                        assert_true(ppl_ranking_compare(objective, b, &l.items[j]) <= 0);
                    if (i % 97 == 0 && l.count == cap)
                        for (size_t j = 0; j < l.count; j++)
                            assert_true(ppl_ranking_compare(objective, ppl_ranking_worst(&l),
                                                            &l.items[j]) >= 0);
                }
                ppl_ranking_sort(objective, &l);
                /* brute force: each knob setting's best, sorted, the first cap */
                size_t n = 0;
                for (size_t i = 0; i < N; i++) {
                    size_t j = 0;
                    while (j < n && !knobs_equal(&best_of[j].config, &all[i].config))
                        j++;
                    if (j == n)
                        best_of[n++] = all[i];
                    else if (ppl_ranking_compare(objective, &all[i], &best_of[j]) < 0)
                        best_of[j] = all[i];
                }
                objective_for_sort = objective;
                qsort(best_of, n, sizeof *best_of, by_rank);
                assert_int_equal(l.count, n < cap ? n : cap);
                for (size_t i = 0; i < l.count; i++)
                    assert_memory_equal(&l.items[i], &best_of[i], sizeof(ppl_estimate));
                ppl_ranking_free(&l);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranking_heap_equals_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
