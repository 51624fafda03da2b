/*
 * shard.c - hierarchical sharding and optimizer offload: their rules, groups and
 * launch flags (see cost/shard.h and cost/offload.h).
 */
#include "cost/shard.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cost/stack.h"

static ppl_status bad(ppl_error *err, const char *key, const char *msg, long long a, long long b)
{
    return ppl_error_set(err, PPL_EUSAGE, "", key, msg, a, b);
}

ppl_status ppl_shard_check(const ppl_config *c, const ppl_model *m, ppl_error *err)
{
    const int64_t n = c->shard_group;
    if (n != 0) {
        if (n < 1 || n > c->dp || c->dp % n != 0)
            return bad(err, "shard_group", "%lld does not divide dp %lld", (long long)n,
                       (long long)c->dp);
        if (n < c->dp && c->zero == 0)
            return bad(err, "shard_group",
                       "%lld needs ZeRO 1, 2 or 3 (zero is %lld): there is nothing to shard",
                       (long long)n, (long long)c->zero);
        /* parallel_state.py:1447-1450: the expert-data-parallel ranks split into the
         * same number of instances */
        int64_t k = ppl_config_shard_replicas(c), edp = ppl_config_edp(c);
        if (m->has_moe && k > 1 && edp % k != 0)
            return bad(err, "shard_group",
                       "leaves %lld replicas, which do not divide the experts' %lld "
                       "data-parallel ranks",
                       (long long)k, (long long)edp);
    }
    const double f = c->offload_optimizer;
    if (!(f >= 0.0 && f <= 1.0))
        return ppl_error_set(err, PPL_EUSAGE, "", "offload_optimizer",
                             "expected a share from 0 to 1, found %g", f);
    if (f > 0.0) {
        /* optimizer/__init__.py:1057-1060: the precision-aware optimizer the offload
         * runs on (arguments.py:1884-1888) needs the distributed optimizer; DeepSpeed
         * offloads with ZeRO 1-3 (runtime/zero/offload_config.py:56) */
        if (c->zero == 0)
            return bad(err, "offload_optimizer",
                       "needs ZeRO 1, 2 or 3 (zero is %lld): Megatron-Core offloads the "
                       "distributed optimizer's shard",
                       (long long)c->zero, 0LL);
        /* optimizer_config.py:433-436: the precision-aware optimizer is Adam's */
        if (c->optimizer != PPL_OPTIMIZER_ADAM)
            return ppl_error_set(err, PPL_EUSAGE, "", "offload_optimizer",
                                 "needs --optimizer adam (Megatron-Core's CPU offload runs "
                                 "the precision-aware Adam)");
    }
    return PPL_OK;
}

double ppl_shard_dense_ways(const ppl_config *c)
{
    return (double)(ppl_config_shard_group(c) * c->cp);
}

double ppl_shard_expert_ways(const ppl_config *c)
{
    return (double)ppl_config_edp(c) / (double)ppl_config_shard_replicas(c);
}

int ppl_shard_group_choices(const ppl_topology *t, const ppl_config *c, int64_t *out)
{
    int k = 0;
    out[k++] = c->dp;
    /* a server's GPUs, and an NVLink domain's when it spans servers */
    int64_t spans[2] = {t->gpus_per_server, t->nvlink.domain_gpus};
    for (int i = 0; i < 2 && k < PPL_SHARD_CHOICES; i++) {
        int64_t per = c->tp * c->cp;
        if (spans[i] % per != 0 || (i == 1 && spans[1] <= spans[0]))
            continue;
        int64_t n = spans[i] / per;
        if (n > 1 && n < c->dp && c->dp % n == 0 && n != out[k - 1])
            out[k++] = n;
    }
    return k;
}

void ppl_shard_groups(const ppl_net *net, int64_t jd, const ppl_config *c, ppl_group *shard,
                      ppl_group *replicas, ppl_group *expert_shard, ppl_group *expert_replicas)
{
    const int64_t pp_stride = c->tp * c->cp * c->dp, etp = ppl_config_etp(c);
    /* a group that does not divide dp (a configuration the check refuses): every rank */
    const int64_t n = c->dp % ppl_config_shard_group(c) == 0 ? ppl_config_shard_group(c) : c->dp;
    const int64_t k = c->dp / n;
    const int64_t edp = ppl_config_edp(c);
    /* the experts' replicas: k when they divide edp (else the check refuses c) */
    const int64_t ek = k >= 1 && edp % k == 0 ? k : 1, eshard = edp / ek;
    /* parallel_state.py:984-993: the intra-partial group is a contiguous slice of
     * the dp-cp ranks (tp apart); the inter-instance group joins the same slot of
     * each slice; the experts' the same over edp (etp*ep apart, :1474-1489) */
    ppl_group_place_worst(net, jd, n * c->cp, c->tp, 0, c->pp, pp_stride, shard);
    ppl_group_place_worst(net, jd, k, c->tp * c->cp * n, 0, c->pp, pp_stride, replicas);
    ppl_group_place_worst(net, jd, eshard, etp * c->ep, 0, c->pp, pp_stride, expert_shard);
    ppl_group_place_worst(net, jd, ek, etp * c->ep * eshard, 0, c->pp, pp_stride, expert_replicas);
}

int ppl_shard_searched(const ppl_topology *t, int stack, int64_t pinned, const ppl_config *c,
                       int64_t *out)
{
    out[0] = pinned > 0 ? pinned : c->dp;
    if (pinned != PPL_UNSET || !ppl_stack_supports((ppl_stack)stack)->shard_groups)
        return 1;
    return ppl_shard_group_choices(t, c, out);
}

static void arg(json_t *args, const char *flag)
{
    if (args)
        json_array_append_new(args, json_string(flag));
}

static void arg_int(json_t *args, const char *flag, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    arg(args, flag);
    arg(args, num);
}

static void at_least(const char **min_version, const char *v)
{
    if (strcmp(*min_version, v) < 0)
        *min_version = v;
}

void ppl_shard_launch(const ppl_config *c, json_t *args, json_t *zero, const char **min_version,
                      const char **ds_refused)
{
    const int64_t k = ppl_config_shard_replicas(c);
    const char *why = NULL;
    if (k > 1 && c->zero >= 1) {
        /* the distributed optimizer's instances (ZeRO-1), Megatron-FSDP's HSDP
         * (ZeRO-2/3: mcore_fsdp_adapter.py:346); the flag came with core_v0.10 */
        arg_int(args, "--num-distributed-optimizer-instances", (long long)k);
        /* DeepSpeed's hierarchical ZeRO-3 is MiCS: parameters, gradients and
         * optimizer state sharded over mics_shard_size ranks, replicated across
         * (runtime/zero/mics.py; mics_utils.py:178 asks that it divide dp).  ZeRO++
         * hpZ (zero_hpz_partition_size) is not it: it keeps only a second copy of
         * the weights per group and shards the rest over every rank */
        if (c->zero == 3 && zero)
            json_object_set_new(zero, "mics_shard_size", json_integer(ppl_config_shard_group(c)));
        else if (c->zero < 3)
            why = "DeepSpeed shards in groups (MiCS) with ZeRO-3 only";
    }
    const double f = c->offload_optimizer;
    if (f > 0.0) {
        /* arguments.py:1884-1888: the offload needs --use-precision-aware-optimizer;
         * the fraction defaults to 1 (arguments.py:2922-2923); the copies overlap
         * the CPU step only when asked (arguments.py:2926-2927) */
        arg(args, "--optimizer-cpu-offload");
        arg(args, "--use-precision-aware-optimizer");
        if (f < 1.0) {
            char share[32];
            snprintf(share, sizeof share, "%g", f);
            arg(args, "--optimizer-offload-fraction");
            arg(args, share);
        }
        arg(args, "--overlap-cpu-optimizer-d2h-h2d");
        at_least(min_version, "core_v0.12");
        /* offload_config.py:55-60: offload_optimizer with ZeRO 1, 2 and 3; :99-100
         * a share below 1 (ratio) only with ZeRO-3 */
        if (zero) {
            json_t *off = json_object();
            json_object_set_new(off, "device", json_string("cpu"));
            json_object_set_new(off, "pin_memory", json_true());
            if (f < 1.0 && c->zero == 3)
                json_object_set_new(off, "ratio", json_real(f));
            json_object_set_new(zero, "offload_optimizer", off);
        }
        if (f < 1.0 && c->zero < 3 && !why)
            why = "DeepSpeed offloads a share of the optimizer (ratio) with ZeRO-3 only";
    }
    if (ds_refused && why && !*ds_refused)
        *ds_refused = why;
}
