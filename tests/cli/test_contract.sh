#!/bin/sh
# test_contract.sh PARPLAN SOURCE_ROOT - one plan, one truth (issue 13): the best
# plan does not depend on --top, and what plan, whatif, size and validate print
# for a configuration is what estimate gives for it, to the last digit.
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"
flags_of() { python3 "$ROOT/tests/cli/config_flags.py" "$1"; }
step_of() { python3 -c "import json, sys; d = json.load(sys.stdin); print(repr(eval('d' + sys.argv[1])))" "$1"; }

# estimate on the configuration a JSON document names ($1: the document, $2: the
# path to its result for config_flags.py, $3: the same path as a Python subscript)
same_as_estimate() {
    doc=$1 path=$2 sub=$3 model=$4 topo=$5 extra=${6:-}
    # shellcheck disable=SC2046,SC2086
    est=$("$P" estimate --model "$model" --topology "$topo" $(printf '%s' "$doc" | flags_of "$path") $extra --json 2>&1) || return 1
    a=$(printf '%s' "$doc" | step_of "$sub['step_time_s']")
    b=$(printf '%s' "$est" | step_of "['step_time_s']")
    [ -n "$a" ] && [ "$a" = "$b" ]
}

for case in "bloom-176b dgx-a100-superpod 384 2048" "gpt3-175b dgx-h100-superpod 1024 1536" \
    "llama3-405b meta-24k-roce 2048 1024" "mixtral-8x7b dgx-h100-superpod 256 1024"; do
    set -- $case
    model=$1 topo=$2 gpus=$3 batch=$4
    run "$P" plan --model "$1" --topology "$2" --gpus "$3" --global-batch "$4" --top 1 --json
    one=$out
    run "$P" plan --model "$1" --topology "$2" --gpus "$3" --global-batch "$4" --top 10 --json
    ten=$out
    c1=$(printf '%s' "$one" | python3 -c "import json, sys; r = json.load(sys.stdin)['results'][0]; print(r['config'], r['step_time_s'])")
    c10=$(printf '%s' "$ten" | python3 -c "import json, sys; r = json.load(sys.stdin)['results'][0]; print(r['config'], r['step_time_s'])")
    check "$1 on $3 GPUs of $2: #1 is the same for --top 1 and --top 10" '[ -n "$c1" ] && [ "$c1" = "$c10" ]'
    check "$1 on $3 GPUs of $2: plan's #1 is what estimate gives for it" 'same_as_estimate "$one" results.0 "[\"results\"][0]" "$model" "$topo"'
    check "$1 on $3 GPUs of $2: plan's #10 is what estimate gives for it" 'same_as_estimate "$ten" results.9 "[\"results\"][9]" "$model" "$topo"'
    run "$P" whatif --model "$1" --topology "$2" --global-batch "$4" --sweep gpus="$3" --json
    w=$out
    check "$1 on $3 GPUs of $2: whatif's point is what estimate gives for it" 'same_as_estimate "$w" points.0.result "[\"points\"][0][\"result\"]" "$model" "$topo"'
    wc=$(printf '%s' "$w" | python3 -c "import json, sys; r = json.load(sys.stdin)['points'][0]['result']; print(r['config'], r['step_time_s'])")
    check "$1 on $3 GPUs of $2: whatif at gpus=$3 finds plan's #1 (or fewer GPUs, faster)" 'printf "%s" "$w" | python3 -c "
import json, sys
w = json.load(sys.stdin)[\"points\"][0][\"result\"][\"step_time_s\"]
p = json.loads(sys.argv[1])[\"results\"][0][\"step_time_s\"]
assert w <= p, (w, p)
" "$one"'
done

# size picks a GPU count and prints the plan it costed
run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67 --global-batch 2048 --json
s=$out
check "size's plan is what estimate gives for it" 'same_as_estimate "$s" result "[\"result\"]" llama3-405b h100-64k'

# validate goes through the same best-plan search: its prediction for Llama 3 405B
# on 8,192 GPUs (held-out run, every knob it states pinned) is plan's #1 with the
# same pins, and estimate's figure for that configuration
run "$P" validate --runs "$ROOT/tests/data/heldout_runs.json" --json
v=$out
sel=$(printf '%s' "$v" | python3 -c "
import json, sys
d = json.load(sys.stdin)
i = [r['id'] for r in d['results']].index('llama3_405b_8192')
print(i)")
pins="--model llama3-405b --topology meta-24k-roce --tp 8 --pp 16 --cp 1 --ep 1 --mbs 1 --global-batch 2048 --sequence-parallel --flash-attention --precision bf16 --stack megatron-core"
run "$P" plan $pins --gpus 8192 --dp 64 --top 1 --json
pv=$out
vs=$(printf '%s' "$v" | step_of "['results'][$sel]['predicted']['step_time_s']")
ps=$(printf '%s' "$pv" | step_of "['results'][0]['step_time_s']")
check "validate's prediction is plan's #1 under the run's pins" '[ -n "$vs" ] && [ "$vs" = "$ps" ]'
check "validate's prediction is what estimate gives for it" 'same_as_estimate "$v" "results.$sel.predicted" "[\"results\"][$sel][\"predicted\"]" llama3-405b meta-24k-roce "--stack megatron-core"'
# near the memory cliff: on 16,384 GPUs the run is predicted with a configuration
# the model puts over memory by less than its 10% uncertainty, marked so, because
# even ranked as slower by the share it is over it beats plan's #1 that fits
run "$P" plan $pins --gpus 16384 --dp 128 --top 1 --json
check "validate takes a configuration within the memory uncertainty when it is faster after its penalty" 'printf "%s" "$v" | python3 -c "
import json, sys
r = [x for x in json.load(sys.stdin)[\"results\"] if x[\"id\"] == \"llama3_405b_16384\"][0]
p = json.loads(sys.argv[1])[\"results\"][0]
m = r[\"predicted\"][\"memory\"]
share = m[\"total\"] / m[\"capacity\"] - 1
assert r[\"over_memory\"] and not m[\"fits\"] and 0 < share <= 0.10, (r[\"over_memory\"], share)
assert r[\"predicted\"][\"step_time_s\"] * (1 + share) < p[\"step_time_s\"], (r[\"predicted\"][\"step_time_s\"], p[\"step_time_s\"])
" "$out"'

# the search says what it leaves out: plan's note on TP across servers is exactly
# what the same plan with --allow-tp-across-servers finds (llama3-405b on 128 H100 at
# a batch of 1,024, the optimizer on the GPU: wider TP across servers beats the
# default #1; offloaded, tp 4 x cp 4 without recomputation beats both)
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 128 --global-batch 1024 --top 1 --json --offload-optimizer 0
dflt=$out
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 128 --global-batch 1024 --top 1 --allow-tp-across-servers --json --offload-optimizer 0
wide=$out
check "plan --json: not_searched names TP across servers, its flag and speedup, as the flag's own #1" 'printf "%s" "$dflt" | python3 -c "
import json, sys
d, w = json.load(sys.stdin), json.loads(sys.argv[1])
best = w[\"results\"][0]
fams = {x[\"family\"]: x for x in d[\"not_searched\"]}
assert best[\"config\"][\"tp\"] > 8 and best[\"step_time_s\"] < d[\"results\"][0][\"step_time_s\"]
f = fams[\"tp_across_servers\"]
assert f[\"allow\"] == \"--allow-tp-across-servers\" and f[\"speedup\"] > 1, f
assert f[\"result\"][\"step_time_s\"] == best[\"step_time_s\"], (f[\"result\"][\"step_time_s\"], best[\"step_time_s\"])
" "$wide"'
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 128 --global-batch 1024 --top 1 --offload-optimizer 0
check "plan's table says what it left out and the flag that lets it in" '[ $rc -eq 0 ] && has "$out" "not searched: " && has "$out" "--allow-tp-across-servers"'
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 128 --global-batch 1024 --top 1 --allow-tp-across-servers --offload-optimizer 0
check "with the flag, no note on that family" '[ $rc -eq 0 ] && ! has "$out" "allow it with --allow-tp-across-servers"'
run "$P" estimate --model llama3-405b --topology dgx-h100-superpod --gpus 128 --tp 16 --pp 8 --mbs 1 --global-batch 2048 --recompute full --sequence-parallel --flash-attention
check "estimate warns when its configuration lies outside the default search" 'has "$err" "outside plan'"'"'s default search" && has "$err" "--allow-tp-across-servers"'
run "$P" estimate --model gpt3-175b --topology dgx-h100-superpod --tp 8 --pp 8 --mbs 1 --global-batch 1536 --zero 1 --recompute full
check "estimate inside the default search: no such warning" '[ $rc -eq 0 ] && ! has "$err" "outside"'

# --timing is what its help says: the search's wall time, in the table and the JSON
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep gpus=512,1024 --timing
check "whatif --timing prints the search's wall time" '[ $rc -eq 0 ] && has "$out" "configurations costed in"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep gpus=512,1024
check "whatif without --timing: no wall time" '[ $rc -eq 0 ] && ! has "$out" "configurations costed in"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep gpus=512 --json
check "whatif --json: each point carries its search figures, seconds null without --timing" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
s = json.load(sys.stdin)[\"points\"][0][\"search\"]
assert s[\"evaluated\"] > 0 and s[\"plans\"] == 1 and s[\"seconds\"] is None, s
"'
run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67 --global-batch 2048 --timing --json
check "size --timing --json: the searches' figures and wall time" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
s = json.load(sys.stdin)[\"search\"]
assert s[\"plans\"] > 1 and s[\"seconds\"] > 0, s
"'
run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67 --global-batch 2048 --timing
check "size --timing prints the search line" '[ $rc -eq 0 ] && has "$out" "configurations costed in"'

# ---- the launch output runs the plan that was costed: Megatron-LM's own checks
# (tests/cli/megatron_check.py, with their file:line) applied to the flags alone
# give back the plan's dp, microbatches, stage split, vp, recompute, SP, ZeRO stage
# and optimizer, for every result of plans over models, clusters and pins; and the
# network they build is the planned model: every architecture key, and the
# parameter count of Megatron-LM's own formula (theoretical_memory_usage.py)
# equal to model show's
megatron_ok() {
    name=$(printf '%s' "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["model"])') &&
        "$P" model show "$name" --json >"$tmp/mshow.json" 2>/dev/null &&
        printf '%s' "$1" | python3 "$ROOT/tests/cli/megatron_check.py" --model "$tmp/mshow.json" >"$tmp/mc" 2>&1
}
for case in "bloom-176b dgx-a100-superpod 384 2048" "llama3-405b dgx-h100-superpod 1024 1024" \
    "mixtral-8x7b dgx-h100-superpod 256 1024" "gpt3-175b gb200-nvl72 576 1152" \
    "llama3-70b meta-24k-roce 512 512"; do
    set -- $case
    run "$P" plan --model "$1" --topology "$2" --gpus "$3" --global-batch "$4" --top 10 --json
    check "$1 on $3 GPUs of $2: Megatron builds all 10 plans as costed" 'megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc"'
done
# a split no first/last or account flags build (DeepSeek-V3's 61 layers as 16, 16,
# 16, 13 on pp 4, interleaved 4 ways, as Megatron-Bridge's recipe lays them out):
# --pipeline-model-parallel-layout (core_v0.13), each rank's layers over its chunks
run "$P" plan --model deepseek-v3 --topology deepseek-h800-2048 --precision fp8 --gpus 256 --tp 1 --pp 4 --vp 4 --ep 64 --zero 1 --mbs 1 --global-batch 512 --first-stage-layers 16 --last-stage-layers 13 --top 2 --json
check "DeepSeek-V3 pp 4 x vp 4 over 16/16/16/13 layers: an explicit layout Megatron builds as costed (core_v0.13's flag, core_v0.14 for MLA's --rope-type)" 'megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc" && has "$out" "\"--pipeline-model-parallel-layout\"" && has "$out" "Et*4|t*4|t*4|t*4|t*4|t*4|t*4|t*3|t*4|t*4|t*4|t*3|t*4|t*4|t*4|t*3mL" && has "$out" "\"megatron_lm\": \"core_v0.14\""'
layout_bad=$(printf '%s' "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d[\"results\"][0][\"launch\"][\"megatron_args\"]
i = a.index(\"--pipeline-model-parallel-layout\")
a[i + 1] = a[i + 1].replace(\"t*3mL\", \"t*2mL\")
json.dump(d, sys.stdout)")
check "megatron_check refuses a layout one decoder layer short" 'printf "%s" "$layout_bad" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*pipeline_parallel_layer_layout.py:107-110" "$tmp/mc"'
# mxfp8 and nvfp4: Megatron-Bridge's recipe flags, the precision Megatron takes
# from them, and the release that has them (core_v0.12 mxfp8, core_v0.15 nvfp4)
for p in mxfp8 nvfp4; do
    run "$P" plan --model llama3-70b --topology gb200-nvl72 --gpus 576 --global-batch 1152 --precision "$p" --top 3 --json
    check "plan --precision $p on GB200: Megatron runs it in $p, all 3 plans as costed" 'megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc" && has "$out" "\"precision\": \"$p\"" && has "$out" "\"efficiency_assumed\""'
    eval "plan_$p=\$out"
done
check "mxfp8 launches --fp8-format e4m3 --fp8-recipe mxfp8" 'has "$plan_mxfp8" "\"--fp8-recipe\"" && has "$plan_mxfp8" "\"mxfp8\"" && has "$plan_mxfp8" "\"e4m3\""'
check "nvfp4 launches --fp4-format e2m1 --fp4-recipe nvfp4 at core_v0.15" 'has "$plan_nvfp4" "\"--fp4-format\"" && has "$plan_nvfp4" "\"e2m1\"" && has "$plan_nvfp4" "\"megatron_lm\": \"core_v0.15\""'
check "megatron_check refuses --fp4-format with --fp8-format" 'printf "%s" "$plan_nvfp4" | python3 -c "
import json, sys
d = json.load(sys.stdin)
d[\"results\"][0][\"launch\"][\"megatron_args\"] += [\"--fp8-format\", \"hybrid\"]
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*arguments.py:1100-1101" "$tmp/mc"'
check "megatron_check refuses nvfp4 flags on core_v0.14" 'printf "%s" "$plan_nvfp4" | python3 -c "
import json, sys
d = json.load(sys.stdin)
d[\"results\"][0][\"launch\"][\"megatron_lm\"] = \"core_v0.14\"
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*--fp4-format needs core_v0.15" "$tmp/mc"'
check "megatron_check: a plan launched as fp8 is not mxfp8" 'printf "%s" "$plan_mxfp8" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d[\"results\"][0][\"launch\"][\"megatron_args\"]
i = a.index(\"--fp8-recipe\"); del a[i:i + 2]
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "MISMATCH.*precision" "$tmp/mc"'
# fp8 weights kept alone and gathered in fp8, as the 2025+ recipes keep them
# (stack.h ppl_stack_low_params): --fp8-param-gather, with mxfp8 and the distributed
# optimizer the gradient buffer reused (core_v0.13); megatron_check refuses it
# without a distributed optimizer (arguments.py:1095-1097) and the reuse without it
# (distributed_data_parallel_config.py:259-260)
run "$P" plan --model llama3-8b --topology gb200-nvl72 --gpus 64 --global-batch 256 --precision mxfp8 --zero 1 --top 1 --json
plan_mx1=$out
check "mxfp8 with ZeRO-1 on nemo-2025: --fp8-param-gather and the buffer reuse, as costed" 'megatron_ok "$plan_mx1" && ! grep -qv "^ok" "$tmp/mc" && has "$plan_mx1" "\"--fp8-param-gather\"" && has "$plan_mx1" "\"--reuse-grad-buf-for-mxfp8-param-ag\"" && has "$plan_mx1" "\"megatron_lm\": \"core_v0.13\""'
check "megatron_check refuses --fp8-param-gather without a distributed optimizer" 'printf "%s" "$plan_mx1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d[\"results\"][0][\"launch\"][\"megatron_args\"]
a.remove(\"--use-distributed-optimizer\")
a.remove(\"--overlap-param-gather\")
if \"--num-distributed-optimizer-instances\" in a:  # sharded in groups: the optimizer instances go too
    i = a.index(\"--num-distributed-optimizer-instances\")
    del a[i:i + 2]
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*arguments.py:1095-1097" "$tmp/mc"'
check "megatron_check refuses the buffer reuse without --fp8-param-gather" 'printf "%s" "$plan_mx1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
d[\"results\"][0][\"launch\"][\"megatron_args\"].remove(\"--fp8-param-gather\")
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*distributed_data_parallel_config.py:259-260" "$tmp/mc"'
run "$P" plan --model llama3-8b --topology gb200-nvl72 --gpus 64 --global-batch 256 --precision mxfp8 --zero 1 --top 1 --stack megatron-core --json
check "the 2024 profiles keep the 16-bit weights: no --fp8-param-gather" '[ $rc -eq 0 ] && ! has "$out" "--fp8-param-gather"'
# fp8 recipes and bf16 first/last layers (issue 19 item 2): the flags, the recipe and
# the count Megatron takes back, and its refusals (transformer_config.py:1528-1556)
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --pp 4 --global-batch 256 --precision fp8 --fp8-recipe tensorwise --bf16-layers 1 --top 3 --json
check "fp8 tensorwise with 1 bf16 layer at each end: Megatron builds all 3 plans as costed" 'megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc" && has "$out" "\"--first-last-layers-bf16\"" && has "$out" "\"fp8_recipe\": \"tensorwise\""'
plan_fp8=$out
check "megatron_check refuses bf16 first/last layers under delayed scaling" 'printf "%s" "$plan_fp8" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d[\"results\"][0][\"launch\"][\"megatron_args\"]
i = a.index(\"--fp8-recipe\"); del a[i:i + 2]
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*transformer_config.py:1528-1530" "$tmp/mc"'
check "megatron_check refuses --fp8-recipe blockwise on core_v0.12" 'printf "%s" "$plan_fp8" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"][0]
a = r[\"launch\"][\"megatron_args\"]
a[a.index(\"tensorwise\")] = \"blockwise\"
r[\"launch\"][\"megatron_lm\"] = \"core_v0.12\"
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*blockwise needs core_v0.13" "$tmp/mc"'
for pins in "--zero 2" "--zero 3" "--optimizer sgd" "--recompute selective" "--precision fp16" \
    "--tp 8 --pp 8 --cp 2 --vp 8" "--tp 8 --pp 16 --vp 2" "--tp 2 --cp 4 --cp-comm a2a" \
    "--tp 2 --cp 8 --cp-comm a2a+p2p" "--tp 8 --cp 4 --cp-comm allgather"; do
    # shellcheck disable=SC2086
    run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 1024 --global-batch 1024 --top 3 $pins --json
    check "llama3-405b pinned $pins: Megatron builds the plans as costed" '[ $rc -eq 0 ] && megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc"'
done
# interleaving with 125 microbatches on 16 stages (Megatron-Core 0.10+): a group of
# 18 per virtual stage (16 leaves 13, 17 leaves 6, 18 leaves 17 >= 16); without the
# group flag Megatron-Core refuses the last group of 13 (schedules.py:1171-1180)
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 1024 --global-batch 1000 --top 1 --tp 8 --pp 16 --cp 1 --vp 2 --json
uneven=$out
check "uneven interleaving: the group flag is 18 and Megatron builds the plan as costed" '[ $rc -eq 0 ] && printf "%s" "$uneven" | python3 -c "
import json, sys
a = json.load(sys.stdin)[\"results\"][0][\"launch\"][\"megatron_args\"]
assert a[a.index(\"--microbatch-group-size-per-virtual-pipeline-stage\") + 1] == \"18\", a" && megatron_ok "$uneven" && ! grep -qv "^ok" "$tmp/mc"'
check "megatron_check refuses uneven interleaving without the group flag" 'printf "%s" "$uneven" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d[\"results\"][0][\"launch\"][\"megatron_args\"]
i = a.index(\"--microbatch-group-size-per-virtual-pipeline-stage\"); del a[i:i + 2]
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; [ $? -ne 0 ] && grep -q "^REFUSED.*schedules.py:1171-1180" "$tmp/mc"'
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 1024 --global-batch 1000 --top 1 --tp 8 --pp 16 --cp 1 --stack megatron-core --json
check "the megatron-core profile (before 0.10) interleaves only whole rounds of pp" '[ $rc -ne 0 ] || printf "%s" "$out" | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"results\"][0][\"config\"]
assert r[\"vp\"] == 1, r"'
# the checks refuse CP flags Megatron-LM or Transformer Engine would: a2a+p2p
# without its sizes (arguments.py:583-585), sizes whose product is not cp
# (:580-582), a2a over more ranks than each TP rank's key/value heads divide (TE)
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 1024 --global-batch 1024 --top 1 --tp 2 --cp 8 --cp-comm a2a+p2p --json
hier=$out
cp_refused() { # $1: python editing the flags list `a`; $2: what the refusal cites
    printf '%s' "$hier" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d['results'][0]['launch']['megatron_args']
$1
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1
    [ $? -ne 0 ] && grep -q "^REFUSED.*$2" "$tmp/mc"
}
check "megatron_check takes the a2a+p2p plan as costed" 'printf "%s" "$hier" | python3 "$ROOT/tests/cli/megatron_check.py" >/dev/null'
check "megatron_check refuses a2a+p2p without --hierarchical-context-parallel-sizes" \
    'cp_refused "i = a.index(\"--hierarchical-context-parallel-sizes\"); del a[i:i + 3]" "arguments.py:583-585"'
check "megatron_check refuses hierarchical sizes whose product is not cp" \
    'cp_refused "i = a.index(\"--hierarchical-context-parallel-sizes\"); a[i + 2] = \"4\"" "arguments.py:580-582"'
check "megatron_check refuses a2a over 8 ranks of 4 key/value heads a TP rank" \
    'cp_refused "a[a.index(\"--cp-comm-type\") + 1] = \"a2a\"" "AttnFuncWithCPAndQKVOA2A"'
check "megatron_check refuses an unknown cp comm type" \
    'cp_refused "a[a.index(\"--cp-comm-type\") + 1] = \"ring\"" "arguments.py:3221-3226"'
# gradient precision: nemo-2025 keeps 16-bit gradients, as NVIDIA's performance
# recipes run (grad_reduce_in_fp32 = False), and says so to Megatron-LM; the
# megatron-core profile keeps Megatron-LM's fp32 main gradients.  Llama 3 70B,
# tp8 pp8 on 64 GPUs: 70.55e9 / 64 = 1.10e9 parameters a GPU (first stage a little
# more, with the embedding), so 2 B and 4 B a parameter differ by about 2.2 GB.
est="--model llama3-70b --topology dgx-h100-superpod --gpus 64 --tp 8 --pp 8 --mbs 1 --global-batch 64 --json"
# shellcheck disable=SC2086
run "$P" estimate $est --stack nemo-2025
new=$out
# shellcheck disable=SC2086
run "$P" estimate $est --stack megatron-core
check "nemo-2025 reduces bf16 gradients in bf16 (--grad-reduce-in-bf16, core_v0.12); megatron-core in fp32" 'printf "%s" "$new" | python3 -c "
import json, sys
n, m = json.load(sys.stdin), json.loads(sys.argv[1])
assert \"--grad-reduce-in-bf16\" in n[\"launch\"][\"megatron_args\"] and n[\"launch\"][\"megatron_lm\"] >= \"core_v0.12\"
assert \"--grad-reduce-in-bf16\" not in m[\"launch\"][\"megatron_args\"]
g, h = n[\"memory\"][\"gradients\"], m[\"memory\"][\"gradients\"]
assert abs(h / g - 2) < 1e-9 and 2.0e9 < h - g < 2.6e9, (g, h)
" "$out"'
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 1024 --global-batch 1024 --top 1 --zero 3 --json
check "ZeRO-3 is Megatron-FSDP, with no CUDA_DEVICE_MAX_CONNECTIONS=1" 'has "$out" "\"--use-megatron-fsdp\"" && has "$out" "\"optim_grads_params\"" && ! has "$out" "\"CUDA_DEVICE_MAX_CONNECTIONS\": \"1\""'
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 1024 --global-batch 1024 --top 1 --zero 3 --pp 8 --json
check "ZeRO-3 with pipelining: no DeepSpeed config, and why" '[ $rc -eq 0 ] && has "$out" "\"deepspeed\": null" && has "$out" "pipeline engine runs ZeRO stages 0 and 1"'
run "$P" plan --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 128 --top 1 --schedule gpipe --json
check "GPipe: no Megatron flags, and why" '[ $rc -eq 0 ] && has "$out" "\"megatron_args\": null" && has "$out" "no GPipe schedule"'
# the schedules of pipeline.h, pinned: plan's #1 is what estimate gives for it, and
# Megatron-LM is not said to run it (megatron_check agrees)
for s in zb-v dualpipe; do
    run "$P" plan --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 128 --top 1 --schedule $s --json
    doc=$out
    check "plan --schedule $s: #1 is what estimate gives for it" '[ $rc -eq 0 ] && has "$doc" "\"schedule\": \"$s\"" && same_as_estimate "$doc" results.0 "[\"results\"][0]" llama3-70b dgx-h100-superpod'
    check "plan --schedule $s: no Megatron flags, and why" 'has "$doc" "\"megatron_args\": null" && megatron_ok "$doc" && ! grep -qv "^ok" "$tmp/mc"'
done
run "$P" plan --model mixtral-8x7b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --top 1 --json
check "MoE flags as costed: all-to-all dispatch, grouped GEMM" 'has "$out" "\"alltoall\"" && has "$out" "\"--moe-grouped-gemm\"" && has "$out" "\"--num-experts\""'
# MoE parallel folding: etp other than tp is launched with its flag, and Megatron
# builds the plan; flags that fold wrongly are refused with the rule's file:line
run "$P" plan --model mixtral-8x7b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --tp 4 --etp 1 --ep 8 --top 3 --json
moe=$out
check "mixtral --tp 4 --etp 1 --ep 8: --expert-tensor-parallel-size 1, built as costed" '[ $rc -eq 0 ] && printf "%s" "$moe" | python3 -c "
import json, sys
a = json.load(sys.stdin)[\"results\"][0][\"launch\"][\"megatron_args\"]
assert a[a.index(\"--expert-tensor-parallel-size\") + 1] == \"1\", a
" && megatron_ok "$moe" && ! grep -qv "^ok" "$tmp/mc"'
refold() { printf '%s' "$moe" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d['results'][0]['launch']['megatron_args']
i = a.index('--expert-tensor-parallel-size')
a[i + 1] = sys.argv[1]
if sys.argv[2] == 'nosp':
    a.remove('--sequence-parallel')
    a.remove('--tp-comm-overlap')
print(json.dumps(d))" "$1" "$2" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; }
check "megatron_check refuses etp x ep x pp that does not divide the world (etp 16, ep 8 on 64)" '! refold 16 sp && grep -q "^REFUSED.*parallel_state.py:873-884" "$tmp/mc"'
check "megatron_check refuses MoE with tp > 1 and no sequence parallelism" '! refold 1 nosp && grep -q "^REFUSED.*moe_layer.py:636-640" "$tmp/mc"'
# DeepSeek-V3: MLA, MTP, the layer pattern, shared experts, group-limited routing,
# DeepEP and the all-to-all overlap, free and in DeepSeek's layout, pass
# Megatron-Core's checks; changed flags are refused with the rule's file:line
# (the overlapped layout pinned: the free MoE search takes seconds, minutes under valgrind)
ds=$("$P" plan --model deepseek-v3 --topology deepseek-h800-2048 --global-batch 15360 --precision fp8 --ep-overlap --tp 4 --pp 1 --ep 256 --top 3 --json 2>/dev/null)
dsp=$("$P" plan --model deepseek-v3 --topology deepseek-h800-2048 --global-batch 15360 --precision fp8 --tp 1 --pp 16 --cp 1 --ep 64 --zero 1 --top 3 --json 2>/dev/null)
check "deepseek-v3 plans (TP 4 EP 256 overlapped, and DeepSeek's layout) pass megatron_check" 'megatron_ok "$ds" && ! grep -qv "^ok" "$tmp/mc" && megatron_ok "$dsp" && ! grep -qv "^ok" "$tmp/mc"'
check "deepseek-v3 launch: MLA, MTP, the dense-then-MoE pattern, DeepEP, the overlap" 'printf "%s" "$ds" | python3 -c "
import json, sys
a = json.load(sys.stdin)[\"results\"][0][\"launch\"][\"megatron_args\"]
for f in (\"--multi-latent-attention\", \"--mtp-num-layers\", \"--moe-enable-deepep\", \"--overlap-moe-expert-parallel-comm\", \"--moe-router-group-topk\"):
    assert f in a, f
assert a[a.index(\"--moe-layer-freq\") + 1] == \"[0]*3+[1]*58\", a
assert a[a.index(\"--moe-shared-expert-intermediate-size\") + 1] == \"2048\", a
"'
reflag() { printf '%s' "$1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d['results'][0]['launch']['megatron_args']
op, flag = sys.argv[1], sys.argv[2]
if op == 'drop':
    i = a.index(flag); del a[i:i + 2]
elif op == 'set':
    a[a.index(flag) + 1] = sys.argv[3]
else:
    a += sys.argv[2:]
print(json.dumps(d))" "$2" "$3" "${4:-}" | python3 "$ROOT/tests/cli/megatron_check.py" >"$tmp/mc" 2>&1; }
check "megatron_check refuses DeepEP without the flex dispatcher" '! reflag "$ds" set --moe-token-dispatcher-type alltoall && grep -q "^REFUSED.*transformer_config.py:1743-1745" "$tmp/mc"'
check "megatron_check refuses a layer pattern of the wrong length" '! reflag "$ds" set --moe-layer-freq "[0]*3+[1]*57" && grep -q "^REFUSED.*gpt_layer_specs.py:651-657" "$tmp/mc"'
check "megatron_check refuses router groups that do not divide the experts" '! reflag "$ds" set --moe-router-num-groups 7 && grep -q "^REFUSED.*transformer_config.py:2682-2685" "$tmp/mc"'
check "megatron_check refuses the all-to-all overlap with pp > 1 and no virtual pipeline" '! reflag "$dsp" add --overlap-moe-expert-parallel-comm && grep -q "^REFUSED.*transformer_config.py:3007-3011" "$tmp/mc"'
check "flash attention through --attention-backend, not --use-flash-attn" 'has "$out" "\"--attention-backend\"" && ! has "$out" "--use-flash-attn"'
check "the launch names the Megatron-LM release it needs" 'has "$out" "\"megatron_lm\": \"core_v0.1"'

# the launched network is the planned one (issue 31): for every catalogue model,
# the architecture keys, Megatron-LM's parameter count and its FLOPs per token
# (turned to parplan's stated conventions: full attention, the router GEMM counted,
# norms not) from the flags equal the model's, or the plan says what Megatron-LM
# cannot build (BLOOM's ALiBi)
for m in $(ls "$ROOT/models" | sed 's/\.json$//'); do
    run "$P" plan --model "$m" --topology dgx-h100-superpod --gpus 256 --global-batch 512 --top 2 --json
    check "$m: Megatron-LM's flags build the planned network (keys, parameters, FLOPs)" '[ $rc -eq 0 ] && megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc"'
    eval "plan_$(printf '%s' "$m" | tr -c 'a-z0-9\n' '_')=\$out"
done
check "bloom-176b: no Megatron-LM flags, ALiBi named" 'has "$plan_bloom_176b" "\"megatron_args\": null" && has "$plan_bloom_176b" "no ALiBi position embedding"'
# each architecture flag is needed: without it the check finds the other network
# unflag PLAN FLAG [VALUES...]: the plan's #1 without FLAG (and the values after it)
unflag() { printf '%s' "$1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d['results'][0]['launch']['megatron_args']
i = a.index(sys.argv[1])
del a[i:i + 1 + int(sys.argv[2])]
d['results'] = d['results'][:1]
print(json.dumps(d))" "$2" "$3" | python3 "$ROOT/tests/cli/megatron_check.py" --model "$tmp/mshow.json" >"$tmp/mc" 2>&1; }
"$P" model show qwen3-30b-a3b --json >"$tmp/mshow.json"
check "qwen3 without --qk-layernorm: another network (no q/k norms, 12,288 parameters fewer)" '! unflag "$plan_qwen3_30b_a3b" --qk-layernorm 0 && grep -q "MISMATCH.*qk_norm.*(False, True).*params.*(30532110336.0, 30532122624)" "$tmp/mc"'
# flag_of PLAN FLAG: the value of FLAG in the plan's #1 Megatron-LM arguments
flag_of() { printf '%s' "$1" | python3 -c "
import json, sys
a = json.load(sys.stdin)['results'][0]['launch']['megatron_args']
print(a[a.index(sys.argv[1]) + 1] if sys.argv[1] in a else '')" "$2"; }
# 151,936 = 2^7 x 1187 rows: on tp 4, Megatron's default (a multiple of 128 x 4)
# would pad to 152,064; --make-vocab-size-divisible-by 32 keeps them
run "$P" plan --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 256 --global-batch 512 --tp 4 --top 1 --json
check "qwen3 launches with its rotary base 1,000,000 and, on tp 4, an unpadded vocabulary" '[ "$(flag_of "$out" --rotary-base)" = 1000000 ] && [ "$(flag_of "$out" --make-vocab-size-divisible-by)" = 32 ] && ! unflag "$out" --make-vocab-size-divisible-by 1 && grep -q "MISMATCH.*vocab.*(152064, 151936)" "$tmp/mc"'
run "$P" plan --model gpt3-175b --topology gb200-nvl72 --gpus 576 --global-batch 1152 --tp 3 --top 1 --json
check "gpt3-175b on tp 3 (GB200): the padding no flag avoids is stated (51,200 to 51,201 rows)" '[ $rc -eq 0 ] && has "$out" "pads the vocabulary from 51200 to 51201 rows (a multiple of tp 3)" && megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc"'
"$P" model show mixtral-8x7b --json >"$tmp/mshow.json"
check "mixtral-8x7b launched at top-4: the same parameters, another network (top_k, FLOPs per token)" '! printf "%s" "$plan_mixtral_8x7b" | python3 -c "
import json, sys
d = json.load(sys.stdin)
a = d[\"results\"][0][\"launch\"][\"megatron_args\"]
a[a.index(\"--moe-router-topk\") + 1] = \"4\"
d[\"results\"] = d[\"results\"][:1]
print(json.dumps(d))" | python3 "$ROOT/tests/cli/megatron_check.py" --model "$tmp/mshow.json" >"$tmp/mc" 2>&1 && grep -q "MISMATCH.*moe.top_k.*(4, 2).*flops_per_token" "$tmp/mc" && ! grep -q "params" "$tmp/mc"'
"$P" model show llama3-8b --json >"$tmp/mshow.json"
check "llama3-8b without --rotary-base: RoPE at 10,000, not 500,000" '! unflag "$plan_llama3_8b" --rotary-base 1 && grep -q "MISMATCH.*rope_theta.*(10000.0, 500000.0)" "$tmp/mc"'
"$P" model show deepseek-v3 --json >"$tmp/mshow.json"
check "deepseek-v3: sigmoid router scores, the expert bias and the 2.5 scale in the flags" '[ "$(flag_of "$plan_deepseek_v3" --moe-router-score-function)" = sigmoid ] && has "$plan_deepseek_v3" "\"--moe-router-enable-expert-bias\"" && [ "$(flag_of "$plan_deepseek_v3" --moe-router-topk-scaling-factor)" = 2.5 ]'
check "deepseek-v3 without --moe-router-score-function: a softmax router" '! unflag "$plan_deepseek_v3" --moe-router-score-function 1 && grep -q "MISMATCH.*router_score" "$tmp/mc"'
check "deepseek-v3 (MLA) without --rope-type rope: YaRN, refused" '! unflag "$plan_deepseek_v3" --rope-type 1 && grep -q "^REFUSED.*transformer_config.py:3306" "$tmp/mc"'
check "deepseek-v3 (MLA) without --no-rope-fusion: refused (fusion only under YaRN)" '! unflag "$plan_deepseek_v3" --no-rope-fusion 0 && grep -q "^REFUSED.*transformer_config.py:3345-3346" "$tmp/mc"'
check "deepseek-v3 needs core_v0.14 (--rope-type)" 'has "$plan_deepseek_v3" "\"megatron_lm\": \"core_v0.14\""'
# MTP on standard attention: --mtp-num-layers came with core_v0.12.0, and 0.12-0.13
# refuse it with context parallelism (arguments.py:963 at core_v0.12.0)
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
m.update(name='llama3-8b-mtp', mtp_layers=1)
m.pop('params')
json.dump(m, open(sys.argv[2], 'w'))" "$ROOT/models/llama3-8b.json" "$tmp/mtp.json"
run "$P" plan --model "$tmp/mtp.json" --topology dgx-h100-superpod --gpus 64 --global-batch 256 --cp 1 --zero 1 --top 1 --json
check "MTP without cp: core_v0.12" '[ $rc -eq 0 ] && has "$out" "\"megatron_lm\": \"core_v0.12\"" && has "$out" "\"--mtp-num-layers\""'
run "$P" plan --model "$tmp/mtp.json" --topology dgx-h100-superpod --gpus 64 --global-batch 256 --cp 2 --zero 1 --top 1 --json
check "MTP with cp 2: core_v0.14" '[ $rc -eq 0 ] && has "$out" "\"megatron_lm\": \"core_v0.14\""'

# plans whose #1 shards in groups (llama3-8b, groups of 8 pinned) or offloads the
# optimizer (llama3-70b, the offload pinned) are what estimate gives
for case in "llama3-8b 2/8 --shard-group 8" "llama3-70b 2+off --offload-optimizer 1"; do
    set -- $case
    # shellcheck disable=SC2086
    run "$P" plan --model "$1" --topology dgx-h100-superpod --gpus 256 --global-batch 512 --top 1 --json ${3:-} ${4:-}
    one=$out model=$1 topo=dgx-h100-superpod want=$2
    check "$1 on 256 H100: plan's #1 ($want) is what estimate gives for it" 'same_as_estimate "$one" results.0 "[\"results\"][0]" "$model" "$topo" && printf "%s" "$one" | python3 -c "
import json, sys
c = json.load(sys.stdin)[\"results\"][0][\"config\"]
assert (\"shard_group\" in c) if sys.argv[1] == \"2/8\" else (c.get(\"offload_optimizer\") == 1.0), c
" "$want"'
done

# ---- hierarchical sharding and optimizer offload (shard.c, offload.c): the
# launch carries --num-distributed-optimizer-instances dp/N and the offload flags,
# which megatron_check derives back (parallel_state.py:922-926 and 1447-1450,
# arguments.py:1884-1888, optimizer/__init__.py:1057-1060); DeepSpeed gets MiCS's
# mics_shard_size (ZeRO-3; runtime/zero/config.py:341) and offload_optimizer
# (runtime/zero/offload_config.py:55-60; ratio below 1 only with ZeRO-3, :99-100)
for pins in "--zero 1 --shard-group 8" "--zero 2 --shard-group 8" "--zero 3 --shard-group 4" \
    "--zero 1 --offload-optimizer 1" "--zero 3 --shard-group 8 --offload-optimizer 0.5 --cp 1"; do
    # shellcheck disable=SC2086
    run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --top 2 $pins --json
    check "llama3-8b pinned $pins: Megatron builds the plans as costed" '[ $rc -eq 0 ] && megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc"'
done
check "ZeRO-3 in groups of 8 with half the optimizer offloaded: MiCS and ratio 0.5 for DeepSpeed" 'printf "%s" "$out" | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"results\"][0]
a, z = r[\"launch\"][\"megatron_args\"], r[\"launch\"][\"deepspeed\"][\"zero_optimization\"]
assert r[\"config\"][\"shard_group\"] == 8 and r[\"config\"][\"offload_optimizer\"] == 0.5, r[\"config\"]
assert a[a.index(\"--num-distributed-optimizer-instances\") + 1] == str(r[\"config\"][\"dp\"] // 8), a
assert a[a.index(\"--optimizer-offload-fraction\") + 1] == \"0.5\" and \"--use-precision-aware-optimizer\" in a, a
assert r[\"launch\"][\"megatron_lm\"] >= \"core_v0.14\", r[\"launch\"][\"megatron_lm\"]
assert z[\"mics_shard_size\"] == 8 and z[\"offload_optimizer\"] == {\"device\": \"cpu\", \"pin_memory\": True, \"ratio\": 0.5}, z
assert r[\"memory\"][\"host\"] > 0, r[\"memory\"]
"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --top 1 --zero 1 --shard-group 8 --json
check "ZeRO-1 in groups: no DeepSpeed config (MiCS is ZeRO-3), and why" '[ $rc -eq 0 ] && has "$out" "\"deepspeed\": null" && has "$out" "MiCS) with ZeRO-3 only"'
hsdp=$out
check "megatron_check refuses optimizer instances that do not divide dp x cp" '! reflag "$hsdp" set --num-distributed-optimizer-instances 3 && grep -q "^REFUSED.*parallel_state.py:922-926" "$tmp/mc"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --top 1 --zero 1 --offload-optimizer 1 --json
off=$out
check "megatron_check refuses the CPU offload without the precision-aware optimizer" '! reflag "$off" drop --use-precision-aware-optimizer && grep -q "^REFUSED.*arguments.py:1884-1888" "$tmp/mc"'

# ---- torchtitan (v0.2.2, the last release configured by TOML): the job TOML that
# launch-megatron --torchtitan writes, read back and held to torchtitan's own rules
# (tests/cli/torchtitan_check.py, with their file:line), runs the plan's layout;
# the flavor it names is the planned model (its registry's figures and the
# parameter count of the modules torchtitan builds equal model show's); a plan
# it cannot run says why
# launch_ok CHECKER PLAN OUT: CHECKER (tests/cli) on PLAN with its model, into OUT
launch_ok() {
    name=$(printf '%s' "$2" | python3 -c 'import json, sys; print(json.load(sys.stdin)["model"])') &&
        "$P" model show "$name" --json >"$tmp/lshow.json" 2>/dev/null &&
        printf '%s' "$2" | python3 "$ROOT/tests/cli/$1" --model "$tmp/lshow.json" "$ROOT" >"$3" 2>&1
}
titan_ok() { launch_ok torchtitan_check.py "$1" "$tmp/tc"; }
titan_runs() { grep -c "^ok .*: torchtitan " "$tmp/tc"; }
for case in "llama3-8b dgx-h100-superpod 64 512 --zero 3" \
    "llama3-70b dgx-h100-superpod 256 512 --zero 3 --sequence-parallel" \
    "qwen3-30b-a3b dgx-h100-superpod 64 512 --zero 3 --sequence-parallel --recompute none" \
    "llama3-8b dgx-h100-superpod 16 256 --pp 4 --schedule zb-v --zero 3 --sequence-parallel --flash-attention" \
    "llama3-8b dgx-h100-superpod 16 256 --pp 4 --schedule dualpipev --zero 3 --sequence-parallel --flash-attention" \
    "llama3-8b dgx-h100-superpod 16 256 --precision fp8 --fp8-recipe tensorwise --zero 3 --stack fsdp" \
    "llama3-70b gb200-nvl72 144 576 --precision mxfp8 --zero 3 --stack megatron-core" \
    "llama3-8b dgx-h100-superpod 32 64 --cp 4 --cp-comm allgather --zero 3"; do
    set -- $case
    m=$1 topo=$2 gpus=$3 gb=$4
    shift 4
    run "$P" plan --model "$m" --topology "$topo" --gpus "$gpus" --global-batch "$gb" "$@" --top 8 --json
    check "torchtitan runs $m on $gpus GPUs of $topo ($*) as costed, or says why not" 'titan_ok "$out" && ! grep -qv "^ok" "$tmp/tc" && [ "$(titan_runs)" -ge 1 ]'
done
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 16 --global-batch 256 --pp 4 --schedule zb-v --zero 3 --sequence-parallel --flash-attention --top 1 --json
titan_zbv=$out
check "ZB-V runs as torchtitan's ZBVZeroBubble, 8 stages in a V" 'has "$titan_zbv" "\"pipeline_parallel_schedule\": \"ZBVZeroBubble\"" && has "$titan_zbv" "\"torchtitan_release\": \"v0.2.2\"" && printf "%s" "$titan_zbv" | python3 -c "
import json, sys
assert json.load(sys.stdin)[\"results\"][0][\"launch\"][\"launchers\"] == [\"torchtitan\"]"'
titan_bad() { # $1: python that edits the job j; $2: the rule expected
    printf '%s' "$titan_zbv" | python3 -c "
import json, sys
d = json.load(sys.stdin)
j = d[\"results\"][0][\"launch\"][\"torchtitan\"]
p = j[\"parallelism\"]
$1
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/torchtitan_check.py" "$ROOT" >"$tmp/tc" 2>&1
    [ $? -ne 0 ] && grep -q "^REFUSED.*$2" "$tmp/tc"
}
check "torchtitan_check refuses a world the degrees do not fill" 'titan_bad "p[\"data_parallel_shard_degree\"] = 4" "parallel_dims.py:53-56"'
check "torchtitan_check refuses a stage list missing a layer" 'titan_bad "p[\"module_fqns_per_model_part\"][3].pop(0)" "pipeline_parallel.py:389-440"'
check "torchtitan_check refuses a V schedule over 3 stages a rank" 'titan_bad "p[\"module_fqns_per_model_part\"] += [[], [], [], []]" "pipeline_parallel.py:463-465"'
check "torchtitan_check refuses a field JobConfig lacks" 'titan_bad "p[\"pipeline_parallel_stages\"] = 8" "manager.py:166-171"'
check "torchtitan_check refuses what the plan did not cost (no sharding after forward)" 'titan_bad "p[\"fsdp_reshard_after_forward\"] = \"never\"" "MISMATCH.*zero"'
# a mixed cluster: across pools DeepSpeed is out of launchers; a job on one pool
# names its nodes too (the plan's top level has no server size), and torchtitan
# runs it as costed
run "$P" plan --model llama3-70b --topology mixed-h100-b200 --global-batch 512 --top 3 --json
check "mixed cluster across pools: launchers without DeepSpeed, the nodes of each pool" 'printf "%s" "$out" | python3 -c "
import json, sys
for r in json.load(sys.stdin)[\"results\"]:
    l = r[\"launch\"]
    assert len(r[\"pools\"]) < 2 or (l[\"deepspeed\"] is None and \"deepspeed\" not in l[\"launchers\"]), l[\"launchers\"]
    assert sum(n[\"gpus\"] for n in l[\"nodes\"]) == r[\"config\"][\"gpus\"]
"'
run "$P" plan --model llama3-70b --topology mixed-h100-b200 --global-batch 512 --top 3 --zero 3 --sequence-parallel --json
check "mixed cluster, a job on one pool: torchtitan runs it as costed, launched on that pool's nodes" 'titan_ok "$out" && ! grep -qv "^ok" "$tmp/tc" && [ "$(titan_runs)" -ge 1 ]'
run "$P" plan --model deepseek-v3 --topology deepseek-h800-2048 --gpus 256 --global-batch 512 --top 1 --json
check "DeepSeek-V3: torchtitan's 671B flavor has no MTP module, said with its file:line" 'has "$out" "\"torchtitan\": null" && has "$out" "deepseek_v3/__init__.py:130) has mtp_layers 0 where the model has 1"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --zero 1 --top 1 --json -o "$tmp/z1.json"
run "$ROOT/scripts/launch-megatron" "$tmp/z1.json" --torchtitan "$tmp/z1.toml"
check "launch-megatron --torchtitan on a plan torchtitan cannot run: why, nothing written" '[ $rc -ne 0 ] && has "$err" "torchtitan has no ZeRO-1" && [ ! -e "$tmp/z1.toml" ]'

# ---- Megatron-Bridge (v0.6.0): the recipe whose checkpoint is the model, every
# layout field set on its ConfigContainer (launch-megatron --bridge writes the
# script; tests/cli/bridge_check.py parses it, applies the precision recipe and
# Bridge's own checks with file:line, reads the fields back as Megatron-LM flags
# and derives the run with megatron_check's rules): the plan's config, and the
# checkpoint's figures the model's
bridge_ok() { launch_ok bridge_check.py "$1" "$tmp/bc"; }
bridge_runs() { grep -c "^ok .*: Megatron-Bridge " "$tmp/bc"; }
for case in "llama3-8b dgx-h100-superpod 64 512" "llama3-70b dgx-h100-superpod 64 512" \
    "qwen3-30b-a3b dgx-h100-superpod 64 512" \
    "deepseek-v3 deepseek-h800-2048 256 512 --precision fp8 --tp 1 --pp 4 --vp 4 --ep 64 --zero 1 --mbs 1 --first-stage-layers 16 --last-stage-layers 13" \
    "llama3-70b gb200-nvl72 576 1152 --precision mxfp8" "llama3-70b gb200-nvl72 576 1152 --precision nvfp4" \
    "llama3-8b dgx-h100-superpod 16 256 --precision fp8 --fp8-recipe tensorwise" \
    "llama3-405b dgx-h100-superpod 128 1024 --offload-optimizer 0.5" \
    "llama3-8b dgx-h100-superpod 64 64 --cp 8 --cp-comm a2a+p2p" \
    "qwen3-235b-a22b dgx-h100-superpod 256 512" \
    "qwen3-30b-a3b dgx-h100-superpod 64 512 --cuda-graphs attn+moe_router" \
    "llama3-8b dgx-h100-superpod 64 512 --cuda-graphs iteration"; do
    set -- $case
    m=$1 topo=$2 gpus=$3 gb=$4
    shift 4
    run "$P" plan --model "$m" --topology "$topo" --gpus "$gpus" --global-batch "$gb" "$@" --top 5 --json
    check "Megatron-Bridge runs $m on $gpus GPUs of $topo ${*:-} as costed" 'bridge_ok "$out" && ! grep -qv "^ok" "$tmp/bc" && [ "$(bridge_runs)" -ge 1 ]'
done
run "$P" plan --model llama3-405b --topology dgx-h100-superpod --gpus 128 --global-batch 1024 --top 1 --offload-optimizer 0.5 --json
bridge_off=$out
check "the optimizer offload sets its fraction (Megatron-Core's field defaults to 0.0)" 'printf "%s" "$bridge_off" | python3 -c "
import json, sys
s = dict(json.load(sys.stdin)[\"results\"][0][\"launch\"][\"megatron_bridge\"][\"set\"])
assert s[\"optimizer.optimizer_cpu_offload\"] is True and s[\"optimizer.optimizer_offload_fraction\"] == 0.5, s"'
bridge_bad() { # $1: python that edits the fields s of result 1; $2: the refusal expected
    printf '%s' "$3" | python3 -c "
import json, sys
d = json.load(sys.stdin)
b = d[\"results\"][0][\"launch\"][\"megatron_bridge\"]
s = dict(b[\"set\"])
$1
b[\"set\"] = [[k, v] for k, v in s.items()]
json.dump(d, sys.stdout)" | python3 "$ROOT/tests/cli/bridge_check.py" "$ROOT" >"$tmp/bc" 2>&1
    [ $? -ne 0 ] && grep -q "^REFUSED.*$2" "$tmp/bc"
}
check "bridge_check refuses an offload without its fraction (optimizer_config.py:347)" 'bridge_bad "del s[\"optimizer.optimizer_offload_fraction\"]" "optimizer_config.py:347" "$bridge_off"'
check "bridge_check refuses a layout field left to the recipe" 'bridge_bad "del s[\"model.context_parallel_size\"]" "left to the recipe" "$bridge_off"'
check "bridge_check: a pipeline one stage short is not the plan" 'bridge_bad "s[\"model.pipeline_model_parallel_size\"] = 4" "MISMATCH\|Megatron-Core" "$bridge_off"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --cuda-graphs iteration --top 1 --json
check "bridge_check refuses the whole-step CUDA graph with the loss's NaN check on (config.py:1364-1369)" 'bridge_bad "del s[\"rerun_state_machine.check_for_nan_in_loss\"]" "config.py:1364-1369" "$out"'
run "$P" plan --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --cuda-graphs attn+moe_router --top 1 --json
check "bridge_check: CUDA graphs of the attention alone are not the plan's" 'bridge_bad "s[\"model.cuda_graph_modules\"] = [\"attn\"]" "MISMATCH" "$out"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --zero 3 --top 1 --json
check "bridge_check refuses Megatron-FSDP with CUDA_DEVICE_MAX_CONNECTIONS=1 (config.py:1100-1103)" 'bridge_bad "s[\"env_vars.CUDA_DEVICE_MAX_CONNECTIONS\"] = \"1\"" "config.py:1100-1103" "$out"'
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --gpus 1024 --global-batch 1536 --top 1 --json
check "GPT-3 175B: no Bridge recipe builds its checkpoint, and the plan says so" 'has "$out" "\"megatron_bridge\": null" && has "$out" "no Megatron-Bridge v0.6.0 recipe builds a checkpoint of 96 layers"'

# tensor parallelism beside Megatron-FSDP before Blackwell: Megatron-LM warns it
# runs poorly (arguments.py:1451-1464); the overlap is kept, said, and
# --conservative costs it exposed; on Blackwell nothing is assumed
fsdp_tp="--model llama3-405b --gpus 1024 --global-batch 1024 --tp 8 --pp 4 --zero 3 --mbs 1 --sequence-parallel --flash-attention --recompute full"
run "$P" estimate $fsdp_tp --topology dgx-h100-superpod --json
fsdp_tp_h100=$out
run "$P" estimate $fsdp_tp --topology dgx-h100-superpod --conservative --json
check "TP beside Megatron-FSDP on H100: assumed hidden and said; --conservative costs it exposed" 'printf "%s" "$fsdp_tp_h100" | python3 -c "
import json, sys
e = json.load(sys.stdin)
assert \"Megatron-FSDP before Blackwell\" in e[\"overlap_assumed\"], e.get(\"overlap_assumed\")
open(\"$tmp/fsdp_tp.s\", \"w\").write(str(e[\"step_time_s\"]))
" && printf "%s" "$out" | python3 -c "
import json, sys
e = json.load(sys.stdin)
assert \"overlap_assumed\" not in e
assert e[\"step_time_s\"] > float(open(\"$tmp/fsdp_tp.s\").read()) * 1.01
"'
run "$P" estimate $fsdp_tp --topology gb200-nvl72 --json
check "the same on GB200 (Blackwell): nothing assumed" '[ $rc -eq 0 ] && ! has "$out" "overlap_assumed"'

# launch-megatron starts exactly the plan's GPUs and passes training arguments on
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 12 --global-batch 96 --top 1 --json -o "$tmp/p12.json"
run "$ROOT/scripts/launch-megatron" "$tmp/p12.json" -- --train-iters 10 --lr 1e-4
check "launch-megatron: 12 GPUs of 8-GPU servers fill the first server" '[ $rc -eq 0 ] && has "$out" "--nproc_per_node 8 --nnodes 2 --node_rank 0"'
check "launch-megatron: arguments after -- go to the training script" 'has "$out" "--train-iters 10 --lr 1e-4"'
run "$ROOT/scripts/launch-megatron" "$tmp/p12.json" --node-rank 1
check "launch-megatron: the last node takes the rest (12 = 8 + 4)" '[ $rc -eq 0 ] && has "$out" "--nproc_per_node 4 --nnodes 2 --node_rank 1"'
# tp 4 on 20 GPUs: nodes of 8, 8 and 4, never 4 nodes of 5 (a tensor-parallel group
# of consecutive ranks split between servers)
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 20 --global-batch 80 --tp 4 --top 1 --json -o "$tmp/p20.json"
run "$ROOT/scripts/launch-megatron" "$tmp/p20.json" --node-rank 1
check "launch-megatron: tp 4 on 20 GPUs runs whole servers (8, 8, 4)" '[ $rc -eq 0 ] && has "$out" "--nproc_per_node 8 --nnodes 3 --node_rank 1"'
run "$ROOT/scripts/launch-megatron" "$tmp/p20.json" --node-rank 3
check "launch-megatron: a node rank past the last node is refused" '[ $rc -ne 0 ] && has "$err" "runs on 3 nodes (0 to 2)"'
for bad in "--node-rank abc" "--rank" "--rank 0" "--master-port 70000" "--node-rank 99999999999999999999"; do
    run "$ROOT/scripts/launch-megatron" "$tmp/p20.json" $bad
    check "launch-megatron $bad: a one-line error, exit 2" '[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(printf "%s\n" "$err" | wc -l)" -eq 1 ] && has "$err" "launch-megatron: "'
done
# --slurm: one srun line whose shell gives every node its rank and count; run
# here with srun, torchrun and scontrol standing in
mkdir -p "$tmp/fakebin"
printf '#!/bin/sh\nwhile [ "$1" != sh ]; do shift; done\nfor n in 0 1 2; do SLURM_NODEID=$n "$@"; done\n' > "$tmp/fakebin/srun"
printf '#!/bin/sh\nfor a; do last=$a; done\necho "torchrun $2 $4 $6 $8 [$last]"\n' > "$tmp/fakebin/torchrun"
printf '#!/bin/sh\necho host07; echo host08\n' > "$tmp/fakebin/scontrol"
chmod +x "$tmp/fakebin/srun" "$tmp/fakebin/torchrun" "$tmp/fakebin/scontrol"
run "$ROOT/scripts/launch-megatron" "$tmp/p20.json" --slurm -- --lr "1e-4 with space"
check "launch-megatron --slurm: one srun command, a task per node" '[ $rc -eq 0 ] && has "$out" "srun --nodes 3 --ntasks-per-node 1 --gpus-per-node 8 sh -c"'
slurm_out=$(PATH="$tmp/fakebin:$PATH" SLURM_JOB_NODELIST=x sh -c "$out" 2>&1)
check "launch-megatron --slurm: nodes 0-2 start 8, 8 and 4 ranks, the rendezvous on the first node, arguments intact" '[ "$slurm_out" = "$(printf "torchrun 8 3 0 host07 [1e-4 with space]\ntorchrun 8 3 1 host07 [1e-4 with space]\ntorchrun 4 3 2 host07 [1e-4 with space]")" ]'
# a mixed cluster's plan: its pools' nodes in rank order, each pool's last node the
# rest (a pool of 12 GPUs and one of 20 on 8-GPU servers: 8, 4, 8, 8, 4)
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = d['results'][0]
r['config']['gpus'] = 32
r['launch']['nodes'] = [{'pool': 'a', 'gpus': 12, 'gpus_per_node': 8},
                        {'pool': 'b', 'gpus': 20, 'gpus_per_node': 8}]
json.dump(d, open(sys.argv[2], 'w'))" "$tmp/p20.json" "$tmp/pools.json"
run "$ROOT/scripts/launch-megatron" "$tmp/pools.json" --slurm
printf '#!/bin/sh\nwhile [ "$1" != sh ]; do shift; done\nfor n in 0 1 2 3 4; do SLURM_NODEID=$n "$@"; done\n' > "$tmp/fakebin/srun"
slurm_out=$(PATH="$tmp/fakebin:$PATH" SLURM_JOB_NODELIST=x sh -c "$out" 2>&1)
check "launch-megatron --slurm on two pools: 8, 4, 8, 8, 4 ranks on nodes 0-4" '[ "$(printf "%s\n" "$slurm_out" | cut -d" " -f2 | tr "\n" " ")" = "8 4 8 8 4 " ]'
run "$ROOT/scripts/launch-megatron" "$tmp/pools.json" --node-rank 1
check "launch-megatron on two pools: node 1 is the first pool's last, 4 GPUs" '[ $rc -eq 0 ] && has "$out" "--nproc_per_node 4 --nnodes 5 --node_rank 1"'
# the mixed cluster's #1 launched: Megatron-LM builds its stages (first/last flags or
# a layout) and model, over both pools' nodes
run "$P" plan --model llama3-70b --topology mixed-h100-b200 --global-batch 1024 --top 3 --json
check "mixed cluster: Megatron-LM flags for every result, each stage's layers as planned" '[ $rc -eq 0 ] && megatron_ok "$out" && ! grep -qv "^ok" "$tmp/mc" && has "$out" "\"nodes\": ["'
printf '%s' "$out" > "$tmp/mixed.json"
run "$ROOT/scripts/launch-megatron" "$tmp/mixed.json" --node-rank 95
check "mixed cluster: torchrun over the 64 H100 and 32 B200 servers (96 nodes)" '[ $rc -eq 0 ] && has "$out" "--nproc_per_node 8 --nnodes 96 --node_rank 95"'
run "$P" plan --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 128 --top 1 --schedule gpipe --json -o "$tmp/gpipe.json"
run "$ROOT/scripts/launch-megatron" "$tmp/gpipe.json"
check "launch-megatron refuses a plan Megatron cannot run, saying why" '[ $rc -ne 0 ] && has "$err" "no GPipe schedule"'
# DeepSpeed's pipeline engine trains with TrainSchedule, plain 1F1B over one stage
# a rank (deepspeed/runtime/pipe/engine.py:386, schedule.py:189): no GPipe and no
# interleaving; a plain 1F1B plan gets a config
check "GPipe with pp > 1: no DeepSpeed config, and why" 'python3 -c "
import json, sys
for r in json.load(open(sys.argv[1]))[\"results\"]:
    l = r[\"launch\"]
    assert r[\"config\"][\"pp\"] == 1 or (l[\"deepspeed\"] is None and \"TrainSchedule\" in l[\"deepspeed_error\"]), l
" "$tmp/gpipe.json"'
run "$P" plan --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 128 --top 1 --pp 4 --vp 2 --zero 1 --json
check "interleaved 1F1B (vp 2): no DeepSpeed config, Megatron-LM flags" '[ $rc -eq 0 ] && has "$out" "\"deepspeed\": null" && has "$out" "no interleaving" && ! has "$out" "\"megatron_args\": null"'
run "$P" plan --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 128 --top 1 --pp 4 --vp 1 --zero 1 --json
check "plain 1F1B (pp 4, vp 1, ZeRO-1): a DeepSpeed config" '[ $rc -eq 0 ] && has "$out" "\"train_micro_batch_size_per_gpu\"" && ! has "$out" "\"deepspeed\": null"'

# the engines' launch of serve and rl layouts (render/engine.c): every node's argv
# parsed as vLLM and SGLang parse it, held to their checks, and the layout it
# starts equal to the plan's (tests/cli/engine_check.py)
H100=85899345920
engine_ok() { python3 "$ROOT/tests/cli/engine_check.py" "$1" "$ROOT/models/$2.json" 8 $H100 >"$tmp/ec" 2>&1; }
run "$P" serve --model llama3-70b --topology dgx-h100-superpod --gpus 16 --input-len 2048 --output-len 512 --json -o "$tmp/serve.json"
launched_some() { grep -q ", [1-9][0-9]* launched" "$tmp/ec"; }
check "serve: each aggregated layout launched by vLLM and SGLang as planned" 'engine_ok "$tmp/serve.json" llama3-70b && launched_some'
check "serve: a disaggregated layout launched by SGLang, its prefill and decode servers and a router over them; vLLM says why not" 'grep -q "\"--disaggregation-mode\"" "$tmp/serve.json" && grep -q "sglang_router.launch_router" "$tmp/serve.json" && grep -q "disaggregates through a KV connector" "$tmp/serve.json"'
rm -f "$tmp/edited.json"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d['results'] if r['mode'] == 'disaggregated' and r['launch']['sglang'])
a = r['launch']['sglang']['router']['argv']
i = a.index('--decode')
del a[i:i + 2]
json.dump(d, open(sys.argv[2], 'w'))" "$tmp/serve.json" "$tmp/edited.json"
check "engine_check refuses a router that leaves out a decode server" '! engine_ok "$tmp/edited.json" llama3-70b && has "$(cat "$tmp/ec")" "router"'
run "$P" serve --model llama3-8b --topology dgx-h100-superpod --gpus 12 --input-len 1024 --output-len 256 --precision fp8 --json -o "$tmp/serve8.json"
check "serve fp8 on 12 GPUs: fp8 weights and cache, the last server half full" 'engine_ok "$tmp/serve8.json" llama3-8b && launched_some && grep -q "\"--quantization\"" "$tmp/serve8.json"'
run "$P" serve --model llama3-405b --topology dgx-h100-superpod --gpus 32 --input-len 2048 --output-len 512 --json -o "$tmp/serve405.json"
check "serve: Llama 3.1 405B in bf16 on pipeline stages of a server each: SGLang launches each stage's server with its rank, vLLM says why not" 'engine_ok "$tmp/serve405.json" llama3-405b && launched_some && grep -q "\"pp\": 4" "$tmp/serve405.json" && grep -q "\"--pp-size\"" "$tmp/serve405.json" && grep -q "pipeline stages spans 4 servers, which vLLM v0.11.0 runs over a Ray cluster" "$tmp/serve405.json"'
rm -f "$tmp/edited.json"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d['results'] if r['pp'] > 1 and r['launch']['sglang'])
a = r['launch']['sglang']['nodes'][1]['processes'][0]['argv']
a[a.index('--pp-size') + 1] = '2'
json.dump(d, open(sys.argv[2], 'w'))" "$tmp/serve405.json" "$tmp/edited.json"
check "engine_check refuses an SGLang stage's server with other stages than the plan's" '! engine_ok "$tmp/edited.json" llama3-405b && has "$(cat "$tmp/ec")" "pp 2, the plan'"'"'s 4"'
run "$P" rl --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 64 --prompts 128 --samples 16 --input-len 512 --output-len 4096 --json -o "$tmp/rl.json"
check "rl: the rollout engine launched, colocated ones releasing memory for training" 'engine_ok "$tmp/rl.json" qwen3-30b-a3b && launched_some && grep -q "enable-sleep-mode" "$tmp/rl.json"'
run "$P" serve --model llama3-70b --topology dgx-h100-superpod --gpus 8 --input-len 8192 --output-len 512 --json
check "serve: a sequence above the checkpoint's 8,192 positions is refused, saying so" '[ $rc -eq 0 ] && has "$out" "\"vllm\": null" && has "$out" "max_position_embeddings"'
run "$P" serve --model gpt3-175b --topology dgx-h100-superpod --gpus 16 --input-len 1024 --output-len 256 --json
check "serve: a model with no checkpoint gets the reason, not a launch" '[ $rc -eq 0 ] && has "$out" "\"vllm_error\": \"the engines load a Hugging Face checkpoint"'
run "$P" serve --model deepseek-v3 --topology dgx-h100-superpod --gpus 64 --input-len 1000 --output-len 1000 --precision fp8 --top 20 --json -o "$tmp/serveep.json"
check "serve: DeepSeek-V3 in fp8 with its experts over whole servers, each replica's servers launched with their ranks" 'engine_ok "$tmp/serveep.json" deepseek-v3 && launched_some && grep -q "\"--headless\"" "$tmp/serveep.json" && grep -q "\"--node-rank\"" "$tmp/serveep.json" && grep -q "HEAD_ADDR" "$tmp/serveep.json"'
run "$P" serve --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 16 --input-len 1000 --output-len 1000 --top 40 --json -o "$tmp/serve30.json"
check "serve: Qwen3-30B-A3B, experts within a server and tp replicas each their own vLLM process" 'engine_ok "$tmp/serve30.json" qwen3-30b-a3b && launched_some && grep -q "CUDA_VISIBLE_DEVICES" "$tmp/serve30.json" && grep -q "\"--enable-expert-parallel\"" "$tmp/serve30.json"'
# the check refuses a replica's servers out of order or without what expert
# parallelism needs
for edit in 'p["argv"].remove("--headless")' 'p["argv"][p["argv"].index("--data-parallel-start-rank") + 1] = "4"' 'p["env"].pop("VLLM_ALL2ALL_BACKEND")' 'p["argv"].remove("--enable-expert-parallel")'; do
    rm -f "$tmp/edited.json"
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d['results'] if r['launch']['vllm'] and len(r['launch']['vllm']['nodes']) > 1)
p = r['launch']['vllm']['nodes'][1]['processes'][0]
$edit
json.dump(d, open(sys.argv[2], 'w'))" "$tmp/serveep.json" "$tmp/edited.json"
    check "engine_check refuses an edited vLLM server of a replica: $edit" '! engine_ok "$tmp/edited.json" deepseek-v3 && has "$(cat "$tmp/ec")" "engine_check: "'
done
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d['results'] if r['launch']['sglang'] and len(r['launch']['sglang']['nodes']) > 1)
a = r['launch']['sglang']['nodes'][1]['processes'][0]['argv']
a[a.index('--node-rank') + 1] = '0'
json.dump(d, open(sys.argv[2], 'w'))" "$tmp/serveep.json" "$tmp/edited.json"
check "engine_check refuses two SGLang servers of a replica at one node rank" '! engine_ok "$tmp/edited.json" deepseek-v3 && has "$(cat "$tmp/ec")" "node ranks"'
# the check refuses what the engines refuse: tp not dividing the heads, a batch
# above the prefill chunk, a share above the GPU, a flag neither engine has
for edit in 'a[a.index("--tensor-parallel-size") + 1] = "3"' 'a[a.index("--max-num-seqs") + 1] = "9000"' 'a[a.index("--gpu-memory-utilization") + 1] = "1.2"' 'a.append("--pipeline-parallel-size")'; do
    rm -f "$tmp/edited.json"
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
a = d['results'][0]['launch']['vllm']['nodes'][0]['processes'][0]['argv']
$edit
json.dump(d, open(sys.argv[2], 'w'))" "$tmp/serve.json" "$tmp/edited.json"
    check "engine_check refuses an edited vLLM command: $edit" '! engine_ok "$tmp/edited.json" llama3-70b && has "$(cat "$tmp/ec")" "engine_check: "'
done

# verl v0.7.0 runs the RL step (render/verl.c): the overrides are keys of its
# config, pass its checks, and start the plan's trainer, rollout and pools
# (tests/cli/verl_check.py, with verl's file:line)
verl_ok() { python3 "$ROOT/tests/cli/verl_check.py" "$1" 8 $H100 >"$tmp/vc" 2>&1; }
run "$P" rl --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 64 --prompts 128 --samples 16 --input-len 512 --output-len 4096 --stack megatron-core --forward-passes 1 --json -o "$tmp/rlv.json"
check "rl: verl runs the colocated and one-step-off plans as planned" 'verl_ok "$tmp/rlv.json" && grep -q "verl.trainer.main_ppo" "$tmp/rlv.json" && grep -q "one_step_off_policy.main_ppo" "$tmp/rlv.json"'
check "rl: a disaggregated synchronous step is not verl's, and says why" 'grep -q "a disaggregated sync step is neither" "$tmp/rlv.json"'
check "rl: the MoE's rollout engines spread its experts, verl's rollout told so" 'grep -q "rollout.expert_parallel_size=8" "$tmp/rlv.json" && grep -q "VLLM_ALL2ALL_BACKEND=deepep_low_latency" "$tmp/rlv.json"'
for edit in 'o[o.index(next(x for x in o if x.startswith("trainer.nnodes=")))] = "trainer.nnodes=3"' 'o.append("actor_rollout_ref.rollout.kv_cache_dtype=fp8")' 'o[o.index(next(x for x in o if x.startswith("actor_rollout_ref.rollout.expert_parallel_size=")))] = "actor_rollout_ref.rollout.expert_parallel_size=4"' 'o[o.index(next(x for x in o if x.startswith("actor_rollout_ref.actor.ppo_mini_batch_size=")))] = "actor_rollout_ref.actor.ppo_mini_batch_size=512"' 'o[o.index(next(x for x in o if x.startswith("actor_rollout_ref.actor.use_kl_loss=")))] = "actor_rollout_ref.actor.use_kl_loss=True"'; do
    rm -f "$tmp/rle.json"
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d['results'] if r['launch']['verl'] and r['placement'] == 'colocated')
o = r['launch']['verl']['overrides']
$edit
json.dump(d, open(sys.argv[2], 'w'))" "$tmp/rlv.json" "$tmp/rle.json"
    check "verl_check refuses an edited verl run: $edit" '! verl_ok "$tmp/rle.json" && has "$(cat "$tmp/vc")" "verl_check: "'
done

finish
