#!/usr/bin/env python3
"""Smoke test of tests/bench/run's report: runs a few rows of bench_sup and
bench_modes with tiny counts (the rows whose verdicts run computes: cgroup
against its raw floor, limits, idle lateness against the raw loop, children
alive at once, threads, alive), and the Node shim's benchmark when node and
its built addon are here, then builds RESULTS.md's table from them as run
does and checks that every row made it, with a verdict. Judges no duration.

    report_smoke.py BENCH_SUP BENCH_MODES WRITER CHILD SUP_RUN SUP_TIMEOUT
"""

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def load_run():
    loader = importlib.machinery.SourceFileLoader("bench_run", os.path.join(HERE, "run"))
    spec = importlib.util.spec_from_loader("bench_run", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def rows_of(cmd, prefix=""):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"report_smoke: {cmd[0]} exited with status {r.returncode}")
    rows = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[prefix + row["row"]] = row
    return rows


def main():
    bench_sup, bench_modes, writer, child, sup_run, sup_timeout = sys.argv[1:7]
    run = load_run()
    rows = rows_of([bench_sup, "--quick", "--writer", writer, "--child", child,
                    "--rows", "spawn,spawn_cgroup,spawn_limits,idle,children"])
    rows.update(rows_of([bench_modes, "--quick", "--writer", writer, "--sup-run", sup_run,
                         "--sup-timeout", sup_timeout, "--rows", "threads,alive"], "modes_"))
    notes = []
    with tempfile.TemporaryDirectory() as out:
        # A quick run's reports go to run's out/; here, to a directory of
        # our own, so that the suite writes nothing into the checkout.
        run.OUT = out
        rows.update(run.run_node(True, notes))
    want = {"spawn", "spawn_limits", "idle", "children", "threads", "alive"}
    if "skipped" not in rows["spawn_cgroup"]:
        want |= {"spawn_cgroup", "spawn_cgroup_raw"}
    if "node" in rows:
        want |= {"node_spawn", "node_stream", "node_threads"}
    table = run.main_rows(rows)
    got = {r["key"] for r in table}
    missing = sorted(want - got)
    if missing:
        sys.exit(f"report_smoke: rows missing from the table: {', '.join(missing)}")
    for r in table:
        if not isinstance(r["met"], bool) or not r["target"]:
            sys.exit(f"report_smoke: row {r['key']} has no target or verdict: {r}")
    report = dict(
        quick=True, date="-", command="report_smoke", sup_version="-", libc="-",
        machine=dict(cores=os.cpu_count(), cpu="-", kernel="-", memory_gib=0, os="-"),
        load=dict(before="-", after="-"), rows=table, raw=rows, scale=[], peers=[],
        peer_plan=dict(spawn_samples=0, capture_bytes=0, capture_runs=0, placements=[]),
        notes=notes)
    text = run.markdown(report)
    for r in table:
        if r["measurement"] not in text:
            sys.exit(f"report_smoke: row {r['key']} is not in the Markdown")
    for n in notes:
        print(f"note: {n}")
    print(f"report_smoke: {len(table)} rows: " + ", ".join(sorted(got)))


if __name__ == "__main__":
    main()
