/*
 * bench_search.c - the search's inner loop, measured (meson test --benchmark -v).
 *
 * Prints:
 *   1. the inner loop: configurations costed per CPU second on one thread
 *      (ppl_search over the whole space of a 1T model on 65,536 GPUs, without
 *      pruning or rebalancing, repeated for 2 CPU s), then ppl_estimate_config one
 *      at a time;
 *   2. ppl_search of megatron-1t with every knob free on clusters of 1K to 256K
 *      H100 (h100-64k's fabric, scaled): configurations, CPU time, peak RSS.
 * Times are the process's CPU time (CLOCK_PROCESS_CPUTIME_ID), not the wall
 * clock, so that a loaded machine does not slow them.  With --check it also
 * prints TAP lines against floors far below what this 2-core machine measures,
 * so that only a real regression fails: >= 0.1 M configurations per CPU second,
 * the 65,536-GPU search under 0.5 CPU s, peak RSS under 100 MiB.  What users run,
 * whole plan, whatif and size processes, is bench_cli.py's.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "modules.h"

static double now(void) /* CPU seconds of the process */
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int load(ppl_model *m, ppl_topology *t, const char *model, int64_t servers)
{
    char path[1024];
    ppl_error err;
    snprintf(path, sizeof path, "%s/models/%s.json", PPL_TEST_SOURCE_ROOT, model);
    if (ppl_model_load(path, NULL, NULL, m, &err) != PPL_OK)
        return fprintf(stderr, "%s: %s\n", path, err.message), 1;
    /* h100-64k's fabric scaled: leaf groups of 32, pods of 128, one top tier */
    char json[1024];
    int64_t pod = servers < 128 ? servers : 128;
    snprintf(json, sizeof json,
             "{\"gpu\": \"H100\", \"servers\": %lld, \"gpus_per_server\": 8,"
             " \"nvlink\": {\"bandwidth\": \"450 GB/s\"},"
             " \"rails\": {\"count\": 8, \"nic_bandwidth\": \"400 Gb/s\"},"
             " \"tiers\": [{\"name\": \"leaf\", \"servers\": %lld, \"rail_optimized\": true}%s"
             "{\"name\": \"core\", \"servers\": %lld}]}",
             (long long)servers, (long long)(servers < 32 ? servers : 32),
             servers > 128 ? ", {\"name\": \"pod\", \"servers\": 128}, " : ", ",
             (long long)servers);
    (void)pod;
    json_t *root = json_loads(json, 0, NULL);
    ppl_status st = ppl_topology_from_json(root, "bench", "", NULL, t, &err);
    json_decref(root);
    if (st != PPL_OK)
        return fprintf(stderr, "topology: %s: %s\n", err.key, err.message), 1;
    return 0;
}

#define FLOOR_CONFIGS_PER_S 0.1e6
#define CEIL_PLAN_64K_S 0.5
/* peak RSS measures 38 MiB, and 40 MiB under meson test, whose MALLOC_PERTURB_
 * makes glibc write every block malloc hands out (41 and 50 MiB before the
 * search's tables moved to base/pages.c, whose huge pages are counted whole; 27
 * and 30 MiB before the executor's 8 MiB ring of line orders, cost/recall.h);
 * the ceiling stays at twice the old figure */
#define CEIL_RSS_KIB (100L * 1024L)

int main(int argc, char **argv)
{
    int check = argc > 1 && strcmp(argv[1], "--check") == 0;
    const char *say = check ? "# " : ""; /* the report as TAP comments under --check */
    double rate = 0.0, plan_64k_s = -1.0;
    ppl_model m;
    ppl_topology t;
    if (load(&m, &t, "megatron-1t", 8192))
        return 1;
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);

    /* 1. the inner loop: the search costing every configuration of the full 1T space
     * on 65,536 GPUs (no pruning, no rebalancing), on one thread, repeated for 2 s */
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.global_batch = 8192;
    ppl_search_opts o = {.pins = &pins, .top = 10, .no_prune = true, .no_balance = true};
    ppl_search_result r;
    ppl_error err;
    size_t costed = 0, feasible = 0, rounds = 0;
    double start = now(), elapsed;
    do {
        if (ppl_search(&ctx, &o, &r, &err) != PPL_OK)
            return fprintf(stderr, "search failed\n"), 1;
        costed += r.evaluated;
        feasible += r.feasible;
        rounds++;
        ppl_search_free(&r);
        elapsed = now() - start;
    } while (elapsed < 2.0);
    rate = (double)costed / elapsed;
    printf("%sinner loop: %zu configurations costed (memory, and step time for the %zu that fit) "
           "in %.3f s over %zu searches: %.0f per second on one thread\n",
           say, costed, feasible, elapsed, rounds, (double)costed / elapsed);

    /* the same configurations through the one-at-a-time API (no caching) */
    o.top = 4096;
    if (ppl_search(&ctx, &o, &r, &err) != PPL_OK)
        return fprintf(stderr, "search failed\n"), 1;
    size_t n = r.count, evals = 0;
    double sink = 0.0;
    start = now();
    do {
        for (size_t i = 0; i < n; i++) {
            ppl_estimate e;
            ppl_estimate_config(&ctx, &r.results[i].config, &e);
            sink += e.step_time_s;
        }
        evals += n;
        elapsed = now() - start;
    } while (elapsed < 1.0);
    printf("%sone at a time: %.0f full estimates per second (checksum %.6g)\n", say,
           (double)evals / elapsed, sink / (double)evals);
    ppl_search_free(&r);

    /* 2. full plans from 1K to 256K GPUs */
    printf("\n%s%8s %12s %10s %10s %12s %10s\n", say, "GPUs", "configs", "costed", "pruned", "CPU",
           "peak RSS");
    int64_t sizes[] = {128, 512, 2048, 8192, 32768};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (load(&m, &t, "megatron-1t", sizes[i]))
            return 1;
        ppl_eval_ctx c2;
        ppl_eval_ctx_init(&c2, &m, &t, PPL_STACK_MODERN);
        ppl_pins p2;
        ppl_pins_init(&p2);
        p2.global_batch = 8192;
        ppl_search_opts o2 = {.pins = &p2, .top = 10};
        double t0 = now();
        ppl_status st = ppl_search(&c2, &o2, &r, &err);
        double wall = now() - t0;
        if (sizes[i] * 8 == 65536)
            plan_64k_s = wall;
        printf("%s%8lld %12zu %10zu %10zu %10.3f s %7ld KiB%s\n", say, (long long)(sizes[i] * 8),
               r.candidates, r.evaluated, r.pruned, wall, peak_rss_kib(),
               st == PPL_OK ? "" : "  (nothing fits)");
        ppl_search_free(&r);
    }
    if (!check)
        return 0;
    long rss = peak_rss_kib();
    int ok1 = rate >= FLOOR_CONFIGS_PER_S, ok2 = plan_64k_s >= 0.0 && plan_64k_s < CEIL_PLAN_64K_S,
        ok3 = rss < CEIL_RSS_KIB;
    printf("1..3\n");
    printf("%s 1 - inner loop %.0f configurations per CPU s >= %.0f\n", ok1 ? "ok" : "not ok", rate,
           FLOOR_CONFIGS_PER_S);
    printf("%s 2 - full search on 65,536 GPUs in %.3f CPU s < %.1f s\n", ok2 ? "ok" : "not ok",
           plan_64k_s, CEIL_PLAN_64K_S);
    printf("%s 3 - peak RSS %ld KiB < %ld KiB\n", ok3 ? "ok" : "not ok", rss, CEIL_RSS_KIB);
    return ok1 && ok2 && ok3 ? 0 : 1;
}
