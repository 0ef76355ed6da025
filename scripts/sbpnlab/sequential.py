# SPDX-License-Identifier: GPL-2.0
"""Sequential decisions on paired differences (sbpn-lab run --decide).

A campaign that decides runs its repetitions in rounds (looks) and, after
each, checks the paired differences (variant - baseline, by seed) of the
finding's metrics.  Each metric's mean gets a confidence sequence: an
interval valid at every number of pairs at once, so looking after every
round, and stopping when it says enough, keeps its coverage (Lai 1976,
"On confidence sequences", Ann. Statist. 4(2); the t-mixture sequence,
see Documentation/statistics.rst for the formula and its derivation).
Several metrics and comparisons share alpha by Bonferroni.  A metric's
verdict: "higher" (interval above 0), "lower" (below 0) or "equivalent"
(inside +-margin); a comparison stops when all its metrics have one, or at
the last look (the scenario's repetitions).

Standard library only: scenario.py (and so the runner in the VM) takes the
metric names and defaults from here; the analysis (decide.py) and the
simulation (decidesim.py) call evaluate().
"""
import math

# (metric of stats.run_metrics, scenario key for its margin, scale to the
# unit, unit, what it is, default equivalence margin in the unit): the
# finding's metrics, as report.HEADLINE.
METRICS = (("audio.on_time_frac", "audio", 100, "points", "audio on time", 2.0),
           ("video.on_time_frac", "video", 100, "points", "video on time", 5.0),
           ("video.frames_on_time_frac", "frames", 100, "points",
            "whole video frames on time", 5.0),
           ("tcp.goodput_kbps", "tcp_kbps", 1, "kbit/s", "competing TCP goodput", 50.0))
MARGIN_KEYS = {m[1]: m[0] for m in METRICS}
# The differences a metric can take, in its unit: a share (in points)
# differs by its scale, 100 points, at most, so no mean difference lies
# outside that and an interval may stop there (the skewness correction
# can stretch one past it).
RANGE = {m[0]: float(m[2]) for m in METRICS if m[3] == "points"}
# The mixture's precision c: the prior on the standardised effect mu/sigma
# is N(0, 1/c).  c = 1 gives the narrowest intervals from about 15 to 30
# pairs at the Bonferroni levels of our campaigns (statistics.rst).
MIXTURE = 1.0
# "metrics": the keys of those decided; the others stay in the finding,
# reported with their fixed-sample intervals ([decide] metrics).
DEFAULTS = {"min_pairs": 20, "step": 5, "alpha": 0.05, "baseline": "simple",
            "metrics": [m[1] for m in METRICS], "margins": {m[1]: m[5] for m in METRICS}}
VERDICTS = ("higher", "lower", "equivalent")


def settings(table=None):
    """The decision settings: DEFAULTS with a scenario's [decide] table (or
    any dict of the same keys) over them."""
    table = table or {}
    out = dict(DEFAULTS, **{k: v for k, v in table.items() if k != "margins"})
    out["margins"] = dict(DEFAULTS["margins"], **table.get("margins", {}))
    return out


def looks(min_pairs, step, maximum):
    """The repetitions after which the data are looked at: min_pairs, then
    every step, and always the maximum last."""
    out, r = [], min(min_pairs, maximum)
    while r < maximum:
        out.append(r)
        r += step
    return out + [maximum]


def halfwidth_factor(n, alpha, c=MIXTURE):
    """The confidence sequence's half width at n pairs in units of the
    sample standard deviation s: the interval is mean +- factor * s.
    Infinite (no bound yet) for small n."""
    if n < 2:
        return math.inf
    r = 1 - (alpha * math.sqrt(c / (c + n))) ** (2 / n)
    den = n - r * (n + c)
    if den <= 0:
        return math.inf
    return math.sqrt(r * (n + c) * (n - 1) / (n * den))


def mean_sd(values):
    n = len(values)
    if n == 0:
        return 0, math.nan, math.nan
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else math.nan
    return n, mean, sd


def t_mixture(values, alpha, c=MIXTURE):
    """(n, mean, lo, hi): Lai's t-mixture interval for the mean of values
    (i.i.d. normal), which holds at every n at once with probability at
    least 1 - alpha.  Without the skewness correction: the simulation
    shows what the correction buys."""
    n, mean, sd = mean_sd(values)
    if n < 2:
        return n, mean, -math.inf, math.inf
    w = halfwidth_factor(n, alpha, c) * sd
    return n, mean, mean - w, mean + w


def skewness(values):
    """The sample skewness G1 (the adjusted Fisher-Pearson coefficient,
    Joanes & Gill 1998); 0 below three values or without spread."""
    n = len(values)
    if n < 3:
        return 0.0
    mean = math.fsum(values) / n
    m2 = math.fsum((v - mean) ** 2 for v in values) / n
    if not m2 > 0:
        return 0.0
    m3 = math.fsum((v - mean) ** 3 for v in values) / n
    return m3 / m2 ** 1.5 * math.sqrt(n * (n - 1)) / (n - 2)


def hall(t, skew, n):
    """Hall's monotone transformation of a t statistic of n values of
    sample skewness skew: t + a t^2 + a^2 t^3 / 3 + b, a = skew / (3 sqrt n),
    b = skew / (6 sqrt n)."""
    a, b = skew / (3 * math.sqrt(n)), skew / (6 * math.sqrt(n))
    return t + a * t * t + a * a * t ** 3 / 3 + b


def hall_inverse(value, skew, n):
    """The t whose hall() is value: the transformation is
    ((1 + a t)^3 - 1) / (3a) + b, increasing in t, so one real root,
    t = (cbrt(x) - 1) / a with x = 1 + 3a (value - b).  Written as
    3 (value - b) / (c^2 + c + 1), c = cbrt(x), the same number without
    the cancellation of cbrt(x) - 1 when a is tiny (the denominator is at
    least 3/4)."""
    a, b = skew / (3 * math.sqrt(n)), skew / (6 * math.sqrt(n))
    x = 1 + 3 * a * (value - b)
    c = math.copysign(abs(x) ** (1 / 3), x)
    return 3 * (value - b) / (c * c + c + 1)


def confidence_sequence(values, alpha, c=MIXTURE):
    """(n, mean, lo, hi): the t-mixture interval with Hall's skewness
    correction.  The mean mu is inside when the transformed statistic
    hall(sqrt(n) (mean - mu) / s) is within the sequence's bound on t,
    +-halfwidth_factor * sqrt(n); with no sample skewness it is
    t_mixture's interval."""
    n, mean, sd = mean_sd(values)
    bound = halfwidth_factor(n, alpha, c) * math.sqrt(n) if n >= 2 else math.inf
    if not math.isfinite(bound):
        return n, mean, -math.inf, math.inf
    skew = skewness(values)
    se = sd / math.sqrt(n)
    return (n, mean, mean - hall_inverse(bound, skew, n) * se,
            mean - hall_inverse(-bound, skew, n) * se)


def verdict(lo, hi, margin):
    """What an interval [lo, hi] allows: "higher" (above 0), "lower" (below
    0), "equivalent" (inside -margin..margin), or None.  A sign is said
    first when an interval allows both."""
    if lo > 0:
        return "higher"
    if hi < 0:
        return "lower"
    if -margin < lo and hi < margin:
        return "equivalent"
    return None


def wrong(said, truth, margin):
    """Whether a verdict contradicts the true mean difference."""
    return ((said == "higher" and truth <= 0) or (said == "lower" and truth >= 0) or
            (said == "equivalent" and abs(truth) >= margin))


def evaluate(series, cutoffs, margins, alpha, through, interval=confidence_sequence):
    """One comparison's state after the looks at the repetitions in
    cutoffs that are at most through.

    series: {metric: [(repetition, difference in the metric's unit), ...]}
    margins: {metric: margin}; alpha: each metric's share (after
    Bonferroni).  A look uses the pairs of repetitions up to its cutoff;
    each metric keeps the intersection of its intervals over the looks
    (valid, as every one of them holds at once) and of its RANGE.
    interval is the confidence sequence; the tests and the simulation
    pass a fixed-sample interval to see what it breaks.

    Returns {"status": "decided" | "maximum" | "open", "look": index of
    the look it stopped at (or the last one made), "repetition": its
    cutoff, "metrics": {metric: {"verdict", "first" (cutoff where one was
    first allowed), "n", "mean", "lo", "hi", "margin"}}}.  "open": the
    last look is still to come and a metric has no verdict.
    """
    state = {m: {"verdict": None, "first": None, "n": 0, "mean": math.nan,
                 "lo": -math.inf, "hi": math.inf, "margin": margins[m]} for m in series}
    status, look, cut = "open", -1, None
    for look, cut in enumerate(cutoffs):
        if cut > through:
            look -= 1
            cut = cutoffs[look] if look >= 0 else None
            break
        for m, pairs in series.items():
            st = state[m]
            n, mean, lo, hi = interval([d for rep, d in pairs if rep <= cut], alpha)
            st["n"], st["mean"] = n, mean
            bound = RANGE.get(m, math.inf)
            st["lo"], st["hi"] = max(st["lo"], lo, -bound), min(st["hi"], hi, bound)
            st["verdict"] = verdict(st["lo"], st["hi"], st["margin"])
            if st["verdict"] and st["first"] is None:
                st["first"] = cut
        if all(st["verdict"] for st in state.values()):
            status = "decided"
            break
        if look == len(cutoffs) - 1:
            status = "maximum"
    return {"status": status, "look": look, "repetition": cut, "metrics": state}
