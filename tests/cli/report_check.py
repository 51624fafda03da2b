#!/usr/bin/env python3
"""report_check.py PLAN.json PAGE.html DOM.html - a plan's HTML report against its JSON.

PAGE.html is what parplan wrote; DOM.html is the same page after a headless
browser loaded it and ran it (chromium --dump-dom).  Checks:
  - every <svg> of the page is well-formed XML;
  - the browser's self-check says every chart was laid out and nothing threw;
  - each figure the page marks with data-key/data-value equals the JSON's field
    (the ranked rows, #1's summary), and the charts' marks equal #1's step parts,
    communication, worst stage's memory parts, capacity and traffic.
Prints one line per failure; exit 1 if any.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser


class Marks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rank = None
        self.chart = None
        self.category = None
        self.rows = {}  # rank -> {key: value}
        self.summary = {}
        self.charts = {}  # chart -> [(category, part, value)]
        self.limit = {}
        self.body = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "tr" and "data-rank" in a:
            self.rank = int(a["data-rank"])
            self.rows[self.rank] = {}
        if tag == "figure" and "data-chart" in a:
            self.chart = a["data-chart"]
            self.charts[self.chart] = []
        if tag == "g" and "data-category" in a:
            self.category = a["data-category"]
        if "data-key" in a:
            v = float(a["data-value"])
            if self.rank is not None:
                self.rows[self.rank][a["data-key"]] = v
            else:
                self.summary[a["data-key"]] = v
        if tag == "rect" and "data-part" in a and self.chart:
            self.charts[self.chart].append((self.category, a["data-part"], float(a["data-value"])))
        if tag == "line" and "limit" in a.get("class", "") and self.chart:
            self.limit[self.chart] = float(a["data-value"])

    def handle_endtag(self, tag):
        if tag == "tr":
            self.rank = None
        if tag == "figure":
            self.chart = None
        if tag == "g":
            self.category = None


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def get(d, path):
    for k in path.split("."):
        d = d[k]
    return d


def main():
    plan = json.load(open(sys.argv[1]))
    page = open(sys.argv[2]).read()
    dom = open(sys.argv[3]).read()
    bad = []
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    for i, s in enumerate(svgs):
        try:
            ET.fromstring(s)
        except ET.ParseError as e:
            bad.append(f"svg {i} is not well-formed: {e}")
    m = Marks()
    m.feed(dom)
    check = m.body.get("data-check", "")
    if not check.startswith("ok ") or f"charts={len(svgs)}" not in check:
        bad.append(f"browser self-check: '{check}' for {len(svgs)} charts")
    results = plan["results"]
    if len(m.rows) != len(results):
        bad.append(f"{len(m.rows)} ranked rows, the JSON has {len(results)} results")
    for rank, row in m.rows.items():
        r = results[rank - 1]
        for key, v in row.items():
            if not close(v, get(r, key)):
                bad.append(f"#{rank} {key}: page {v!r}, JSON {get(r, key)!r}")
        if len(row) < 4:
            bad.append(f"#{rank}: only {sorted(row)} marked")
    focus = int(m.body.get("data-focus", "1"))
    best = results[focus - 1]
    for key, v in m.summary.items():
        if key.startswith("timeline."):
            continue
        if not close(v, get(best, key)):
            bad.append(f"summary {key}: page {v!r}, JSON {get(best, key)!r}")
    for chart, want in (
        ("time", {k: best["time"][k] for k in ("compute", "bubble", "exposed_comm", "optimizer", "overhead")}),
        ("traffic", {k: best["traffic"][k] for k in ("nvlink", "rail", "spine")}),
    ):
        got = {}
        for cat, part, v in m.charts.get(chart, []):
            got[part if chart == "time" and cat == "step" else cat] = v
        for k, w in want.items():
            if w > 0 and not close(got.get(k, -1.0), w):
                bad.append(f"{chart} chart {k}: page {got.get(k)!r}, JSON {w!r}")
        # the step's parts add up to the step
    parts = [v for cat, part, v in m.charts.get("time", []) if cat == "step"]
    if not close(sum(parts), best["step_time_s"]) and abs(sum(parts) - best["step_time_s"]) > 1e-6 * best["step_time_s"]:
        bad.append(f"step parts sum to {sum(parts)!r}, the step is {best['step_time_s']!r}")
    comm = {cat: v for cat, part, v in m.charts.get("time", []) if cat != "step"}
    for k in ("tp_comm", "cp_comm", "pp_comm", "dp_comm", "ep_comm"):
        if best["time"][k] > 0 and not close(comm.get(k, -1.0), best["time"][k]):
            bad.append(f"communication chart {k}: page {comm.get(k)!r}, JSON {best['time'][k]!r}")
    stages = {}
    for cat, part, v in m.charts.get("memory", []):
        stages.setdefault(cat, {})[part] = v
    worst = str(best["memory"]["worst_stage"])
    if worst not in stages:
        bad.append(f"memory chart has no stage {worst}")
    else:
        for k in ("weights", "gradients", "optimizer", "activations", "other"):
            w = best["memory"][k]
            if w > 0 and not close(stages[worst].get(k, -1.0), w):
                bad.append(f"memory chart stage {worst} {k}: page {stages[worst].get(k)!r}, JSON {w!r}")
        top = max(sum(p.values()) for p in stages.values())
        if abs(top - best["memory"]["total"]) > 1e-6 * best["memory"]["total"]:
            bad.append(f"memory chart's largest stage {top!r}, JSON total {best['memory']['total']!r}")
    if len(stages) != best["config"]["pp"]:
        bad.append(f"memory chart has {len(stages)} stages, pp is {best['config']['pp']}")
    if not close(m.limit.get("memory", -1.0), best["memory"]["capacity"]):
        bad.append(f"capacity line {m.limit.get('memory')!r}, JSON {best['memory']['capacity']!r}")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
