#!/usr/bin/env python3
"""config_flags.py - the estimate flags that pin a configuration result.

Reads a parplan JSON document on stdin and prints, one per line, the flags that
make `parplan estimate` cost the same configuration: results[K] (plan), result
(size, whatif points[K]), or the document itself (estimate).  Usage:
    config_flags.py [PATH]    PATH: results.0, points.2.result, result, or "" (top)
"""
import json
import sys

doc = json.load(sys.stdin)
node = doc
for part in (sys.argv[1].split(".") if len(sys.argv) > 1 and sys.argv[1] else []):
    node = node[int(part)] if part.isdigit() else node[part]
c = node["config"]
flags = ["--gpus", c["gpus"], "--tp", c["tp"], "--pp", c["pp"], "--dp", c["dp"],
         "--cp", c["cp"], "--ep", c["ep"], "--vp", c["vp"], "--mbs", c["mbs"],
         "--global-batch", c["global_batch"], "--zero", c["zero"],
         "--recompute", c["recompute"],
         "--sequence-parallel=" + ("yes" if c["sequence_parallel"] else "no"),
         "--flash-attention=" + ("yes" if c["flash_attention"] else "no"),
         "--precision", c["precision"], "--optimizer", c["optimizer"]]
if "etp" in c:  # a model with experts
    flags += ["--etp", c["etp"]]
if c.get("recompute_layers"):
    flags += ["--recompute-layers", c["recompute_layers"]]
stages = c["stage_layers"]
if len(stages) > 1:
    flags += ["--first-stage-layers", stages[0], "--last-stage-layers", stages[-1]]
if "cp_comm" in c:  # present with cp > 1
    flags += ["--cp-comm", c["cp_comm"]]
if "shard_group" in c:  # sharded in groups (every rank when absent)
    flags += ["--shard-group", c["shard_group"]]
if "offload_optimizer" in c:  # a share of the optimizer on the host
    flags += ["--offload-optimizer", c["offload_optimizer"]]
if c["schedule"] not in ("1f1b", "interleaved"):  # gpipe, zb-h1, ..., dualpipev
    flags += ["--schedule", c["schedule"]]
print("\n".join(str(f) for f in flags))
