#!/usr/bin/env python3
"""bridge_check.py - what Megatron-Bridge v0.6.0 would run from a plan's recipe script.

Reads a parplan plan (--json) on stdin.  For every result whose launch carries
megatron_bridge, it writes the script with scripts/launch-megatron --bridge,
parses it (ast: nothing is imported or run) and collects what parplan_config()
sets on the recipe's ConfigContainer.  Every field that decides the layout must
be set there, so that nothing rests on the recipe's own values.  The mixed-
precision recipe is applied as Bridge applies it, then Bridge's own checks
(training/config.py, mixed_precision.py; file:line at tag v0.6.0), then the
fields are read back as the Megatron-LM flags of the same meaning and handed to
megatron_check.py's derivation (Megatron-Core's rules, the same Core the Bridge
pins), whose figures must equal the plan's config.  With --model, the recipe's
checkpoint must be the model: its config.json figures (transcribed here) equal
model show's.  Results without a recipe must say why.  Prints one line per
result; exits 1 on the first mismatch or refusal.  Usage:
    bridge_check.py [--model MODEL.json] ROOT < plan.json
"""
import ast
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import megatron_check as mc  # noqa: E402
from launch_results import Refused, arguments, launched, need, run  # noqa: E402

CFG = "src/megatron/bridge/training/config.py"
MP = "src/megatron/bridge/training/mixed_precision.py"
OPTC = "megatron/core/optimizer/optimizer_config.py"  # the pinned Core, cd4afffa64

# the fields whose values decide the layout; each must be set by the script
REQUIRED = [
    "model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
    "model.virtual_pipeline_model_parallel_size", "model.pipeline_model_parallel_layout",
    "model.microbatch_group_size_per_vp_stage", "model.num_layers_in_first_pipeline_stage",
    "model.num_layers_in_last_pipeline_stage", "model.account_for_embedding_in_pipeline_split",
    "model.account_for_loss_in_pipeline_split", "model.context_parallel_size",
    "model.hierarchical_context_parallel_sizes", "model.expert_model_parallel_size",
    "model.expert_tensor_parallel_size", "model.sequence_parallel",
    "model.recompute_granularity", "model.recompute_method", "model.recompute_num_layers",
    "model.recompute_modules", "model.fine_grained_activation_offloading",
    "model.cuda_graph_impl", "model.seq_length", "dataset.seq_length",
    "train.micro_batch_size", "train.global_batch_size",
    "ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer",
    "ddp.use_megatron_fsdp", "dist.use_megatron_fsdp", "ddp.data_parallel_sharding_strategy",
    "ddp.num_distributed_optimizer_instances", "optimizer.optimizer_cpu_offload",
    "optimizer.optimizer", "mixed_precision", "mixed_precision.fp8_param_gather",
    "mixed_precision.reuse_grad_buf_for_mxfp8_param_ag", "mixed_precision.first_last_layers_bf16",
    "mixed_precision.grad_reduce_in_fp32", "comm_overlap", "tokenizer.tokenizer_model",
    "model.make_vocab_size_divisible_by",
]
# mixed_precision.py: each recipe's fields that matter here
MP_RECIPES = {
    "bf16_mixed": {"bf16": True, "grad_reduce_in_fp32": True},  # MP:184-197
    "fp16_mixed": {"fp16": True, "grad_reduce_in_fp32": False},  # MP:200-213
    "bf16_with_fp8_delayed_scaling_mixed": {  # MP:216-232
        "bf16": True, "grad_reduce_in_fp32": True, "fp8": "hybrid", "fp8_recipe": "delayed",
        "fp8_param_gather": True},
    "bf16_with_mxfp8_mixed": {  # MP:254-266
        "bf16": True, "grad_reduce_in_fp32": True, "fp8": "e4m3", "fp8_recipe": "mxfp8",
        "fp8_param_gather": True, "reuse_grad_buf_for_mxfp8_param_ag": True},
    "bf16_with_fp8_current_scaling_mixed": {  # MP:284-303
        "bf16": True, "grad_reduce_in_fp32": True, "fp8": "hybrid", "fp8_recipe": "tensorwise",
        "first_last_layers_bf16": True, "num_layers_at_start_in_bf16": 1,
        "num_layers_at_end_in_bf16": 1, "fp8_param_gather": True},
    "bf16_with_fp8_subchannel_scaling_mixed": {  # MP:372-385
        "bf16": True, "grad_reduce_in_fp32": True, "fp8": "hybrid", "fp8_recipe": "blockwise",
        "fp8_param_gather": False},
    "bf16_with_nvfp4_mixed": {  # MP:404-417
        "bf16": True, "grad_reduce_in_fp32": True, "fp4": "e2m1", "fp4_recipe": "nvfp4"},
}
# the recipes' checkpoints, config.json figures: (layers, hidden, heads, kv heads,
# MLP width, vocab, experts, top-k, expert width)
CHECKPOINTS = {
    "meta-llama/Meta-Llama-3-8B": (32, 4096, 32, 8, 14336, 128256, 0, 0, 0),
    "meta-llama/Meta-Llama-3-70B": (80, 8192, 64, 8, 28672, 128256, 0, 0, 0),
    "meta-llama/Meta-Llama-3.1-405B": (126, 16384, 128, 8, 53248, 128256, 0, 0, 0),
    "Qwen/Qwen3-30B-A3B": (48, 2048, 32, 4, 6144, 151936, 128, 8, 768),
    "Qwen/Qwen3-235B-A22B": (94, 4096, 64, 4, 12288, 151936, 128, 8, 1536),
    "deepseek-ai/DeepSeek-V3": (61, 7168, 128, 128, 18432, 129280, 256, 8, 2048),
}
# Megatron-LM flags of the network, which the checkpoint fixes: taken from the
# plan's own flags (megatron_check holds them to the model)
NETWORK = {"--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads",
           "--kv-channels", "--group-query-attention", "--num-query-groups",
           "--max-position-embeddings", "--swiglu", "--untie-embeddings-and-output-weights",
           "--normalization", "--position-embedding-type", "--rotary-base", "--qk-layernorm",
           "--disable-bias-linear", "--multi-latent-attention", "--q-lora-rank", "--kv-lora-rank",
           "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim", "--num-experts",
           "--moe-router-topk", "--moe-ffn-hidden-size", "--moe-layer-freq",
           "--moe-shared-expert-intermediate-size", "--moe-router-score-function",
           "--moe-router-enable-expert-bias", "--moe-router-topk-scaling-factor"}


def read_script(path):
    """parplan_config()'s assignments: {"model.x": value, ...}, the recipe."""
    tree = ast.parse(open(path).read(), path)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "parplan_config")
    recipe = next(a.names[0].name for a in tree.body
                  if isinstance(a, ast.ImportFrom) and a.names[0].asname == "recipe")
    sets, env = {}, {}
    for st in fn.body:
        if isinstance(st, ast.Expr):  # cfg.env_vars.pop("K", None)
            call = st.value
            need(ast.unparse(call.func) == "cfg.env_vars.pop", path, ast.unparse(st))
            env[call.args[0].value] = None
            continue
        if isinstance(st, ast.Return) or (isinstance(st, ast.Assign) and
                                          ast.unparse(st.targets[0]) == "cfg"):
            continue
        need(isinstance(st, ast.Assign), path, f"not an assignment: {ast.unparse(st)}")
        target = ast.unparse(st.targets[0])
        if target.startswith("cfg.env_vars["):
            env[st.targets[0].slice.value] = ast.literal_eval(st.value)
            continue
        key = target.removeprefix("cfg.")
        v = st.value
        if isinstance(v, ast.Call) and ast.unparse(v.func) == "get_mixed_precision_config":
            sets[key] = v.args[0].value
        elif isinstance(v, ast.Call) and ast.unparse(v.func) == "CommOverlapConfig":
            sets[key] = "CommOverlapConfig"
            for kw in v.keywords:
                sets[f"{key}.{kw.arg}"] = ast.literal_eval(kw.value)
        elif isinstance(v, ast.Attribute) and ast.unparse(v.value) == "AttnBackend":
            sets[key] = v.attr
        else:
            sets[key] = ast.literal_eval(v)
    return sets, env, recipe


def bridge_rules(sets, env, gpus):
    """Bridge's own checks and the settings it forces, on a copy of the fields."""
    s = dict(sets)
    g = lambda k, d=None: s.get(k, d)
    # the precision recipe, then its fields as the script sets them, then onto the
    # model, optimizer and DDP configs (MP:138-160)
    need(g("mixed_precision") in MP_RECIPES, f"{MP}:432-448", f"no recipe {g('mixed_precision')}")
    mp = dict(MP_RECIPES[g("mixed_precision")])
    mp.update({k.split(".", 1)[1]: v for k, v in s.items() if k.startswith("mixed_precision.")})
    need(not (mp.get("fp4") and mp.get("fp8")), f"{MP}:106-108", "fp4 and fp8 together")
    for key in ("grad_reduce_in_fp32", "fp8_param_gather", "reuse_grad_buf_for_mxfp8_param_ag"):
        s[f"ddp.{key}"] = mp.get(key, False)
    fsdp = g("ddp.use_megatron_fsdp") or g("dist.use_megatron_fsdp")
    if fsdp:  # CFG:1064-1115
        s["ddp.use_distributed_optimizer"] = s["optimizer.use_distributed_optimizer"] = True
        need(env.get("CUDA_DEVICE_MAX_CONNECTIONS") != "1", f"{CFG}:1100-1103",
             "FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset")
        need(g("checkpoint.ckpt_format") == "fsdp_dtensor", f"{CFG}:1096-1099",
             "Megatron-FSDP requires the fsdp_dtensor checkpointing format")
        mp["reuse_grad_buf_for_mxfp8_param_ag"] = False  # CFG:1089-1093
    elif mp.get("fp8_param_gather") and mp.get("fp8_recipe") == "mxfp8":
        need(mp.get("reuse_grad_buf_for_mxfp8_param_ag"), f"{CFG}:1342-1354",
             "mxfp8 fp8_param_gather needs reuse_grad_buf_for_mxfp8_param_ag")
    # CFG:1950-1975: the distributed optimizer and the parameter-gather overlap on
    # both configs or neither
    if g("ddp.use_distributed_optimizer") or g("optimizer.use_distributed_optimizer"):
        s["ddp.use_distributed_optimizer"] = s["optimizer.use_distributed_optimizer"] = True
    if g("ddp.overlap_param_gather") or g("optimizer.overlap_param_gather"):
        s["ddp.overlap_param_gather"] = True
    tp, pp, cp = g("model.tensor_model_parallel_size"), g("model.pipeline_model_parallel_size"), \
        g("model.context_parallel_size")
    need(gpus % (tp * pp * cp) == 0, f"{CFG}:1023-1025", "world size not divisible by tp*pp*cp")
    if cp > 1:
        need(g("model.seq_length") % (2 * cp) == 0, f"{CFG}:1430-1433",
             "sequence length divisible by 2 * cp")
        if g("model.cp_comm_type") == "a2a+p2p":
            sizes = g("model.hierarchical_context_parallel_sizes")
            need(sizes and sizes[0] * sizes[1] == cp, f"{CFG}:1538-1553",
                 "a2a+p2p's hierarchical sizes multiply to cp")
    need(g("model.seq_length") == g("dataset.seq_length"), f"{CFG}:1500-1504",
         "model and dataset sequence lengths")
    if g("optimizer.optimizer_cpu_offload"):
        # OPTC:347: the Core field defaults to 0.0, nothing offloaded, where
        # Megatron-LM's flag means all of it: the script must say
        need("optimizer.optimizer_offload_fraction" in s, f"{OPTC}:347",
             "optimizer_cpu_offload without optimizer_offload_fraction offloads nothing")
    return s, mp


def to_flags(s, mp, env, network):
    """The Megatron-LM flags of the same meaning (the inverse of what each flag sets)."""
    a = []
    g = lambda k, d=None: s.get(k, d)

    def flag(name, value=None):
        a.append(name)
        if value is not None:
            a.extend(value if isinstance(value, list) else [str(value)])

    flag("--tensor-model-parallel-size", g("model.tensor_model_parallel_size"))
    flag("--pipeline-model-parallel-size", g("model.pipeline_model_parallel_size"))
    for key, name in (("model.context_parallel_size", "--context-parallel-size"),
                      ("model.expert_model_parallel_size", "--expert-model-parallel-size")):
        if g(key, 1) > 1:
            flag(name, g(key))
    for key, name in (("model.cp_comm_type", "--cp-comm-type"),
                      ("model.expert_tensor_parallel_size", "--expert-tensor-parallel-size"),
                      ("model.virtual_pipeline_model_parallel_size",
                       "--num-virtual-stages-per-pipeline-rank"),
                      ("model.pipeline_model_parallel_layout", "--pipeline-model-parallel-layout"),
                      ("model.microbatch_group_size_per_vp_stage",
                       "--microbatch-group-size-per-virtual-pipeline-stage"),
                      ("model.num_layers_in_first_pipeline_stage",
                       "--decoder-first-pipeline-num-layers"),
                      ("model.num_layers_in_last_pipeline_stage",
                       "--decoder-last-pipeline-num-layers"),
                      ("train.micro_batch_size", "--micro-batch-size"),
                      ("train.global_batch_size", "--global-batch-size"),
                      ("model.recompute_granularity", "--recompute-granularity"),
                      ("model.recompute_method", "--recompute-method"),
                      ("model.recompute_num_layers", "--recompute-num-layers"),
                      ("model.seq_length", "--seq-length"),
                      ("model.attention_backend", "--attention-backend"),
                      ("model.rope_type", "--rope-type"),
                      ("model.mtp_num_layers", "--mtp-num-layers"),
                      ("model.moe_token_dispatcher_type", "--moe-token-dispatcher-type"),
                      ("model.moe_expert_capacity_factor", "--moe-expert-capacity-factor"),
                      ("model.moe_router_num_groups", "--moe-router-num-groups"),
                      ("model.moe_router_group_topk", "--moe-router-group-topk")):
        if g(key) is not None:
            flag(name, g(key))
    if g("model.hierarchical_context_parallel_sizes"):
        flag("--hierarchical-context-parallel-sizes",
             [str(x) for x in g("model.hierarchical_context_parallel_sizes")])
    for key, name in (("model.account_for_embedding_in_pipeline_split",
                       "--account-for-embedding-in-pipeline-split"),
                      ("model.account_for_loss_in_pipeline_split",
                       "--account-for-loss-in-pipeline-split"),
                      ("model.sequence_parallel", "--sequence-parallel"),
                      ("ddp.overlap_grad_reduce", "--overlap-grad-reduce"),
                      ("ddp.overlap_param_gather", "--overlap-param-gather"),
                      ("comm_overlap.tp_comm_overlap", "--tp-comm-overlap"),
                      ("optimizer.use_precision_aware_optimizer",
                       "--use-precision-aware-optimizer"),
                      ("optimizer.overlap_cpu_optimizer_d2h_h2d", "--overlap-cpu-optimizer-d2h-h2d"),
                      ("comm_overlap.overlap_moe_expert_parallel_comm",
                       "--overlap-moe-expert-parallel-comm"),
                      ("model.moe_grouped_gemm", "--moe-grouped-gemm")):
        if g(key):
            flag(name)
    if g("model.apply_rope_fusion") is False:
        flag("--no-rope-fusion")
    if g("model.moe_token_dispatcher_type") == "flex" and \
            g("model.moe_flex_dispatcher_backend") == "deepep":
        flag("--moe-enable-deepep")
    if g("ddp.use_megatron_fsdp"):
        flag("--use-megatron-fsdp")
        flag("--data-parallel-sharding-strategy", g("ddp.data_parallel_sharding_strategy"))
        flag("--ckpt-format", g("checkpoint.ckpt_format"))
    elif g("ddp.use_distributed_optimizer"):
        flag("--use-distributed-optimizer")
    if g("ddp.num_distributed_optimizer_instances", 1) > 1:
        flag("--num-distributed-optimizer-instances", g("ddp.num_distributed_optimizer_instances"))
    if g("optimizer.optimizer_cpu_offload"):
        flag("--optimizer-cpu-offload")
        if g("optimizer.optimizer_offload_fraction") != 1.0:
            flag("--optimizer-offload-fraction", g("optimizer.optimizer_offload_fraction"))
    if g("optimizer.optimizer") != "adam":
        flag("--optimizer", g("optimizer.optimizer"))
    if g("model.make_vocab_size_divisible_by", 128) != 128:
        flag("--make-vocab-size-divisible-by", g("model.make_vocab_size_divisible_by"))
    for key, name in (("model.attention_dropout", "--attention-dropout"),
                      ("model.hidden_dropout", "--hidden-dropout")):
        if g(key) is not None:
            flag(name, g(key))
    # the precision, from the precision config as Bridge applies it
    flag("--fp16" if mp.get("fp16") else "--bf16")
    if not mp.get("grad_reduce_in_fp32", True):
        flag("--grad-reduce-in-bf16")
    if mp.get("fp8"):
        flag("--fp8-format", mp["fp8"])
        if mp.get("fp8_recipe", "delayed") != "delayed":
            flag("--fp8-recipe", mp["fp8_recipe"])
    if mp.get("fp4"):
        flag("--fp4-format", mp["fp4"])
        flag("--fp4-recipe", mp.get("fp4_recipe", "nvfp4"))
    if mp.get("fp8_param_gather"):
        flag("--fp8-param-gather")
    if mp.get("reuse_grad_buf_for_mxfp8_param_ag"):
        flag("--reuse-grad-buf-for-mxfp8-param-ag")
    if mp.get("first_last_layers_bf16"):
        flag("--first-last-layers-bf16")
        flag("--num-layers-at-start-in-bf16", mp.get("num_layers_at_start_in_bf16", 1))
        flag("--num-layers-at-end-in-bf16", mp.get("num_layers_at_end_in_bf16", 1))
    # CUDA graphs (Bridge utils/cuda_graph.py:121-160 at v0.6.0): the whole step
    # wants the loss's NaN check off (CFG:1364-1369); "local" only for it
    impl, mods = g("model.cuda_graph_impl", "none"), g("model.cuda_graph_modules") or []
    need(impl in ("none", "transformer_engine", "full_iteration"), "utils/cuda_graph.py:134-156",
         f"cuda_graph_impl {impl}: local only for full-iteration graphs")
    if impl == "full_iteration":
        need(g("rerun_state_machine.check_for_nan_in_loss") is False, f"{CFG}:1364-1369",
             "check_for_nan_in_loss off with the full-iteration graph")
        need(not mods, "utils/cuda_graph.py:95-104", "no modules with the full-iteration graph")
        flag("--cuda-graph-impl", "local")
        flag("--cuda-graph-scope", ["full_iteration"])
        flag("--no-check-for-nan-in-loss-and-grad")
    elif impl == "transformer_engine":
        flag("--cuda-graph-impl", "transformer_engine")
        if mods:
            flag("--cuda-graph-scope", list(mods))
    a += network
    return a


def network_flags(args):
    """The plan's flags of the network (NETWORK), with their values."""
    out, i = [], 0
    while i < len(args):
        take = i + 1 < len(args) and not args[i + 1].startswith("--")
        if args[i] in NETWORK:
            out += args[i:i + 1 + take]
        i += 1 + take
    return out


def main():
    model, root, plan = arguments()
    for k, r, script in launched(plan, root, "megatron_bridge", "megatron-bridge", "--bridge",
                                 ".py"):
        launch = r["launch"]
        if script is None:
            print(f"ok {k}: not Megatron-Bridge: {launch['megatron_bridge_error']}")
            continue
        sets, env, recipe = read_script(script)
        missing = [key for key in REQUIRED if key not in sets]
        need(not missing, "script", f"left to the recipe {recipe}: {missing}")
        c = r["config"]
        s, mp = bridge_rules(sets, env, c["gpus"])
        flags = to_flags(s, mp, env, network_flags(launch["megatron_args"]))
        try:
            got = mc.build(mc.parse(flags), {name: v for name, v in env.items() if v}, c["gpus"])
        except mc.Refused as e:
            raise Refused(f"Megatron-Core: {e}")
        bad = mc.differences(got, c)
        need(not bad, "MISMATCH", f"{bad}")
        if model:
            m = model["model"]
            moe = m.get("moe") or {}
            have = (m["layers"], m["hidden"], m["heads"], m.get("kv_heads", m["heads"]),
                    m["ffn_hidden"], m["vocab"], moe.get("experts", 0), moe.get("top_k", 0),
                    moe.get("ffn_hidden", 0) if moe else 0)
            ckpt = sets["tokenizer.tokenizer_model"]
            need(CHECKPOINTS.get(ckpt) == have, "MISMATCH",
                 f"{recipe} builds {ckpt} {CHECKPOINTS.get(ckpt)}, the plan {have}")
        print(f"ok {k}: Megatron-Bridge {recipe}, dp {got['dp']}, tp {c['tp']}, "
              f"pp {c['pp']}, vp {got['vp']}, zero {got['zero']}, {got['precision']}")


if __name__ == "__main__":
    run(main)
