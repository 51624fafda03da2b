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
    doc=$1 path=$2 sub=$3 model=$4 topo=$5
    # shellcheck disable=SC2046
    est=$("$P" estimate --model "$model" --topology "$topo" $(printf '%s' "$doc" | flags_of "$path") --json 2>&1) || return 1
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

# validate's prediction for a run, re-costed by estimate on the run's cluster
run "$P" validate --runs "$ROOT/tests/data/balanced_split_run.json" --json
v=$out
vm=$(printf '%s' "$v" | python3 -c "import json, sys; print(json.load(sys.stdin)['results'][0]['id'])")
check "validate predicts the balanced-split run" '[ $rc -eq 0 ] && [ -n "$vm" ]'

finish
