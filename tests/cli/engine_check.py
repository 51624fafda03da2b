#!/usr/bin/env python3
"""engine_check.py - the engines' launch of a serve or rl plan, as vLLM and
SGLang would take it.

Usage: engine_check.py PLAN.json MODEL.json GPUS_PER_SERVER GPU_MEMORY_BYTES

Reads `parplan serve --json` (results[]) or `parplan rl --json` (results[].engine)
and, for each layout, its launch: every node's argv is parsed the way the
engine's argument parser reads it (only its flags, each once, with a value of
the flag's type), held to the engine's own checks (cited below with file and
line as read: vLLM's files at the commits named beside each, SGLang's
server_args.py at 7d81985a), and the layout it starts is derived back
and must be the plan's: tp, replicas, batch, the longest sequence and the
memory share.  A layout an engine cannot run must say why (vllm_error,
sglang_error).  Exits 1 with the first broken rule.  Standard library only.
"""
import json
import sys

from launch_results import Refused, need

# the checkpoints' config.json: max_position_embeddings (render/hfcheckpoint.c)
MAX_POSITIONS = {
    "meta-llama/Meta-Llama-3-8B": 8192,
    "meta-llama/Meta-Llama-3-70B": 8192,
    "meta-llama/Meta-Llama-3.1-405B": 131072,
    "Qwen/Qwen3-30B-A3B": 40960,
    "Qwen/Qwen3-235B-A22B": 40960,
    "deepseek-ai/DeepSeek-V3": 163840,
}

# flag: (kind, field); kind "int", "float", "str", or "bool" (bare)
VLLM = {
    "--tensor-parallel-size": ("int", "tp"),
    "--data-parallel-size": ("int", "dp"),
    "--max-num-seqs": ("int", "batch"),
    "--max-model-len": ("int", "max_len"),
    "--max-num-batched-tokens": ("int", "chunk"),
    "--gpu-memory-utilization": ("float", "share"),
    "--dtype": ("str", "dtype"),
    "--quantization": ("str", "quantization"),
    "--kv-cache-dtype": ("str", "kv"),
    "--enable-sleep-mode": ("bool", "release"),
}
SGLANG = {
    "--tp-size": ("int", "tp"),
    "--dp-size": ("int", "dp"),
    "--max-running-requests": ("int", "batch"),
    "--context-length": ("int", "max_len"),
    "--chunked-prefill-size": ("int", "chunk"),
    "--mem-fraction-static": ("float", "share"),
    "--dtype": ("str", "dtype"),
    "--quantization": ("str", "quantization"),
    "--kv-cache-dtype": ("str", "kv"),
    "--enable-memory-saver": ("bool", "release"),
}
# the choices each parser accepts for the string flags used here: vLLM's dtype
# vllm/config/model.py:91 (0052a5b8), quantization "fp8"
# model_executor/layers/quantization/__init__.py:13 (0034007d); SGLang's dtype
# server_args.py:646, quantization :667-672
CHOICES = {
    "vllm": {"dtype": {"auto", "half", "float16", "bfloat16", "float", "float32"},
             "quantization": {"fp8"}, "kv": {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"}},
    "sglang": {"dtype": {"auto", "half", "float16", "bfloat16", "float", "float32"},
               "quantization": {"fp8"}, "kv": {"auto", "fp8_e5m2", "fp8_e4m3"}},
}
HEAD = {"vllm": ["vllm", "serve"], "sglang": ["python3", "-m", "sglang.launch_server"]}


def parse(engine, argv):
    head = HEAD[engine]
    need(argv[:len(head)] == head, engine, f"starts {argv[:len(head)]}, not {head}")
    rest = argv[len(head):]
    flags = VLLM if engine == "vllm" else SGLANG
    args = {}
    if engine == "vllm":  # vllm serve takes the model as its positional argument
        need(rest and not rest[0].startswith("--"), engine, "no model")
        args["model"], rest = rest[0], rest[1:]
    i = 0
    while i < len(rest):
        flag = rest[i]
        if engine == "sglang" and flag == "--model-path":
            need(i + 1 < len(rest), engine, "--model-path without a value")
            args["model"] = rest[i + 1]
            i += 2
            continue
        need(flag in flags, engine, f"{flag} is not a flag parplan writes")
        kind, field = flags[flag]
        need(field not in args, engine, f"{flag} given twice")
        if kind == "bool":
            args[field] = True
            i += 1
            continue
        need(i + 1 < len(rest), engine, f"{flag} without a value")
        value = rest[i + 1]
        try:
            args[field] = int(value) if kind == "int" else float(value) if kind == "float" \
                else value
        except ValueError:
            raise Refused(f"{engine}: {flag} {value!r} is not a{'n integer' if kind == 'int' else ' number'}")
        if kind == "str":
            need(value in CHOICES[engine][field], engine, f"{flag} {value!r} is not a choice")
        i += 2
    need("model" in args, engine, "no model")
    return args


def check_engine(engine, args, model, per_server):
    tp, dp = args.get("tp", 1), args.get("dp", 1)
    # both: the attention heads split over tp (vLLM's vllm/config/model.py:1149-1154
    # at 0052a5b8, "Total number of attention heads (...) must be divisible by
    # tensor parallel size"; SGLang's attention layers divide the heads by tp)
    need(tp >= 1 and model["heads"] % tp == 0, engine,
         f"{model['heads']} attention heads not divisible by tp {tp}")
    need(dp >= 1 and tp * dp <= per_server, engine,
         f"tp {tp} x dp {dp} GPUs on a server of {per_server}")

    share = args.get("share")
    # vLLM: gpu_memory_utilization Field(gt=0, le=1), vllm/config/cache.py:103
    # (002f10e0); SGLang asserts no range on mem_fraction_static, and a share
    # above the GPU holds nothing
    need(share is not None and 0.0 < share <= 1.0, engine, f"memory share {share} not in (0, 1]")
    batch, chunk, max_len = args.get("batch"), args.get("chunk"), args.get("max_len")
    need(batch and batch >= 1, engine, "no batch")
    need(max_len and max_len >= 1, engine, "no longest sequence")
    limit = MAX_POSITIONS.get(args["model"])
    need(limit is not None, engine, f"{args['model']} is not a checkpoint parplan launches")
    # vLLM: vllm/config/model.py:2145-2170 (0052a5b8), a max_model_len above the
    # derived one (max_position_embeddings) is refused
    need(max_len <= limit, engine, f"longest sequence {max_len} above max_position_embeddings {limit}")
    if engine == "vllm":
        # vLLM's vllm/config/scheduler.py:263-268 (01230b40): max_num_batched_tokens
        # >= max_num_seqs; >= max_model_len only with chunked prefill off
        # (:251-261; on by default, :74)
        need(chunk >= batch, engine, f"max_num_batched_tokens {chunk} < max_num_seqs {batch}")
    if args.get("quantization"):
        need(args.get("kv") is not None, engine, "fp8 weights without an fp8 KV cache")
    return tp, dp


def check_layout(where, layout, launch, model, per_server, gpu_bytes):
    for engine in ("vllm", "sglang"):
        part = launch.get(engine)
        if part is None:
            need(launch.get(f"{engine}_error"), where, f"no {engine} and no {engine}_error")
            continue
        replicas = 0
        for node in part["nodes"]:
            args = parse(engine, node["argv"])
            tp, dp = check_engine(engine, args, model, per_server)
            need(args["model"] == launch["hf_model"], where, f"{engine} loads {args['model']}")
            need(node["gpus"] == tp * dp, where, f"{engine}: {node['gpus']} GPUs for tp x dp {tp * dp}")
            need(tp == layout["tp"], where, f"{engine}: tp {tp}, the plan's {layout['tp']}")
            need(args["batch"] == layout["batch"], where,
                 f"{engine}: batch {args['batch']}, the plan's {layout['batch']}")
            need(args["max_len"] == layout["max_len"], where,
                 f"{engine}: longest sequence {args['max_len']}, the plan's {layout['max_len']}")
            need(abs(args["share"] - layout["share"]) <= 5e-4 * layout["share"], where,
                 f"{engine}: memory share {args['share']}, the plan's {layout['share']:.4f}")
            need(bool(args.get("release")) == layout["colocated"], where,
                 f"{engine}: memory released during training: {bool(args.get('release'))}")
            need(bool(args.get("quantization")) == (layout["precision"] == "fp8"), where,
                 f"{engine}: quantization {args.get('quantization')} for {layout['precision']}")
            replicas += node["count"] * dp
        need(replicas == layout["replicas"], where,
             f"{engine}: {replicas} replicas, the plan's {layout['replicas']}")


def layouts(plan, gpu_bytes):
    """(where, layout, launch) of each result."""
    wl = plan["workload"]
    if "engine" in (plan["results"] or [{}])[0]:  # rl
        longest = wl["input_tokens"] + wl["output_max_tokens"]
        for k, r in enumerate(plan["results"], 1):
            e = r["engine"]
            yield f"result {k}", {
                "tp": e["tp"], "pp": 1, "batch": e["batch"], "replicas": e["replicas"],
                "max_len": longest, "share": e["memory"]["capacity"] / gpu_bytes,
                "colocated": r["placement"] == "colocated", "precision": e["precision"]}, e["launch"]
    else:  # serve
        longest = wl["input_tokens"] + wl["output_tokens"]
        for k, r in enumerate(plan["results"], 1):
            if r["mode"] != "aggregated" or r["pp"] > 1:  # not launched yet
                need(r["launch"]["vllm"] is None and r["launch"]["sglang"] is None,
                     f"result {k}", "a disaggregated or pipelined layout launched")
            yield f"result {k}", {
                "tp": r["tp"], "pp": r["pp"], "batch": r["batch"], "replicas": r["replicas"],
                "max_len": longest, "share": r["memory"]["capacity"] / gpu_bytes,
                "colocated": False, "precision": plan["precision"]}, r["launch"]


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    with open(sys.argv[2]) as f:
        model = json.load(f)
    per_server, gpu_bytes = int(sys.argv[3]), float(sys.argv[4])
    try:
        n = launched = 0
        for where, layout, launch in layouts(plan, gpu_bytes):
            check_layout(where, layout, launch, model, per_server, gpu_bytes)
            n += 1
            launched += launch.get("vllm") is not None
        need(n > 0, "plan", "no results")
    except Refused as e:
        print(f"engine_check: {e}")
        return 1
    except (KeyError, TypeError, IndexError) as e:
        print(f"engine_check: missing or malformed: {e!r}")
        return 1
    print(f"engine_check: {n} layouts, {launched} launched, as vLLM and SGLang take them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
