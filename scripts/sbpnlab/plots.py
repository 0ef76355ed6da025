# SPDX-License-Identifier: GPL-2.0
"""Figures of one comparison, drawn from result files (never by running).

draw_comparison() writes figures/<slug>-<kind>.png and .svg for:
  delivery  bars per policy: audio and video on time and received, and
            whole video frames on time, mean with 95 % Student-t error
            bars (as in the SBPN paper, clipped to 0-100 %) and a dot per
            run;
  delay     one-way delay CDFs of the received packets, all runs pooled,
            with the packets' lifetime marked;
  rates     throughput, goodput and loss rate of the media flow and what
            each TCP sender wrote, in 0.4 s bins, over the link capacity (grey),
            one panel per policy, all of the same seed;
  ccid3     CCID3's allowed rate X and X_recv over time against the audio
            rate, same runs as "rates" (those with a cc log).
draw_sweep() writes figures/<slug>-sweep.png and .svg: audio and video on
time against one swept parameter, a line per policy, mean with 95 %
Student-t error bars, and below them each policy's differences to the
baseline policy, paired by seed.
draw_run() writes figures/run-<run id>-<flow>.png and .svg, one run seen
whole on one time axis: each packet's one-way delay by class, coloured by
its fate (on time, late, lost in the network, expired or evicted in the
sender's kernel, refused by sendmsg()), with its deadline; CCID3's X and
X_recv over the link's capacity; and the kernel queue's length and
cumulative drops.
draw_compare() writes compare.png and .svg for `sbpn-lab compare A B`:
for each metric a panel with every run both campaigns share on one axis,
A's value and B's side by side, so that a reader sees whether B repeats
A run by run and not only on average.
draw_vp8() writes figures/vp8-<run id>-<flow>.png and .svg, a VP8 call
as its viewer saw it (the report draws it for the first run of each
variant): above, the rate CCID 3 allowed the video, the encoder's
target and the coded bitrate per second; below, the SSIM of the screen
against the camera at each capture slot, and a strip saying what each
slot showed: a new frame, a frame held because the next was not coded,
a frame held because the next coded one was not shown (lost, late or
its reference missing: a freeze), or black.
"""
import os

import matplotlib
matplotlib.use("Agg")           # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
import numpy as np  # noqa: E402

from . import records, stats, vp8call  # noqa: E402

CLASS_COLOURS = {"audio": ("#1f5fa8", "#9dc3ea"), "video": ("#c0561c", "#f2b48f")}
FRAMES_COLOUR = "#6b2a08"  # whole video frames on time
FORMATS = ("png", "svg")


def draw_comparison(out, slug, title, rows, runs):
    """All figures of one comparison: rows from stats.run_metrics() of one
    flow, runs the stats.Run objects they came from.  Returns the paths."""
    fig_dir = os.path.join(out, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    by_dir = {r.dir: r for r in runs}
    order = stats.policies(rows)
    flow = rows[0]["flow"]
    chosen = _same_seed(rows, order)
    figures = {"delivery": delivery_bars(rows, order, title),
               "delay": delay_cdf(rows, order, title, _lifetime_s(runs[0], flow))}
    if chosen:
        picked = [(p, by_dir[r["dir"]]) for p, r in chosen]
        figures["rates"] = rate_series(picked, flow, title)
        with_cc = [(p, run) for p, run in picked if len(run.cc.get(flow, {"t": []})["t"])]
        if with_cc:
            figures["ccid3"] = ccid3_series(with_cc, flow, title)
    return [path for kind, fig in figures.items()
            for path in _save(fig, fig_dir, f"{slug}-{kind}")]


def _save(fig, fig_dir, name):
    """Write fig as fig_dir/name.png and .svg, close it, return the paths."""
    paths = []
    for ext in FORMATS:
        path = os.path.join(fig_dir, f"{name}.{ext}")
        # No date in the SVG: the same results give the same file.
        fig.savefig(path, dpi=110, metadata={"Date": None} if ext == "svg" else None)
        paths.append(path)
    plt.close(fig)
    return paths


def _same_seed(rows, order):
    """[(policy, row)] of the smallest (seed, repetition) every policy has:
    the same media schedule in every panel (or [] if there is none)."""
    keys = set.intersection(*({r["key"] for r in rows if r["policy"] == p} for p in order))
    if not keys:
        return []
    k = min(keys)
    return [(p, next(r for r in rows if r["policy"] == p and r["key"] == k)) for p in order]


def _lifetime_s(run, flow):
    m = next(x for x in run.meta["config"]["media"] if x["name"] == flow)
    return m["lifetime_ms"] / 1000


def delivery_bars(rows, order, title):
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(order) + 2), 4))
    bars = [(c, m, label) for c in stats.CLASSES for m, label in
            (("on_time_frac", "on time"), ("received_frac", "received"))]
    # whole frames (every piece on time), where the rows count them
    if all("video.frames_on_time_frac" in r for r in rows):
        bars.append(("video", "frames_on_time_frac", "whole frames on time"))
    width = 0.8 / len(bars)
    x = np.arange(len(order))
    for i, (cls, m, label) in enumerate(bars):
        values = [[r[f"{cls}.{m}"] * 100 for r in rows if r["policy"] == p] for p in order]
        s = [stats.summary(v) for v in values]
        mean = np.array([v["mean"] for v in s])
        ci = np.nan_to_num(np.array([v["ci"] for v in s]))
        # A t interval is not bounded by 0 and 100 %; the axis is.
        err = [np.minimum(ci, mean), np.minimum(ci, 100 - mean)]
        pos = x + (i - (len(bars) - 1) / 2) * width
        colour = (FRAMES_COLOUR if m == "frames_on_time_frac" else
                  CLASS_COLOURS[cls][0 if m == "on_time_frac" else 1])
        ax.bar(pos, mean, width, yerr=err, capsize=3, color=colour, label=f"{cls} {label}")
        for xp, v in zip(pos, values):
            ax.plot([xp] * len(v), v, ".", color="black", markersize=3)
    ax.set_xticks(x, [f"{p}\n(n={sum(r['policy'] == p for r in rows)})" for p in order])
    ax.set_ylabel("% of scheduled packets (frames)")
    ax.set_ylim(0, 102)
    ax.set_yticks(range(0, 101, 20))
    ax.set_title(f"{title}\nmean, 95 % CI (clipped to 0-100 %) and each run (dots)",
                 fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    _legend_on_top(ax, 102, fontsize=8, ncol=len(bars), loc="upper center")
    return fig


def _legend_on_top(ax, data_top, ncol, **kwargs):
    """ax's legend inside it, at its top (kwargs' loc), in ncol columns
    or as many fewer as its width needs, and ax's (linear) y axis raised
    so that what lies below data_top stays below the legend: a legend
    outside the axes can run past the figure's edge.  Call it once the
    figure's layout is made (tight_layout): it measures the legend."""
    renderer = ax.figure.canvas.get_renderer()
    for n in range(ncol, 0, -1):
        legend = ax.legend(ncol=n, **kwargs)
        box = legend.get_window_extent(renderer)
        if box.width <= ax.bbox.width:
            break
    below = (box.y0 - ax.bbox.y0) / ax.bbox.height - 0.02   # axes fraction under it
    low = ax.get_ylim()[0]
    ax.set_ylim(low, low + (data_top - low) / max(below, 0.2))
    return legend


def delay_cdf(rows, order, title, lifetime_s):
    fig, axes = plt.subplots(1, len(stats.CLASSES), figsize=(10, 4), sharey=True)
    for ax, cls in zip(axes, stats.CLASSES):
        top = lifetime_s * 1000
        for p in order:
            d = np.concatenate([r[f"{cls}.delays"] for r in rows if r["policy"] == p])
            x, y = stats.cdf(d * 1000)
            if len(x):
                ax.plot(x, y, label=p, drawstyle="steps-post")
                top = max(top, np.percentile(x, 99.5))
        ax.axvline(lifetime_s * 1000, color="grey", linestyle="--", linewidth=1)
        ax.text(lifetime_s * 1000, 0.02, " lifetime", color="grey", fontsize=8)
        ax.set_xlim(0, top * 1.05)
        ax.set_xlabel("one-way delay (ms)")
        ax.set_title(cls)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("fraction of received packets")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{title}: delay CDF, all runs pooled", fontsize=9)
    fig.tight_layout()
    return fig


def rate_series(picked, flow, title):
    fig, axes = plt.subplots(len(picked), 1, figsize=(10, 2.2 * len(picked) + 0.8),
                             sharex=True, sharey=True, squeeze=False)
    top = 0
    for ax, (policy, run) in zip(axes[:, 0], picked):
        edges = stats.bin_edges(run.end_s)
        cap = stats.link_capacity(run, edges) / 1000
        top = max(top, cap.max())
        ax.stairs(cap, edges, fill=True, color="0.88", label="link capacity")
        r = stats.media_rates(run.flows[flow], edges)
        for k, style in (("throughput", "-"), ("goodput", "-"), ("loss", ":")):
            ax.stairs(r[k] / 1000, edges, linestyle=style, linewidth=1.5,
                      label=f"{flow} {'loss rate' if k == 'loss' else k}")
        for name, tcp in run.tcp.items():
            ax.stairs(stats.tcp_rates(tcp["intervals"], edges) / 1000, edges,
                      linewidth=0.8, label=f"{name} goodput")
        ax.axvline(run.flows[flow].start + run.warmup_s, color="grey", linestyle="--",
                   linewidth=0.8)
        ax.set_ylabel("kbit/s")
        ax.set_title(f"{policy}  (seed {run.meta['seed']}, payload bits, "
                     f"{stats.BIN_S:g} s bins)", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    # iperf3's first second (the socket buffer filling, in older results)
    # can be far above the link rate: cut it rather than flatten the rest.
    axes[0, 0].set_ylim(0, 1.25 * top)
    axes[0, 0].legend(fontsize=7, ncol=3, loc="upper right")
    axes[-1, 0].set_xlabel("time since t0 (s); dashed: end of the call's warm-up")
    fig.suptitle(f"{title}: rates", fontsize=9)
    fig.tight_layout()
    return fig


def ccid3_series(picked, flow, title):
    fig, axes = plt.subplots(len(picked), 1, figsize=(10, 2 * len(picked) + 0.8),
                             sharex=True, sharey=True, squeeze=False)
    for ax, (policy, run) in zip(axes[:, 0], picked):
        cc, f = run.cc[flow], run.flows[flow]
        ax.step(cc["t"], cc["x"] * 8 / 1000, where="post", label="X (allowed rate)")
        ax.step(cc["t"], cc["x_recv"] * 8 / 1000, where="post", linewidth=0.8,
                label="X_recv")
        ax.axhline(stats.class_rate_Bps(f, "audio") * 8 / 1000, color="red",
                   linestyle="--", linewidth=1, label="audio rate")
        ax.set_yscale("log")
        ax.axvline(f.start + run.warmup_s, color="grey", linestyle="--", linewidth=0.8)
        ax.set_ylabel("kbit/s")
        ax.set_title(f"{policy}  (seed {run.meta['seed']})", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=3, loc="lower right")
    axes[-1, 0].set_xlabel("time since t0 (s); dashed: end of the call's warm-up")
    fig.suptitle(f"{title}: CCID3 state", fontsize=9)
    fig.tight_layout()
    return fig


def _sweep_line(ax, xs, summaries, label, colour, low=0, high=100):
    """One policy's means of fractions, in percent, with their 95 %
    intervals clipped to low-high."""
    mean = np.array([v["mean"] * 100 for v in summaries])
    ci = np.nan_to_num(np.array([v["ci"] * 100 for v in summaries]))
    ax.errorbar(xs, mean, yerr=[np.minimum(ci, mean - low), np.minimum(ci, high - mean)],
                marker="o", markersize=4, capsize=3, label=label, color=colour)


def draw_sweep(out, slug, title, param, points, baseline):
    """points: [(x, label, rows)] in increasing x, rows of one comparison
    each (stats.run_metrics()).  A second row of panels gives the other
    policies' paired differences to baseline, if it ran.  Returns the paths
    of the sweep figure."""
    order = stats.policies([r for _, _, rows in points for r in rows])
    others = [p for p in order if p != baseline] if baseline in order else []
    nrows = 2 if others else 1
    fig, axes = plt.subplots(nrows, len(stats.CLASSES), figsize=(10, 4 * nrows),
                             sharex=True, squeeze=False)
    colours = {p: f"C{i}" for i, p in enumerate(order)}
    xs = np.array([x for x, _, _ in points], dtype=float)
    for col, cls in enumerate(stats.CLASSES):
        m = f"{cls}.on_time_frac"
        ax = axes[0][col]
        for p in order:
            _sweep_line(ax, xs, [stats.summary([r[m] for r in rows if r["policy"] == p])
                                 for _, _, rows in points], p, colours[p])
        ax.set_ylim(0, 102)
        ax.set_title(f"{cls} on time")
        if others:
            ax = axes[1][col]
            for p in others:
                diffs = [stats.paired_policies(rows, baseline, p, m) for _, _, rows in points]
                _sweep_line(ax, xs, diffs, f"{p} - {baseline}", colours[p], -100, 100)
            ax.axhline(0, color="black", linewidth=0.8)
            ax.set_title(f"{cls} on time: difference to {baseline}, paired by seed")
    for ax in axes[-1]:
        ax.set_xlabel(param)
    for ax in axes.flat:
        if xs.min() > 0 and xs.max() / xs.min() > 4:
            ax.set_xscale("log")
        ax.set_xticks(xs, [label for _, label, _ in points], rotation=30)
        ax.minorticks_off()
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[0][0].set_ylabel("% of scheduled packets")
    if others:
        axes[1][0].set_ylabel("percentage points")
    fig.suptitle(f"{title}: on time against {param}; mean and 95 % CI over runs",
                 fontsize=9)
    fig.tight_layout()
    fig_dir = os.path.join(out, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    return _save(fig, fig_dir, f"{slug}-sweep")


FATE_COLOURS = {"on time": "#2a9d3a", "late": "#e0a800", "lost in the network": "#7a3db8",
                "expired": "#d62728", "evicted": "#8c564b", "given up with frame": "#e377c2",
                "CCID error": "#17becf",
                "refused": "#555555"}
CLASS_MARKERS = {"audio": "o", "video": "s", "data": "^"}


def draw_run(out, run, flow):
    """The per-run figure of one media flow of one run; returns the paths."""
    fig_dir = os.path.join(out, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    f = run.flows[flow]
    fate = stats.fates(f)
    fig, (ax_d, ax_x, ax_q) = plt.subplots(
        3, 1, figsize=(11, 9), sharex=True, gridspec_kw={"height_ratios": [3, 1.4, 1.1]})
    life = f.expiry - f.planned
    delay = (f.recv - f.sent) * 1000
    top = np.nanmax(np.append(delay, 1.2 * 1000 * life[np.isfinite(life)])) if len(delay) else 1
    strip = 1.08 * top      # packets that never arrived are drawn up here
    for cls, marker in CLASS_MARKERS.items():
        for name in stats.FATES:
            m = (f.cls == cls) & (fate == name)
            if not m.any():
                continue
            y = np.where(np.isnan(delay[m]), strip, delay[m])
            ax_d.scatter(f.sent[m], y, s=6 if cls == "audio" else 4, marker=marker,
                         color=FATE_COLOURS[name], linewidths=0,
                         label=f"{cls}: {name} ({m.sum()})")
    if np.isfinite(life).any():
        ax_d.axhline(1000 * np.nanmedian(life[np.isfinite(life)]), color="black",
                     linestyle="--", linewidth=0.8, label="lifetime (deadline)")
    ax_d.axhline(strip, color="0.8", linewidth=0.5)
    ax_d.set_ylabel("one-way delay (ms)\nnot arrived: top line")
    ax_d.grid(alpha=0.3)
    if f.dropped is None:
        ax_d.text(1, -0.02, "no drop notices recorded: kernel discards show as lost "
                  "in the network", transform=ax_d.transAxes, fontsize=7, ha="right",
                  va="top")

    edges = stats.bin_edges(run.end_s)
    ax_x.stairs(stats.link_capacity(run, edges) / 1000, edges, fill=True, color="0.88",
                label="link capacity")
    cc = run.cc.get(flow)
    if cc is not None and len(cc["t"]):
        ax_x.step(cc["t"], cc["x"] * 8 / 1000, where="post", label="X (CCID3 allowed rate)")
        ax_x.step(cc["t"], cc["x_recv"] * 8 / 1000, where="post", linewidth=0.8,
                  label="X_recv")
        for k, style in (("q_qlen", "-"), ("q_expired", "--"), ("q_evicted", ":"),
                         ("q_refused", "-.")):
            if np.isfinite(cc[k]).any():
                ax_q.step(cc["t"], cc[k], where="post", linestyle=style,
                          label=k[2:] + (" (packets queued)" if k == "q_qlen" else
                                         " (cumulative)"))
    ax_x.set_ylabel("kbit/s")
    ax_x.set_yscale("symlog", linthresh=10)
    ax_x.legend(fontsize=7, ncol=3, loc="upper right")
    ax_x.grid(alpha=0.3)
    ax_q.set_ylabel("packets")
    ax_q.set_yscale("symlog", linthresh=10)
    ax_q.legend(fontsize=7, ncol=4, loc="upper left")
    ax_q.grid(alpha=0.3)
    for ax in (ax_d, ax_x, ax_q):
        ax.axvline(f.start + run.warmup_s, color="grey", linestyle="--", linewidth=0.8)
    ax_q.set_xlabel("time since t0 (s), by when sendmsg() was called; "
                    "dashed: end of the warm-up")
    fig.suptitle(f"{run.meta['run_id']}, flow {flow} ({stats.policy_of(run.meta, flow)}, "
                 f"seed {run.meta['seed']})", fontsize=9)
    # ticks up to the top line only: above it is the legend's room
    low = ax_d.get_ylim()[0]
    ax_d.set_yticks([t for t in ax_d.get_yticks() if low <= t <= strip])
    fig.tight_layout()
    _legend_on_top(ax_d, 1.02 * strip, fontsize=6.5, ncol=5, loc="upper left",
                   markerscale=2)
    return _save(fig, fig_dir, f"run-{_file_part(run.meta['run_id'])}-{flow}")


def _file_part(run_id):
    """A run id as part of a file name."""
    return "".join(c if c.isalnum() or c in "=-_" else "_" for c in run_id)


# What a capture slot showed (draw_vp8): name, colour.
SLOT_KINDS = (("new frame", "#2a9d3a"), ("held: not coded", "#b9c9d6"),
              ("held: coded, not shown", "#d62728"), ("black", "#000000"))


def slot_kinds(screen, coded):
    """Masks over the capture slots k, one per SLOT_KINDS: the screen
    (the capture on it at slot k, -1 for black) shows capture k; holds an
    earlier one and capture k was not coded; holds an earlier one and
    capture k was coded (not shown: lost, late or its reference missing);
    is black."""
    k = np.arange(len(screen))
    held = (screen >= 0) & (screen != k)
    return screen == k, held & ~coded, held & coded, screen < 0


def draw_vp8_run(out, run, flow, row=None):
    """draw_vp8() of a flow of a stats.Run, titled with its variant and,
    given its metric row (stats.run_metrics()), its VP8 call's numbers."""
    title = (f"{run.meta['run_id']}, flow {flow} ("
             + (row["policy"] if row else stats.policy_of(run.meta, flow))
             + f", seed {run.meta['seed']})")
    if row and "vp8.frames_shown_pct" in row:
        p95 = row["vp8.frame_delay_p95_ms"]
        title += (f"\nafter warm-up: frames shown {row['vp8.frames_shown_pct']:.1f} % (of "
                  f"{row['vp8.coded_fps']:.1f} coded/s), freezes "
                  f"{row['vp8.freeze_s_per_min']:.1f} s/min, SSIM {row['vp8.ssim_mean']:.3f}, "
                  "on-screen delay p95 "
                  + ("inf" if np.isinf(p95) else f"{p95:.0f} ms"))
    return draw_vp8(out, run.dir, flow, f"vp8-{_file_part(run.meta['run_id'])}-{flow}",
                    run.t0_ns, _lifetime_s(run, flow), run.flows[flow].start + run.warmup_s,
                    title)


def draw_vp8(out, run_dir, flow, name, t0_ns, playout_s, since_s, title):
    """The VP8 call of flow in run_dir (its media-<flow>.frames.rec and,
    if the metrics were computed, .screen.tsv) over time since t0_ns:
    rates by capture time, the screen by display time (capture +
    playout_s); a dashed line at since_s, the warm-up's end.  Written as
    figures/<name>.png and .svg; returns the paths."""
    fig_dir = os.path.join(out, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    p = vp8call.paths(run_dir, flow)
    rec = records.read_frames(p["frames"])
    table = vp8call.frame_table(rec, t0_ns)
    size = np.array([int(r["bytes"]) for r in sorted(rec.rows, key=lambda r: int(r["frame"]))])
    t, coded = table["capture"], table["coded"]
    interval = 1 / float(rec.meta["fps"])
    fig, (ax_r, ax_s, ax_k) = plt.subplots(
        3, 1, figsize=(11, 6.5), sharex=True,
        gridspec_kw={"height_ratios": [3, 2.2, 0.45]})

    # one-second bins from the first capture, the last one cut at the end
    end = t[-1] + interval
    edges = np.append(t[0] + np.arange(0, end - t[0], 1.0), end)
    bits, _ = np.histogram(t[coded], bins=edges, weights=8 * size[coded])
    ax_r.stairs(bits / 1000 / np.diff(edges), edges, fill=True, color="#f2b48f",
                label="coded bitrate (per 1 s)")
    ax_r.step(t, table["allowed_kbps"], where="post", color="#1f5fa8", linewidth=2.2,
              alpha=0.55, label="allowed by CCID 3 (X less the audio)")
    ax_r.step(t, table["target_kbps"], where="post", color=FRAMES_COLOUR, linewidth=0.9,
              label="encoder's target")
    top = np.nanmax(np.concatenate([bits / 1000, table["allowed_kbps"], table["target_kbps"],
                                    [1]]))
    ax_r.set_ylim(0, 1.3 * top)      # room for the legend above the lines
    ax_r.set_ylabel("video kbit/s")
    ax_r.legend(fontsize=7, ncol=3, loc="upper left")
    ax_r.grid(alpha=0.3)
    ax_r.set_title(title, fontsize=9)

    display = t + playout_s
    try:
        on, _, ssim, _ = vp8call.read_screen(p["screen"], len(t))
    except (OSError, ValueError) as e:
        on = None
        ax_s.text(0.5, 0.5, f"no screen to show: {e}", transform=ax_s.transAxes,
                  ha="center", va="center", fontsize=8, wrap=True)
    handles = []
    if on is not None:
        handles += ax_s.step(display, ssim, where="post", color="#333333", linewidth=1,
                             label="SSIM of the screen (luma)")
        after = t >= since_s
        for (label, colour), m in zip(SLOT_KINDS, slot_kinds(on, coded)):
            if m.any():
                ax_k.bar(display[m], 1, width=interval, align="edge", color=colour,
                         linewidth=0)
            share = 100 * m[after].mean() if after.any() else np.nan
            handles.append(Patch(color=colour, label=f"{label} ({share:.0f} %)"))
        ax_s.legend(handles=handles, fontsize=7, ncol=5, loc="upper left")
    ax_s.set_ylim(0, 1.3)            # room for the legend above SSIM's 1
    ax_s.set_yticks([0, 0.25, 0.5, 0.75, 1])
    ax_s.set_ylabel("SSIM at each\ncapture slot")
    ax_s.grid(alpha=0.3)
    ax_k.set_ylim(0, 1)
    ax_k.set_yticks([])
    ax_k.set_ylabel("screen", rotation=0, ha="right", va="center")
    for ax, at in ((ax_r, since_s), (ax_s, since_s + playout_s), (ax_k, since_s + playout_s)):
        ax.axvline(at, color="grey", linestyle="--", linewidth=0.8)
    ax_k.set_xlabel("time since t0 (s): rates at capture, the screen at display (capture + "
                    f"{1000 * playout_s:.0f} ms playout delay); dashed: end of the warm-up\n"
                    "screen: what each slot showed (% of the slots after the warm-up)")
    ax_k.set_xlim(t[0], display[-1] + interval)
    fig.tight_layout(h_pad=0.3)
    return _save(fig, fig_dir, name)


def draw_compare(out, pairs, columns, name_a, name_b):
    """compare.png and .svg in directory out: one panel per metric of
    columns ((metric, scale, label, unit)), x the runs both campaigns
    share (pairs of (A row, B row)) in run-id order, A's value and B's
    beside it; a line joins the two of a run.  Returns the paths."""
    os.makedirs(out, exist_ok=True)
    pairs = sorted(pairs, key=lambda xy: (xy[1]["policy"], xy[1]["run"]))
    fig, axes = plt.subplots(len(columns), 1, figsize=(max(6, 0.35 * len(pairs) + 2),
                                                       2.0 * len(columns) + 0.8),
                             sharex=True, squeeze=False)
    x = np.arange(len(pairs))
    for ax, (metric, scale, label, unit) in zip(axes[:, 0], columns):
        a = np.array([p[0].get(metric, np.nan) for p in pairs], float) * scale
        b = np.array([p[1].get(metric, np.nan) for p in pairs], float) * scale
        ax.vlines(x, np.fmin(a, b), np.fmax(a, b), color="0.6", linewidth=1)
        ax.plot(x - 0.12, a, "o", color="#1f5fa8", markersize=4, label=f"A: {name_a}")
        ax.plot(x + 0.12, b, "x", color="#c0561c", markersize=5, label=f"B: {name_b}")
        ax.set_ylabel(f"{label}\n{'%' if unit == 'pp' else unit}", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    axes[-1, 0].set_xticks(x, [f"{p[1]['policy']} {p[1]['run'].rsplit('rep=', 1)[-1]}"
                               for p in pairs], rotation=90, fontsize=7)
    axes[0, 0].set_title(f"B against A, run by run ({len(pairs)} runs both made)", fontsize=9)
    fig.tight_layout()
    top = axes[0, 0]
    low, high = top.get_ylim()
    _legend_on_top(top, high, ncol=2, fontsize=8, loc="upper left")
    return _save(fig, out, "compare")
