#!/usr/bin/env python3
"""scripts/bench-kv-compare.sh over bench/kv-bench, one short round: every
engine kv-bench was built with runs every workload, every point get and
seek finds its key (all keys were loaded), puts and synced puts are
counted, the scan reports its cost per next, and the markdown table has
its rows with ravel's ratios.

    test_kv_compare.py SCRIPT KV_BENCH WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys


def main():
    script, kv_bench, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, ROUNDS="1", KV_BENCH=kv_bench, DB_ROOT=work)
    out = subprocess.run(
        ["sh", script, "--num=3000", "--scan_num=600", "--seconds=0.1",
         "--write_threads=1,4,32", "--cache_size=1048576",
         "--scan_cache_size=65536"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=600)
    text = out.stdout
    failures = []
    if out.returncode != 0:
        failures.append("exit status %d" % out.returncode)
    help_text = subprocess.run([kv_bench, "--help"], stdout=subprocess.PIPE,
                               text=True, check=True).stdout
    built = re.search(r"built in: ([a-z,]+)", help_text).group(1).split(",")
    results = {}
    for line in text.splitlines():
        if " result " not in line:
            continue
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        results[(f["engine"], f["workload"], f["threads"])] = f
    want = [("get", "1"), ("get", "4"), ("seek", "1"), ("seek", "4"),
            ("put", "1"), ("put", "4"), ("put", "32"), ("syncput", "32"),
            ("scan", "1")]
    for engine in built:
        rows = want + ([("get_into", "1"), ("get_into", "4")]
                       if engine == "ravel" else [])
        for workload, threads in rows:
            f = results.get((engine, workload, threads))
            if f is None:
                failures.append("no result for %s %s %s"
                                % (engine, workload, threads))
                continue
            ops, found = int(f["ops"]), int(f["found"])
            if ops <= 0:
                failures.append("%s %s %s: no operations" %
                                (engine, workload, threads))
            if found != ops:
                failures.append("%s %s %s: %d of %d found" %
                                (engine, workload, threads, found, ops))
            if workload in ("seek", "scan") and float(f["next_ns"]) <= 0:
                failures.append("%s %s: no cost per next" % (engine, workload))
    for row in ("| point get, 1 thread |", "| seek + 10 next, 1 thread |",
                "| synced put, 32 threads |", "| ravel / peer"):
        if row not in text:
            failures.append("table row missing: " + row)
    if failures:
        print(text)
        print("\n".join("FAIL: " + x for x in failures))
        sys.exit(1)
    print("engines: %s; %d results" % (",".join(built), len(results)))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
