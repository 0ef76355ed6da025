# SPDX-License-Identifier: GPL-2.0
"""How a call follows its link's rate changes: settling times and how much
of the link it used (Documentation/statistics.rst, "The VP8 call", "Steps
of the link's rate"; after De Cicco, Mascolo and Palmisano's step
responses of Skype video).

phases() cuts a call into the phases between the link's rate changes;
level() is the call's steady level in a phase (its mean rate over the
phase's last half); bin_rates() its rate in SETTLE_BIN_S bins from a
change; step_responses() the settling time of each change;
step_metrics() their means per run; link_util_pct() the call's received
bits over what the link could carry.

Pure functions of arrays: nothing here reads files.
"""
import math

import numpy as np

SETTLE_BIN_S = 1.0      # the call's rate is taken over 1 s from the change
UP_BAND = 0.9           # after a step up: at least 90 % of the new level
DOWN_BAND = 1.1         # after a step down: at most 110 % of the new level


def phases(initial_rate, changes, start_s, end_s):
    """The call's phases between the link's rate changes, as a list of
    (begin_s, end_s, link rate): the first from start_s, then one per
    change strictly inside (start_s, end_s), the last up to end_s.
    changes: [(t_s, rate)] in time order; a change to the rate already
    in force does not begin a phase, and one before start_s only sets
    the first phase's rate."""
    rate, cuts = initial_rate, []
    for t, r in changes:
        if t <= start_s:
            rate = r
        elif t < end_s and r != (cuts[-1][1] if cuts else rate):
            cuts.append((t, r))
    begins = [start_s] + [t for t, _ in cuts]
    rates = [rate] + [r for _, r in cuts]
    return [(b, e, r) for b, e, r in zip(begins, begins[1:] + [end_s], rates)]


def mean_rate(t, bits, begin, end):
    """bit/s of the bits at times t in [begin, end)."""
    t, bits = np.asarray(t, dtype=float), np.asarray(bits, dtype=float)
    sel = (t >= begin) & (t < end)
    return float(bits[sel].sum() / (end - begin)) if end > begin else math.nan


def level(t, bits, begin, end):
    """The call's steady level in the phase [begin, end): its mean rate
    over the phase's last half."""
    return mean_rate(t, bits, begin + (end - begin) / 2, end)


def bin_rates(t, bits, begin, end, width=SETTLE_BIN_S):
    """The call's rate (bit/s) in the whole bins [begin + k width, begin +
    (k + 1) width) that fit in [begin, end), k = 0, 1, ...: bins start at
    the change, not on a grid from t0."""
    n = int(math.floor((end - begin) / width + 1e-9))
    edges = begin + np.arange(n + 1) * width
    t, bits = np.asarray(t, dtype=float), np.asarray(bits, dtype=float)
    return np.histogram(t, bins=edges, weights=bits)[0] / width if n else np.zeros(0)


def step_responses(t, bits, initial_rate, changes, start_s, end_s, since_s=-math.inf,
                   width=SETTLE_BIN_S):
    """One dict per change of the link's rate at or after since_s (the
    warm-up's end), of a call whose packets (its offered rate) are at
    times t (s) with payload bits: t_s, up (the link's rate rose),
    link_before and link (bit/s), level_before and level (the call's
    steady level in the phase before and in the change's own), phase_s
    (the phase's length), settled, and settle_s: the start (from the
    change) of the first of the change's bins whose rate is in the new
    level's band, at least UP_BAND x level after a step up, at most
    DOWN_BAND x level after a step down; the phase's length when the
    call did not settle in it (settled False).  A step is followed only
    if the call's level went where the step asks: after a step up it
    rose out of the band (level_before < UP_BAND x level); after a step
    down it fits in the new link (level <= link).  A call that never
    changes its rate is always within its own band: these conditions
    are what make it unsettled."""
    cut = phases(initial_rate, changes, start_s, end_s)
    out = []
    for (b0, _, r0), (b, e, r) in zip(cut, cut[1:]):
        if b < since_s:
            continue
        up = r > r0
        before, now = level(t, bits, b0, b), level(t, bits, b, e)
        rates = bin_rates(t, bits, b, e, width)
        if up:
            followed, inside = before < UP_BAND * now, rates >= UP_BAND * now
        else:
            followed, inside = now <= r, rates <= DOWN_BAND * now
        first = np.flatnonzero(inside)
        settled = bool(followed and len(first))
        out.append({"t_s": b, "up": up, "link_before": r0, "link": r,
                    "level_before": before, "level": now, "phase_s": e - b,
                    "settled": settled,
                    "settle_s": float(first[0] * width) if settled else e - b})
    return out


def step_metrics(responses):
    """Per run: settle_up_s and settle_down_s, the mean settling time of
    the steps up and of the steps down (an unsettled step counted as its
    phase's length; NaN when there is no such step), not_settled (how many
    steps, up and down, did not settle) and steps (how many there were)."""
    def mean(up):
        x = [s["settle_s"] for s in responses if s["up"] == up]
        return float(np.mean(x)) if x else math.nan

    return {"settle_up_s": mean(True), "settle_down_s": mean(False),
            "not_settled": sum(not s["settled"] for s in responses),
            "steps": len(responses)}


def link_util_pct(goodput, capacity, window):
    """The call's received bits over what the link could carry in the same
    bins (goodput and capacity in bit/s per bin of one width, window a
    mask of the bins), in %: a ratio of sums, not a mean of ratios."""
    cap = float(np.asarray(capacity, dtype=float)[window].sum())
    return 100 * float(np.asarray(goodput, dtype=float)[window].sum()) / cap if cap > 0 \
        else math.nan
