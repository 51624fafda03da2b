#!/usr/bin/env python3
"""check_spec.py - every key parplan writes in its JSON output is in docs/spec.md, as TAP.

Usage: check_spec.py PARPLAN [SOURCE_ROOT] [--list]

Runs PARPLAN from SOURCE_ROOT (default: two folders up from here), with
PARPLAN_DATA_DIR set to it, on the arguments of every golden case
(tests/golden/*.args) and on EXTRA below, which add what the golden cases lack
(MoE and MLA models, context parallelism, the split-backward schedules,
sharding in groups and offload, fp16 and fp8 recipes, not_searched, spares and
cost, whatif and plan on a mixed cluster, validate --fit, --cv and a run that
cannot be predicted, model show of an MLA model, topology generate and show of
mesh, NVLS and SHARP clusters, estimate --from, SGLang processes several a
server, torchtitan's mxfp8 converters).  Each command's stdout is
parsed as JSON and every object key in it is looked up in docs/spec.md.
Prints "ok K - CASE (SECTION): N key paths" or "not ok K - ...: missing ..."
for each command; exits 1 when any failed.  --list prints the commands and the
section each is checked against.  Standard library only.

The rule, stated for readers in docs/spec.md ("Output documents, key by key"):

  * A key path is the object keys from the document's root joined by ".", with
    "[]" for every element of an array: results[].config.etp.
  * The document is checked against one section of docs/spec.md, named after
    the command (DOCUMENT_SECTION below): "plan", "whatif on a mixed cluster",
    "topology generate", ...  A section declares key paths in the first cell
    of its table rows, each in backticks; several may share a row.  A declared
    path "X[]" also declares "X".  The path "." is the section's object itself.
  * When a row's second cell (type) links to a section of docs/spec.md
    ("[Configuration result](#configuration-result)"), the value at that path
    (each element, for a path ending in "[]") is that section's object: its keys
    are looked up in that section, relative to it.  A "." row with such a link
    says the object itself is also that section's (every document's
    schema_version and tool; estimate's configuration result).
  * Each key path must be declared by one of the sections in scope at its
    place: exact match, component by component.  No key is skipped.

Keys chosen by the input rather than by parplan are written in the spec as
placeholders in angle brackets, and each placeholder is a rule checked here
(PLACEHOLDERS), never a blanket skip:

  <sweep key>   the --sweep keys of the command being checked (whatif's
                points[].values, and points[] of whatif on a mixed cluster,
                are keyed by them: "gpus", "rails.nic_bandwidth",
                "pools[1].servers"); any other key there is missing;
  <config key>  a key declared at the top of the "Configuration" section (the
                keys of a plan difference's knobs);
  <constant>    a key declared as constants.NAME in the "validate" section (the
                fit record's within_half_a_point).

Values are never checked, only keys.  A command whose stdout is empty (plan
when nothing fits prints nothing) has no keys and passes on its exit status.
PARPLAN_WRAPPER (valgrind, in scripts/test) is not applied: the golden test
runs the golden commands under it, and this test is about the documents, not
memory.
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Commands beyond the golden cases, with the exit status each must end with and,
# where a later command reads its output, the file its stdout is saved to
# ({tmp} is a temporary folder; {root} the source root).  Keep each quick.
EXTRA = [
    # an inference engine's layouts (issue 33's first piece), with latency targets
    ("serve-llama3-8b", 0,
     "serve --model llama3-8b --topology dgx-h100-superpod --gpus 8 --input-len 1024 "
     "--output-len 256 --tpot 20ms --ttft 200ms --top 3 --json"),
    # a MoE engine over two servers: SGLang's processes, several a server
    ("serve-qwen3-30b-a3b-sglang", 0,
     "serve --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 16 --input-len 1024 "
     "--output-len 512 --json"),
    # measured inference-engine runs (issue 33)
    ("validate-serve-runs", 0, "validate --runs tests/data/serve-runs.json --json"),
    ("validate-rl-runs", 0, "validate --runs tests/data/rl-runs.json --json"),
    # an RL step, dense and MoE (issue 33): colocated and disaggregated plans
    ("rl-llama3-8b", 0,
     "rl --model llama3-8b --topology dgx-h100-superpod --gpus 32 --prompts 64 --samples 8 "
     "--input-len 512 --output-len 1024 --output-max 4096 --top 4 --json"),
    ("rl-qwen3-30b-a3b", 0,
     "rl --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 32 --prompts 64 "
     "--samples 8 --input-len 512 --output-len 1024 --reward-time 2s --top 3 --json"),
    # MoE with MLA and MTP, fp8, full recomputation of some layers: etp,
    # ep_overlap, fp8_recipe, recompute_layers, the MLA launch flags
    ("estimate-deepseek-v3-fp8", 0,
     "estimate --model deepseek-v3 --topology deepseek-h800-2048 --precision fp8 "
     "--global-batch 15360 --tp 1 --pp 16 --ep 64 --zero 1 --mbs 1 --flash-attention "
     "--first-stage-layers 4 --last-stage-layers 1 --recompute full --recompute-layers 2 --json"),
    # DualPipe: the pipeline object with FB, megatron_error and deepspeed_error
    ("estimate-deepseek-v3-dualpipe", 0,
     "estimate --model deepseek-v3 --topology deepseek-h800-2048 --precision fp8 "
     "--global-batch 15360 --tp 1 --pp 16 --ep 64 --zero 1 --mbs 1 --flash-attention "
     "--recompute full --schedule dualpipe --json"),
    # a recipe that leaves the tensor-parallel overlap off: tp_overlap false
    ("estimate-llama3-70b-no-tp-overlap", 0,
     "estimate --model llama3-70b --topology dgx-h100-superpod --gpus 64 --tp 4 --pp 4 "
     "--mbs 1 --global-batch 128 --zero 1 --sequence-parallel --flash-attention "
     "--tp-overlap=no --json"),
    ("estimate-gpt3-175b-zb-h1", 0,
     "estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 16 "
     "--mbs 1 --global-batch 1536 --zero 1 --sequence-parallel --flash-attention "
     "--schedule zb-h1 --json"),
    # context parallelism, hierarchical: cp_comm and cp_a2a
    ("estimate-llama3-70b-cp-a2a-p2p", 1,
     "estimate --model llama3-70b --topology dgx-h100-superpod --gpus 256 --tp 4 --pp 2 "
     "--cp 8 --cp-comm a2a+p2p --mbs 1 --global-batch 16 --seq-len 32768 --flash-attention "
     "--sequence-parallel --json"),
    # ZeRO-3 in groups with part of the optimizer offloaded: shard_group,
    # offload_optimizer, memory.host, MiCS and DeepSpeed's offload ratio
    ("estimate-llama3-8b-zero3-groups-offload", 0,
     "estimate --model llama3-8b --topology dgx-h100-superpod --gpus 256 --tp 1 --pp 1 "
     "--mbs 1 --global-batch 512 --zero 3 --shard-group 8 --offload-optimizer 0.5 "
     "--flash-attention --json"),
    # fp16: DeepSpeed's fp16 section
    ("estimate-llama3-8b-fp16", 1,
     "estimate --model llama3-8b --topology dgx-h100-superpod --gpus 64 --tp 2 --pp 1 "
     "--mbs 1 --global-batch 256 --precision fp16 --flash-attention --json"),
    # fp8 current scaling with bf16 end layers: bf16_layers
    ("estimate-llama3-70b-fp8-bf16-layers", 0,
     "estimate --model llama3-70b --topology dgx-h100-superpod --gpus 256 --tp 4 --pp 4 "
     "--mbs 1 --global-batch 512 --precision fp8 --fp8-recipe tensorwise --bf16-layers 2 "
     "--flash-attention --sequence-parallel --zero 1 --json"),
    # torchtitan's converters: mxfp8 on a dense model, and on a MoE model's experts
    ("estimate-llama3-8b-mxfp8-torchtitan", 0,
     "estimate --topology gb200-nvl72 --model llama3-8b --gpus 64 --tp 1 --pp 1 --mbs 1 "
     "--global-batch 256 --precision mxfp8 --flash-attention --zero 3 --stack fsdp --json"),
    ("estimate-qwen3-30b-a3b-mxfp8-torchtitan", 0,
     "estimate --topology gb200-nvl72 --model qwen3-30b-a3b --gpus 64 --tp 1 --pp 1 --ep 8 "
     "--mbs 1 --global-batch 256 --precision mxfp8 --flash-attention --zero 3 --stack fsdp "
     "--json"),
    ("estimate-from-plan", 0,
     "estimate --from tests/data/plan-llama3-8b-pp4.json#2 --json"),
    ("memory-llama3-70b-offload", 0,
     "memory --model llama3-70b --topology dgx-h100-superpod --gpus 256 --tp 4 --pp 1 --mbs 1 "
     "--global-batch 512 --zero 2 --offload-optimizer 1 --flash-attention --sequence-parallel "
     "--json"),
    # long context: context parallelism in the plan's results
    ("plan-llama3-8b-long-context", 0,
     "plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 64 "
     "--seq-len 32768 --top 2 --json"),
    # a family left out that beats #1: not_searched (as tests/cli/test_contract.sh)
    ("plan-llama3-405b-not-searched", 0,
     "plan --model llama3-405b --topology dgx-h100-superpod --gpus 128 --global-batch 1024 "
     "--top 1 --offload-optimizer 0 --json"),
    ("size-llama3-8b-spares-cost", 0,
     "size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 30 "
     "--global-batch 512 --spares 16 --gpu-hour-price 2 --json"),
    ("whatif-llama3-8b-spares-cost", 0,
     "whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 "
     "--sweep gpus=128,256 --sweep spares=0,16 --tokens 1T --gpu-hour-price 2 --json"),
    ("whatif-llama3-8b-mixed", 0,
     "whatif --model llama3-8b --topology mixed-h100-b200 --global-batch 64 "
     "--sweep 'pools[1].servers=4,8' --json"),
    ("validate-fit", 0, "validate --runs tests/data/heldout_runs.json --fit --json"),
    ("validate-cv", 0, "validate --runs tests/data/heldout_runs.json --cv 2 --json"),
    # a run that cannot be predicted (error_message) and one that measured memory
    ("validate-not-predicted", 1, "validate --runs {tmp}/runs-not-predicted.json --json"),
    ("model-show-deepseek-v3", 0, "model show deepseek-v3 --json"),
    ("topology-show-gb200-nvl72", 0, "topology show gb200-nvl72 --json"),
    # a mesh (fabric) and MXFP4, shown again from the file
    ("topology-generate-mi355x", 0,
     "topology generate --servers 4 --gpus-per-server 8 --gpu MI355X --rails 8 "
     "--nic-bandwidth 400Gb/s --leaf-servers 4 --name mi355x", "mi355x.json"),
    ("topology-show-mi355x", 0, "topology show {tmp}/mi355x.json --json"),
    # NVLS and SHARP, and the GPU as an object when its memory is overridden
    ("topology-generate-h100-nvls-sharp", 0,
     "topology generate --gpu H100 --servers 16 --gpus-per-server 8 --rails 8 "
     "--nic-bandwidth 400Gb/s --leaf-servers 16 --nvls --sharp --gpu-memory 96GiB "
     "--name h100-nvls", "h100-nvls.json"),
    ("topology-show-h100-nvls-sharp", 0, "topology show {tmp}/h100-nvls.json --json"),
]

# The section of docs/spec.md each command's document is checked against.
DOCUMENT_SECTION = {
    "plan": "plan",
    "estimate": "estimate",
    "memory": "memory",
    "whatif": "whatif",
    "size": "size",
    "collective": "collective",
    "validate": "validate",
    "compare": "compare",
    "models": "models",
    "model show": "model show",
    "topologies": "topologies",
    "topology show": "topology show",
    "topology generate": "topology generate",
    "serve": "serve",
    "rl": "rl",
}
MIXED = " on a mixed cluster"  # plan and whatif on a topology with pools


def slug(title):
    """The anchor GitHub gives a heading."""
    t = title.strip().lower().replace("`", "")
    t = re.sub(r"[^\w\- ]", "", t)
    return t.replace(" ", "-")


def parse_path(text):
    """A declared key path as a tuple of components ("[]" for array elements)."""
    if text == ".":
        return ()
    parts = []
    for seg in text.split("."):
        key = seg
        while key.endswith("[]"):
            key = key[:-2]
        if key:
            parts.append(key)
        parts.extend(["[]"] * ((len(seg) - len(key)) // 2))
    return tuple(parts)


def split_row(line):
    """The cells of a table row; an escaped \\| stays inside its cell."""
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in cells[1:-1]]


def load_spec(path):
    """{anchor: {"title": str, "rows": [(components, embedded anchor or None)]}}."""
    sections, current, fenced = {}, None, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = re.match(r"^#{1,6} (.*)", line)
        if m:
            title = m.group(1).strip()
            current = {"title": title, "rows": []}
            sections[slug(title)] = current
            continue
        if current is None or not line.startswith("|"):
            continue
        cells = split_row(line)
        if len(cells) < 2 or cells[0] == "key" or set(cells[0]) <= set("-: "):
            continue
        link = re.search(r"\]\(#([^)]+)\)", cells[1])
        for text in re.findall(r"`([^`]+)`", cells[0]):
            comps = parse_path(text)
            current["rows"].append((comps, link.group(1) if link else None))
            if comps and comps[-1] == "[]":  # "X[]" also declares X
                current["rows"].append((comps[:-1], None))
    return sections


class Spec:
    def __init__(self, path):
        self.sections = load_spec(path)
        self.errors = []
        for anchor, sec in self.sections.items():
            for comps, emb in sec["rows"]:
                if emb and emb not in self.sections:
                    self.errors.append(f"section {sec['title']!r} links to #{emb}, "
                                       "which no heading of docs/spec.md has")
                for part in comps:
                    if part.startswith("<") and part not in PLACEHOLDERS:
                        self.errors.append(f"section {sec['title']!r}: {part} is no "
                                           "placeholder this test knows")
        config = self.sections.get("configuration", {"rows": []})
        validate = self.sections.get("validate", {"rows": []})
        self.config_keys = {c[0] for c, _ in config["rows"] if len(c) == 1}
        self.constants = {c[1] for c, _ in validate["rows"]
                          if len(c) == 2 and c[0] == "constants"}

    def matches(self, declared, actual, ctx):
        if len(declared) != len(actual):
            return False
        for d, a in zip(declared, actual):
            if d.startswith("<") and d.endswith(">"):
                rule = PLACEHOLDERS.get(d)  # an unknown one fails test 1
                if not rule or not rule(self, a, ctx):
                    return False
            elif d != a:
                return False
        return True

    def declared(self, anchor, path, ctx):
        return any(self.matches(c, path, ctx) for c, _ in self.sections[anchor]["rows"])

    def under(self, anchor, path, ctx):
        """Whether the section declares path or anything below it."""
        return any(self.matches(c[:len(path)], path, ctx)
                   for c, _ in self.sections[anchor]["rows"] if len(c) >= len(path))

    def embedded(self, anchor, path, ctx):
        return [e for c, e in self.sections[anchor]["rows"] if e and self.matches(c, path, ctx)]

    def scopes(self, anchor, seen=()):
        """The section, and the sections its "." rows say the object also is."""
        out = [(anchor, ())]
        for comps, emb in self.sections[anchor]["rows"]:
            if comps == () and emb and emb not in seen:
                out += self.scopes(emb, seen + (anchor,))
        return out


# Each placeholder's rule: (spec, actual key, context of the command) -> bool.
PLACEHOLDERS = {
    # whatif's points are keyed by the sweep keys given on its command line
    "<sweep key>": lambda spec, key, ctx: key in ctx["sweep_keys"],
    # a plan difference's knobs are configuration keys
    "<config key>": lambda spec, key, ctx: key in spec.config_keys,
    # the fit record names the constants the validate section lists
    "<constant>": lambda spec, key, ctx: key in spec.constants,
}


def check_document(spec, doc, anchor, ctx):
    """(key paths seen, missing key paths) of doc against the section."""
    seen, missing = set(), []

    def descend(scopes, key):
        out = []
        for sec, pre in scopes:
            q = pre + (key,)
            if spec.under(sec, q, ctx):
                out.append((sec, q))
            for emb in spec.embedded(sec, q, ctx):
                out += spec.scopes(emb)
        return out

    def walk(value, scopes, path):
        if isinstance(value, dict):
            for key, child in value.items():
                shown = f"{path}.{key}" if path else key
                if not any(spec.declared(sec, pre + (key,), ctx) for sec, pre in scopes):
                    where = "/".join(dict.fromkeys(spec.sections[sec]["title"]
                                                   for sec, _ in scopes)) or "no section"
                    entry = f"{shown} (looked up in: {where})"
                    if entry not in missing:
                        missing.append(entry)
                seen.add(shown)
                walk(child, descend(scopes, key), shown)
        elif isinstance(value, list):
            for item in value:
                walk(item, descend(scopes, "[]"), path + "[]")

    walk(doc, spec.scopes(anchor), "")
    return seen, missing


def sweep_keys(words):
    keys = set()
    for i, w in enumerate(words):
        value = None
        if w == "--sweep" and i + 1 < len(words):
            value = words[i + 1]
        elif w.startswith("--sweep="):
            value = w[len("--sweep="):]
        if value and "=" in value:
            keys.add(value.split("=", 1)[0])
    return keys


def is_mixed(words, root):
    """Whether the command's --topology is a mixed cluster (a topology with pools)."""
    name = None
    for i, w in enumerate(words):
        if w == "--topology" and i + 1 < len(words):
            name = words[i + 1]
        elif w.startswith("--topology="):
            name = w[len("--topology="):]
    if not name:
        return False
    path = name if ("/" in name or name.endswith(".json")) else f"topologies/{name}.json"
    try:
        doc = json.load(open(os.path.join(root, path), encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "pools" in doc


def section_of(words, root):
    command = " ".join(words[:2]) if words and words[0] in ("model", "topology") else words[0]
    title = DOCUMENT_SECTION.get(command)
    if title and command in ("plan", "whatif") and is_mixed(words, root):
        title += MIXED
    if command == "validate" and any("serve-runs" in w or "rl-runs" in w for w in words):
        title = "validate of serving runs and RL steps"  # studies/serveruns.h
    return title


def write_runs_not_predicted(root, tmp):
    """tests/data/heldout_runs.json's first two runs and one that cannot fit (as
    tests/cli/test_calibration.sh builds it), the first with a measured memory."""
    runs = json.load(open(os.path.join(root, "tests/data/heldout_runs.json"), encoding="utf-8"))
    first = dict(runs[0], measured=dict(runs[0]["measured"], memory_bytes=60 * 2**30))
    bad = dict(runs[0], id="cannot-fit", model="megatron-1t")
    bad["config"] = dict(bad["config"], gpus=8, tp=1, pp=1, dp=8, mbs=1, global_batch=8)
    with open(os.path.join(tmp, "runs-not-predicted.json"), "w", encoding="utf-8") as f:
        json.dump([first, runs[1], bad], f)


def cases(root):
    out = []
    for args in sorted(glob.glob(os.path.join(root, "tests/golden/*.args"))):
        name = os.path.basename(args)[:-len(".args")]
        status_file = args[:-len(".args")] + ".status"
        status = int(open(status_file).read()) if os.path.exists(status_file) else 0
        out.append((name, status, open(args, encoding="utf-8").read().strip(), None))
    for entry in EXTRA:
        name, status, line = entry[:3]
        out.append((name, status, line, entry[3] if len(entry) > 3 else None))
    return out


def main():
    argv = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    parplan = os.path.abspath(argv[0])
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(HERE, "..", ".."))
    spec = Spec(os.path.join(root, "docs/spec.md"))
    env = dict(os.environ, PARPLAN_DATA_DIR=root)
    todo = cases(root)
    if "--list" in sys.argv:
        for name, status, line, _ in todo:
            print(f"{name}\t{section_of(shlex.split(line), root)}\t{line}")
        return 0
    tmp = tempfile.mkdtemp(prefix="check_spec.")
    write_runs_not_predicted(root, tmp)

    print(f"1..{len(todo) + 1}")
    failed = 0
    ok = not spec.errors
    failed += not ok
    print(f"{'ok' if ok else 'not ok'} 1 - docs/spec.md's links and placeholders resolve"
          + ("" if ok else ": " + "; ".join(spec.errors)))
    documents = paths = 0
    for k, (name, status, line, save_as) in enumerate(todo, 2):
        words = shlex.split(line.replace("{tmp}", tmp).replace("{root}", root))
        title = section_of(words, root)
        anchor = slug(title) if title else None
        why = ""
        if anchor not in spec.sections:
            why = f"no section {title!r} in docs/spec.md for '{' '.join(words[:2])}'"
        else:
            r = subprocess.run([parplan] + words, cwd=root, env=env, capture_output=True,
                               text=True)
            if r.returncode != status:
                why = (f"exit status {r.returncode}, expected {status}: "
                       f"{r.stderr.strip().splitlines()[-1:] or ''}")
            elif r.stdout.strip():
                if save_as:
                    with open(os.path.join(tmp, save_as), "w", encoding="utf-8") as f:
                        f.write(r.stdout)
                try:
                    doc = json.loads(r.stdout)
                except ValueError as e:
                    doc, why = None, f"stdout is not JSON: {e}"
                if not why:
                    seen, missing = check_document(
                        spec, doc, anchor, {"sweep_keys": sweep_keys(words)})
                    documents += 1
                    paths += len(seen)
                    if missing:
                        why = (f"{len(missing)} key path(s) not in docs/spec.md: "
                               + ", ".join(missing))
                    else:
                        title += f", {len(seen)} key paths"
        failed += bool(why)
        print(f"{'not ok' if why else 'ok'} {k} - {name} ({title}){': ' + why if why else ''}")
    print(f"# {paths} key paths in {documents} JSON documents, each found in docs/spec.md")
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
