#!/usr/bin/env python3
"""engine_check.py - the engines' launch of a serve or rl plan, as vLLM and
SGLang would take it.

Usage: engine_check.py PLAN.json MODEL.json GPUS_PER_SERVER GPU_MEMORY_BYTES

Reads `parplan serve --json` (results[]) or `parplan rl --json` (results[].engine)
and, for each layout, its launch: every process's argv is parsed the way the
engine's argument parser reads it (only its flags, each once, with a value of
the flag's type), its environment read as the engine reads it, the whole held
to the engine's own checks (cited below with file and line as read: vLLM
v0.11.0 at b8b302c, SGLang v0.5.4's python/sglang/srt), and the layout it
starts derived back; it must be the plan's: tp, ep, replicas, batch, the
longest sequence and the memory share.  A layout an engine cannot run must say
why (vllm_error, sglang_error).  Exits 1 with the first broken rule.  Standard
library only.
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
HEAD_ADDR = "${HEAD_ADDR}"

# flag: (kind, field); kind "int", "float", "str", or "bool" (bare).  vLLM's
# vllm/engine/arg_utils.py: --tensor-parallel-size :655, --data-parallel-size
# :660, -start-rank :668, -size-local :673, -address :678, -rpc-port :683,
# --enable-expert-parallel :698, --max-num-seqs :885; --headless and --port in
# vllm/entrypoints/openai/cli_args.py:246.  SGLang's server_args.py:
# --max-running-requests :1806, --tp-size :1928, --pp-size :1935, --dp-size :2233,
# --dist-init-addr :2264, --nnodes :2270, --node-rank :2273, --ep-size :2532,
# --moe-a2a-backend :2539, --enable-dp-attention :2945, --host :1674,
# --load-balance-method :2239, --prefill-round-robin-balance :2256,
# --disaggregation-mode :3154, -transfer-backend :3161, -bootstrap-port :3168,
# -decode-tp :3174, -decode-dp :3180.
VLLM = {
    "--tensor-parallel-size": ("int", "tp"),
    "--data-parallel-size": ("int", "dp"),
    "--data-parallel-size-local": ("int", "dp_local"),
    "--data-parallel-start-rank": ("int", "start_rank"),
    "--data-parallel-address": ("str", "address"),
    "--data-parallel-rpc-port": ("int", "rpc_port"),
    "--headless": ("bool", "headless"),
    "--enable-expert-parallel": ("bool", "ep"),
    "--port": ("int", "port"),
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
    "--pp-size": ("int", "pp"),
    "--dp-size": ("int", "dp"),
    "--ep-size": ("int", "ep_size"),
    "--enable-dp-attention": ("bool", "dp_attention"),
    "--moe-a2a-backend": ("str", "a2a"),
    "--dist-init-addr": ("str", "address"),
    "--nnodes": ("int", "nnodes"),
    "--node-rank": ("int", "node_rank"),
    "--port": ("int", "port"),
    "--host": ("str", "host"),
    "--disaggregation-mode": ("str", "pd_mode"),
    "--disaggregation-transfer-backend": ("str", "pd_backend"),
    "--disaggregation-bootstrap-port": ("int", "bootstrap_port"),
    "--disaggregation-decode-tp": ("int", "decode_tp"),
    "--disaggregation-decode-dp": ("int", "decode_dp"),
    "--load-balance-method": ("str", "load_balance"),
    "--prefill-round-robin-balance": ("bool", "round_robin"),
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
# vllm/config/model.py:67, quantization "fp8"
# model_executor/layers/quantization/__init__.py:13, cache dtype
# vllm/config/cache.py:25-26; SGLang's dtype server_args.py:1717, quantization
# :1731, kv cache :1786, --moe-a2a-backend :2539-2545
CHOICES = {
    "vllm": {"dtype": {"auto", "half", "float16", "bfloat16", "float", "float32"},
             "quantization": {"fp8"},
             "kv": {"auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"}},
    "sglang": {"dtype": {"auto", "half", "float16", "bfloat16", "float", "float32"},
               "quantization": {"fp8"}, "kv": {"auto", "fp8_e5m2", "fp8_e4m3"},
               "a2a": {"none", "deepep", "mooncake"},
               # server_args.py:3157, :124, :2243-2250
               "pd_mode": {"null", "prefill", "decode"},
               "pd_backend": {"mooncake", "nixl", "ascend", "fake"},
               "load_balance": {"round_robin", "shortest_queue", "minimum_tokens"}},
}
# the environment each reads: vLLM's all-to-all backend, vllm/envs.py:1240-1246
ENV = {
    "vllm": {"VLLM_ALL2ALL_BACKEND": {"naive", "pplx", "deepep_high_throughput",
                                      "deepep_low_latency", "allgather_reducescatter",
                                      "flashinfer_all2allv"},
             "CUDA_VISIBLE_DEVICES": None},
    "sglang": {"CUDA_VISIBLE_DEVICES": None},
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
        if kind == "str" and field in CHOICES[engine]:
            need(value in CHOICES[engine][field], engine, f"{flag} {value!r} is not a choice")
        i += 2
    need("model" in args, engine, "no model")
    return args


def check_env(engine, env, per_server):
    for key, value in env.items():
        need(key in ENV[engine], engine, f"environment {key} is not one parplan sets")
        choices = ENV[engine][key]
        need(choices is None or value in choices, engine, f"{key}={value!r} is not a choice")
    devices = None
    if "CUDA_VISIBLE_DEVICES" in env:
        devices = [int(x) for x in env["CUDA_VISIBLE_DEVICES"].split(",")]
        need(len(set(devices)) == len(devices) and all(0 <= d < per_server for d in devices),
             engine, f"CUDA_VISIBLE_DEVICES {env['CUDA_VISIBLE_DEVICES']} on {per_server} GPUs")
    return devices


def check_common(engine, args, model):
    """The checks of one process that do not depend on its replica."""
    share = args.get("share")
    # vLLM: vllm/config/cache.py:168-171 refuses a utilization above 1 (and none
    # below 0 holds anything); SGLang asserts no range on mem_fraction_static,
    # and a share above the GPU holds nothing
    need(share is not None and 0.0 < share <= 1.0, engine, f"memory share {share} not in (0, 1]")
    batch, chunk, max_len = args.get("batch"), args.get("chunk"), args.get("max_len")
    need(batch and batch >= 1, engine, "no batch")
    need(chunk and chunk >= 1, engine, "no prefill chunk")
    need(max_len and max_len >= 1, engine, "no longest sequence")
    limit = MAX_POSITIONS.get(args["model"])
    need(limit is not None, engine, f"{args['model']} is not a checkpoint parplan launches")
    # vLLM: vllm/config/model.py:1880-1898, a max_model_len above the derived one
    # (max_position_embeddings) is refused; SGLang's context length likewise
    need(max_len <= limit, engine, f"longest sequence {max_len} above max_position_embeddings {limit}")
    if args.get("quantization"):
        need(args.get("kv") is not None, engine, "fp8 weights without an fp8 KV cache")


def layout_vllm(args, env, model, per_server):
    """(tp, ep, ranks, batch a rank, GPUs this process takes, group, pp) of a
    vLLM process: ranks data-parallel ranks of tp GPUs; group: its replica's
    rendezvous (address, port, dp) over several servers, else None; pp its
    pipeline stages (vLLM's are not launched: always 1)."""
    tp, dp = args.get("tp", 1), args.get("dp", 1)
    local = args.get("dp_local", dp)
    # vllm/config/model.py:1045-1052: the attention heads split over tp
    need(tp >= 1 and model["heads"] % tp == 0, "vllm",
         f"{model['heads']} attention heads not divisible by tp {tp}")
    # vllm/config/parallel.py:383-386
    need(1 <= local <= dp, "vllm", f"data_parallel_size_local {local} above data_parallel_size {dp}")
    need(tp * local <= per_server, "vllm", f"tp {tp} x {local} local ranks on a server of {per_server}")
    # vllm/config/scheduler.py:245-249: max_num_batched_tokens >= max_num_seqs (a rank's)
    need(args["chunk"] >= args["batch"], "vllm",
         f"max_num_batched_tokens {args['chunk']} < max_num_seqs {args['batch']}")
    moe = model.get("moe") is not None
    ep = args.get("ep", False)
    if ep:
        # vllm/config/model.py:1013-1016: expert parallelism needs experts
        need(moe, "vllm", "expert parallelism for a model without experts")
        # the cost model's dispatch is DeepEP's (render/engine.c); vLLM's default
        # is allgather_reducescatter (vllm/envs.py:1240-1241)
        need(env.get("VLLM_ALL2ALL_BACKEND", "").startswith("deepep"), "vllm",
             "expert parallelism without a DeepEP all-to-all backend")
    elif moe:
        # FusedMoE flattens tp over dp (vllm/model_executor/layers/fused_moe/
        # config.py:695-701): data-parallel ranks of a MoE model share its experts,
        # which no plan of independent replicas holds
        need(dp == 1, "vllm", f"a MoE model over {dp} data-parallel ranks without expert "
                              "parallelism shares its experts across them")
    group = None
    if local < dp:
        need(ep, "vllm", "data parallelism over several servers without expert parallelism")
        need(args.get("address") == HEAD_ADDR and args.get("rpc_port"), "vllm",
             "a replica over several servers without the head's address and port")
        if args.get("headless"):
            # vllm/entrypoints/cli/serve.py:101-103; the docs' start rank
            need(local > 0, "vllm", "headless with no local ranks")
            need(args.get("start_rank") is not None, "vllm", "headless without a start rank")
        else:
            need(args.get("start_rank") in (None, 0), "vllm", "the API server not at rank 0")
        group = (args["address"], args["rpc_port"], dp, args.get("start_rank") or 0, local)
    return tp, tp * dp if ep else 0, dp, args["batch"], tp * local, group, 1


def layout_sglang(args, env, model, per_server):
    """As layout_vllm, for an SGLang process."""
    tp, dp, pp = args.get("tp", 1), args.get("dp", 1), args.get("pp", 1)
    nnodes, rank = args.get("nnodes", 1), args.get("node_rank", 0)
    attention = args.get("dp_attention", False) and dp > 1  # server_args.py:1166-1168
    ep = args.get("ep_size", 1)
    if args.get("a2a", "none") != "none":
        ep = tp  # server_args.py:1202-1216: DeepEP and Mooncake set ep to tp
    batch, chunk = args["batch"], args["chunk"]
    if attention:
        need(tp % dp == 0, "sglang", f"tp {tp} not divisible by dp {dp}")  # :1172
        attn_tp = tp // dp  # layers/dp_attention.py:212
        chunk //= dp  # :1173
        batch //= dp  # managers/tp_worker.py:279-288
    else:
        attn_tp = tp
    # the attention layers divide the heads by their tp
    need(attn_tp >= 1 and model["heads"] % attn_tp == 0, "sglang",
         f"{model['heads']} attention heads not divisible by tp {attn_tp}")
    if ep > 1:
        experts = (model.get("moe") or {}).get("experts", 0)
        need(experts > 0, "sglang", "expert parallelism for a model without experts")
        # layers/moe/fused_moe_triton/layer.py:167-168, distributed/parallel_state.py:1564-1565
        need(experts % ep == 0 and tp % ep == 0, "sglang",
             f"{experts} experts and tp {tp} not divisible by ep {ep}")
        need(ep == tp and attention, "sglang", "expert parallelism that is not the replica's")
    group = None
    if nnodes > 1:
        # check_server_args: :3348-3351, :3360-3362; :3737-3747 the head's address
        need((tp * pp) % nnodes == 0, "sglang", f"tp {tp} x pp {pp} not divisible by {nnodes} nodes")
        need(dp == 1 or attention, "sglang", "multi-node data parallel without dp attention")
        address = args.get("address") or ""
        need(address.startswith(HEAD_ADDR + ":") and address.rsplit(":", 1)[1].isdigit(),
             "sglang", "several nodes without the head's --dist-init-addr host:port")
        need(0 <= rank < nnodes, "sglang", f"node rank {rank} of {nnodes}")
        group = (args["address"], 0, nnodes, rank, 1)
    gpus = tp * pp * (1 if attention or ep > 1 else dp) // nnodes
    need(gpus <= per_server, "sglang", f"{gpus} GPUs a server of {per_server}")
    mode = args.get("pd_mode", "null")
    # other hosts reach it (the load balancer, the router): bound to every interface
    need(args.get("host") == "0.0.0.0", "sglang", "the server bound to one host's loopback")
    if mode == "decode":
        # server_args.py:1425-1430, :1435-1440
        need("decode_tp" not in args and "decode_dp" not in args, "sglang",
             "a decode engine told the decode engines' tp or dp")
        need(dp == 1 or args.get("round_robin"), "sglang",
             "a decode engine of several data-parallel ranks without --prefill-round-robin-balance")
    elif mode == "prefill":
        # server_args.py:1443-1451, validate_disagg_tp_size :3532-3538
        d_tp, d_dp = args.get("decode_tp", tp), args.get("decode_dp", dp)
        need(max(d_tp, tp) % min(d_tp, tp) == 0, "sglang",
             f"prefill tp {tp} and decode tp {d_tp}: neither a multiple of the other")
        need(d_dp == 1 or args.get("load_balance") == "round_robin", "sglang",
             "prefill for decode engines of several ranks without round-robin balance")
    return attn_tp, ep if ep > 1 else 0, dp, batch, gpus, group, pp


ROUTER = ["python3", "-m", "sglang_router.launch_router"]


def check_router(where, part, engines):
    """sgl-router's --pd-disaggregation over the engines, {role: [(url, bootstrap)]}
    (py_src/sglang_router/router_args.py: --prefill URL [BOOTSTRAP] and
    --decode URL, :186-200, parsed at :680-730; both required, :642-648)."""
    argv = part["router"]["argv"]
    need(argv[:len(ROUTER)] == ROUTER, where, f"router starts {argv[:3]}")
    rest, got, i = argv[len(ROUTER):], {"prefill": [], "decode": []}, 0
    need("--pd-disaggregation" in rest, where, "router without --pd-disaggregation")
    while i < len(rest):
        flag = rest[i]
        if flag == "--pd-disaggregation":
            i += 1
        elif flag == "--prefill":
            boot = rest[i + 2] if i + 2 < len(rest) and not rest[i + 2].startswith("--") else None
            got["prefill"].append((rest[i + 1], int(boot) if boot and boot != "none" else None))
            i += 3 if boot else 2
        elif flag == "--decode":
            got["decode"].append((rest[i + 1], None))
            i += 2
        elif flag in ("--host", "--port"):
            i += 2
        else:
            raise Refused(f"{where}: router flag {flag} is not one parplan writes")
    for role in ("prefill", "decode"):
        need(got[role], where, f"router without --{role}")  # router_args.py:642-648
        need(len(set(u for u, _ in got[role])) == len(got[role]), where, f"router: a {role} URL twice")
        need(sorted(got[role], key=str) == sorted(engines[role], key=str), where,
             f"router's {role} servers {len(got[role])}, the launch's {len(engines[role])}")


def check_layout(where, layouts_by_role, launch, model, per_server, gpu_bytes):
    for engine in ("vllm", "sglang"):
        part = launch.get(engine)
        if part is None:
            need(launch.get(f"{engine}_error"), where, f"no {engine} and no {engine}_error")
            continue
        replicas = {role: 0 for role in layouts_by_role}
        groups = {role: {} for role in layouts_by_role}
        heads = {"prefill": [], "decode": []}
        server = {"prefill": 0, "decode": 0}
        for node in part["nodes"]:
            role = node.get("role")
            need(role in layouts_by_role, where, f"{engine}: a server of role {role}")
            layout = layouts_by_role[role]
            used, ports = set(), set()
            gpus = 0
            head_procs = []
            for proc in node["processes"]:
                args = parse(engine, proc["argv"])
                check_common(engine, args, model)
                devices = check_env(engine, proc["env"], per_server)
                derive = layout_vllm if engine == "vllm" else layout_sglang
                tp, ep, ranks, batch, proc_gpus, group, pp = derive(args, proc["env"], model,
                                                                    per_server)
                need(args.get("pd_mode", "null") == (role or "null"), where,
                     f"{engine}: a {role or 'aggregated'} server in mode {args.get('pd_mode')}")
                if role == "prefill":  # told the decode engines' figures
                    dl = layouts_by_role["decode"]
                    need(args.get("decode_tp") == (dl["ep"] or dl["tp"]), where,
                         f"{engine}: decode tp {args.get('decode_tp')}, the decode engines' "
                         f"{dl['ep'] or dl['tp']}")
                need(pp == layout["pp"], where, f"{engine}: pp {pp}, the plan's {layout['pp']}")
                need(args["model"] == launch["hf_model"], where, f"{engine} loads {args['model']}")
                if len(node["processes"]) > 1:
                    # processes sharing a server: their own GPUs and ports
                    need(devices is not None and len(devices) == proc_gpus, where,
                         f"{engine}: a process of {proc_gpus} GPUs without its own")
                    need(not used & set(devices), where, f"{engine}: GPUs {devices} taken twice")
                    used |= set(devices)
                    need(args.get("port") and args["port"] not in ports, where,
                         f"{engine}: processes on one server without ports of their own")
                    ports.add(args["port"])
                gpus += proc_gpus
                need(tp == layout["tp"], where, f"{engine}: tp {tp}, the plan's {layout['tp']}")
                need(ep == layout["ep"], where, f"{engine}: ep {ep}, the plan's {layout['ep']}")
                need(batch == layout["batch"], where,
                     f"{engine}: batch {batch} a rank, the plan's {layout['batch']}")
                need(args["max_len"] == layout["max_len"], where,
                     f"{engine}: longest sequence {args['max_len']}, the plan's {layout['max_len']}")
                need(abs(args["share"] - layout["share"]) <= 5e-4 * layout["share"], where,
                     f"{engine}: memory share {args['share']}, the plan's {layout['share']:.4f}")
                need(bool(args.get("release")) == layout["colocated"], where,
                     f"{engine}: memory released during training: {bool(args.get('release'))}")
                need(bool(args.get("quantization")) == (layout["precision"] == "fp8"), where,
                     f"{engine}: quantization {args.get('quantization')} for {layout['precision']}")
                if group is None:  # a process holds whole replicas
                    replicas[role] += node["count"] * (1 if ep else ranks)
                else:  # a server of a replica over several
                    groups[role].setdefault(group[:3], []).append((group[3], group[4], node["count"]))
                if group is None or group[3] == 0:  # an engine's head: the router's URL
                    head_procs.append((args.get("port") or 30000, args.get("bootstrap_port")))
            if role and head_procs and len(head_procs) > 1:
                need(len({b for _, b in head_procs}) == len(head_procs), where,
                     f"{engine}: {role} engines on one server without bootstrap ports of their own")
            for _ in range(node["count"] if role and head_procs else 0):
                server[role] += 1
                for port, boot in head_procs:
                    url = "http://${%s_HOST_%d}:%d" % (role.upper(), server[role], port)
                    heads[role].append((url, (boot or 8998) if role == "prefill" else None))
            need(node["gpus"] == gpus and gpus <= per_server, where,
                 f"{engine}: {node['gpus']} GPUs for processes of {gpus} on {per_server}")
        for role, layout in layouts_by_role.items():
            for (addr, port, size), members in groups[role].items():
                members.sort()
                counts = {c for _, _, c in members}
                need(len(counts) == 1, where, f"{engine}: a replica's servers counted apart")
                if engine == "vllm":  # start ranks the sum of the servers' before
                    start = 0
                    for first, local, _ in members:
                        need(first == start, where, f"{engine}: start rank {first}, not {start}")
                        start += local
                    need(start == size, where, f"{engine}: {start} ranks of data_parallel_size {size}")
                else:  # node ranks 0 .. nnodes - 1
                    need([r for r, _, _ in members] == list(range(size)), where,
                         f"{engine}: node ranks {[r for r, _, _ in members]} of {size}")
                replicas[role] += counts.pop()
            need(replicas[role] == layout["replicas"], where,
                 f"{engine}: {replicas[role]} {role or ''} replicas, the plan's {layout['replicas']}")
        # the servers the launch takes hold no more than the plan's GPUs, in whole servers
        servers = sum(n["count"] for n in part["nodes"])
        planned = sum(l["replicas"] * l["gpus_per_replica"] for l in layouts_by_role.values())
        need(servers <= -(-planned // per_server), where,
             f"{engine}: {servers} servers for the plan's {planned} GPUs")
        if None not in layouts_by_role:
            check_router(where, part, heads)
        else:
            need("router" not in part, where, f"{engine}: a router for an aggregated layout")


def layouts(plan, gpu_bytes):
    """(where, layout, launch) of each result."""
    wl = plan["workload"]
    if "engine" in (plan["results"] or [{}])[0]:  # rl
        longest = wl["input_tokens"] + wl["output_max_tokens"]
        for k, r in enumerate(plan["results"], 1):
            e = r["engine"]
            yield f"result {k}", None, {
                "tp": e["tp"], "ep": e["ep"] if e["ep"] > 1 else 0, "pp": 1, "batch": e["batch"],
                "replicas": e["replicas"], "gpus_per_replica": e["ep"] if e["ep"] > 1 else e["tp"],
                "max_len": longest, "share": e["memory"]["capacity"] / gpu_bytes,
                "colocated": r["placement"] == "colocated", "precision": e["precision"]}, e["launch"]
    else:  # serve
        longest = wl["input_tokens"] + wl["output_tokens"]
        for k, r in enumerate(plan["results"], 1):
            if r["pp"] > 1:  # vLLM v0.11.0's stages across servers run over Ray: not written
                need(r["launch"]["vllm"] is None, f"result {k}", "vLLM launched with stages")
            if r["mode"] != "aggregated":  # vLLM's connectors and proxy: not written
                need(r["launch"]["vllm"] is None, f"result {k}", "vLLM launched disaggregated")
            common = {"pp": r["pp"], "max_len": longest,
                      "share": r["memory"]["capacity"] / gpu_bytes, "colocated": False,
                      "precision": plan["precision"]}
            decode = dict(common, tp=r["tp"], ep=r["ep"] if r["ep"] > 1 else 0, batch=r["batch"],
                          replicas=r["replicas"],
                          gpus_per_replica=r["ep"] if r["ep"] > 1 else r["tp"] * r["pp"])
            if r["mode"] == "aggregated":
                yield f"result {k}", None, decode, r["launch"]
            else:
                prefill = dict(common, tp=r["prefill_tp"],
                               ep=r["prefill_ep"] if r["prefill_ep"] > 1 else 0,
                               batch=r["prefill_prompts"], replicas=r["prefill_replicas"],
                               gpus_per_replica=r["prefill_ep"] if r["prefill_ep"] > 1
                               else r["prefill_tp"])
                yield f"result {k}", "disaggregated", {"prefill": prefill, "decode": decode}, \
                    r["launch"]


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
        for where, mode, layout, launch in layouts(plan, gpu_bytes):
            check_layout(where, layout if mode else {None: layout}, launch, model, per_server,
                         gpu_bytes)
            n += 1
            launched += launch.get("vllm") is not None or launch.get("sglang") is not None
        need(n > 0, "plan", "no results")
    except Refused as e:
        print(f"engine_check: {e}")
        return 1
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as e:
        print(f"engine_check: missing or malformed: {e!r}")
        return 1
    print(f"engine_check: {n} layouts, {launched} launched, as vLLM and SGLang take them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
