#!/bin/sh
# test_whatif_shard.sh PARPLAN SOURCE_ROOT - a sweep split over four machines:
# GNU parallel (Debian's "parallel") runs whatif --shard 1/4 .. 4/4, and
# whatif --merge of their concatenated JSON Lines prints what one run prints,
# byte for byte, as a table, CSV, JSON and an SVG plot; merging refuses what is
# not the shards of this sweep, naming the file and line.
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"
export PARPLAN_DATA_DIR="$ROOT"
d="$tmp/shard"
mkdir -p "$d"
# 12 points: gpus x NIC speed x spares (the spares of one plan stay in one shard)
grid="--model llama3-8b --topology dgx-h100-superpod --global-batch 512 --tokens 1T"
grid="$grid --sweep gpus=64,128,256 --sweep rails.nic_bandwidth=200Gb/s,400Gb/s --sweep spares=0,8"
parallel=$(command -v parallel || true)

# the sweep in one run: the reference
# shellcheck disable=SC2086
run_big "$P" whatif $grid
check "one run: exit 0" '[ $rc -eq 0 ]'
printf '%s\n' "$out" >"$d/one.txt"
# shellcheck disable=SC2086
run_big "$P" whatif $grid --csv -o "$d/one.csv"
# shellcheck disable=SC2086
run_big "$P" whatif $grid --json -o "$d/one.json"
# shellcheck disable=SC2086
run_big "$P" whatif $grid --plot "$d/one.svg"

if [ -z "$parallel" ]; then
    skip "four shards through GNU parallel" "no parallel (scripts/test installs it)"
    # the same shards one after another, so that the merge is still checked
    for k in 1 2 3 4; do
        # shellcheck disable=SC2086
        "$P" whatif $grid --shard "$k/4" >>"$d/shards.jsonl"
    done
else
    # shellcheck disable=SC2086
    run_big "$parallel" --will-cite --halt now,fail=1 "$P" whatif $grid --shard '{}/4' ::: 1 2 3 4
    check "four shards through GNU parallel: exit 0, every point once" \
        '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | grep -c "\"point\":")" -eq 12 ]'
    printf '%s\n' "$out" >"$d/shards.jsonl"
fi

# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/shards.jsonl"
check "merge: the table of one run, byte for byte" '[ $rc -eq 0 ] && [ "$out" = "$(cat "$d/one.txt")" ]'
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/shards.jsonl" --csv -o "$d/merged.csv"
check "merge --csv: the CSV of one run" '[ $rc -eq 0 ] && cmp -s "$d/one.csv" "$d/merged.csv"'
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/shards.jsonl" --json -o "$d/merged.json"
check "merge --json: the JSON of one run" '[ $rc -eq 0 ] && cmp -s "$d/one.json" "$d/merged.json"'
# shellcheck disable=SC2086
run_once "$P" whatif $grid --merge - --plot "$d/merged.svg" <"$d/shards.jsonl"
check "merge - (stdin) --plot: the SVG of one run" '[ $rc -eq 0 ] && cmp -s "$d/one.svg" "$d/merged.svg"'

# what merge refuses
head -n 11 "$d/shards.jsonl" >"$d/short.jsonl"
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/short.jsonl"
check "a shard missing: exit 3, the point named" '[ $rc -eq 3 ] && has "$err" "is in no line"'
cat "$d/shards.jsonl" "$d/short.jsonl" >"$d/twice.jsonl"
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/twice.jsonl"
check "a shard merged twice: exit 3, file and line named" '[ $rc -eq 3 ] && has "$err" "twice.jsonl: line 13: point"'
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 --sweep gpus=64,128 --merge "$d/shards.jsonl"
check "another sweep's lines: exit 3, grid named" '[ $rc -eq 3 ] && has "$err" "line 1: grid"'
# the same grid under other settings: the shards' configurations costed under the
# merge's sequence length, or their pins, would print what no single run prints
# shellcheck disable=SC2086
run "$P" whatif $grid --seq-len 4096 --merge "$d/shards.jsonl"
check "lines merged under another --seq-len: exit 3, grid named" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "line 1: grid"'
# shellcheck disable=SC2086
run "$P" whatif $grid --zero 1 --merge "$d/shards.jsonl"
check "lines merged under another pin (--zero 1): exit 3, grid named" '[ $rc -eq 3 ] && has "$err" "line 1: grid"'
# a line's configuration its rules refuse: the file's error (exit 3, the line and
# key), not a flag's
python3 - "$d/shards.jsonl" "$d/huge.jsonl" <<'PY'
import json, sys
lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
first = next(x for x in lines if x["config"])
first["config"]["gpus"] = 2147483648
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in lines))
PY
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/huge.jsonl"
check "a line whose config.gpus exceeds the cluster: exit 3, one line naming line and key" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "huge.jsonl: line " && has "$err" ": config.gpus: "'
# a plan off its point: a batch other than the point's, its microbatches agreeing
python3 - "$d/shards.jsonl" "$d/offgrid.jsonl" <<'PY'
import json, sys
lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
first = next(x for x in lines if x["config"])
cfg = first["config"]
cfg["global_batch"] *= 2
cfg["microbatches"] = cfg["global_batch"] // (cfg["dp"] * cfg["mbs"])
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in lines))
PY
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/offgrid.jsonl"
check "a line whose batch is not its point's: exit 3 naming config.global_batch" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" ": config.global_batch: "'
cp "$d/shards.jsonl" "$d/self.jsonl"
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/self.jsonl" -o "$d/self.jsonl"
check "--merge F -o F: exit 2, the shards kept" '[ $rc -eq 2 ] && has "$err" "as --merge" && cmp -s "$d/shards.jsonl" "$d/self.jsonl"'
printf 'not json\n' >"$d/bad.jsonl"
# shellcheck disable=SC2086
run "$P" whatif $grid --merge "$d/bad.jsonl"
check "a line that is not JSON: exit 3" '[ $rc -eq 3 ] && has "$err" "bad.jsonl: line 1: not JSON"'
# shellcheck disable=SC2086
run "$P" whatif $grid --shard 5/4
check "--shard 5/4: usage error" '[ $rc -eq 2 ] && has "$err" "K/N"'
# shellcheck disable=SC2086
run "$P" whatif $grid --shard 1/4 --json
check "--shard with --json: usage error (merge prints it)" '[ $rc -eq 2 ] && has "$err" "not with --json"'
finish
