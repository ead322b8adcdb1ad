#!/usr/bin/env python3
"""Summarise a bench-guest.sh run: bench-report.py OUTDIR

Reads OUTDIR/raw.txt (one line per run, key=value, see bench-guest.sh),
OUTDIR/env.txt and OUTDIR/accel (kvm or tcg, or run-vm.sh's "accel=..."
line; missing means unknown). Takes per cell (op, fs, qd) the median over
rounds of each mode and the paired per-round ratios handoff/baseline (the
same round's runs; min/median/max, the figure a regression is judged by:
a median below 0.95 in two boots), writes OUTDIR/results.csv, prints a
table laid out like
the RFC cover letter and plots the handoff/baseline and disabled/baseline
ratios to OUTDIR/ratio.png with gnuplot (ratio.svg if gnuplot has no PNG
terminal). Exits 1 if raw.txt is missing or holds no runs.
"""
import csv
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys

MODES = ("baseline", "handoff", "inline", "disabled", "sync", "nodepth",
         "punt")
# the A/B modes of one setting, a paired line each: mode, label
EXTRA_MODES = (("nodepth", "handoff, depth_max=0"),
               ("punt", "punt (cgroup: nobody)"))
CSV_HEADER = ["op", "fs", "qd", "baseline_ops", "handoff_ops", "ratio",
              "baseline_cpu", "handoff_cpu", "sync_ops",
              "disabled_ops", "disabled_ratio", "handoffs", "inline_done",
              "fallbacks", "baseline_workers", "handoff_workers",
              "inline_ops", "inline_ratio", "inline_cpu", "inline_handoffs",
              "rate", "baseline_p50", "baseline_p99", "handoff_p50",
              "handoff_p99", "pairs", "pair_ratio_min", "pair_ratio_median",
              "pair_ratio_max", "baseline_ctx", "handoff_ctx",
              "inline_issued", "fallbacks_by_reason"]
# the cost microbench's ns per request, iouh-bench.c says each
COST_FIELDS = ("uring_ns", "sync_ns", "nop_ns", "getppid_ns", "fadv_ns",
               "sync_fadv_ns", "cost_ns", "file_cost_ns")
OP_LABEL = {
    "cost": "cost per punted request (FSYNC of a clean file), ns",
    "fadvise": "fadvise DONTNEED",
    "openat": "openat O_TMPFILE",
    "splice": "splice to pipe",
    "walkread": "walk: openat, read 4k, close (linked)",
    "bfs": "bfs walk (qd: its -j)",
    "bfs-stat": "bfs walk -size, eager statx (qd: its -j)",
}


def die(msg):
    print(f"bench-report: {msg}", file=sys.stderr)
    sys.exit(1)


def parse_kv(line):
    kv = {}
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            kv[k] = v
    return kv


def read_raw(path):
    """{(op, fs, qd): {mode: [run, ...]}} in order of first appearance"""
    cells = {}
    nfail = 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line.startswith("# fail"):
                nfail += 1
            if not line or line.startswith("#"):
                continue
            kv = parse_kv(line)
            try:
                key = (kv["op"], kv["fs"], int(kv["qd"]))
                run = {"ops": float(kv["ops"]), "cpu": float(kv["cpu"])}
                for c in ("p50", "p99") + COST_FIELDS:
                    if c in kv:
                        run[c] = float(kv[c])
                for c in ("handoffs", "inline_done", "fallbacks",
                          "workers", "rate", "n", "round", "ctx",
                          "inline_issued"):
                    if c in kv and kv[c] != "-":
                        run[c] = int(kv[c])
                fb = {k[3:]: int(v) for k, v in kv.items()
                      if k.startswith("fb_")}
                if fb:
                    run["fb"] = fb
                mode = kv["mode"]
            except (KeyError, ValueError):
                print(f"bench-report: {path}:{n}: skipping '{line}'",
                      file=sys.stderr)
                continue
            cells.setdefault(key, {}).setdefault(mode, []).append(run)
    return cells, nfail


def read_env(outdir):
    env = {}
    try:
        with open(os.path.join(outdir, "env.txt")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k.strip()] = v.strip()
    except OSError:
        pass
    try:
        with open(os.path.join(outdir, "accel")) as f:
            text = f.read()
        m = re.search(r"accel=(\w+)", text)
        word = m.group(1) if m else (text.split() or ["unknown"])[0]
        env["accel"] = word.lower() if word.lower() in ("kvm", "tcg") \
            else "unknown"
    except OSError:
        env["accel"] = "unknown"
    return env


def median(runs, field):
    vals = [r[field] for r in runs if field in r]
    return statistics.median(vals) if vals else None


def paired(modes, mode):
    """mode/baseline ops of the same round, for every round both ran"""
    base = {r["round"]: r["ops"] for r in modes.get("baseline", [])
            if "round" in r and r["ops"] > 0}
    return [r["ops"] / base[r["round"]] for r in modes.get(mode, [])
            if r.get("round") in base]


def fallbacks_by_reason(runs):
    """{reason: median over runs of its count} of the runs that had fb_"""
    reasons = sorted({k for r in runs for k in r.get("fb", {})})
    return {k: statistics.median(r.get("fb", {}).get(k, 0) for r in runs)
            for k in reasons}


def summarise(cells):
    rows = []
    for (op, fs, qd), modes in cells.items():
        row = {"op": op, "fs": fs, "qd": qd}
        for m in MODES:
            runs = modes.get(m, [])
            row[m + "_ops"] = median(runs, "ops")
            row[m + "_cpu"] = median(runs, "cpu")
            row[m + "_runs"] = runs
        hruns = modes.get("handoff", [])
        row["handoffs"] = median(hruns, "handoffs")
        row["inline_done"] = median(hruns, "inline_done")
        row["fallbacks"] = median(hruns, "fallbacks")
        row["rate"] = median(hruns, "rate")
        row["inline_handoffs"] = median(modes.get("inline", []), "handoffs")
        for m in ("baseline", "handoff"):
            for c in ("workers", "p50", "p99"):
                row[m + "_" + c] = median(modes.get(m, []), c)
        row["disabled_handoffs"] = median(modes.get("disabled", []),
                                          "handoffs")
        row["modes"] = modes
        pr = paired(modes, "handoff")
        row["pairs"] = len(pr)
        row["pair_min"] = min(pr) if pr else None
        row["pair_med"] = statistics.median(pr) if pr else None
        row["pair_max"] = max(pr) if pr else None
        for m in ("baseline", "handoff"):
            row[m + "_ctx"] = median(modes.get(m, []), "ctx")
        row["inline_issued"] = median(hruns, "inline_issued")
        row["fb"] = fallbacks_by_reason(hruns)
        b = row["baseline_ops"]
        for m, k in (("handoff", "ratio"), ("disabled", "disabled_ratio"),
                     ("inline", "inline_ratio")):
            v = row[m + "_ops"]
            row[k] = v / b if v is not None and b else None
        rows.append(row)
    return rows


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_HEADER)
        for r in rows:
            w.writerow([r["op"], r["fs"], r["qd"],
                        fmt(r["baseline_ops"], ".1f"),
                        fmt(r["handoff_ops"], ".1f"),
                        fmt(r["ratio"], ".4f"),
                        fmt(r["baseline_cpu"], ".1f"),
                        fmt(r["handoff_cpu"], ".1f"),
                        fmt(r["sync_ops"], ".1f"),
                        fmt(r["disabled_ops"], ".1f"),
                        fmt(r["disabled_ratio"], ".4f"),
                        fmt(r["handoffs"], ".0f"),
                        fmt(r["inline_done"], ".0f"),
                        fmt(r["fallbacks"], ".0f"),
                        fmt(r["baseline_workers"], ".0f"),
                        fmt(r["handoff_workers"], ".0f"),
                        fmt(r["inline_ops"], ".1f"),
                        fmt(r["inline_ratio"], ".4f"),
                        fmt(r["inline_cpu"], ".1f"),
                        fmt(r["inline_handoffs"], ".0f"),
                        fmt(r["rate"], ".0f"),
                        fmt(r["baseline_p50"], ".1f"),
                        fmt(r["baseline_p99"], ".1f"),
                        fmt(r["handoff_p50"], ".1f"),
                        fmt(r["handoff_p99"], ".1f"),
                        r["pairs"],
                        fmt(r["pair_min"], ".4f"),
                        fmt(r["pair_med"], ".4f"),
                        fmt(r["pair_max"], ".4f"),
                        fmt(r["baseline_ctx"], ".0f"),
                        fmt(r["handoff_ctx"], ".0f"),
                        fmt(r["inline_issued"], ".0f"),
                        " ".join(f"{k}:{v:.0f}" for k, v in
                                 r["fb"].items())])


def kops(v):
    """28.2k, 221k, 9.6k, 850, like the cover letter"""
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e5:
        return f"{v / 1e3:.0f}k"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def pct(v):
    return "-" if v is None else f"{v:.0f}%"


def change(new, old):
    if new is None or not old:
        return "-"
    v = round((new / old - 1) * 100)
    return f"{v:+d}%" if v else "+0%"


def line(label, ops, cpu, extra=""):
    return f"   {label:<34}{ops:>10}{cpu:>7}{extra}".rstrip()


def per_op(r, mode, counter, secs):
    """median over runs of counter / ops done (n=, else ~ ops/s * secs)"""
    vals = [x[counter] / (x["n"] if "n" in x else x["ops"] * secs)
            for x in r[mode + "_runs"]
            if counter in x and x["ops"] > 0 and ("n" in x or secs)]
    return statistics.median(vals) if vals else None


def latency(r, mode):
    """request latency percentiles of a mode, us"""
    p50, p99 = r[mode + "_p50"], r[mode + "_p99"]
    if p50 is None or p99 is None:
        return ""
    return f"latency p50 {p50:.0f} us, p99 {p99:.0f} us"


def print_cost(r):
    """the cost cell: ns per request in each mode, no ops/s ratio"""
    print(f"   {'':<21}{'over NOP':>10}{'over file op':>14}"
          f"{'FSYNC':>8}{'NOP':>7}   min/median/max over file op")
    for m in MODES:
        runs = r["modes"].get(m, [])
        vals = [x["file_cost_ns"] for x in runs if "file_cost_ns" in x]
        if not vals:
            continue
        print(f"   {m:<21}{median(runs, 'cost_ns'):>10.0f}"
              f"{statistics.median(vals):>14.0f}"
              f"{median(runs, 'uring_ns'):>8.0f}{median(runs, 'nop_ns'):>7.0f}"
              f"   {min(vals):.0f}/{statistics.median(vals):.0f}/"
              f"{max(vals):.0f}")


def print_table(rows, env, nfail):
    accel = env.get("accel", "unknown").upper()
    if accel == "UNKNOWN":
        accel = "unknown"
    try:
        secs = float(env.get("secs", ""))
    except ValueError:
        secs = None
    print(f"kernel {env.get('kernel', '?')}, accel {accel}, "
          f"{env.get('vcpus', '?')} vCPUs, {env.get('rounds', '?')} rounds "
          f"of {env.get('secs', '?')}s per mode, medians")
    print("CPU: whole process incl. io-wq workers, % of one CPU; "
          "sync: the same op as syscalls in one thread")
    if accel == "TCG":
        print("TCG: ratios are indicative only")
    if nfail:
        print(f"WARNING: {nfail} runs failed, see '# fail' lines in raw.txt")
    print()
    print(f"{'':<42}{'ops/s':>5}{'cpu':>7}")
    print(" " + "=" * 53)
    for r in rows:
        print(f" {OP_LABEL.get(r['op'], r['op'])}, {r['fs']}, qd {r['qd']}")
        if r["op"] == "cost":
            print_cost(r)
            continue
        b, h, d, s = (r["baseline_ops"], r["handoff_ops"], r["disabled_ops"],
                      r["sync_ops"])
        bc, hc, dc = r["baseline_cpu"], r["handoff_cpu"], r["disabled_cpu"]
        hx = ""
        ho = per_op(r, "handoff", "handoffs", secs)
        io = per_op(r, "handoff", "inline_done", secs)
        fo = per_op(r, "handoff", "fallbacks", secs)
        if ho is not None or io is not None:
            hx = "   per op: handoffs " + fmt(ho, ".2f") + \
                 ", inline " + fmt(io, ".2f")
            if fo is not None:
                hx += ", fallback " + fmt(fo, ".2f")
        bw, hw = r["baseline_workers"], r["handoff_workers"]
        if bw is not None and hw is not None:
            hx += f"; io-wq workers {bw:.0f} -> {hw:.0f}"
        if r["rate"] is not None:
            hx += f"; slept {r['rate']:.0f}%"
        if latency(r, "handoff"):
            hx += "; " + latency(r, "handoff")
        bx = "   " + latency(r, "baseline") if latency(r, "baseline") else ""
        ix = ""
        iho = per_op(r, "inline", "handoffs", secs)
        if iho is not None:
            ix = "   per op: handoffs " + fmt(iho, ".2f")
        dx = "   " + change(d, b) + " vs baseline" if d is not None else ""
        if r["disabled_handoffs"]:
            dx += f", {r['disabled_handoffs']:.0f} handoffs while disabled!"
        print(line("baseline", kops(b), pct(bc), bx))
        print(line("handoff", kops(h), pct(hc), hx))
        print(line("change", change(h, b), change(hc, bc)))
        if r["pairs"]:
            px = f"   paired per round, {r['pairs']} rounds"
            if r["baseline_ctx"] is not None and r["handoff_ctx"] is not None:
                px += (f"; ctx switches {r['baseline_ctx']:.0f} -> "
                       f"{r['handoff_ctx']:.0f}")
            if r["inline_issued"] is not None:
                px += f"; inline {r['inline_issued']:.0f}"
            if r["fb"]:
                px += "; fallback " + ", ".join(
                    f"{k} {v:.0f}" for k, v in r["fb"].items() if v)
            print(line("ratio min/median/max",
                       f"{r['pair_min']:.2f}/{r['pair_med']:.2f}/"
                       f"{r['pair_max']:.2f}", "", px))
        for m, label in EXTRA_MODES:
            if r[m + "_ops"] is None:
                continue
            pn = paired(r["modes"], m)
            print(line(label, kops(r[m + "_ops"]), pct(r[m + "_cpu"]),
                       f"   paired min/median/max {min(pn):.2f}/"
                       f"{statistics.median(pn):.2f}/{max(pn):.2f}"
                       if pn else ""))
        if r["inline_ops"] is not None:
            print(line("inline (policy off)", kops(r["inline_ops"]),
                       pct(r["inline_cpu"]), ix))
            print(line("change", change(r["inline_ops"], b),
                       change(r["inline_cpu"], bc)))
        print(line("disabled", kops(d), pct(dc), dx))
        print(line("sync limit (1 thread)", kops(s), pct(r["sync_cpu"])))


def gnuplot_terminal():
    """'png', 'pngcairo' or 'svg', whichever gnuplot has first; None"""
    exe = shutil.which("gnuplot")
    if not exe:
        return None
    p = subprocess.run([exe, "-e", "set terminal"], capture_output=True,
                       text=True, check=False)
    have = {ln.split()[0] for ln in (p.stdout + p.stderr).splitlines()
            if ln.split()}
    for t in ("png", "pngcairo", "svg"):
        if t in have:
            return t
    return None


def plot(outdir, rows, env):
    term = gnuplot_terminal()
    if term is None:
        print("bench-report: no gnuplot with a png/pngcairo/svg terminal, "
              "no plot", file=sys.stderr)
        return
    ext = "svg" if term == "svg" else "png"
    out = os.path.join(outdir, f"ratio.{ext}")
    for old in ("ratio.png", "ratio.svg"):
        if os.path.exists(os.path.join(outdir, old)):
            os.unlink(os.path.join(outdir, old))
    dat = os.path.join(outdir, "ratio.dat")
    vals = []
    with open(dat, "w") as f:
        f.write("# cell handoff/baseline disabled/baseline inline/baseline\n")
        for r in rows:
            if r["op"] == "cost":
                continue  # ns per request, not a throughput ratio
            cell = f"{r['op']}/{r['fs']}/{r['qd']}"
            f.write(f"\"{cell}\" {fmt(r['ratio'], '.4f') or '?'} "
                    f"{fmt(r['disabled_ratio'], '.4f') or '?'} "
                    f"{fmt(r['inline_ratio'], '.4f') or '?'}\n")
            vals += [v for v in (r["ratio"], r["disabled_ratio"],
                                 r["inline_ratio"])
                     if v is not None and v > 0]
    if not vals:
        print("bench-report: no ratios to plot", file=sys.stderr)
        return
    lo = min(min(vals), 1) / 1.5
    hi = max(max(vals), 1) * 1.5
    width = max(800, 40 * len(rows) + 200)
    size = f"size {width},600"
    setup = {"png": f"png {size}", "pngcairo": f"pngcairo {size}",
             "svg": f"svg {size}"}[term]
    accel = env.get("accel", "unknown").upper()
    title = (f"io_uring handoff vs baseline ops/s, median of "
             f"{env.get('rounds', '?')} rounds; {env.get('kernel', '?')}, "
             f"{accel}, {env.get('vcpus', '?')} vCPUs")
    script = f"""
set terminal {setup}
set output '{out}'
set title "{title}" noenhanced
set datafile missing '?'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set logscale y 2
set yrange [{lo:.4f}:{hi:.4f}]
set ylabel 'ops/s ratio to baseline (log)'
set grid ytics
set xtics rotate by -60 noenhanced
set key top right
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1
plot '{dat}' using 2:xtic(1) title 'handoff / baseline', \\
     '' using 3 title 'disabled / baseline', \\
     '' using 4 title 'inline (policy off) / baseline'
"""
    p = subprocess.run(["gnuplot"], input=script, text=True,
                       capture_output=True, check=False)
    if p.returncode or not os.path.exists(out):
        print(f"bench-report: gnuplot failed:\n{p.stderr}", file=sys.stderr)
        return
    note = "" if term == "png" else \
        f" (gnuplot has no png terminal, used {term})"
    print(f"\nplot: {out}{note}")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(sys.argv) != 2:
        die("usage: bench-report.py OUTDIR")
    outdir = sys.argv[1]
    raw = os.path.join(outdir, "raw.txt")
    if not os.path.isfile(raw):
        die(f"{raw} missing")
    cells, nfail = read_raw(raw)
    if not cells:
        die(f"{raw} holds no runs")
    env = read_env(outdir)
    rows = summarise(cells)
    write_csv(os.path.join(outdir, "results.csv"), rows)
    print_table(rows, env, nfail)
    print(f"\nresults: {os.path.join(outdir, 'results.csv')}")
    plot(outdir, rows, env)


if __name__ == "__main__":
    main()
