#!/usr/bin/env python3
"""bench/tables.py: records and markdown tables of the nfsgit benchmarks.

  tables.py record --scenario S --case C --fs FS --variant V
                   (--hyperfine JSON --stats FILE [--objects N] [--command CMD]
                    | --skip REASON)                    >> records.jsonl
  tables.py table --scenario S [--title T] [--per-object] [--compact]
                  RECORDS.jsonl
  tables.py summary [--fs FS] RECORDS.jsonl

"record" turns one hyperfine --export-json file (wall times of every run)
and the latencyfs counters saved after every run (blocks of "name count"
lines separated by "--") into one JSON line. A missing or empty hyperfine
file means the command failed.

"table" prints two markdown tables for the records of one scenario: one
row per (case, fs) with the median wall time and min-max of each variant,
the ratio of each peer's median to each other variant's (above 1: that
variant is faster) and the total round trips of each variant; then one row
per (case, fs, variant) with the latencyfs request counts by type (median
over the runs; only the types that occur). The peers are the variants
whose label starts with "stock" ("stock 2.55.0", "stock 2.47.3"; in
records made before there were two, "stock"); the others are nfsgit and
its configurations. Used by bench/lib.sh (bench_case, bench_table).

"summary" prints the summary table of a whole bench/run (BENCHMARKS.md):
the cases listed in SUMMARY, on one file system (default: latencyfs at
500 us if it ran, else the first latencyfs delay), with each peer's and
nfsgit's median wall time, the ratios and the round trips.
"""

import argparse
import json
import re
import statistics
import sys

# Request types shown in the round-trip cells, in this order. read, write
# and release are data or no requests on NFS and are left out.
OPS = [
    ("lookup", "lookup"), ("lookup_negative", "neg"), ("getattr", "getattr"),
    ("setattr", "setattr"), ("access", "access"), ("opendir", "opendir"),
    ("readdir", "readdir"), ("readdirplus", "rdplus"), ("mkdir", "mkdir"),
    ("rmdir", "rmdir"),
    ("create", "create"), ("mknod", "mknod"), ("symlink", "symlink"),
    ("link", "link"), ("unlink", "unlink"), ("rename", "rename"),
    ("open", "open"), ("flush", "flush"), ("fsync", "fsync"),
    ("fsyncdir", "fsyncdir"), ("readlink", "readlink"), ("statfs", "statfs"),
]


def parse_stats(path):
    runs, cur = [], {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line == "--":
                if cur:
                    runs.append(cur)
                cur = {}
            elif line:
                name, _, value = line.partition(" ")
                cur[name] = int(value)
    if cur:
        runs.append(cur)
    return runs


def record(args):
    rec = {"scenario": args.scenario, "case": args.case, "fs": args.fs,
           "variant": args.variant}
    if args.skip:
        rec["skip"] = args.skip
    else:
        times, cpu = [], None
        try:
            with open(args.hyperfine) as f:
                res = json.load(f)["results"][0]
            times = res["times"]
            cpu = res["user"] + res["system"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            pass
        if times:
            rec["times"] = times
            if cpu is not None:
                rec["cpu"] = cpu
        else:
            rec["failed"] = True
        runs = parse_stats(args.stats) if args.stats else []
        if runs:
            rec["ops_runs"] = runs
            keys = sorted(set().union(*runs))
            rec["ops"] = {k: statistics.median_low([r.get(k, 0) for r in runs])
                          for k in keys}
        if args.objects:
            rec["objects"] = args.objects
        if args.command:
            rec["command"] = args.command
    print(json.dumps(rec, sort_keys=True))


def fmt_time(ts, spread=True):
    med, lo, hi = statistics.median(ts), min(ts), max(ts)
    if med >= 10:
        f, unit = (lambda x: "%.1f" % x), "s"
    elif med >= 1:
        f, unit = (lambda x: "%.2f" % x), "s"
    elif med >= 0.01:
        f, unit = (lambda x: "%.0f" % (x * 1000)), "ms"
    else:
        f, unit = (lambda x: "%.1f" % (x * 1000)), "ms"
    if not spread:
        return "%s %s" % (f(med), unit)
    return "%s %s (%s–%s)" % (f(med), unit, f(lo), f(hi))


def fs_label(fs):
    if fs.startswith("lfs:"):
        return "latencyfs %s µs" % fs[4:]
    return "local disk" if fs == "local" else fs


def fmt_ratio(x):
    return "%.1f" % x if x >= 10 else "%.2f" % x


def ratio(a, b):
    """a's median wall time / b's, or a dash"""
    if a and b and a.get("times") and b.get("times"):
        return fmt_ratio(statistics.median(a["times"]) /
                         statistics.median(b["times"]))
    return "—"


def split_variants(variants):
    """(peers, others): the stock Gits and the variants compared with them"""
    peers = [v for v in variants if v.startswith("stock")] or variants[:1]
    return peers, [v for v in variants if v not in peers]


def read_records(path, scenario=None):
    recs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if scenario is None or r["scenario"] == scenario:
                    recs.append(r)
    return recs


def cell(rec, spread=True):
    if rec is None:
        return "not run"
    if "skip" in rec:
        return "n/a: " + rec["skip"]
    if rec.get("failed"):
        return "FAILED"
    return fmt_time(rec["times"], spread)


def table(args):
    recs = read_records(args.records, args.scenario)
    if args.title:
        print("%s\n" % args.title)
    if not recs:
        print("(no results for %s)\n" % args.scenario)
        return
    rows, variants, by = [], [], {}
    for r in recs:
        key = (r["case"], r["fs"])
        if key not in by:
            rows.append(key)
        if r["variant"] not in variants:
            variants.append(r["variant"])
        by.setdefault(key, {})[r["variant"]] = r
    peers, others = split_variants(variants)
    pairs = [(p, v) for v in others for p in peers]
    if args.compact:
        compact(recs, variants, pairs)
        return
    have_ops = any(r.get("ops") for r in recs)
    per_object = args.per_object and any(r.get("objects") for r in recs)
    # on the local disk, where the disk's own timing moves the wall
    # times, the CPU time (user + system, mean) says whether the code
    # does more
    have_cpu = (all(r["fs"] == "local" for r in recs) and
                any(r.get("cpu") for r in recs))

    # 1. wall times, ratios, total round trips
    head = ["case", "fs"]
    head += variants
    head += ["%s/%s" % pair for pair in pairs]
    if per_object:
        head.append("neg lookups/object (%s)" % ", ".join(variants))
    if have_ops:
        head += ["round trips %s" % v for v in variants]
    if have_cpu:
        head += ["CPU %s" % v for v in variants]
    print_row(head)
    print("|" + "|".join("---" for _ in head) + "|")
    for key in rows:
        got = by[key]
        row = [key[0], fs_label(key[1])]
        for v in variants:
            row.append(cell(got.get(v)))
        for p, v in pairs:
            row.append(ratio(got.get(p), got.get(v)))
        if per_object:
            vals = []
            for v in variants:
                r = got.get(v) or {}
                if r.get("ops") and r.get("objects"):
                    vals.append("%.2f" % (r["ops"].get("lookup_negative", 0) /
                                          float(r["objects"])))
                else:
                    vals.append("—")
            row.append(" · ".join(vals))
        if have_ops:
            for v in variants:
                ops = (got.get(v) or {}).get("ops")
                row.append(str(ops.get("round_trips", 0)) if ops else "—")
        if have_cpu:
            for v in variants:
                c = (got.get(v) or {}).get("cpu")
                row.append(("%.0f ms" % (c * 1000)) if c is not None else "—")
        print_row(row)
    print()
    if not have_ops:
        return

    # 2. requests by type, latencyfs rows only
    cols = [(k, label) for k, label in OPS
            if any((r.get("ops") or {}).get(k) for r in recs)]
    head = ["case", "fs", "git", "round trips"] + [label for _, label in cols]
    print("Requests by type (latencyfs, median over the runs):\n")
    print_row(head)
    print("|" + "|".join("---" for _ in head) + "|")
    for key in rows:
        for v in variants:
            ops = (by[key].get(v) or {}).get("ops")
            if not ops:
                continue
            print_row([key[0], fs_label(key[1]), v, str(ops.get("round_trips", 0))] +
                      [str(ops.get(k, 0)) for k, _ in cols])
    print()


def compact(recs, variants, pairs):
    """One row per variant: time, round trips and requests by type."""
    cols = [(k, label) for k, label in OPS
            if any((r.get("ops") or {}).get(k) for r in recs)]
    head = ["git", "wall time", "round trips"] + [l for _, l in cols]
    print_row(head)
    print("|" + "|".join("---" for _ in head) + "|")
    got = {}
    for r in recs:
        ops = r.get("ops") or {}
        got[r["variant"]] = r
        print_row([r["variant"], cell(r), str(ops.get("round_trips", "—"))] +
                  [str(ops.get(k, 0)) for k, _ in cols])
    print()
    for p, v in pairs:
        x = ratio(got.get(p), got.get(v))
        if x != "—":
            print("- %s/%s wall time: %s (above 1: %s is faster)" %
                  (p, v, x, v))
    print()


# The rows of the summary: (scenario, pattern of the case, label); the
# label is formatted with the groups of the pattern. A case that did not
# run (--only, --quick sizes) leaves its row out.
SUMMARY = [
    ("s2", r"^clone, (default config|checkout\.workers=32)$",
     "clone --no-local, {0}"),
    ("s3", r"^(Checkout I: .*), (default config|workers=32)$", "{0}, {1}"),
    ("s3", r"^(Checkout II: .*), (default config)$", "{0}, {1}"),
    ("s3", r"^checkout -f, (1000) files deleted, (default config)$",
     "checkout -f after deleting {0} files, {1}"),
    ("s1", r"^N=0, medium pack \((\d+) objects\)$",
     "index-pack, {0} objects into an empty repository"),
    ("s1", r"^N=1000, small pack \((\d+) objects\)$",
     "index-pack, {0} objects into 256 × 1000 loose objects"),
    ("s5", r"^(git push file://), (\d+) objects$",
     "small push ({0}, {1} objects) into 256 × 1000 loose objects"),
    ("s4", r"^(files|reftable): (.*)$", "update-ref: {0}, {1}"),
    ("s8", r"^(status, .*)$", "{0}"),
    ("s9", r"^(CI prologue: .*)$", "{0}"),
    ("s10", r"^(.*)$", "{0}"),
]


def summary(args):
    recs = read_records(args.records)
    fss = [r["fs"] for r in recs if r["fs"].startswith("lfs:")]
    fs = args.fs or ("lfs:500" if "lfs:500" in fss else
                     (fss[0] if fss else "local"))
    variants = []
    for r in recs:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    peers, others = split_variants(variants)
    new = "nfsgit" if "nfsgit" in others else (others or ["?"])[0]
    short = {p: p[len("stock "):] if p.startswith("stock ") else p
             for p in peers}
    by, order = {}, []
    for r in recs:
        if r["fs"] != fs:
            continue
        key = (r["scenario"], r["case"])
        if key not in by:
            order.append(key)
        by.setdefault(key, {})[r["variant"]] = r
    rows = []
    for scenario, pattern, label in SUMMARY:
        for key in order:
            m = re.match(pattern, key[1])
            if key[0] != scenario or not m:
                continue
            got = by[key]
            row = [label.format(*m.groups())]
            row += [cell(got.get(v), False) for v in peers + [new]]
            row += [ratio(got.get(p), got.get(new)) for p in peers]
            row.append(" / ".join(
                str((got.get(v) or {}).get("ops", {}).get("round_trips", "—"))
                for v in peers + [new]))
            rows.append(row)
    if not rows:
        return
    print("Summary (%s):\n" % fs_label(fs))
    head = ["scenario"] + peers + [new]
    head += ["×%s" % short[p] for p in peers]
    head.append("round trips %s" % " / ".join([short[p] for p in peers] +
                                               [new]))
    print_row(head)
    print("|" + "|".join("---" for _ in head) + "|")
    for row in rows:
        print_row(row)
    print()
    print("Wall time: median of the runs; ×VERSION: that stock Git's median / "
          "%s's (above 1: %s is faster); round trips: latencyfs "
          "\"round_trips\" (median over the runs).\n" % (new, new))


def print_row(cells):
    print("| " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--scenario", required=True)
    r.add_argument("--case", required=True)
    r.add_argument("--fs", required=True)
    r.add_argument("--variant", required=True)
    r.add_argument("--hyperfine")
    r.add_argument("--stats")
    r.add_argument("--objects", type=int)
    r.add_argument("--command")
    r.add_argument("--skip")
    t = sub.add_parser("table")
    t.add_argument("--scenario", required=True)
    t.add_argument("--title")
    t.add_argument("--per-object", action="store_true")
    t.add_argument("--compact", action="store_true")
    t.add_argument("records")
    m = sub.add_parser("summary")
    m.add_argument("--fs")
    m.add_argument("records")
    args = p.parse_args()
    if args.cmd == "record":
        record(args)
    elif args.cmd == "summary":
        summary(args)
    else:
        table(args)


if __name__ == "__main__":
    sys.exit(main())
