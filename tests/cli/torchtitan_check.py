#!/usr/bin/env python3
"""torchtitan_check.py - what torchtitan v0.2.2 would run from a plan's job TOML.

Reads a parplan plan (--json) on stdin.  For every result whose launch carries a
torchtitan job, it writes the job TOML with scripts/launch-megatron --torchtitan,
reads it back with tomllib as torchtitan does (config/manager.py:81), and applies
torchtitan's own rules (file:line at tag v0.2.2, 2026-02-20) to the TOML alone:
only JobConfig's fields, the parallel degrees against the world, the batch, the
pipeline's stages and schedule, converters, the expert-parallel mesh.  From the
TOML it then derives what would run (dp, sharding, microbatches, each stage's
layers, vp, recomputation, precision, the CP rotation) and requires the plan's
config.  With --model (`parplan model show --json` of the plan's model), the
flavor's network is checked too: its figures as torchtitan's registry gives them
(transcribed here with file:line) equal the model's keys, and the parameter count
of the modules torchtitan builds equals model show's.  Results without a job
must say why (torchtitan_error).  Prints one line per result; exits 1 on the
first mismatch or refusal.  Usage:
    torchtitan_check.py [--model MODEL.json] ROOT < plan.json
"""
import os
import sys
import tomllib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_results import arguments, launched, need, run  # noqa: E402

JC = "torchtitan/config/job_config.py"
MGR = "torchtitan/config/manager.py"
PD = "torchtitan/distributed/parallel_dims.py"
PPL = "torchtitan/distributed/pipeline_parallel.py"
PAR = "torchtitan/models/llama3/infra/parallelize.py"
TRAIN = "torchtitan/train.py"
QUANT = "torchtitan/components/quantization"
DSV3_PAR = "torchtitan/models/deepseek_v3/infra/parallelize.py"

# JobConfig's tables and the fields this check knows (manager.py:160-171 refuses
# any other field name: "Invalid field names")
FIELDS = {
    "model": {"name": str, "flavor": str, "converters": list},  # JC:100-118
    "training": {"local_batch_size": int, "global_batch_size": int, "seq_len": int,
                 "mixed_precision_param": str},  # JC:243-282
    "parallelism": {  # JC:312-474
        "data_parallel_replicate_degree": int, "data_parallel_shard_degree": int,
        "fsdp_reshard_after_forward": str, "tensor_parallel_degree": int,
        "pipeline_parallel_degree": int, "module_fqns_per_model_part": list,
        "pipeline_parallel_schedule": str, "pipeline_parallel_microbatch_size": int,
        "context_parallel_degree": int, "context_parallel_rotate_method": str,
        "expert_parallel_degree": int, "expert_tensor_parallel_degree": int,
        "expert_parallel_comm_backend": str},
    "activation_checkpoint": {"mode": str, "selective_ac_option": str},  # JC:651-655
    "quantize.linear.float8": {"recipe_name": str, "filter_fqns": list,
                               "enable_fsdp_float8_all_gather": bool},  # JC:731-741
    "quantize.linear.mx": {"recipe_name": str, "filter_fqns": list},  # JC:767-784
    "quantize.grouped_mm.float8": {"fqns": list},  # JC:756-757
    "quantize.grouped_mm.mx": {"recipe_name": str, "fqns": list},  # JC:794-802
}
LITERALS = {  # the Literal[...] types of JC
    ("training", "mixed_precision_param"): ("bfloat16", "float32"),  # JC:282
    ("parallelism", "fsdp_reshard_after_forward"): ("default", "always", "never"),  # JC:336
    ("parallelism", "context_parallel_rotate_method"): ("allgather", "alltoall"),  # JC:446
    ("parallelism", "expert_parallel_comm_backend"): ("standard", "deepep"),  # JC:474
    ("activation_checkpoint", "mode"): ("selective", "full", "memory_budget", "none"),  # JC:652
    ("quantize.linear.float8", "recipe_name"): ("tensorwise", "rowwise", "rowwise_with_gw_hp"),
}
# torch.distributed.pipelining.schedules.get_schedule_class: one stage a rank
# (PipelineScheduleSingle) or several (PipelineScheduleMulti); V-shaped ones
# place stages r and 2pp-1-r on rank r (PPL:442-458)
SINGLE = {"1F1B", "GPipe"}
MULTI = {"Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV"}
V_SHAPED = {"ZBVZeroBubble", "DualPipeV"}
CONVERTERS = {"quantize.linear.float8", "quantize.grouped_mm.float8",  # QUANT/float8.py:238-239
              "quantize.linear.mx", "quantize.grouped_mm.mx"}  # QUANT/mx.py:171-172

# torchtitan's registry, transcribed: (layers, dim, n_heads, n_kv_heads, head_dim,
# MLP width, vocab, rope_theta, qk_norm, tied, experts, top_k, expert width)
FLAVORS = {
    # torchtitan/models/llama3/__init__.py:51, 82, 91; vocab args.py:33; MLP width
    # model.py:332-336 (int(8 dim / 3) x ffn_dim_multiplier, up to multiple_of)
    ("llama3", "8B"): (32, 4096, 32, 8, 128, 14336, 128256, 500000, False, False, 0, 0, 0),
    ("llama3", "70B"): (80, 8192, 64, 8, 128, 28672, 128256, 500000, False, False, 0, 0, 0),
    ("llama3", "405B"): (126, 16384, 128, 8, 128, 53248, 128256, 500000, False, False, 0, 0, 0),
    # torchtitan/models/qwen3/__init__.py:46-168
    ("qwen3", "0.6B"): (28, 1024, 16, 8, 128, 3072, 151936, 1000000, True, True, 0, 0, 0),
    ("qwen3", "1.7B"): (28, 2048, 16, 8, 128, 6144, 151936, 1000000, True, True, 0, 0, 0),
    ("qwen3", "4B"): (36, 2560, 32, 8, 128, 9728, 151936, 1000000, True, True, 0, 0, 0),
    ("qwen3", "8B"): (36, 4096, 32, 8, 128, 12288, 151936, 1000000, True, False, 0, 0, 0),
    ("qwen3", "14B"): (40, 5120, 40, 8, 128, 17408, 151936, 1000000, True, False, 0, 0, 0),
    ("qwen3", "32B"): (64, 5120, 64, 8, 128, 25600, 151936, 1000000, True, False, 0, 0, 0),
    ("qwen3", "30B-A3B"): (48, 2048, 32, 4, 128, 6144, 151936, 1000000, True, False, 128, 8, 768),
    ("qwen3", "235B-A22B"): (94, 4096, 64, 4, 128, 12288, 151936, 5000000, True, False, 128, 8,
                             1536),
}


def table(job, dotted):
    t = job
    for part in dotted.split("."):
        t = t.get(part, {})
    return t


def check_fields(job):
    """Every table and field one JobConfig has, of its type (MGR:160-171)."""
    def walk(t, prefix):
        for key, v in t.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(v, dict):
                walk(v, name)
                continue
            need(prefix in FIELDS and key in FIELDS[prefix], f"{MGR}:166-171",
                 f"invalid field name {name}")
            need(isinstance(v, FIELDS[prefix][key]), JC, f"{name} is not a {FIELDS[prefix][key]}")
            allowed = LITERALS.get((prefix, key))
            need(allowed is None or v in allowed, JC, f"{name} = {v!r} not one of {allowed}")
    walk(job, "")


def derive(job, world, model_layers):
    """What torchtitan runs from the job alone, applying its checks."""
    p, t = job.get("parallelism", {}), job["training"]
    rep = p.get("data_parallel_replicate_degree", 1)
    shard = p.get("data_parallel_shard_degree", -1)
    cp, tp = p.get("context_parallel_degree", 1), p.get("tensor_parallel_degree", 1)
    pp = p.get("pipeline_parallel_degree", 1)
    ep, etp = p.get("expert_parallel_degree", 1), p.get("expert_tensor_parallel_degree", 1)
    # PD:45-56: degrees >= 1, dp_shard -1 takes the rest, the product is the world
    for name, d in (("dp_replicate", rep), ("cp", cp), ("tp", tp), ("pp", pp), ("ep", ep),
                    ("etp", etp)):
        need(d >= 1, f"{PD}:45-46", f"{name} {d} < 1")
    if shard < 0:
        shard = world // (rep * cp * tp * pp)
    need(shard >= 1, f"{PD}:48-51", "dp_shard < 1")
    need(rep * shard * cp * tp * pp == world, f"{PD}:53-56",
         f"dp_replicate {rep} x dp_shard {shard} x cp {cp} x tp {tp} x pp {pp} != {world}")
    if ep > 1:
        need(etp in (tp, 1), f"{PD}:58-59", "only ETP=TP or ETP=1")
        # PD build_mesh: efsdp = dp_shard x cp x tp / (etp x ep), the sparse mesh's
        # unflatten of the world (PD:205-209 asserts the sizes)
        need((shard * cp * tp) % (etp * ep) == 0, f"{PD}:205-209",
             f"efsdp = {shard} x {cp} x {tp} / ({etp} x {ep}) is not whole")
    fsdp = shard > 1 or cp > 1  # PD fsdp_enabled
    # PAR:148-151: DDP only alone
    need(fsdp or rep == 1 or rep == world, f"{PAR}:148-151", "DDP has not supported > 1D parallelism")
    # PAR:69-74 (and qwen3's, deepseek_v3's): seq_len % (tp x 2 cp)
    need(t["seq_len"] % (tp * 2 * cp) == 0, f"{PAR}:69-74, {PD}:365-372", "seq_len not a multiple of tp x 2 cp")
    local, glob = t["local_batch_size"], t.get("global_batch_size", -1)
    batch = rep * shard
    if glob < 0:
        glob = local * batch
    need(glob > 0 and glob % (local * batch) == 0, f"{TRAIN}:196-209",
         "global batch not a multiple of local x dp")
    accum = glob // (local * batch)  # TRAIN:212-215
    policy = p.get("fsdp_reshard_after_forward", "default")
    # PAR:319-327: "default" reshards after forward unless pipelined
    reshard = policy == "always" or (policy == "default" and pp == 1)
    zero = (3 if reshard else 2) if fsdp else 0
    stages, vp, mbs, microbatches = [model_layers], 1, local, accum
    schedule = None
    if pp > 1:
        schedule = p.get("pipeline_parallel_schedule", "1F1B")
        need(schedule in SINGLE | MULTI, "torch get_schedule_class", f"no schedule {schedule}")
        mbs = p.get("pipeline_parallel_microbatch_size", 1)
        need(local % mbs == 0, f"{PPL}:189-193", "local batch not a multiple of the microbatch")
        need(accum == 1, f"{TRAIN}:212-215",
             "a pipeline takes the step's microbatches in one local batch (accumulation 1)")
        microbatches = local // mbs
        parts = p.get("module_fqns_per_model_part")
        need(parts is not None, f"{JC}:367", "the plan's split needs module_fqns_per_model_part")
        n = len(parts)
        need(n % pp == 0, f"{PPL}:456-458", f"{n} stages not a multiple of pp {pp}")
        vp = n // pp
        need(schedule not in SINGLE or vp == 1, f"{PPL}:204-206",
             f"{schedule} takes one stage a rank (stages[0] only)")
        need(schedule not in V_SHAPED or vp == 2, f"{PPL}:463-465", "v schedules assume 2 stages a rank")
        # every module once, in order: the embedding first, the norm and output last
        flat = [m for part in parts for m in part]
        want = ["tok_embeddings"] + [f"layers.{i}" for i in range(model_layers)] + ["norm", "output"]
        need(flat == want, f"{PPL}:389-440", "stages do not hold every module once, in order")
        need(parts[0][0] == "tok_embeddings" and parts[-1][-2:] == ["norm", "output"],
             f"{PPL}:389-440", "embedding or output misplaced")
        per_stage = [sum(m.startswith("layers.") for m in part) for part in parts]
        stages = [0] * pp
        for s, count in enumerate(per_stage):
            rank = s % pp
            if schedule in V_SHAPED and s >= pp:
                rank = 2 * pp - 1 - s
            stages[rank] += count
        if schedule == "Interleaved1F1B":  # torch: rounds of pp microbatches
            rounds = max(1, microbatches // pp)
            need(microbatches % rounds == 0, "torch ScheduleInterleaved1F1B",
                 f"{microbatches} microbatches not a multiple of {rounds} rounds")
    # QUANT/__init__.py:45-55: one quantization type; float8.py:65-68 recipe
    # names with the fp8 all-gather refused; mx.py:42 needs SM100
    conv = job.get("model", {}).get("converters", [])
    for c in conv:
        need(c in CONVERTERS, f"{QUANT}/float8.py:238", f"no converter {c}")
    kinds = {c.split(".")[-1] for c in conv}
    need(len(kinds) <= 1, f"{QUANT}/__init__.py:45-55", "mixed quantization types")
    f8 = table(job, "quantize.linear.float8")
    need(not (f8.get("recipe_name") and f8.get("enable_fsdp_float8_all_gather")),
         f"{QUANT}/float8.py:65-68", "recipe_name with enable_fsdp_float8_all_gather")
    precision = "bf16"
    if "quantize.linear.float8" in conv:
        need(f8.get("recipe_name", "tensorwise") == "tensorwise", JC, "rowwise is not tensorwise")
        precision = "fp8"
    if "quantize.linear.mx" in conv:
        precision = "mxfp8"
    ac = job.get("activation_checkpoint", {})
    mode, option = ac.get("mode", "selective"), ac.get("selective_ac_option", "2")  # JC:652-655
    recomputed = None  # every layer
    if mode == "selective":
        # activation_checkpoint.py:178-184: "op" or a layer frequency; a layer
        # frequency N checkpoints the N-th, 2N-th, ... block a process wraps
        # (activation_checkpoint.py:37-47): floor(layers / N) of each rank's
        need(option.isdigit(), "activation_checkpoint.py:178-184",
             f"selective option {option!r} (op: not the plan's recomputation)")
        n = int(option)
        need(n > 0, "activation_checkpoint.py:40", "frequency 0 checkpoints every layer")
        counts = {layers // n for layers in stages}
        need(len(counts) == 1, "activation_checkpoint.py:37-47",
             f"stages of {stages} layers recompute different counts at every {n}-th")
        recomputed = counts.pop()
        mode = "full"
    backend = p.get("expert_parallel_comm_backend", "standard")
    if backend == "deepep":  # DSV3_PAR:98-111
        need(ep > 1 and etp == 1, f"{DSV3_PAR}:98-111", "DeepEP needs ep > 1 and etp 1")
    return {"dp": rep * shard, "zero": zero, "shard": shard if fsdp else 1, "tp": tp, "pp": pp,
            "cp": cp, "ep": ep, "etp": etp, "vp": vp, "mbs": mbs, "microbatches": microbatches,
            "global_batch": glob, "stage_layers": stages, "schedule": schedule,
            "recompute": mode, "recompute_layers": recomputed,
            "precision": precision, "seq_len": t["seq_len"],
            "rotate": p.get("context_parallel_rotate_method", "allgather")}


def expected(c, layers):
    """The same figures from the plan's config."""
    zero, dp = c["zero"], c["dp"]
    shard = (c.get("shard_group") or dp) if zero >= 2 else 1
    vp = c.get("vp", 1)
    schedule = {"1f1b": "Interleaved1F1B" if vp > 1 else "1F1B", "gpipe": "GPipe",
                "interleaved": "Interleaved1F1B", "zb-v": "ZBVZeroBubble",
                "dualpipev": "DualPipeV"}.get(c["schedule"], c["schedule"])
    return {"dp": dp, "zero": zero if (shard > 1 or c["cp"] > 1) else 0, "shard": shard,
            "tp": c["tp"], "pp": c["pp"], "cp": c["cp"], "ep": c.get("ep", 1),
            "etp": c.get("etp", c["tp"]) if c.get("ep", 1) > 1 else None, "vp": vp,
            "mbs": c["mbs"], "microbatches": c["microbatches"],
            "global_batch": c["global_batch"], "stage_layers": c.get("stage_layers", [layers]),
            "schedule": schedule if c["pp"] > 1 else None, "recompute": c["recompute"],
            "recompute_layers": c.get("recompute_layers"),
            "precision": c["precision"],
            "rotate": "allgather" if c.get("cp_comm") == "allgather" else "alltoall"}


def params_of(f):
    """The parameters of the modules torchtitan builds for a flavor: embedding,
    per layer attention (wq, wk, wv, wo), q/k norms (qwen3), the MLP's w1, w2, w3
    or the experts' and the router's, two norms; the final norm and output."""
    L, h, a, kv, d, ffn, V, _theta, qk, tied, E, _k, effn = f
    attn = h * a * d + 2 * h * kv * d + a * d * h
    mlp = 3 * h * effn * E + h * E if E else 3 * h * ffn
    layer = attn + mlp + 2 * h + (2 * d if qk else 0)
    return V * h + L * layer + h + (0 if tied else V * h)


def check_model(name, flavor, m):
    f = FLAVORS.get((name, flavor))
    need(f is not None, "registry", f"no flavor {name} {flavor} known here")
    moe = m.get("moe") or {}
    head = m.get("head_dim") or m["hidden"] // m["heads"]
    have = (m["layers"], m["hidden"], m["heads"], m.get("kv_heads", m["heads"]), head,
            m["ffn_hidden"], m["vocab"], m.get("rope_theta"), bool(m.get("qk_norm")),
            m["tied_embeddings"], moe.get("experts", 0), moe.get("top_k", 0),
            moe.get("ffn_hidden", 0) if moe else 0)
    need(have == f, f"{name} {flavor}", f"flavor {f} is not the model {have}")
    need(not m["bias"] and m["gated_mlp"] and m["norm"] == "rmsnorm" and
         m["position_embedding"] == "rope" and not m.get("mtp_layers") and
         not moe.get("shared_experts") and not moe.get("first_dense_layers"),
         f"{name} {flavor}", "the flavor has no biases, a gated MLP, RMSNorm, RoPE, no MTP, "
         "no shared experts and no dense first layers")
    return params_of(f)


def main():
    model, root, plan = arguments()
    layers = model["model"]["layers"] if model else None
    for k, r, toml in launched(plan, root, "torchtitan", "torchtitan", "--torchtitan", ".toml"):
        launch = r["launch"]
        job = launch.get("torchtitan")
        if toml is None:
            print(f"ok {k}: not torchtitan: {launch['torchtitan_error']}")
            continue
        with open(toml, "rb") as f:
            read = tomllib.load(f)  # MGR:81
        need(read == job, "TOML", "the file does not read back as launch.torchtitan")
        check_fields(read)
        c = r["config"]
        n = layers if layers else sum(c.get("stage_layers", [0]))
        got = derive(read, c["gpus"], n)
        want = expected(c, n)
        if want["etp"] is None:
            got["etp"] = None
        for key in want:
            if key == "rotate" and c["cp"] == 1:
                continue
            need(got[key] == want[key], "MISMATCH", f"{key}: torchtitan runs {got[key]}, "
                 f"the plan costs {want[key]}")
        if model:
            total = check_model(read["model"]["name"], read["model"]["flavor"], model["model"])
            need(total == model["params"], "MISMATCH",
                 f"params: torchtitan builds {total}, the plan counts {model['params']}")
            need(got["seq_len"] == model["model"]["seq_len"], "MISMATCH", "seq_len")
        print(f"ok {k}: torchtitan {read['model']['name']} {read['model']['flavor']}, "
              f"dp {got['dp']} (shard {got['shard']}), tp {got['tp']}, pp {got['pp']}"
              f"{' ' + got['schedule'] if got['schedule'] else ''}, cp {got['cp']}")


if __name__ == "__main__":
    run(main)
