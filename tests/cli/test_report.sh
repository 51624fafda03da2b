#!/bin/sh
# test_report.sh PARPLAN SOURCE_ROOT - the HTML plan report (parplan report, plan
# --report) loaded in a real headless browser (Debian's chromium): it renders,
# nothing throws, light and dark mode apply, and its figures equal the plan JSON's.
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"
d="$tmp/report"
mkdir -p "$d"
browser=$(command -v chromium || command -v chromium-browser || true)

# a pinned pipeline keeps the plan cheap under valgrind and gives the timeline stages
plan="plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --pp 4 --top 4"
# shellcheck disable=SC2086
run "$P" $plan --json -o "$d/plan.json"
check "plan --json for the report" '[ $rc -eq 0 ] && [ -s "$d/plan.json" ]'
run "$P" report "$d/plan.json" --json -o "$d/report-json.html"
check "report --json: refused (a page, not JSON), nothing written" '[ $rc -eq 2 ] && has "$err" "--json" && [ ! -e "$d/report-json.html" ]'
# a plan of 1,000 results (4 MB) is read once, not once a result (issue 32: 111 s)
run_big "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --top 1000 --json -o "$d/plan-1000.json"
run_big sh -c "ulimit -t 20; \"$P\" report '$d/plan-1000.json' --top 1000 -o '$d/report-1000.html'"
check "report --top 1000 of a 4 MB plan: written within 20 s of CPU" '[ $rc -eq 0 ] && [ -s "$d/report-1000.html" ]'
run "$P" report "$d/plan.json" -o "$d/report.html"
check "report PLAN.json -o FILE: exit 0, nothing on stdout or stderr" '[ $rc -eq 0 ] && [ -z "$out" ] && [ -z "$err" ] && [ -s "$d/report.html" ]'
check "the page fetches nothing: no src= or href= to anywhere, a CSP of default-src none" '! grep -Eq "(src|href)=\"" "$d/report.html" && grep -q "default-src '"'"'none'"'"'" "$d/report.html"'
# shellcheck disable=SC2086
run "$P" $plan --report "$d/direct.html"
check "plan --report FILE: exit 0, the table still on stdout" '[ $rc -eq 0 ] && has "$out" "tp/pp/dp/cp/ep" && [ -s "$d/direct.html" ]'
strip() { grep -o 'data-key="[^"]*" data-value="[^"]*"\|data-part="[^"]*" data-value="[^"]*"' "$1"; }
check "plan --report and report PLAN.json mark the same figures" '[ "$(strip "$d/report.html")" = "$(strip "$d/direct.html")" ] && [ -n "$(strip "$d/report.html")" ]'

if [ -z "$browser" ]; then
    skip "the page in a headless browser" "no chromium (scripts/test installs it)"
    skip "dark mode" "no chromium"
else
    render() { # render PAGE OUT [FLAGS]: the DOM after load, and the browser's log
        page=$1 dom=$2
        shift 2
        HOME="$d" timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
            --user-data-dir="$d/profile" --enable-logging=stderr --v=0 "$@" \
            --virtual-time-budget=2000 --dump-dom "file://$page" >"$dom" 2>"$dom.log"
    }
    render "$d/report.html" "$d/dom.html"
    rc=$?
    out=$(python3 "$ROOT/tests/cli/report_check.py" "$d/plan.json" "$d/report.html" "$d/dom.html" 2>&1)
    err=$(grep -i "uncaught\|console.*error" "$d/dom.html.log" | head -3)
    check "in chromium: every chart laid out, no script error, each figure equals the JSON's" '[ $rc -eq 0 ] && [ -z "$out" ] && [ -z "$err" ]'
    run "$P" report "$d/plan.json#2" -o "$d/second.html"
    render "$d/second.html" "$d/dom2.html"
    out=$(python3 "$ROOT/tests/cli/report_check.py" "$d/plan.json" "$d/second.html" "$d/dom2.html" 2>&1)
    check "report PLAN.json#2: the charts show result 2, each figure its JSON's" '[ -z "$out" ] && grep -q "data-focus=\"2\"" "$d/dom2.html"'
    render "$d/report.html" "$d/dark.html" --force-dark-mode
    rc=$?
    light=$(grep -o 'data-scheme="[^"]*"' "$d/dom.html")
    dark=$(grep -o 'data-scheme="[^"]*"' "$d/dark.html")
    out="$light / $dark"
    check "light and dark mode: the page's background follows the reader's scheme" '[ $rc -eq 0 ] && [ "$light" = "data-scheme=\"light rgb(255, 255, 255)\"" ] && [ "$dark" = "data-scheme=\"dark rgb(13, 17, 23)\"" ]'
fi

# bad input: one line, exit per SPEC, nothing written
run "$P" report
check "report without a plan: exit 2" '[ $rc -eq 2 ] && has "$err" "PLAN.json" && [ "$(lines "$err")" -eq 1 ]'
run "$P" report "$d/none.json" -o "$d/x.html"
check "report of a missing file: exit 3, nothing written" '[ $rc -eq 3 ] && [ ! -e "$d/x.html" ] && [ "$(lines "$err")" -eq 1 ]'
run "$P" report "$ROOT/models/gpt3-175b.json" -o "$d/x.html"
check "report of a file that is not a plan: exit 3 naming results, nothing written" '[ $rc -eq 3 ] && has "$err" "results" && [ ! -e "$d/x.html" ]'
printf '{"results": [{"config": {"tp": 0}}], "model": "llama3-8b", "topology": "dgx-h100-superpod"}' >"$d/bad.json"
run "$P" report "$d/bad.json" -o "$d/x.html"
check "report of a plan with a bad configuration: exit 3 or 2, one line, nothing written" '[ $rc -eq 3 ] || [ $rc -eq 2 ]; [ $rc -ne 0 ] && [ "$(lines "$err")" -eq 1 ] && [ ! -e "$d/x.html" ]'
run "$P" report "$d/plan.json#9" -o "$d/x.html"
check "report PLAN.json#9 of a 4-result plan: exit 2, nothing written" '[ $rc -eq 2 ] && has "$err" "4 results" && [ ! -e "$d/x.html" ]'
run "$P" report "$d/plan.json" -o "$d"
check "report -o DIRECTORY: exit 2" '[ $rc -eq 2 ] && has "$err" "-o"'
# shellcheck disable=SC2086
run "$P" $plan --report "$d/same.txt" -o "$d/same.txt"
check "plan --report FILE -o FILE: exit 2 naming --report" '[ $rc -eq 2 ] && has "$err" "--report"'
run "$P" plan --model llama3-8b --topology mixed-h100-b200 --global-batch 256 --report "$d/mixed.html"
check "plan --report on a mixed cluster: exit 2 naming --report, nothing written" '[ $rc -eq 2 ] && has "$err" "--report" && [ ! -e "$d/mixed.html" ]'
finish
