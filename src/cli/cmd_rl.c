/*
 * cmd_rl.c - `parplan rl`: an RL post-training step on one cluster, colocated
 * and disaggregated side by side, ranked by step time (studies/rl.h).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char not_costed[] =
    "the reference model's weights in the trainer's memory, a reward model on the GPUs, "
    "engines with pipeline stages, a scheduler's loss between the "
    "throughput and the longest-response bounds, prefix caching across prompts, partial "
    "rollouts, queueing";
/* what the figures are worth (docs/accuracy.md, "RL post-training steps") */
static const char accuracy[] =
    "ten measured GRPO steps (NeMo RL v0.4) took 1.3 to 4.2 times the predicted step: rank "
    "placements with it, do not budget on its seconds (validate --runs tests/data/rl-runs.json)";

static const char *trainer_label(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size, "%lld/%lld/%lld/%lld/%lld", (long long)c->tp, (long long)c->pp,
             (long long)c->dp, (long long)c->cp, (long long)c->ep);
    return buf;
}

static json_t *plan_json(const ppl_rl_plan *p, const ppl_model *m, const ppl_topology *topo,
                         const ppl_rl_workload *w)
{
    json_t *o = json_object(), *eng = json_object(), *t = json_object(), *mem = json_object();
    json_object_set_new(o, "placement", json_string(ppl_rl_placement_name(p->placement)));
    json_object_set_new(o, "pipeline", json_string(ppl_rl_pipeline_name(p->pipeline)));
    json_object_set_new(o, "rollout_gpus", json_integer(p->rollout_gpus));
    json_object_set_new(o, "train_gpus", json_integer(p->train_gpus));
    json_object_set_new(eng, "tp", json_integer(p->rollout.engine.tp));
    json_object_set_new(eng, "ep",
                        json_integer(p->rollout.engine.ep > 1 ? p->rollout.engine.ep : 1));
    json_object_set_new(eng, "attention_dp",
                        json_integer(ppl_serve_attention_groups(&p->rollout.engine)));
    json_object_set_new(eng, "batch", json_integer(p->rollout.batch));
    json_object_set_new(eng, "replicas", json_integer(p->rollout.replicas));
    json_object_set_new(eng, "precision",
                        json_string(ppl_precision_name(p->rollout.engine.precision)));
    json_object_set_new(eng, "ttft_s", ppl_json_real(p->rollout.cost.prefill_s));
    json_object_set_new(eng, "tpot_s", ppl_json_real(p->rollout.cost.decode_step_s));
    json_object_set_new(mem, "weights", ppl_json_real(p->rollout.cost.weight_bytes));
    json_object_set_new(mem, "kv_cache", ppl_json_real(p->rollout.cost.kv_bytes));
    json_object_set_new(mem, "reserved", ppl_json_real(p->rollout.engine.reserved_bytes));
    json_object_set_new(mem, "capacity", ppl_json_real(p->rollout.cost.capacity_bytes));
    json_object_set_new(eng, "memory", mem);
    /* the rollout engine as vLLM and SGLang launch it: the prompt and the longest
     * response, the trainer's states out of its share (render/engine.h) */
    const ppl_engine_layout launch = {
        .tp = p->rollout.engine.tp,
        .ep = p->rollout.engine.ep,
        .batch = p->rollout.batch,
        .replicas = p->rollout.replicas,
        .max_len_tokens = w->input_tokens + w->output_max,
        .precision = p->rollout.engine.precision,
        .memory_share = p->rollout.cost.capacity_bytes / topo->gpu.memory_bytes,
        .colocated = p->placement == PPL_RL_COLOCATED,
    };
    json_object_set_new(eng, "launch", ppl_launch_engines(m, &launch, topo->gpus_per_server));
    /* the RL framework's run of the whole step (render/verl.h) */
    char why[512];
    json_t *run = json_object(), *verl = ppl_launch_verl(m, p, w, topo->gpus_per_server,
                                                         topo->gpu.memory_bytes, why, sizeof why);
    json_object_set_new(run, "verl", verl ? verl : json_null());
    if (!verl)
        json_object_set_new(run, "verl_error", json_string(why));
    json_object_set_new(o, "launch", run);
    json_object_set_new(o, "engine", eng);
    json_object_set_new(o, "trainer", ppl_config_json(&p->train.config, m));
    json_object_set_new(o, "trainer_step_s", ppl_json_real(p->train.step_time_s));
    json_object_set_new(t, "rollout", ppl_json_real(p->rollout.time_s));
    json_object_set_new(t, "rollout_work", ppl_json_real(p->rollout.work_s));
    json_object_set_new(t, "rollout_tail", ppl_json_real(p->rollout.tail_s));
    json_object_set_new(t, "reward", ppl_json_real(p->reward_s));
    json_object_set_new(t, "train", ppl_json_real(p->train_s));
    json_object_set_new(t, "forward_only", ppl_json_real(p->forward_s));
    json_object_set_new(t, "sync", ppl_json_real(p->sync_s));
    json_object_set_new(t, "offload", ppl_json_real(p->offload_s));
    json_object_set_new(o, "time_s", t);
    json_object_set_new(o, "sync_bytes", ppl_json_real(p->sync_bytes));
    json_object_set_new(o, "step_time_s", ppl_json_real(p->step_s));
    json_object_set_new(o, "idle_share", ppl_json_real(p->idle_share));
    return o;
}

/* The best plan of each placement (NULL when none ran). */
static void best_of(const ppl_rl_result *r, const ppl_rl_plan **co, const ppl_rl_plan **dis)
{
    *co = *dis = NULL;
    for (size_t i = 0; i < r->count; i++) {
        const ppl_rl_plan *p = &r->plans[i];
        if (p->placement == PPL_RL_COLOCATED && !*co)
            *co = p;
        if (p->placement == PPL_RL_DISAGGREGATED && !*dis)
            *dis = p;
    }
}

/* Why the faster placement wins, in one sentence, from the two best plans. */
static void why(const ppl_rl_plan *co, const ppl_rl_plan *dis, char *buf, size_t size)
{
    if (!co || !dis) {
        snprintf(buf, size, "%s",
                 co ? "only the colocated placement runs (the GPUs make fewer than two servers, "
                      "or no split holds both sides)"
                    : "only disaggregated placements run (the trainer's states and the engine do "
                      "not share a GPU)");
        return;
    }
    if (co->step_s <= dis->step_s) {
        snprintf(buf, size,
                 "colocated wins, %.3g s a step against %.3g s: the rollout and the update each "
                 "take all %lld GPUs (rollout %.3g s, update %.3g s), where the best split "
                 "(%lld GPUs rolling out, %lld training, %s) leaves %.0f%% of its GPU time idle",
                 co->step_s, dis->step_s, (long long)co->rollout_gpus, co->rollout.time_s,
                 co->train_s, (long long)dis->rollout_gpus, (long long)dis->train_gpus,
                 ppl_rl_pipeline_name(dis->pipeline), 100.0 * dis->idle_share);
        return;
    }
    char moved[96] = "";
    if (co->offload_s > 0.0)
        snprintf(moved, sizeof moved,
                 " and moves the trainer's states to the host and back (%.3g s)", co->offload_s);
    const int n = snprintf(
        buf, size,
        "disaggregated (%s) wins, %.3g s a step against %.3g s: colocated runs its rollout "
        "(%.3g s on all %lld GPUs%s) and its update (%.3g s) one after the other%s, ",
        ppl_rl_pipeline_name(dis->pipeline), dis->step_s, co->step_s, co->rollout.time_s,
        (long long)co->rollout_gpus,
        co->rollout.tail_s >= co->rollout.work_s ? ", bound by the longest response" : "",
        co->train_s, moved);
    if (n < 0 || (size_t)n >= size)
        return;
    snprintf(buf + n, size - (size_t)n,
             dis->pipeline == PPL_RL_ASYNC
                 ? "where %lld GPUs roll out the next step (%.3g s) beside %lld training this "
                   "one (%.3g s)"
                 : "where the split's rollout on %lld GPUs (%.3g s) and update on %lld "
                   "(%.3g s) still take less",
             (long long)dis->rollout_gpus, dis->rollout.time_s, (long long)dis->train_gpus,
             dis->train_s);
}

ppl_status cmd_rl(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology topo;
    ppl_precision precision;
    int64_t gpus;
    ppl_status st = cli_load_engine(c, &model, &topo, &precision, &gpus);
    if (st != PPL_OK)
        return st;
    const int64_t output_max = a->output_max != PPL_UNSET ? a->output_max : a->output_len;
    if (output_max < a->output_len)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--output-max",
                             "%lld is below --output-len %lld (the mean response)",
                             (long long)output_max, (long long)a->output_len);
    if (a->input_len + output_max > PPL_MAX_SEQ_LEN)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--output-max",
                             "a prompt and the longest response make %lld tokens, above %lld",
                             (long long)(a->input_len + output_max), (long long)PPL_MAX_SEQ_LEN);
    const int64_t sequences = a->prompts * a->samples;
    if (sequences % a->updates != 0)
        return ppl_error_set(
            &c->err, PPL_EUSAGE, "", "--updates",
            "%lld does not divide the %lld sequences of a step (prompts x samples)",
            (long long)a->updates, (long long)sequences);
    if (a->rollout_gpus != PPL_UNSET) {
        if (a->placement == PPL_RL_COLOCATED)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--rollout-gpus",
                                 "splits the GPUs: not with --placement colocated");
        if (a->rollout_gpus >= gpus)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--rollout-gpus",
                                 "%lld leaves none of the %lld GPUs to train",
                                 (long long)a->rollout_gpus, (long long)gpus);
    }
    if (a->engine_tp != PPL_UNSET) {
        const int64_t domain = ppl_topology_server_domain(&topo);
        /* within one NVLink domain, or whole servers (tensor parallelism across
         * nodes, as vLLM runs it) */
        if (model.heads % a->engine_tp != 0 ||
            (a->engine_tp > domain && a->engine_tp % topo.gpus_per_server != 0))
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--engine-tp",
                                 "%lld must divide %s's %lld heads and fit one server's NVLink "
                                 "domain (%lld GPUs) or take whole servers (%lld GPUs each)",
                                 (long long)a->engine_tp, model.name, (long long)model.heads,
                                 (long long)domain, (long long)topo.gpus_per_server);
    }
    ppl_eval_ctx ctx;
    cli_eval_ctx(c, &ctx, &model, &topo);
    ppl_pins pins;
    ppl_pins_init(&pins);
    ppl_rl_opts o = {.workload = {.prompts = a->prompts,
                                  .samples = a->samples,
                                  .input_tokens = a->input_len,
                                  .output_tokens = a->output_len,
                                  .output_max = output_max,
                                  .updates = a->updates,
                                  .forward_passes = a->forward_passes,
                                  .reward_s = a->reward_s,
                                  .precision = precision},
                     .gpus = gpus,
                     .off_policy = a->off_policy != 0,
                     .one_placement = a->placement != PPL_UNSET,
                     .placement = a->placement == PPL_RL_DISAGGREGATED ? PPL_RL_DISAGGREGATED
                                                                       : PPL_RL_COLOCATED,
                     .engine_tp = a->engine_tp != PPL_UNSET ? a->engine_tp : 0,
                     .rollout_gpus = a->rollout_gpus != PPL_UNSET ? a->rollout_gpus : 0,
                     .search = {.pins = &pins, .objective = PPL_OBJECTIVE_TIME}};
    cli_progress prog = {.what = "rl: planning the trainer"};
    o.search.progress = cli_progress_show;
    o.search.progress_ctx = &prog;
    ppl_rl_result r;
    st = ppl_rl_search(&ctx, &o, &r, &c->err);
    cli_progress_done(&prog);
    if (st != PPL_OK)
        return st;
    const ppl_rl_plan *co, *dis;
    best_of(&r, &co, &dis);
    char reason[512];
    if (a->placement != PPL_UNSET)
        snprintf(reason, sizeof reason, "--placement %s: the other placement is not weighed",
                 ppl_rl_placement_name((ppl_rl_placement)a->placement));
    else
        why(co, dis, reason, sizeof reason);
    const size_t shown = r.count < (size_t)a->top ? r.count : (size_t)a->top;
    const ppl_rl_workload *w = &o.workload;
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array(), *wl = json_object();
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "gpus", json_integer(gpus));
        json_object_set_new(wl, "prompts", json_integer(w->prompts));
        json_object_set_new(wl, "samples", json_integer(w->samples));
        json_object_set_new(wl, "sequences", json_integer(sequences));
        json_object_set_new(wl, "input_tokens", json_integer(w->input_tokens));
        json_object_set_new(wl, "output_tokens", json_integer(w->output_tokens));
        json_object_set_new(wl, "output_max_tokens", json_integer(w->output_max));
        json_object_set_new(wl, "updates", json_integer(w->updates));
        json_object_set_new(wl, "forward_passes", json_integer(w->forward_passes));
        json_object_set_new(wl, "reward_s", ppl_json_real(w->reward_s));
        json_object_set_new(doc, "workload", wl);
        for (size_t i = 0; i < shown; i++) {
            json_t *p = plan_json(&r.plans[i], &model, &topo, w);
            json_object_set_new(p, "rank", json_integer((json_int_t)i + 1));
            json_array_append_new(list, p);
        }
        json_object_set_new(doc, "results", list);
        /* the best of each placement in full, beside each other, whatever --top shows */
        const ppl_rl_plan *best[2] = {co, dis};
        static const char *const best_key[2] = {"best_colocated", "best_disaggregated"};
        for (int k = 0; k < 2; k++) {
            json_t *p = best[k] ? plan_json(best[k], &model, &topo, w) : json_null();
            if (best[k])
                json_object_set_new(p, "rank", json_integer((json_int_t)(best[k] - r.plans) + 1));
            json_object_set_new(doc, best_key[k], p);
        }
        json_object_set_new(doc, "why", json_string(reason));
        json_object_set_new(doc, "splits_tried", json_integer((json_int_t)r.splits));
        json_object_set_new(doc, "not_costed", json_string(not_costed));
        json_object_set_new(doc, "accuracy", json_string(accuracy));
        ppl_rl_result_free(&r);
        return cli_emit_json(c, doc);
    }
    ppl_buf *out = &c->out;
    ppl_buf_printf(out, "rl        %s on %s: %lld GPUs, the engine in %s\n", model.name, topo.name,
                   (long long)gpus, ppl_precision_name(precision));
    ppl_buf_printf(out,
                   "workload  %lld prompts x %lld samples = %lld sequences a step; %lld-token "
                   "prompts, %lld-token responses (longest %lld); %lld update%s, %lld "
                   "forward-only pass%s, reward %.3g s\n\n",
                   (long long)w->prompts, (long long)w->samples, (long long)sequences,
                   (long long)w->input_tokens, (long long)w->output_tokens,
                   (long long)w->output_max, (long long)w->updates, w->updates == 1 ? "" : "s",
                   (long long)w->forward_passes, w->forward_passes == 1 ? "" : "es", w->reward_s);
    static const char *const header[] = {"#",      "placement", "pipeline", "GPUs roll/train",
                                         "engine", "trainer",   "rollout",  "train",
                                         "sync",   "step",      "idle"};
    enum { COLS = 11 };
    ppl_table t;
    ppl_table_init(&t, COLS, "rllrllrrrrr");
    ppl_table_row(&t, header);
    for (size_t i = 0; i < shown; i++) {
        const ppl_rl_plan *p = &r.plans[i];
        char cells[COLS][48];
        snprintf(cells[0], 48, "%zu", i + 1);
        snprintf(cells[1], 48, "%s", ppl_rl_placement_name(p->placement));
        snprintf(cells[2], 48, "%s", ppl_rl_pipeline_name(p->pipeline));
        snprintf(cells[3], 48, "%lld/%lld", (long long)p->rollout_gpus, (long long)p->train_gpus);
        if (p->rollout.engine.ep > 1)
            snprintf(cells[4], 48, "tp%lld ep%lld b%lld x%lld", (long long)p->rollout.engine.tp,
                     (long long)p->rollout.engine.ep, (long long)p->rollout.batch,
                     (long long)p->rollout.replicas);
        else
            snprintf(cells[4], 48, "tp%lld b%lld x%lld", (long long)p->rollout.engine.tp,
                     (long long)p->rollout.batch, (long long)p->rollout.replicas);
        trainer_label(&p->train.config, cells[5], 48);
        snprintf(cells[6], 48, "%.1f s", p->rollout.time_s);
        snprintf(cells[7], 48, "%.1f s", p->train_s);
        snprintf(cells[8], 48, "%.2f s", p->sync_s + p->offload_s);
        snprintf(cells[9], 48, "%.1f s", p->step_s);
        snprintf(cells[10], 48, "%.0f%%", 100.0 * p->idle_share);
        ppl_table_row_fixed(&t, cells[0], sizeof cells[0]);
    }
    ppl_table_render(&t, out, "");
    ppl_table_free(&t);
    ppl_buf_printf(out,
                   "\nwhy       %s\n\nengine: tensor-parallel size (and the GPUs a MoE's experts "
                   "spread over), sequences decoded together (by an attention group), "
                   "replicas; trainer: tp/pp/dp/cp/ep of one update; rollout: the larger of the "
                   "batch's decode and the longest response's; train: the updates and the "
                   "forward-only passes; sync: the weights into the engine (and, colocated, the "
                   "trainer's states to the host and back when that is faster); idle: GPU time "
                   "neither rolling out nor training.\nnot costed yet: %s\naccuracy: %s\n",
                   reason, not_costed, accuracy);
    ppl_rl_result_free(&r);
    return PPL_OK;
}
