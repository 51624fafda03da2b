/*
 * verl.c - an RL plan as verl v0.7.0 runs it (see render/verl.h).  Paths and
 * lines are verl's at tag v0.7.0 (f9c855f7, 2026-01-05); the keys are those of
 * verl/trainer/config/_generated_ppo_megatron_trainer.yaml, and
 * tests/cli/verl_check.py applies verl's checks to what is written here.
 *
 * A colocated step is verl's hybrid engine (verl.trainer.main_ppo): the actor's
 * Megatron ranks and the vLLM rollout on every GPU, the engine asleep while the
 * actor trains (rollout.free_cache_engine), the actor's states offloaded to the
 * host between updates where the plan moves them.  A disaggregated step one
 * step off-policy is the one_step_off_policy recipe (its main_ppo), the rollout
 * on a pool of its own (rollout.nnodes x rollout.n_gpus_per_node); it takes
 * the rollout's log-probs as the old policy's (its config's
 * rollout_correction.bypass_mode), so only the reference pass is left.  GRPO's
 * groups are the samples a prompt (rollout.n), the trainer's update a
 * mini-batch of train_batch_size / updates prompts.
 */
#include "render/verl.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>

#include "cost/serve.h"
#include "render/hfcheckpoint.h"

#define VERL_VERSION "v0.7.0"

static void set(json_t *list, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(list, json_string(buf));
}

static const char *boolean(bool v)
{
    return v ? "True" : "False";
}

/* The nodes of a pool of `gpus` GPUs on servers of `per_server`: whole servers,
 * or one server's share; false when the pool is not one of those. */
static bool pool_of(int64_t gpus, int64_t per_server, int64_t *nnodes, int64_t *per_node)
{
    if (gpus < 1 || per_server < 1)
        return false;
    if (gpus < per_server) {
        *nnodes = 1, *per_node = gpus;
        return true;
    }
    *nnodes = gpus / per_server, *per_node = per_server;
    return gpus % per_server == 0;
}

json_t *ppl_launch_verl(const ppl_model *m, const ppl_rl_plan *p, const ppl_rl_workload *w,
                        int64_t per_server, double gpu_bytes, char *why, size_t len)
{
    why[0] = '\0';
    const ppl_config *c = &p->train.config;
    ppl_hf_checkpoint_miss miss;
    const ppl_hf_checkpoint *ck = ppl_hf_checkpoint_of(m, &miss);
    const bool async = p->pipeline == PPL_RL_ASYNC;
    const bool colocated = p->placement == PPL_RL_COLOCATED;
    /* the forward-only passes verl runs: the old policy's log-probs (none one step
     * off, which takes the rollout's) and the reference's where a KL term asks */
    const int64_t old_passes = async ? 0 : 1;
    const int64_t longest = w->input_tokens + w->output_max;
    int64_t nnodes = 0, per_node = 0, r_nnodes = 0, r_per_node = 0;
    /* how Megatron-Core splits the layers over the stages (config.h) */
    bool embedding = false, loss = false;
    const ppl_split_form form =
        c->pp > 1 ? ppl_split_form_of(c, c->vp, &embedding, &loss) : PPL_SPLIT_EVEN;
    if (!ck)
        snprintf(why, len,
                 "verl loads a Hugging Face checkpoint (actor_rollout_ref.model.path), "
                 "and none launched here has the model's figures");
    else if (colocated == async)
        snprintf(why, len,
                 "verl v0.7.0 runs a colocated step synchronously (verl.trainer.main_ppo, its "
                 "hybrid engine) and a disaggregated one one step off-policy "
                 "(recipe/one_step_off_policy); a %s %s step is neither",
                 ppl_rl_placement_name(p->placement), ppl_rl_pipeline_name(p->pipeline));
    else if (w->forward_passes < old_passes || w->forward_passes > old_passes + 1)
        snprintf(why, len,
                 "verl runs %lld or %lld forward-only passes here (the old policy's, and the "
                 "reference's with a KL loss), not %lld",
                 (long long)old_passes, (long long)old_passes + 1, (long long)w->forward_passes);
    else if (w->precision != PPL_PRECISION_BF16)
        snprintf(why, len,
                 "verl v0.7.0's rollout sets no fp8 KV cache (verl/workers/config/rollout.py has "
                 "quantization, no kv_cache_dtype): the %s engine is not its",
                 ppl_precision_names[w->precision]);
    else if (c->precision != PPL_PRECISION_BF16)
        snprintf(why, len, "verl's Megatron actor trains in bf16 here, not %s",
                 ppl_precision_names[c->precision]);
    else if (c->zero >= 2)
        snprintf(why, len,
                 "verl's Megatron actor shards the optimizer state at most "
                 "(use_distributed_optimizer): ZeRO-%d is not its",
                 c->zero);
    else if (c->schedule != PPL_SCHEDULE_1F1B)
        snprintf(why, len, "verl's Megatron actor runs Megatron-Core's 1F1B: no %s schedule",
                 ppl_schedule_names[c->schedule]);
    else if (form == PPL_SPLIT_NONE || form == PPL_SPLIT_LAYOUT)
        snprintf(why, len,
                 "the stages' layers (%lld first, %lld last) are no first/last counts nor "
                 "accounted ends Megatron-Core builds from verl's override dict",
                 (long long)c->split.first, (long long)c->split.last);
    else if (c->cp > 1 && c->cp_comm == PPL_CP_COMM_A2A_P2P)
        snprintf(why, len,
                 "verl's override dict sets no hierarchical context-parallel sizes, which "
                 "Megatron-Core's a2a+p2p needs");
    else if (c->offload_optimizer > 0.0)
        snprintf(why, len, "verl's Megatron actor has no CPU optimizer step (offload %g)",
                 c->offload_optimizer);
    else if (longest > ck->max_positions)
        snprintf(why, len,
                 "the longest sequence, %lld tokens, is above %s's max_position_embeddings "
                 "(%lld)",
                 (long long)longest, ck->hf_model, (long long)ck->max_positions);
    else if (w->prompts % w->updates != 0)
        snprintf(why, len,
                 "verl counts an update's mini-batch in prompts (actor.ppo_mini_batch_size): "
                 "%lld prompts do not split into %lld updates",
                 (long long)w->prompts, (long long)w->updates);
    else if (!pool_of(p->train_gpus, per_server, &nnodes, &per_node) ||
             (!colocated && !pool_of(p->rollout_gpus, per_server, &r_nnodes, &r_per_node)))
        snprintf(why, len,
                 "verl's pools are nodes x GPUs a node: %lld trainer and %lld rollout GPUs on "
                 "servers of %lld are not",
                 (long long)p->train_gpus, (long long)p->rollout_gpus, (long long)per_server);
    if (why[0])
        return NULL;

    json_t *o = json_object(), *argv = json_array(), *ov = json_array();
    set(argv, "python3");
    set(argv, "-m");
    set(argv, colocated ? "verl.trainer.main_ppo" : "recipe.one_step_off_policy.main_ppo");
    set(argv, "--config-name");
    set(argv, colocated ? "ppo_megatron_trainer" : "one_step_off_ppo_megatron_trainer");
    set(ov, "algorithm.adv_estimator=grpo");
    set(ov, "data.train_batch_size=%lld", (long long)w->prompts);
    set(ov, "data.max_prompt_length=%lld", (long long)w->input_tokens);
    set(ov, "data.max_response_length=%lld", (long long)w->output_max);
    set(ov, "actor_rollout_ref.model.path=%s", ck->hf_model);
    set(ov, "actor_rollout_ref.hybrid_engine=%s", boolean(colocated));
    /* the rollout: the engine's layout (render/engine.h) */
    set(ov, "actor_rollout_ref.rollout.name=vllm");
    set(ov, "actor_rollout_ref.rollout.n=%lld", (long long)w->samples);
    set(ov, "actor_rollout_ref.rollout.tensor_model_parallel_size=%lld",
        (long long)p->rollout.engine.tp);
    if (p->rollout.engine.ep > 1) {
        /* a replica of ep GPUs: ep / tp data-parallel attention ranks, the experts
         * over all (workers/config/rollout.py:238-241: ep = tp x dp; vLLM's
         * --enable-expert-parallel, vllm_async_server.py:327-345), dispatched by
         * DeepEP as the engine is costed (serve.c), its backend set in the Ray
         * workers' environment (trainer/main_ppo.py:64-75 merges
         * ray_kwargs.ray_init.runtime_env) */
        set(ov, "actor_rollout_ref.rollout.data_parallel_size=%lld",
            (long long)(p->rollout.engine.ep / p->rollout.engine.tp));
        set(ov, "actor_rollout_ref.rollout.expert_parallel_size=%lld",
            (long long)p->rollout.engine.ep);
        set(ov, "+ray_kwargs.ray_init.runtime_env.env_vars.VLLM_ALL2ALL_BACKEND="
                "deepep_low_latency");
    }
    set(ov, "actor_rollout_ref.rollout.gpu_memory_utilization=%.4g",
        p->rollout.cost.capacity_bytes / gpu_bytes);
    set(ov, "actor_rollout_ref.rollout.max_num_seqs=%lld", (long long)p->rollout.batch);
    set(ov, "actor_rollout_ref.rollout.max_num_batched_tokens=%d", PPL_SERVE_CHUNK_TOKENS);
    set(ov, "actor_rollout_ref.rollout.max_model_len=%lld", (long long)longest);
    set(ov, "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=%lld", (long long)c->mbs);
    set(ov, "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=%lld", (long long)c->mbs);
    /* the actor: the trainer's best plan of one update */
    set(ov, "actor_rollout_ref.actor.use_kl_loss=%s", boolean(w->forward_passes > old_passes));
    set(ov, "actor_rollout_ref.actor.ppo_mini_batch_size=%lld",
        (long long)(w->prompts / w->updates));
    set(ov, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=%lld", (long long)c->mbs);
#define MEG "actor_rollout_ref.actor.megatron."
    set(ov, MEG "tensor_model_parallel_size=%lld", (long long)c->tp);
    set(ov, MEG "pipeline_model_parallel_size=%lld", (long long)c->pp);
    if (c->vp > 1)
        set(ov, MEG "virtual_pipeline_model_parallel_size=%lld", (long long)c->vp);
    else
        set(ov, MEG "virtual_pipeline_model_parallel_size=null");
    set(ov, MEG "context_parallel_size=%lld", (long long)c->cp);
    set(ov, MEG "expert_model_parallel_size=%lld", (long long)c->ep);
    set(ov, MEG "expert_tensor_parallel_size=%lld", (long long)ppl_config_etp(c));
    set(ov, MEG "sequence_parallel=%s", boolean(c->sequence_parallel && c->tp > 1));
    set(ov, MEG "use_distributed_optimizer=%s", boolean(c->zero >= 1));
    /* colocated, the states the plan moves to the host while the engine runs */
    const bool moved = colocated && p->offload_s > 0.0;
    set(ov, MEG "param_offload=%s", boolean(moved));
    set(ov, MEG "grad_offload=%s", boolean(moved));
    set(ov, MEG "optimizer_offload=%s", boolean(moved));
#define OTC MEG "override_transformer_config."
    if (c->recompute == PPL_RECOMPUTE_FULL) {
        set(ov, OTC "recompute_granularity=full");
        set(ov, OTC "recompute_method=%s", c->recompute_layers > 0 ? "block" : "uniform");
        set(ov, OTC "recompute_num_layers=%lld",
            (long long)(c->recompute_layers > 0 ? c->recompute_layers / c->vp : 1));
    } else if (c->recompute == PPL_RECOMPUTE_SELECTIVE) {
        set(ov, OTC "recompute_granularity=selective");
    }
    /* the stages' layers as Megatron-Core builds them (launch.c does the same with
     * Megatron-LM's flags): its TransformerConfig fields, added to the dict */
    if (form == PPL_SPLIT_ENDS) {
        set(ov, "+" OTC "num_layers_in_first_pipeline_stage=%lld", (long long)c->split.first);
        set(ov, "+" OTC "num_layers_in_last_pipeline_stage=%lld", (long long)c->split.last);
    } else if (form == PPL_SPLIT_ACCOUNT) {
        if (embedding)
            set(ov, "+" OTC "account_for_embedding_in_pipeline_split=True");
        if (loss)
            set(ov, "+" OTC "account_for_loss_in_pipeline_split=True");
    }
    if (c->cp > 1 && c->cp_comm != PPL_CP_COMM_P2P)
        set(ov, "+" OTC "cp_comm_type=%s", ppl_cp_comm_names[c->cp_comm]);
#undef OTC
#undef MEG
    set(ov, "trainer.nnodes=%lld", (long long)nnodes);
    set(ov, "trainer.n_gpus_per_node=%lld", (long long)per_node);
    if (!colocated) {
        set(ov, "rollout.nnodes=%lld", (long long)r_nnodes);
        set(ov, "rollout.n_gpus_per_node=%lld", (long long)r_per_node);
    }
    json_object_set_new(o, "version", json_string(VERL_VERSION));
    json_object_set_new(o, "argv", argv);
    json_object_set_new(o, "overrides", ov);
    return o;
}
