"""launch_results.py - the results of a plan as a launcher's check reads them.

Shared by torchtitan_check.py and bridge_check.py: each result either carries
the launcher's part, which scripts/launch-megatron writes to a file as a user
would get it, or says why not (its _error) and leaves the launcher out of
launch.launchers.
"""
import json
import os
import subprocess
import sys
import tempfile


class Refused(Exception):
    pass


def need(cond, where, why):
    if not cond:
        raise Refused(f"{where}: {why}")


def launched(plan, root, key, listed, option, suffix):
    """(rank, result, file) for each result: file None (after its error is
    checked) where the launcher cannot run the result, else what
    launch-megatron OPTION wrote for it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plan.json")
        with open(path, "w") as f:
            json.dump(plan, f)
        for k, r in enumerate(plan["results"], 1):
            launch = r["launch"]
            if launch.get(key) is None:
                need(launch.get(f"{key}_error"), "launch", f"no {key} and no {key}_error")
                need(listed not in launch["launchers"], "launch", f"{listed} listed")
                yield k, r, None
                continue
            need(listed in launch["launchers"], "launch", f"{listed} not listed")
            out = os.path.join(tmp, f"result{k}{suffix}")
            run = subprocess.run(["sh", os.path.join(root, "scripts/launch-megatron"), path,
                                  "--rank", str(k), option, out], capture_output=True, text=True)
            need(run.returncode == 0, "launch-megatron", run.stderr.strip())
            yield k, r, out


def arguments():
    """[--model MODEL.json] ROOT, and the plan on stdin: (model or None, root, plan)."""
    args, model = sys.argv[1:], None
    if args[:1] == ["--model"]:
        with open(args[1]) as f:
            model = json.load(f)
        args = args[2:]
    return model, args[0], json.load(sys.stdin)


def run(main):
    """main(), a refusal printed as REFUSED and exit status 1."""
    try:
        main()
    except Refused as e:
        print(f"REFUSED {e}")
        sys.exit(1)
