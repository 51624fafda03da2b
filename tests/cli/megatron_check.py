#!/usr/bin/env python3
"""megatron_check.py - what Megatron-LM would build from a plan's launch flags.

Reads a parplan plan (--json) on stdin.  For every result it derives, from
launch.megatron_args and launch.env alone, what Megatron-LM would run: data
parallelism, microbatches, the layers of each pipeline stage, interleaving,
recomputation, sequence parallelism, ZeRO stage, sharding group, optimizer
offload, optimizer, the precision of the linear layers' GEMMs (bf16, fp16, fp8,
mxfp8, nvfp4) and the context-parallel algorithm (with its all-to-all group),
applying
Megatron-LM's own argument checks (file:line at main d98e8a64dd, 2026).  Each
derived value must equal the plan's config.  Prints one line per result and
exits 1 on the first mismatch or refused flag set.  With --model (the plan's
model as `parplan model show --json` prints it), the network the flags build
is checked too: every architecture key of the model file, the parameter count
of Megatron-LM's own formula (theoretical_memory_usage.py, with what it leaves
out added) and its FLOPs per token (training.py num_floating_point_operations,
turned to parplan's stated conventions) against the plan's.  Usage:
    megatron_check.py [--model MODEL.json] < plan.json
"""
import json
import re
import sys

ARGS = "megatron/training/arguments.py"
TC = "megatron/core/transformer/transformer_config.py"
NMB = "megatron/core/num_microbatches_calculator.py"
SPECS = "megatron/core/models/gpt/gpt_layer_specs.py"
PS = "megatron/core/parallel_state.py"
MOE = "megatron/core/transformer/moe/moe_layer.py"
TMU = "megatron/training/theoretical_memory_usage.py"
VOCAB = "megatron/core/tokenizers/utils/build_tokenizer.py"
MPC = "megatron/core/model_parallel_config.py"
SCHED = "megatron/core/pipeline_parallel/schedules.py"
OPT = "megatron/core/optimizer/__init__.py"
OPTC = "megatron/core/optimizer/optimizer_config.py"
LAYOUT = "megatron/core/transformer/pipeline_parallel_layer_layout.py"
# Transformer Engine 2.x, where Megatron-Core's cp_comm_type runs
TE_CP = "transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py"
# flags that take one value or more (argparse nargs='+'): ARGS:3221 --cp-comm-type;
# --hierarchical-context-parallel-sizes, a list[int] generated from MPC:103
# --cuda-graph-scope, ARGS:2047-2049 (hidden, migrated to --cuda-graph-modules)
NARGS_PLUS = {"--cp-comm-type", "--hierarchical-context-parallel-sizes", "--cuda-graph-scope"}
CP_COMM_TYPES = ("p2p", "a2a", "allgather", "a2a+p2p")  # ARGS:3221-3226, TC:1030-1044


class Refused(Exception):
    pass


def need(cond, where, why):
    if not cond:
        raise Refused(f"{where}: {why}")


def parse(argv):
    """--flag value pairs and bare --flags, as argparse would take them."""
    flags, i = {}, 0
    while i < len(argv):
        key = argv[i]
        assert key.startswith("--"), key
        if key in NARGS_PLUS:
            j = i + 1
            while j < len(argv) and not argv[j].startswith("--"):
                j += 1
            need(j > i + 1, ARGS, f"{key} expects at least one argument")
            flags[key] = argv[i + 1:j]
            i = j
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            flags[key] = argv[i + 1]
            i += 2
        else:
            flags[key] = True
            i += 1
    return flags


def parse_layout(text):
    """LAYOUT:283-321 parse_str_to_list: "(..)*n" and "x*n" unrolled, "," dropped,
    "|" between virtual stages, one character a layer."""
    text = text.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        text = re.sub(pattern, lambda x: x.group(1) * int(x.group(2)), text)
    stages = text.split("|")
    for stage in stages:
        need(all(ch in "ELtm" for ch in stage), f"{LAYOUT}:314-318", f"layer characters in {stage!r}")
    return stages


def layout_stages(text, pp, layers, mtp):
    """The layers of each pipeline rank and vp under --pipeline-model-parallel-layout:
    ARGS:941-951 (stages divisible by pp), LAYOUT:41-52 (virtual stage v on rank
    v % pp, chunk v // pp), LAYOUT:94-131 validate_layer_layout."""
    stages = parse_layout(text)
    need(len(stages) % pp == 0, f"{ARGS}:944-949", "layout stages divisible by pp")
    vp = len(stages) // pp
    flat = "".join(stages)
    need(flat.startswith("E") and flat.endswith("L"), f"{LAYOUT}:95-100",
         "embedding first, loss last")
    need(flat.count("E") == 1 and flat.count("L") == 1, f"{LAYOUT}:103-106",
         "one embedding, one loss")
    need(flat.count("t") == layers, f"{LAYOUT}:107-110", "decoder layers = --num-layers")
    need(flat.count("m") == mtp, f"{LAYOUT}:112-115", "MTP layers = --mtp-num-layers")
    need("t" not in flat[flat.find("m"):] if "m" in flat else True, f"{LAYOUT}:116-120",
         "decoder layers before MTP")
    for v, stage in enumerate(stages):
        if "m" in stage:
            need(v // pp == vp - 1, f"{LAYOUT}:121-127", "MTP in a rank's last virtual stage")
    per_rank = [sum(stages[c * pp + r].count("t") for c in range(vp)) for r in range(pp)]
    return per_rank, vp


def build(flags, env, gpus):
    num = lambda k, d=None: int(flags[k]) if k in flags else d
    layers, heads = num("--num-layers"), num("--num-attention-heads")
    kv_heads = num("--num-query-groups", heads) if "--group-query-attention" in flags else heads
    tp, pp, cp = num("--tensor-model-parallel-size", 1), num("--pipeline-model-parallel-size", 1), \
        num("--context-parallel-size", 1)
    need(heads % tp == 0, f"{TC}:1446", "heads divisible by tp")
    need(kv_heads % tp == 0 or tp % kv_heads == 0, f"{TC}:1461-1468",
         "query groups a multiple or divisor of tp")
    # ARGS:442-448 dp = world // (tp pp cp); torchrun starts exactly `gpus` ranks
    need(gpus % (tp * pp * cp) == 0, f"{ARGS}:448", "world size divisible by tp*pp*cp")
    dp = gpus // (tp * pp * cp)
    cp_comm, cp_a2a = context_parallel(flags, cp, tp, heads, kv_heads, layers)
    mbs, gb = num("--micro-batch-size"), num("--global-batch-size")
    need(gb % (mbs * dp) == 0, f"{NMB}:381", "global batch divisible by mbs*dp")
    microbatches = gb // (mbs * dp)

    vp_layers = num("--num-layers-per-virtual-pipeline-stage")
    vp_ranks = num("--num-virtual-stages-per-pipeline-rank")
    layout = flags.get("--pipeline-model-parallel-layout")
    need((vp_layers is not None) + (vp_ranks is not None) + (layout is not None) <= 1,
         f"{ARGS}:927-939", "one virtual-pipeline flag")
    first, last = num("--decoder-first-pipeline-num-layers"), num("--decoder-last-pipeline-num-layers")
    emb = "--account-for-embedding-in-pipeline-split" in flags
    loss = "--account-for-loss-in-pipeline-split" in flags
    vp = 1
    if layout is not None:
        need(first is None and last is None and not emb and not loss, f"{TC}:2242-2259",
             "a layout excludes the first/last and account flags")
        stages, vp = layout_stages(layout, pp, layers, num("--mtp-num-layers", 0))
    elif vp_layers is not None:
        need(first is None and last is None, f"{ARGS}:955-956",
             "uneven stages need --num-virtual-stages-per-pipeline-rank")
        per_stage = (layers + emb + loss) // pp
        need(per_stage % vp_layers == 0, f"{ARGS}:972-973", "stage layers divisible by chunk")
        vp = per_stage // vp_layers
    elif vp_ranks is not None:
        vp = vp_ranks
    if layout is not None:
        pass
    elif first is not None or last is not None:
        need(not (emb or loss), f"{TC}:2229-2239", "first/last flags exclude the account flags")
        rest, mid_stages = layers, pp
        for n in (first, last):
            if n is not None:
                need(n > 0, f"{TC}:2303-2323", "an end stage needs a layer")
                need(vp == 1 or n % vp == 0, f"{TC}:2305-2335", "end stage divisible by vp")
                rest, mid_stages = rest - n, mid_stages - 1
        need(bool(rest) == bool(mid_stages), f"{TC}:2339-2344", "middle layers for middle stages")
        need(not mid_stages or rest % mid_stages == 0, f"{TC}:2348-2353", "even middle stages")
        middle = rest // mid_stages if mid_stages else 0
        need(not mid_stages or middle % vp == 0, f"{TC}:2357-2367", "middle divisible by vp")
        stages = [first if first is not None else middle] + [middle] * (pp - 2) + \
            ([last if last is not None else middle] if pp > 1 else [])
    else:
        total = layers + emb + loss
        where = f"{TC}:2370-2410" if (emb or loss) else f"{ARGS}:985-998"
        need(total % pp == 0, where, "layers (with embedding/loss) divisible by pp")
        per = total // pp
        need(vp == 1 or per % vp == 0, where, "stage layers divisible by vp")
        stages = [per] * pp
        if pp > 1:
            stages[0] -= emb
            stages[-1] -= loss
        else:
            stages[0] -= emb + loss
    need(sum(stages) == layers and min(stages) >= 1, TC, "stages hold every layer")

    # the interleaved schedule: N microbatches in a row per virtual stage, N = pp
    # unless given (MPC __post_init__); pp <= N <= m, and the last group empty or
    # of at least pp microbatches (SCHED:1160-1180)
    if vp > 1:
        group = num("--microbatch-group-size-per-virtual-pipeline-stage", pp)
        need(pp <= group <= microbatches, f"{SCHED}:1160-1169",
             "microbatch group per virtual stage within [pp, microbatches]")
        rest = microbatches % group
        need(rest == 0 or rest >= pp, f"{SCHED}:1171-1180",
             "the last microbatch group empty or of at least pp microbatches")

    gran = flags.get("--recompute-granularity")
    method = flags.get("--recompute-method")
    if gran == "selective":
        need(method is None, f"{ARGS}:1425-1428", "no recompute method with selective")
        recompute, recompute_layers = "selective", None
    elif gran == "full":
        recompute = "full"
        n = num("--recompute-num-layers")
        recompute_layers = None if method == "uniform" else n * vp
    else:
        recompute, recompute_layers = "none", None

    sp = "--sequence-parallel" in flags and tp > 1  # ARGS:1433-1439 off when tp == 1
    if "--tp-comm-overlap" in flags:
        need(sp, f"{ARGS}:1441-1442", "TP comm overlap needs sequence parallelism")
    fsdp = "--use-megatron-fsdp" in flags
    if fsdp:
        need(flags.get("--ckpt-format") == "fsdp_dtensor", f"{ARGS}:1169-1170", "fsdp_dtensor")
        need(env.get("CUDA_DEVICE_MAX_CONNECTIONS") != "1", f"{ARGS}:1166-1167",
             "FSDP with CUDA_DEVICE_MAX_CONNECTIONS unset or > 1")
        strategy = flags.get("--data-parallel-sharding-strategy", "optim_grads_params")
        zero = {"optim": 1, "optim_grads": 2, "optim_grads_params": 3}[strategy]
    else:
        zero = 1 if "--use-distributed-optimizer" in flags else 0
    if "--overlap-param-gather" in flags:
        need("--use-distributed-optimizer" in flags or fsdp, f"{ARGS}:1024-1027",
             "param gather overlap needs a sharded optimizer")
        need("--overlap-grad-reduce" in flags, f"{ARGS}:1028-1029", "with --overlap-grad-reduce")
    if (tp > 1 or cp > 1) and not fsdp:
        need(env.get("CUDA_DEVICE_MAX_CONNECTIONS") == "1", f"{ARGS}:1453-1479",
             "CUDA_DEVICE_MAX_CONNECTIONS=1 with tp or cp > 1 (before Blackwell)")
    # ARGS:1204-1216: bf16 keeps fp32 main gradients unless --grad-reduce-in-bf16
    # (ARGS:3053, first in core_v0.12.0); the flag means nothing without --bf16
    if "--grad-reduce-in-bf16" in flags:
        need("--bf16" in flags, f"{ARGS}:1213", "--grad-reduce-in-bf16 only under --bf16")
    moe = expert_layout(flags, num, gpus, tp, pp, sp)
    optimizer = flags.get("--optimizer", "adam")
    # Megatron-FSDP v1 turns the distributed optimizer on (ARGS:1129-1135)
    dist_opt = "--use-distributed-optimizer" in flags or fsdp
    shard, offload = sharding(flags, num, dp, cp, dist_opt, optimizer, moe)
    precision = precision_of(flags)
    fp8 = {}
    if precision == "fp8":
        fp8["fp8_recipe"] = flags.get("--fp8-recipe", "delayed")  # TC:594-596
    fp8_params(flags, precision, dist_opt, offload)
    bf16 = None
    if "--first-last-layers-bf16" in flags:
        recipe = flags.get("--fp8-recipe", "delayed")
        # TC:1528-1530: "Delayed scaling does not support first / last layer in BF16."
        need(recipe != "delayed", f"{TC}:1528-1530", "bf16 first/last layers without delayed scaling")
        start = num("--num-layers-at-start-in-bf16", 1)  # TC:652, default 1
        end = num("--num-layers-at-end-in-bf16", 1)  # TC:656, default 1
        most = num("--num-layers") // pp  # TC:1533-1535
        need(0 <= start <= most and 0 <= end <= most, f"{TC}:1538-1556",
             "bf16 layers at each end within the layers per pipeline stage")
        need(start == end, "parplan", "the same number of bf16 layers at both ends")
        bf16 = start
    graphs = graphs_of(flags, recompute, "--num-experts" in flags)
    return {**moe, "cuda_graphs": graphs, "dp": dp, "shard_group": shard, "offload_optimizer": offload, "microbatches": microbatches, "stage_layers": stages, "vp": vp,
            "recompute": recompute, "recompute_layers": recompute_layers,
            "sequence_parallel": sp, "zero": zero, "optimizer": optimizer, "tp": tp, "pp": pp,
            "cp": cp, "mbs": mbs, "global_batch": gb, "cp_comm": cp_comm, "cp_a2a": cp_a2a,
            "precision": precision, **fp8, "bf16_layers": bf16}


# parplan's names of the CUDA graph scopes it costs, by the modules listed
GRAPH_SCOPES = {(): "layer", ("attn",): "attn", ("moe_preprocess", "moe_router"): "moe_router",
                ("attn", "moe_preprocess", "moe_router"): "attn+moe_router"}


def graphs_of(flags, recompute, moe):
    """What the flags capture in CUDA graphs (None: nothing), as Megatron-Core takes
    them at main: --cuda-graph-scope migrated to --cuda-graph-modules, and
    full_iteration under --cuda-graph-impl local to --cuda-graph-impl full_iteration
    (ARGS:263-294); TC:2778-2858 the rules."""
    impl = flags.get("--cuda-graph-impl", "none")
    need(impl in ("none", "local", "transformer_engine", "full_iteration"), f"{TC}:2778-2783",
         "a --cuda-graph-impl Megatron knows")
    mods = flags.get("--cuda-graph-scope", [])
    if impl == "none":
        need(not mods, "parplan", "a --cuda-graph-scope without --cuda-graph-impl")
        return None
    if impl == "local" and "full_iteration" in mods:  # the migration, ARGS:263-294
        need(mods == ["full_iteration"], "parplan", "full_iteration alone")
        impl, mods = "full_iteration", []
    if impl == "full_iteration":
        need("--no-check-for-nan-in-loss-and-grad" in flags, f"{ARGS}:1235-1237",
             "--no-check-for-nan-in-loss-and-grad with the whole-step graph")
        return "iteration"
    need(impl == "transformer_engine", "parplan", "per-layer graphs by Transformer Engine")
    need("moe_preprocess" not in mods or "moe_router" in mods, f"{TC}:2820-2824",
         "moe_preprocess only with moe_router")
    need(moe or "moe_router" not in mods, f"{TC}:2825-2829", "moe cuda graph only for MoE")
    need(recompute != "full", f"{TC}:2853-2858",
         "full recompute only with the full iteration CUDA graph")
    scope = GRAPH_SCOPES.get(tuple(sorted(mods)))
    need(scope is not None, "parplan", f"CUDA graph modules parplan costs, not {mods}")
    need(scope != "layer" or not moe, "parplan", "whole MoE layers graphed need drop-padding")
    return scope


def precision_of(flags):
    """The precision the linear layers' GEMMs run in, as Megatron-LM takes the flags."""
    fp8, fp4 = flags.get("--fp8-format"), flags.get("--fp4-format")
    # ARGS:1100-1101 and TC:1581-1582: fp4 and fp8 exclude each other
    need(not (fp8 and fp4), f"{ARGS}:1100-1101", "--fp4-format and --fp8-format together")
    if fp8:
        need(fp8 in ("e4m3", "hybrid"), f"{TC}:587", "--fp8-format e4m3 or hybrid")
        recipe = flags.get("--fp8-recipe", "delayed")  # TC:594-596, default delayed
        need(recipe in ("tensorwise", "delayed", "mxfp8", "blockwise", "custom"), f"{TC}:594",
             "an --fp8-recipe Megatron knows")
        return "mxfp8" if recipe == "mxfp8" else "fp8"
    need("--fp8-recipe" not in flags or fp8, f"{TC}:594", "--fp8-recipe without --fp8-format")
    need("--first-last-layers-bf16" not in flags, f"{TC}:1528-1556",
         "bf16 first/last layers are an fp8 option")
    if fp4:
        need(fp4 == "e2m1", f"{TC}:673", "--fp4-format e2m1")
        recipe = flags.get("--fp4-recipe", "nvfp4")  # TC:679, default nvfp4
        need(recipe == "nvfp4", f"{TC}:679", "--fp4-recipe nvfp4 (custom needs a factory)")
        return "nvfp4"
    need("--fp4-recipe" not in flags, f"{TC}:679", "--fp4-recipe without --fp4-format")
    return "fp16" if "--fp16" in flags else "bf16"


DDPC = "megatron/core/distributed/distributed_data_parallel_config.py"


def fp8_params(flags, precision, dist_opt, offload):
    """--fp8-param-gather (the fp8 weights kept alone and gathered in fp8) and the
    mxfp8 gradient-buffer reuse, refused where Megatron-Core refuses them."""
    on = "--fp8-param-gather" in flags
    if on:
        need(dist_opt, f"{ARGS}:1095-1097",
             "--fp8-param-gather only with the distributed optimizer or Megatron-FSDP")
        need(precision in ("fp8", "mxfp8"), "parplan", "--fp8-param-gather with an fp8 format")
        need(offload is None or flags.get("--fp8-recipe", "delayed") == "delayed",
             f"{ARGS}:1889-1892", "--fp8-param-gather with the optimizer offloaded needs "
             "--fp8-recipe delayed")
    if "--reuse-grad-buf-for-mxfp8-param-ag" in flags:
        need(on, f"{DDPC}:259-260", "the gradient buffer reused only with --fp8-param-gather")
    return on


# the oldest Megatron-Core release that takes a flag: --fp8-recipe (mxfp8) at
# core_v0.12.0 arguments.py:1057-1058, --fp4-format/--fp4-recipe at core_v0.15.0
# arguments.py:1353-1360, --grad-reduce-in-bf16 at core_v0.12.0,
# --reuse-grad-buf-for-mxfp8-param-ag at core_v0.13.0 (absent from core_v0.12.0's),
# --pipeline-model-parallel-layout at core_v0.13.0 (commit 77732c36)
# The first core_vX.Y.0 release whose megatron/training/arguments.py takes each flag
# parplan emits (read from the tags core_v0.9.0 to core_v0.19.0 and main: the
# literal flag in arguments.py; flags in core_v0.9.0 and every launch's core_v0.11
# floor are left out).  --rope-type: core_v0.11-0.13 have rope_type only as an
# MLATransformerConfig field, the flag at core_v0.14.0 (arguments.py:1950).
FLAG_SINCE = {
    **{f: 10 for f in ("--cp-comm-type", "--expert-tensor-parallel-size",
                       "--hierarchical-context-parallel-sizes", "--kv-lora-rank",
                       "--microbatch-group-size-per-virtual-pipeline-stage",
                       "--moe-ffn-hidden-size", "--moe-layer-freq",
                       "--moe-shared-expert-intermediate-size", "--multi-latent-attention",
                       "--num-distributed-optimizer-instances", "--q-lora-rank",
                       "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim")},
    **{f: 11 for f in ("--account-for-embedding-in-pipeline-split",
                       "--account-for-loss-in-pipeline-split", "--attention-backend",
                       "--moe-router-enable-expert-bias", "--moe-router-group-topk",
                       "--moe-router-num-groups", "--moe-router-score-function",
                       "--moe-router-topk-scaling-factor",
                       "--num-virtual-stages-per-pipeline-rank",
                       "--use-precision-aware-optimizer")},
    **{f: 12 for f in ("--data-parallel-sharding-strategy", "--first-last-layers-bf16",
                       "--fp8-recipe", "--grad-reduce-in-bf16", "--moe-enable-deepep",
                       "--mtp-num-layers", "--num-layers-at-end-in-bf16",
                       "--num-layers-at-start-in-bf16", "--optimizer-cpu-offload",
                       "--optimizer-offload-fraction", "--overlap-cpu-optimizer-d2h-h2d")},
    **{f: 13 for f in ("--pipeline-model-parallel-layout",
                       "--reuse-grad-buf-for-mxfp8-param-ag")},
    **{f: 14 for f in ("--overlap-moe-expert-parallel-comm", "--rope-type",
                       "--use-megatron-fsdp")},
    **{f: 15 for f in ("--fp4-format", "--fp4-recipe", "--cuda-graph-impl")},
}
# flag values newer than their flag: --fp8-recipe blockwise at core_v0.13.0
# (transformer_config.py fp8_recipe: "tensorwise" at core_v0.12.0, "blockwise" at 0.13)
VALUE_SINCE = {("--fp8-recipe", "blockwise"): 13}
# --cuda-graph-scope took one of full, attn (core_v0.13.0), full_iteration (0.14.0);
# a list with the MoE scopes from core_v0.16.0 (arguments.py:1430)
SCOPE_LIST_SINCE = 16


def sharding(flags, num, dp, cp, dist_opt, optimizer, moe):
    """The sharding group (None: every rank) and the offloaded optimizer share
    (None: none) the flags build, refusing what Megatron-Core refuses."""
    k = num("--num-distributed-optimizer-instances", 1)  # ARGS:3216 default 1
    shard = None
    if k > 1:
        need((dp * cp) % k == 0, f"{PS}:922-926", "dp*cp divisible by the optimizer instances")
        # the inter-instance all-reduce runs only under the distributed optimizer
        # (megatron/core/distributed/param_and_grad_buffer.py:734-738)
        need(dist_opt, "megatron/core/distributed/param_and_grad_buffer.py:734-738",
             "optimizer instances shard only the distributed optimizer")
        if "ep" in moe:
            edp = dp * cp * num("--tensor-model-parallel-size", 1) // (moe["etp"] * moe["ep"])
            need(edp % k == 0, f"{PS}:1447-1450", "expert dp divisible by the optimizer instances")
        need(dp % k == 0, f"{PS}:922-929", "parplan's groups are whole dp ranks x cp")
        shard = dp // k
    offload = None
    if "--optimizer-cpu-offload" in flags:
        need("--use-precision-aware-optimizer" in flags, f"{ARGS}:1884-1888",
             "CPU offload with --use-precision-aware-optimizer")
        need(dist_opt, f"{OPT}:1057-1060", "precision-aware optimizer only with the distributed "
             "optimizer")
        need(optimizer == "adam", f"{OPTC}:434-436", "precision-aware optimizer only with adam")
        offload = float(flags.get("--optimizer-offload-fraction", 1.0))  # ARGS:2922 default 1
        need(0.0 < offload <= 1.0, f"{ARGS}:2922-2923", "an offload fraction in (0, 1]")
    else:
        need("--optimizer-offload-fraction" not in flags, f"{ARGS}:2922",
             "the fraction means nothing without --optimizer-cpu-offload")
    return shard, offload


def context_parallel(flags, cp, tp, heads, kv_heads, layers):
    """The CP algorithm and all-to-all group Megatron-Core runs (None, None without
    cp > 1), refusing what its argument checks and Transformer Engine refuse."""
    seq = int(flags["--seq-length"]) if "--seq-length" in flags else None
    if cp > 1 and seq is not None:
        need(seq % (2 * cp) == 0, f"{ARGS}:1335-1337", "seq-length a multiple of 2 * cp")
    types = flags.get("--cp-comm-type", ["p2p"])  # ARGS:3221 default ["p2p"]
    sizes = flags.get("--hierarchical-context-parallel-sizes")
    sizes = [int(x) for x in sizes] if sizes is not None else None
    for t in types:
        need(t in CP_COMM_TYPES, f"{ARGS}:3221-3226", f"cp comm type {t!r} unknown")
    # TC:3103-3108: a list gives one type per layer
    need(len(types) in (1, layers), f"{TC}:3103-3108", "one cp comm type, or one per layer")
    if sizes is not None:
        prod = 1
        for n in sizes:
            prod *= n
        need(cp == prod, f"{ARGS}:580-582", "context-parallel size the product of the "
             "hierarchical sizes")
    if "a2a+p2p" in types:
        need(sizes is not None, f"{ARGS}:583-585",
             "--hierarchical-context-parallel-sizes must be set when a2a+p2p is used")
    if cp <= 1:
        return None, None
    need(len(set(types)) == 1, TC, "parplan plans one cp comm type for all layers")
    kind = types[0]
    # TE_CP AttnFuncWithCPAndQKVOA2A.forward: each TP rank's query and key/value
    # heads (one when tp exceeds the groups: replicated) divisible by the a2a group
    a2a = cp if kind == "a2a" else sizes[0] if kind == "a2a+p2p" else None
    if a2a is not None:
        q, kv = heads // tp, max(kv_heads // tp, 1)
        need(q % a2a == 0 and kv % a2a == 0, f"{TE_CP} (AttnFuncWithCPAndQKVOA2A)",
             f"{q} query and {kv} key/value heads per TP rank divisible by the a2a group {a2a}")
    return kind, (sizes[0] if kind == "a2a+p2p" else None)


def expert_layout(flags, num, gpus, tp, pp, sp):
    """ep and etp as Megatron-Core folds a stage's ranks for MoE layers."""
    experts = num("--num-experts")
    ep = num("--expert-model-parallel-size", 1)
    etp = num("--expert-tensor-parallel-size")
    if experts is None:
        need(ep == 1, f"{TC}:1595-1596", "expert parallelism needs --num-experts")
        return {}
    if etp is None:  # ARGS:587-588
        etp = tp
    need(experts % ep == 0, f"{ARGS}:1655-1658", "experts a multiple of ep")
    # PS:873-884: world_size divisible by etp * ep * pp, the expert decomposition
    need(gpus % (etp * ep * pp) == 0, f"{PS}:873-884",
         "world size divisible by expert tp x ep x pp")
    # bias linear is on unless --disable-bias-linear (ARGS add_bias_linear)
    need("--disable-bias-linear" in flags or etp == 1, f"{TC}:2612-2615",
         "bias in MoE only with expert tensor parallel size 1")
    need(tp == 1 or sp, f"{MOE}:636-640", "MoE with tensor parallelism needs sequence parallelism")
    moe_rules(flags, num, experts, ep, pp)
    return {"ep": ep, "etp": etp}


def moe_rules(flags, num, experts, ep, pp):
    """Megatron-Core's checks of the MoE flags parplan emits."""
    layers = num("--num-layers")
    freq = flags.get("--moe-layer-freq")
    if freq is not None and "[" in str(freq):
        # ARGS:245-253 evaluates a list expression of digits, brackets, + and *
        need(re.fullmatch(r"[,\d\[\]\(\)\+\*]+", freq), f"{ARGS}:245-253", "pattern characters")
        pattern = eval(freq)  # noqa: S307 (the same characters Megatron evaluates)
        need(len(pattern) == layers, f"{SPECS}:651-657", "one pattern entry per layer")
        need(set(pattern) <= {0, 1}, f"{SPECS}:665-671", "0 (dense) or 1 (MoE) entries")
    dispatcher = flags.get("--moe-token-dispatcher-type", "allgather")
    if "--moe-enable-deepep" in flags:
        need(dispatcher == "flex", f"{TC}:1743-1745", "DeepEP only with the flex dispatcher")
    if "--moe-router-group-topk" in flags:
        groups = num("--moe-router-num-groups")
        need(groups, f"{TC}:2678-2681", "group-limited routing needs the number of groups")
        need(experts % groups == 0, f"{TC}:2682-2685", "experts divisible by router groups")
        need(num("--moe-router-group-topk") <= groups, f"{TC}:2686-2689", "group top-k <= groups")
    if "--moe-expert-capacity-factor" in flags:
        balance = flags.get("--moe-router-load-balancing-type", "aux_loss")
        need(balance in ("aux_loss", "seq_aux_loss", "global_aux_loss", "none"),
             f"{TC}:1836-1860", "capacity factor only with aux-loss or no load balancing")
    if "--multi-latent-attention" in flags:
        need("--group-query-attention" not in flags, f"{ARGS}:1973-1974", "MLA excludes GQA")
    if "--overlap-moe-expert-parallel-comm" in flags:
        need(pp == 1 or "--num-virtual-stages-per-pipeline-rank" in flags
             or "--num-layers-per-virtual-pipeline-stage" in flags,
             f"{TC}:3007-3011", "EP A2A overlap with pp > 1 needs a virtual pipeline")
        need(ep > 1, f"{TC}:3013-3015", "EP A2A overlap needs expert parallelism")
        need(dispatcher in ("alltoall", "flex"), f"{TC}:3016-3019", "alltoall or flex dispatcher")
        need(flags.get("--recompute-granularity") != "full", f"{TC}:3021-3023",
             "no full recomputation with EP A2A overlap")
        need("--bf16" in flags or "--fp16" in flags, f"{TC}:3035-3037", "bf16 or fp16")
        need(num("--mtp-num-layers", 0) <= 1, f"{TC}:3042-3046", "at most one MTP layer")


def padded_vocab(vocab, flags, tp):
    """VOCAB:133-145 vocab_size_with_padding: up to a multiple of
    make_vocab_size_divisible_by (ARGS:2441, default 128) x tp."""
    multiple = int(flags.get("--make-vocab-size-divisible-by", 128)) * tp
    return -(-vocab // multiple) * multiple


def architecture(flags, vocab):
    """The network the flags build, in the model file's terms (ARGS defaults at
    main), given the tokenizer's vocabulary."""
    num = lambda k, d=None: int(flags[k]) if k in flags else d
    h, layers, heads = num("--hidden-size"), num("--num-layers"), num("--num-attention-heads")
    need(h and layers and heads and "--ffn-hidden-size" in flags, ARGS,
         "the model's size given, not Megatron's defaults")
    mla = "--multi-latent-attention" in flags
    position = {"learned_absolute": "learned", "rope": "rope", "none": "none"}.get(
        flags.get("--position-embedding-type", "learned_absolute"), "other")  # ARGS:2397-2399
    if mla and position == "rope":
        # MLA takes YaRN unless --rope-type rope (TC:3306), and refuses the rope
        # fusion, on by default (ARGS:2902-2905), without YaRN (TC:3345-3346)
        need(flags.get("--rope-type") == "rope", f"{TC}:3306", "MLA with plain RoPE: --rope-type rope")
        need("--no-rope-fusion" in flags, f"{TC}:3345-3346", "MLA RoPE fusion only under YaRN")
    a = {
        "layers": layers, "hidden": h, "heads": heads,
        "kv_heads": num("--num-query-groups", heads) if "--group-query-attention" in flags else heads,
        # ARGS:1331-1333: kv_channels defaults to hidden / heads
        "head_dim": num("--kv-channels", h // heads),
        "ffn_hidden": num("--ffn-hidden-size"),
        "vocab": padded_vocab(vocab, flags, num("--tensor-model-parallel-size", 1)),
        "gated_mlp": "--swiglu" in flags,
        "tied_embeddings": "--untie-embeddings-and-output-weights" not in flags,
        "bias": "--disable-bias-linear" not in flags,
        "norm": "rmsnorm" if flags.get("--normalization") == "RMSNorm" else "layernorm",
        "position_embedding": position,
        # ARGS:2418 --rotary-base, default 10000 (the model file's null)
        "rope_theta": float(num("--rotary-base", 10000)) if position == "rope" else None,
        "qk_norm": "--qk-layernorm" in flags,
        # Megatron's GPT ends in a norm and has none after the embedding
        "final_norm": True, "embedding_norm": False,
        "dropout": not (float(flags.get("--attention-dropout", 0.1)) == 0.0 and
                        float(flags.get("--hidden-dropout", 0.1)) == 0.0),
        "mtp_layers": num("--mtp-num-layers", 0),
        "max_positions": num("--max-position-embeddings"),
    }
    if mla:
        a["attention"] = {"type": "mla", "q_lora_rank": num("--q-lora-rank", 0),
                          "kv_lora_rank": num("--kv-lora-rank"),
                          "qk_nope_head_dim": num("--qk-head-dim"),
                          "qk_rope_head_dim": num("--qk-pos-emb-head-dim"),
                          "v_head_dim": num("--v-head-dim")}
    experts = num("--num-experts")
    if experts:
        freq = flags.get("--moe-layer-freq", "1")
        pattern = eval(freq) if "[" in freq else [int(i % int(freq) == 0) for i in range(layers)]  # noqa: S307
        first = pattern.index(1)
        moe_at = [i for i, x in enumerate(pattern) if x]
        every = moe_at[1] - moe_at[0] if len(moe_at) > 1 else 1
        need(pattern == [0] * first + [int((i - first) % every == every - 1 or every == 1)
                                        for i in range(first, layers)],
             "parplan", "MoE layers the model file can state (first dense, then every n-th)")
        moe_ffn = num("--moe-ffn-hidden-size", a["ffn_hidden"])  # ARGS:1650
        shared = num("--moe-shared-expert-intermediate-size", 0)
        cf = flags.get("--moe-expert-capacity-factor")
        a["moe"] = {"experts": experts, "top_k": num("--moe-router-topk", 2),
                    "ffn_hidden": moe_ffn, "every": every, "first_dense_layers": first,
                    "shared_total": shared,
                    "capacity_factor": float(cf) if cf is not None else None,
                    # TC:804-821 and their flags' defaults
                    "router_score": flags.get("--moe-router-score-function", "softmax"),
                    "router_expert_bias": "--moe-router-enable-expert-bias" in flags,
                    "router_topk_scale": float(flags.get("--moe-router-topk-scaling-factor", 1.0))}
        a["pattern"] = pattern
    return a


def megatron_params(a):
    """TMU:12-180 (compute_weight_and_optimizer_memory) num_total_parameters for
    the architecture a, then what that formula leaves out: the linear layers'
    biases, learned positions, the q/k norms and the MTP modules' projection and
    norms.  The result is every weight the flags build."""
    h, L = a["hidden"], a["layers"]
    norm_size = 2 if a["norm"] == "layernorm" else 1  # TMU:61
    glu = 1.5 if a["gated_mlp"] else 1.0
    d, heads, g = a["head_dim"], a["heads"], a["kv_heads"]
    m = a.get("attention")
    if m:  # TMU:63-79
        qk = m["qk_nope_head_dim"] + m["qk_rope_head_dim"]
        q = (m["q_lora_rank"] * (h + heads * qk + norm_size) if m["q_lora_rank"]
             else h * heads * qk)
        attn = (q + m["kv_lora_rank"] * (h + heads * (m["qk_nope_head_dim"] + m["v_head_dim"])
                                         + norm_size)
                + h * m["qk_rope_head_dim"] + heads * m["v_head_dim"] * h)
    else:  # TMU:80-93, with kv_channels (query_projection_to_hidden_size_ratio)
        attn = 2 * h * h * (1 + g / heads) * (d * heads / h)
    embedding = h * a["vocab"] * (1 if a["tied_embeddings"] else 2)  # TMU:95-100
    dense = attn + 2 * h * a["ffn_hidden"] * glu + 2 * h * norm_size  # TMU:102-139
    moe = a.get("moe")
    pattern = a.get("pattern", [0] * L)
    if moe:
        moe_layer = (attn + 2 * h * moe["shared_total"] * glu
                     + 2 * h * moe["ffn_hidden"] * moe["experts"] * glu + 2 * h * norm_size
                     + h * moe["experts"] + (moe["experts"] if a["bias"] else 0))
    n_moe = sum(pattern)
    total = dense * (L - n_moe) + (moe_layer * n_moe if moe else 0) + norm_size * h
    mtp_layer = moe_layer if moe and pattern[-1] else dense  # TMU:50-53
    total += a["mtp_layers"] * mtp_layer + embedding
    # left out by TMU: biases (QKV, projection, fc1, fc2 of every MLP and expert)
    layers_all = L + a["mtp_layers"]
    if a["bias"] and not m:
        fc = lambda f: f * (2 if a["gated_mlp"] else 1) + h
        per_attn = heads * d + 2 * g * d + h
        total += layers_all * per_attn + (L - n_moe) * fc(a["ffn_hidden"])
        if moe:
            shared = fc(moe["shared_total"]) if moe["shared_total"] else 0
            total += n_moe * (moe["experts"] * fc(moe["ffn_hidden"]) + shared)
    if a["position_embedding"] == "learned":
        total += a["max_positions"] * h
    if a["qk_norm"]:  # q_layernorm, k_layernorm of head_dim each
        total += layers_all * 2 * d * norm_size
    # each MTP module's eh_proj (2h x h, no bias) and enorm, hnorm, final_layernorm
    # (megatron/core/transformer/multi_token_prediction.py:1157-1181, 1247)
    total += a["mtp_layers"] * (2 * h * h + 3 * norm_size * h)
    return total


TRAINING = "megatron/training/training.py"


def megatron_flops(a, s):
    """TRAINING:802-1310 num_floating_point_operations (transformer_flops, BSHD),
    per token: the model FLOPs of a training step over batch x s tokens."""
    h, heads, g, d = a["hidden"], a["heads"], a["kv_heads"], a["head_dim"]
    fe = 3 if a["gated_mlp"] else 2  # ffn_expansion_factor
    pattern = a.get("pattern", [0] * a["layers"])
    mtp = a["mtp_layers"]
    n_moe = sum(pattern) + (pattern[-1] * mtp if a.get("moe") else 0)
    n_dense = a["layers"] + mtp - n_moe
    layers = a["layers"] + mtp
    m = a.get("attention")
    if m:  # the MLA terms, +1 for each latent's norm
        qk = m["qk_nope_head_dim"] + m["qk_rope_head_dim"]
        q = (m["q_lora_rank"] * (h + heads * qk + 1) if m["q_lora_rank"] else h * heads * qk)
        attn = 6 * (q + m["kv_lora_rank"] * (h + heads * (m["qk_nope_head_dim"] + m["v_head_dim"]) + 1)
                    + h * m["qk_rope_head_dim"] + heads * m["v_head_dim"] * h)
        core = 6 * (heads * qk / 2 + heads * m["v_head_dim"] / 2)
    else:
        attn = 6 * (h * (heads * d + 2 * g * d) + heads * d * h)
        core = 6 * heads * d / 2 * 2  # causal: half of QK^T and of (QK^T)V
    moe = a.get("moe") or {"ffn_hidden": 0, "top_k": 0, "shared_total": 0}
    mlp = 6 * h * (a["ffn_hidden"] * fe * n_dense
                   + moe["ffn_hidden"] * moe["top_k"] * fe * n_moe
                   + moe["shared_total"] * fe * n_moe)
    return (mlp + attn * layers + 6 * mtp * (3 * h + 2 * h * h)
            + 6 * h * a["vocab"] * (mtp + 1) + s * core * layers), core * s * layers


def parplan_flops(a, s):
    """Megatron's FLOPs per token turned to parplan's conventions, each a stated
    difference: parplan counts every key of the attention (Korthikanti Eq.7; Megatron
    halves it for the causal mask) and the router's h x E GEMM, and no norm
    (Megatron counts the MTP modules' three norms and MLA's two latent norms as
    FMAs)."""
    meg, core = megatron_flops(a, s)
    h, mtp = a["hidden"], a["mtp_layers"]
    pattern = a.get("pattern", [0] * a["layers"])
    out = meg + core
    if a.get("moe"):
        n_moe = sum(pattern) + pattern[-1] * mtp
        out += 6 * h * a["moe"]["experts"] * n_moe
    out -= 6 * mtp * 3 * h
    m = a.get("attention")
    if m:
        out -= 6 * (m["q_lora_rank"] + m["kv_lora_rank"]) * (a["layers"] + mtp)
    return out


def identity(flags, model, seq_len, note=""):
    """Where the network the flags build differs from the planned model ({} when
    it does not): every architecture key of the model file, and the parameter
    count by Megatron's formula against `model show`'s."""
    mm = model["model"]
    a = architecture(flags, mm["vocab"])
    bad = {}
    # padding no flag avoids (tp does not divide the vocabulary), stated by the
    # launch: those rows of embedding (and untied output) are the one difference
    if a["vocab"] != mm["vocab"] and f"from {mm['vocab']} to {a['vocab']} rows" in (note or ""):
        a["vocab"] = mm["vocab"]
    for key in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "gated_mlp",
                "tied_embeddings", "bias", "norm", "position_embedding", "qk_norm",
                "final_norm", "embedding_norm", "dropout", "mtp_layers"):
        if a[key] != mm.get(key, False if key == "qk_norm" else None):
            bad[key] = (a[key], mm.get(key))
    # head_dim is not in model show: the parameter count below checks it
    if a["position_embedding"] == "rope" and a["rope_theta"] != (mm.get("rope_theta") or 10000.0):
        bad["rope_theta"] = (a["rope_theta"], mm.get("rope_theta"))
    if a["position_embedding"] == "learned" and a["max_positions"] < seq_len:
        bad["max_positions"] = (a["max_positions"], seq_len)
    if (a.get("attention") or None) != mm.get("attention"):
        bad["attention"] = (a.get("attention"), mm.get("attention"))
    want_moe = mm.get("moe")
    if bool(a.get("moe")) != bool(want_moe):
        bad["moe"] = (a.get("moe"), want_moe)
    elif want_moe:
        got = a["moe"]
        for key in ("experts", "top_k", "ffn_hidden", "every", "first_dense_layers",
                    "capacity_factor", "router_score", "router_expert_bias", "router_topk_scale"):
            if got[key] != want_moe.get(key):
                bad["moe." + key] = (got[key], want_moe.get(key))
        shared = want_moe["shared_experts"] * want_moe["shared_ffn_hidden"]
        if got["shared_total"] != shared:
            bad["moe.shared"] = (got["shared_total"], shared)
    params = megatron_params(a)
    if params != model["params"]:
        bad["params"] = (params, model["params"])
    # model show's FLOPs are at the model's own sequence length
    flops, want = parplan_flops(a, mm["seq_len"]), model["flops_per_token"]["training"]
    if abs(flops - want) > 1e-9 * want:
        bad["flops_per_token"] = (flops, want)
    return bad


def model_refused(error, model):
    """Whether megatron_error names what Megatron-LM cannot build of the model."""
    mm = model["model"]
    return (mm["position_embedding"] == "alibi" and "no ALiBi" in error) or \
        (mm["embedding_norm"] and "no norm after the embedding" in error)


def differences(got, c):
    """What the derived run `got` has that the plan's config `c` does not."""
    want = {k: c.get(k) for k in got}  # cp_comm, cp_a2a: absent with cp 1
    if "etp" in got and "etp" not in c:
        want["etp"] = c["tp"]  # a plan older than etp: experts split as tp
    want["sequence_parallel"] = c["sequence_parallel"] and c["tp"] > 1
    # absent: every rank shards (shard_group), nothing offloaded
    want["shard_group"] = c.get("shard_group")
    want["offload_optimizer"] = c.get("offload_optimizer")
    if c["recompute"] != "full":
        want["recompute_layers"] = None
    return {k: (got[k], want[k]) for k in got if got[k] != want[k]}


def main():
    args = sys.argv[1:]
    model = None
    if args[:1] == ["--model"] and len(args) == 2:
        with open(args[1]) as f:
            model = json.load(f)
    plan = json.load(sys.stdin)
    status = 0
    for r in plan["results"]:
        c = r["config"]
        launch = r["launch"]
        if launch["megatron_args"] is None:
            # GPipe and the schedules of pipeline.h: Megatron-LM runs 1F1B only;
            # or a model it cannot build
            ok = (c["schedule"] not in ("1f1b", "interleaved") and
                  "Megatron-LM has no" in launch["megatron_error"]) or \
                (model is not None and model_refused(launch["megatron_error"], model))
            print(f"{'ok' if ok else 'MISMATCH'} rank {r['rank']}: no flags ({launch['megatron_error']})")
            status |= not ok
            continue
        try:
            got = build(parse(launch["megatron_args"]), launch["env"], c["gpus"])
        except Refused as e:
            print(f"REFUSED rank {r['rank']}: {e}")
            return 1
        v = launch["megatron_lm"]
        minor = int(v.split(".")[1]) if v.startswith("core_v0.") else 99
        for flag, since in FLAG_SINCE.items():
            if flag in launch["megatron_args"] and minor < since:
                print(f"REFUSED rank {r['rank']}: {flag} needs core_v0.{since}, not {v}")
                return 1
        args = launch["megatron_args"]
        # MTP with context parallelism: refused before core_v0.14 (arguments.py:963
        # at core_v0.12.0, 1075 at core_v0.13.0)
        if "--mtp-num-layers" in args and c.get("cp", 1) > 1 and minor < 14:
            print(f"REFUSED rank {r['rank']}: MTP with cp > 1 needs core_v0.14, not {v}")
            return 1
        for (flag, value), since in VALUE_SINCE.items():
            pairs = zip(args, args[1:])
            if (flag, value) in pairs and minor < since:
                print(f"REFUSED rank {r['rank']}: {flag} {value} needs core_v0.{since}, not {v}")
                return 1
        if "--cuda-graph-scope" in args:
            mods = parse(args)["--cuda-graph-scope"]
            if (len(mods) > 1 or mods[0].startswith("moe")) and minor < SCOPE_LIST_SINCE:
                print(f"REFUSED rank {r['rank']}: --cuda-graph-scope {' '.join(mods)} needs "
                      f"core_v0.{SCOPE_LIST_SINCE}, not {v}")
                return 1
        bad = differences(got, c)
        if model is not None:
            try:
                bad.update(identity(parse(args), model, plan.get("seq_len", 0),
                                    launch.get("megatron_note")))
            except Refused as e:
                print(f"REFUSED rank {r['rank']}: {e}")
                return 1
        print(f"{'MISMATCH' if bad else 'ok'} rank {r['rank']}: {bad if bad else 'as planned'}")
        status |= bool(bad)
    return status


if __name__ == "__main__":
    sys.exit(main())
