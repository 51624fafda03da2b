#!/usr/bin/env python3
"""verl_check.py - an rl plan's verl run, as verl v0.7.0 takes it.

Usage: verl_check.py PLAN.json GPUS_PER_SERVER GPU_MEMORY_BYTES

Reads `parplan rl --json` and, for each plan, launch.verl: the entry point and
config its placement needs, every Hydra override a key of verl's config (with
its line in verl/trainer/config/_generated_ppo_megatron_trainer.yaml at v0.7.0,
f9c855f7) or a Megatron-Core TransformerConfig field added to the actor's
override dict, each key once; then verl's own checks (file:line below); then
the run it starts is derived back and must be the plan's: the trainer's layout,
its batch and microbatches an update, the rollout engine's tp, replicas, batch
and longest sequence, the pools, the forward-only passes.  A plan verl cannot
run must say why (verl_error).  Exits 1 with the first broken rule.  Standard
library only.
"""
import json
import sys

from launch_results import Refused, need

# key: its line in _generated_ppo_megatron_trainer.yaml (v0.7.0)
KEYS = {
    "algorithm.adv_estimator": 623,
    "data.train_batch_size": 358,
    "data.max_prompt_length": 356,
    "data.max_response_length": 357,
    "actor_rollout_ref.model.path": 299,
    "actor_rollout_ref.hybrid_engine": 345,
    "actor_rollout_ref.rollout.name": 201,
    "actor_rollout_ref.rollout.n": 231,
    "actor_rollout_ref.rollout.tensor_model_parallel_size": 214,
    "actor_rollout_ref.rollout.data_parallel_size": 215,
    "actor_rollout_ref.rollout.expert_parallel_size": 216,
    "actor_rollout_ref.rollout.gpu_memory_utilization": 209,
    "actor_rollout_ref.rollout.max_num_seqs": 220,
    "actor_rollout_ref.rollout.max_num_batched_tokens": 218,
    "actor_rollout_ref.rollout.max_model_len": 219,
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": 226,
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": 139,
    "actor_rollout_ref.actor.use_kl_loss": 87,
    "actor_rollout_ref.actor.ppo_mini_batch_size": 63,
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 65,
    "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": 34,
    "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size": 37,
    "actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size": 38,
    "actor_rollout_ref.actor.megatron.context_parallel_size": 39,
    "actor_rollout_ref.actor.megatron.expert_model_parallel_size": 35,
    "actor_rollout_ref.actor.megatron.expert_tensor_parallel_size": 36,
    "actor_rollout_ref.actor.megatron.sequence_parallel": 40,
    "actor_rollout_ref.actor.megatron.use_distributed_optimizer": 41,
    "actor_rollout_ref.actor.megatron.param_offload": 31,
    "actor_rollout_ref.actor.megatron.grad_offload": 32,
    "actor_rollout_ref.actor.megatron.optimizer_offload": 33,
    "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity": 48,
    "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method": 51,
    "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers": 52,
    "trainer.nnodes": 650,
    "trainer.n_gpus_per_node": 651,
}
# the one_step_off_policy recipe's own (recipe/one_step_off_policy/config/
# one_step_off_ppo_megatron_trainer.yaml:12, :14)
OFF_POLICY_KEYS = {"rollout.nnodes": 12, "rollout.n_gpus_per_node": 14}
# Megatron-Core TransformerConfig fields the override dict may add ("+")
OTC = "actor_rollout_ref.actor.megatron.override_transformer_config."
ADDED = {OTC + "num_layers_in_first_pipeline_stage", OTC + "num_layers_in_last_pipeline_stage",
         OTC + "account_for_embedding_in_pipeline_split",
         OTC + "account_for_loss_in_pipeline_split", OTC + "cp_comm_type",
         # the Ray workers' environment, merged into ray.init's runtime_env
         # (verl/trainer/main_ppo.py:64-75; vLLM's choices, vllm/envs.py:1240-1246)
         "ray_kwargs.ray_init.runtime_env.env_vars.VLLM_ALL2ALL_BACKEND"}
ENTRY = {  # placement: (module, config name)
    "colocated": ("verl.trainer.main_ppo", "ppo_megatron_trainer"),
    "disaggregated": ("recipe.one_step_off_policy.main_ppo", "one_step_off_ppo_megatron_trainer"),
}


def value(v):
    """A Hydra literal: int, float, bool, null or string."""
    if v in ("True", "true"):
        return True
    if v in ("False", "false"):
        return False
    if v == "null":
        return None
    for kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            pass
    return v


def overrides(run, placement):
    keys = dict(KEYS)
    if placement == "disaggregated":
        keys.update(OFF_POLICY_KEYS)
    cfg = {}
    for o in run["overrides"]:
        need("=" in o, "verl", f"{o!r} is not key=value")
        k, v = o.split("=", 1)
        if k.startswith("+"):
            k = k[1:]
            need(k in ADDED, "verl", f"+{k}: not a field parplan adds")
        else:
            need(k in keys, "verl", f"{k}: not a key of verl v0.7.0's config")
        need(k not in cfg, "verl", f"{k} set twice")
        cfg[k] = value(v)
    return cfg


def check(plan, per_server):
    run = plan["launch"]["verl"]
    placement = plan["placement"]
    module, config = ENTRY[placement]
    need(run["argv"] == ["python3", "-m", module, "--config-name", config], "verl",
         f"{run['argv']} is not {placement}'s entry point")
    cfg = overrides(run, placement)
    g = lambda k: cfg[k] if k in cfg else None  # noqa: E731
    A = "actor_rollout_ref.actor."
    M = A + "megatron."
    R = "actor_rollout_ref.rollout."
    nnodes, per_node = g("trainer.nnodes"), g("trainer.n_gpus_per_node")
    # recipe/one_step_off_policy/main_ppo.py:52-53, :65-66: positive pools
    need(nnodes and nnodes > 0 and per_node and per_node > 0, "verl", "trainer pool not positive")
    need(per_node <= per_server, "verl", f"{per_node} GPUs a node on servers of {per_server}")
    n_gpus = nnodes * per_node
    tp, pp, cp = g(M + "tensor_model_parallel_size"), g(M + "pipeline_model_parallel_size"), \
        g(M + "context_parallel_size")
    # verl/utils/config.py:96: n_gpus divisible by tp x pp x cp
    need(n_gpus % (tp * pp * cp) == 0, "verl/utils/config.py:96",
         f"n_gpus {n_gpus} not divisible by tp {tp} x pp {pp} x cp {cp}")
    dp = n_gpus // (tp * pp * cp)
    mbs = g(A + "ppo_micro_batch_size_per_gpu")
    n, prompts, mini = g(R + "n"), g("data.train_batch_size"), g(A + "ppo_mini_batch_size")
    # verl/utils/config.py:110: prompts x n divisible by dp x micro batch
    need((prompts * n) % (dp * mbs) == 0, "verl/utils/config.py:110",
         f"{prompts} x {n} not divisible by dp {dp} x {mbs}")
    # verl/workers/config/actor.py:201: train_batch_size >= ppo_mini_batch_size
    need(prompts >= mini, "verl/workers/config/actor.py:201", f"{prompts} prompts < mini-batch {mini}")
    # verl/workers/megatron_workers.py:334-335: the mini-batch in sequences, over dp
    per_rank = mini * n // dp
    need(per_rank % mbs == 0, "verl/workers/megatron_workers.py:335",
         f"{per_rank} sequences a rank not in micro-batches of {mbs}")
    # verl/workers/config/rollout.py:243: no rollout pipeline with vLLM
    need(g(R + "name") == "vllm", "verl", "rollout not vLLM")
    # the run derived back against the plan
    t, e, wl = plan["trainer"], plan["engine"], WORKLOAD
    need(n_gpus == plan["train_gpus"], "verl", f"trainer {n_gpus} GPUs, the plan's {plan['train_gpus']}")
    for name, got, want in (("tp", tp, t["tp"]), ("pp", pp, t["pp"]), ("cp", cp, t["cp"]),
                            ("dp", dp, t["dp"]), ("ep", g(M + "expert_model_parallel_size"), t["ep"]),
                            ("vp", g(M + "virtual_pipeline_model_parallel_size") or 1, t["vp"]),
                            ("mbs", mbs, t["mbs"]),
                            ("update batch", per_rank * dp, t["global_batch"]),
                            ("microbatches", per_rank // mbs, t["microbatches"]),
                            ("distributed optimizer", g(M + "use_distributed_optimizer"),
                             t["zero"] >= 1),
                            ("prompts", prompts, wl["prompts"]), ("samples", n, wl["samples"]),
                            ("response", g("data.max_response_length"), wl["output_max_tokens"]),
                            ("prompt", g("data.max_prompt_length"), wl["input_tokens"]),
                            ("rollout tp", g(R + "tensor_model_parallel_size"), e["tp"]),
                            ("rollout batch", g(R + "max_num_seqs"), e["batch"]),
                            ("longest", g(R + "max_model_len"),
                             wl["input_tokens"] + wl["output_max_tokens"]),
                            ("hybrid engine", g("actor_rollout_ref.hybrid_engine"),
                             placement == "colocated")):
        need(got == want, "verl", f"{name} {got}, the plan's {want}")
    # the stages Megatron-Core builds from the dict (transformer_config.py: first
    # and last counts, or the embedding and loss counted as a layer), each rank's
    # layers, against the plan's
    stages = t["stage_layers"]
    L = sum(stages)
    first, last = g(OTC + "num_layers_in_first_pipeline_stage"), \
        g(OTC + "num_layers_in_last_pipeline_stage")
    emb, loss = bool(g(OTC + "account_for_embedding_in_pipeline_split")), \
        bool(g(OTC + "account_for_loss_in_pipeline_split"))
    if pp == 1:
        built = [L]
    elif first is not None or last is not None:
        need(first is not None and last is not None and not emb and not loss, "verl",
             "first and last counts with one missing or with accounted ends")
        rest = L - first - last
        need(pp == 2 and rest == 0 or pp > 2 and rest % (pp - 2) == 0, "verl",
             f"{rest} middle layers over {pp - 2} stages")
        built = [first] + [rest // (pp - 2)] * (pp - 2) + [last] if pp > 2 else [first, last]
    else:
        n, r = divmod(L + emb + loss, pp)
        need(r == 0, "verl", f"{L} layers (+{emb + loss}) over {pp} stages")
        built = [n] * pp
        built[0] -= emb
        built[-1] -= loss
    need(built == stages, "verl", f"stages {built}, the plan's {stages}")
    # the knobs the trainer's plan sets, each against its override
    otc_rc = {"none": None, "selective": "selective", "full": "full"}
    for name, got, want in (("etp", g(M + "expert_tensor_parallel_size"), t.get("etp", tp)),
                            ("sp", g(M + "sequence_parallel"),
                             bool(t["sequence_parallel"]) and tp > 1),
                            ("recompute", g(OTC + "recompute_granularity"),
                             otc_rc[t["recompute"].split(":")[0]]),
                            ("cp algorithm", g(OTC + "cp_comm_type") or "p2p",
                             t.get("cp_comm", "p2p") if cp > 1 else "p2p"),
                            ("rollout share", round(g(R + "gpu_memory_utilization"), 3),
                             round(e["memory"]["capacity"] / GPU_BYTES[0], 3)),
                            ("offload", (g(M + "param_offload"), g(M + "grad_offload"),
                                         g(M + "optimizer_offload")),
                             (OFFLOADED[0],) * 3)):
        need(got == want, "verl", f"{name} {got}, the plan's {want}")
    rollout_gpus = n_gpus if placement == "colocated" else \
        g("rollout.nnodes") * g("rollout.n_gpus_per_node")
    need(rollout_gpus == plan["rollout_gpus"], "verl",
         f"rollout {rollout_gpus} GPUs, the plan's {plan['rollout_gpus']}")
    rtp = g(R + "tensor_model_parallel_size")
    rdp, rep = g(R + "data_parallel_size") or 1, g(R + "expert_parallel_size") or 1
    # verl/workers/config/rollout.py:238-241: ep = tp x dp
    need(rep == 1 or rep == rtp * rdp, "verl/workers/config/rollout.py:239",
         f"expert_parallel_size {rep} is not tp {rtp} x dp {rdp}")
    world = rtp * rdp
    # verl/workers/rollout/replica.py:95-104: a replica's GPUs over whole nodes
    need(world % min(per_server, world) == 0, "verl/workers/rollout/replica.py:101",
         f"a rollout replica of {world} GPUs on nodes of {per_server}")
    if rep > 1:
        need(g("ray_kwargs.ray_init.runtime_env.env_vars.VLLM_ALL2ALL_BACKEND") in
             ("deepep_low_latency", "deepep_high_throughput"), "verl",
             "expert parallelism without the DeepEP all-to-all the engine is costed with")
    need(rollout_gpus // world == e["replicas"], "verl",
         f"{rollout_gpus // world} rollout replicas, the plan's {e['replicas']}")
    need((rep if rep > 1 else 1) == e.get("ep", 1), "verl",
         f"rollout ep {rep}, the plan's {e.get('ep', 1)}")
    # forward-only passes: the old policy's, none one step off (its bypass_mode,
    # recipe/one_step_off_policy/ray_trainer.py:549), and the reference's with KL
    passes = (0 if placement == "disaggregated" else 1) + bool(g(A + "use_kl_loss"))
    need(passes == wl["forward_passes"], "verl", f"{passes} forward passes, the plan's {wl['forward_passes']}")


WORKLOAD = {}
GPU_BYTES = [0.0]
OFFLOADED = [False]


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    GPU_BYTES[0] = float(sys.argv[3])
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    WORKLOAD.update(doc["workload"])
    per_server = int(sys.argv[2])
    ran = 0
    try:
        for k, plan in enumerate(doc["results"], 1):
            launch = plan["launch"]
            if launch.get("verl") is None:
                need(launch.get("verl_error"), f"result {k}", "no verl and no verl_error")
                continue
            # colocated, the trainer's states go to the host while the engine runs
            # where the plan costs the move (time_s.offload)
            OFFLOADED[0] = plan["placement"] == "colocated" and plan["time_s"]["offload"] > 0
            try:
                check(plan, per_server)
            except Refused as e:
                raise Refused(f"result {k}: {e}")
            ran += 1
    except Refused as e:
        print(f"verl_check: {e}")
        return 1
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        print(f"verl_check: missing or malformed: {e!r}")
        return 1
    print(f"verl_check: {len(doc['results'])} plans, {ran} run by verl as planned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
