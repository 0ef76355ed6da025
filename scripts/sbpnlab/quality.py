# SPDX-License-Identifier: GPL-2.0
"""What a receiver could show and play: video frames and voice quality.

Video (definitions in Documentation/statistics.rst):
frames() groups a flow's video packets into frames; decodable() follows
each P-frame's reference chain back to its key frame; ready_times() says
when each decodable frame could be decoded; freezes() counts freezes by
WebRTC's definition; p95() is a percentile in which a frame never
rendered counts as later than any deadline; video_quality() gathers them
per flow.  call_freezes() is freezes() over a whole call: the gap before
the first render and after the last count as inter-frame delays too.

The VP8 call (a real encoder whose frames name the frames they reference):
decodable_refs() and ready_refs() follow those references; shown_frames()
says which frames a receiver decoded and which of those it decoded by their
deadlines and showed (vp8-score decodes the former, shows the latter and
scores the screen); call_quality() gathers the per-flow metrics from the
screen.

Voice: the ITU-T G.107 (06/2015) E-model, r_factor() from its equations
with the default values of its table 1, the delay impairment Id
(idte(), idle(), idd()) and the packet-loss equipment impairment
ie_eff(), at most IE_EFF_MAX; r_scale() keeps R on G.107's 0..100
scale; mos() maps R to MOS (G.107 annex B); burst_ratio() estimates
BurstR from a loss pattern; audio_quality() applies them to a flow's
audio delays with a fixed jitter buffer.

Pure functions of arrays: nothing here reads files.
"""
import math

import numpy as np

# ---- video --------------------------------------------------------------------

# WebRTC's freeze detection (video/video_quality_observer2.cc)
FREEZE_MIN_SAMPLES = 5          # kMinFrameSamplesToDetectFreeze
FREEZE_WINDOW = 30              # kAvgInterframeDelaysWindowSizeFrames
FREEZE_MIN_INCREASE_MS = 150    # kMinIncreaseForFreezeMs


def frames(planned, recv, expiry, frame=None, key=None):
    """One entry per video frame, from its packets' arrays (schedule
    order): planned (s), recv (s, NaN if lost), expiry (s, inf if none),
    and, with coding dependencies, each packet's frame index and key flag
    (0/1).  Without them a frame is the packets planned for one instant,
    and every frame is decodable on its own (key all 1).  Returns a dict
    of arrays in frame order: planned, deadline (the earliest expiry of
    its pieces), arrival (its last piece's, NaN if one is missing),
    complete (every piece arrived by the deadline) and key (bool)."""
    planned = np.asarray(planned, dtype=float)
    recv = np.asarray(recv, dtype=float)
    expiry = np.asarray(expiry, dtype=float)
    ids = planned if frame is None else np.asarray(frame)
    uniq, first, inv = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(planned[first], kind="stable")
    rank = np.empty(len(order), dtype=int)
    rank[order] = np.arange(len(order))
    idx = rank[inv]
    n = len(uniq)
    out_planned = np.full(n, np.inf)
    deadline = np.full(n, np.inf)
    np.minimum.at(out_planned, idx, planned)
    np.minimum.at(deadline, idx, expiry)
    lost = np.zeros(n, dtype=bool)
    np.logical_or.at(lost, idx, np.isnan(recv))
    arrival = np.full(n, -np.inf)
    np.maximum.at(arrival, idx, np.where(np.isnan(recv), -np.inf, recv))
    arrival[lost] = np.nan
    with np.errstate(invalid="ignore"):
        complete = ~lost & (arrival <= deadline)
    if key is None:
        k = np.ones(n, dtype=bool)
    else:
        k = np.zeros(n, dtype=bool)
        np.logical_or.at(k, idx, np.asarray(key, dtype=int) == 1)
    return {"planned": out_planned, "deadline": deadline, "arrival": arrival,
            "complete": complete, "key": k}


def decodable(complete, key):
    """Frame i is decodable when it is complete (every piece by its
    deadline) and it is a key frame or frame i-1 is decodable: its
    reference chain back to the last key frame is decodable.  A P-frame
    before the first key frame has nothing to decode from."""
    out = np.zeros(len(complete), dtype=bool)
    prev = False
    for i, (c, k) in enumerate(zip(complete, key)):
        prev = out[i] = bool(c) and (bool(k) or prev)
    return out


def ready_times(arrival, key, ok):
    """When each decodable frame (ok) could be decoded: its last piece's
    arrival, or its reference's ready time if that is later; NaN for a
    frame that is not decodable."""
    out = np.full(len(arrival), np.nan)
    for i in range(len(arrival)):
        if ok[i]:
            out[i] = arrival[i] if key[i] or i == 0 else max(arrival[i], out[i - 1])
    return out


def freezes(render_s):
    """WebRTC's freezeCount and totalFreezesDuration (s) over the times
    (s, increasing) at which frames were rendered.  Each inter-frame
    delay joins a moving window of the last FREEZE_WINDOW delays; once
    the window holds FREEZE_MIN_SAMPLES, the delay is a freeze when it is
    at least max(3 avg, avg + 150 ms), avg being the window's mean
    (rounded down to a whole ms, the current delay included); a freeze
    lasts the whole delay.  Returns (count, seconds)."""
    return _freezes(np.diff(np.asarray(render_s, dtype=float)) * 1000, [])


def _freezes(delays, window):
    """WebRTC's freeze count and seconds over inter-frame delays (ms),
    the moving window starting as window (delays, ms)."""
    window, count, total = list(window), 0, 0.0
    for d in delays:
        window.append(d)
        if len(window) > FREEZE_WINDOW:
            window.pop(0)
        if len(window) >= FREEZE_MIN_SAMPLES:
            avg = math.floor(sum(window) / len(window))
            if d >= max(3 * avg, avg + FREEZE_MIN_INCREASE_MS):
                count += 1
                total += d / 1000
    return count, total


def call_freezes(render_s, start_s, end_s, interval_s):
    """freezes() over a call from start_s to end_s (s) whose frames were
    rendered at render_s, every s in it an inter-frame delay: the leading
    gap (start_s to the first render, when there is one) and the trailing
    gap (the last render to end_s) count as delays too.  The window
    starts with FREEZE_MIN_SAMPLES delays of interval_s (the nominal frame
    interval), as if frames had been rendered at that rate up to start_s,
    so that a leading gap is judged like any other delay.  A call with no
    render is one freeze as long as the call.  Returns (count, seconds)."""
    r = np.sort(np.asarray(render_s, dtype=float))
    if len(r) == 0:
        return (1, end_s - start_s) if end_s > start_s else (0, 0.0)
    delays = np.diff(r)
    if r[0] > start_s:
        delays = np.concatenate(([r[0] - start_s], delays))
    if end_s > r[-1]:
        delays = np.concatenate((delays, [end_s - r[-1]]))
    return _freezes(delays * 1000, [interval_s * 1000] * FREEZE_MIN_SAMPLES)


def p95(values, q=95):
    """The q-th percentile with linear interpolation between order
    statistics (numpy's default), where inf sorts last and any
    interpolation that touches inf is inf: a frame never rendered counts
    as later than any deadline.  NaN when there are no values."""
    v = np.sort(np.asarray(values, dtype=float))
    if len(v) == 0:
        return math.nan
    h = (len(v) - 1) * q / 100
    lo, hi = math.floor(h), math.ceil(h)
    if math.isinf(v[hi]):
        return math.inf
    return float(v[lo] + (h - lo) * (v[hi] - v[lo]))


def video_quality(planned, recv, expiry, frame=None, key=None, since=-math.inf):
    """The per-flow video metrics over the frames planned at or after
    since (the warm-up's end; the reference chains run through the
    warm-up): decodable_frac (decodable frames over those scheduled),
    freezes, freeze_s_per_min (freeze seconds per minute of call: from
    the first such frame to one frame interval after the last, with the
    gaps before the first render and after the last counted as
    call_freezes() does), and frame_delay_p95_ms (ready time - planned
    over every frame, never rendered = inf).  A frame is rendered at its
    deadline (or when ready, if it has none): a receiver that plays out
    at a fixed delay, whose call runs on the same clock, from the first
    frame's deadline to one frame interval after the last's."""
    f = frames(planned, recv, expiry, frame, key)
    ok = decodable(f["complete"], f["key"])
    ready = ready_times(f["arrival"], f["key"], ok)
    sel = f["planned"] >= since
    n = int(sel.sum())
    if n == 0:
        return {"decodable_frac": math.nan, "freezes": math.nan,
                "freeze_s_per_min": math.nan, "frame_delay_p95_ms": math.nan}
    shown = sel & ok
    render = np.where(np.isfinite(f["deadline"]), f["deadline"], ready)[shown]
    t = f["planned"][sel]
    step = float(np.median(np.diff(t))) if n > 1 else 0.0
    span = t[-1] - t[0] + step
    # the call on the render clock: each frame's deadline (planned if none)
    clock = np.where(np.isfinite(f["deadline"]), f["deadline"], f["planned"])[sel]
    count, seconds = call_freezes(render, clock[0], clock[-1] + step, step)
    delay = np.where(ok, ready - f["planned"], np.inf)[sel]
    return {"decodable_frac": shown.sum() / n, "freezes": count,
            "freeze_s_per_min": seconds / (span / 60) if span > 0 else math.nan,
            "frame_delay_p95_ms": p95(delay) * 1000}



# ---- the VP8 call: explicit references, and what was on screen ---------------

def _check_refs(refs, i):
    if not refs:
        raise ValueError(f"frame {i}: not a key frame, and references nothing")
    bad = [r for r in refs if not 0 <= r < i]
    if bad:
        raise ValueError(f"frame {i}: references {bad}, not earlier frames")


def decodable_refs(complete, key, refs):
    """Frame i (a capture index) is decodable when it is complete and a
    key frame, or complete and every frame in refs[i] (earlier capture
    indices) is decodable.  A capture not coded is not complete.  A frame
    that is neither a key frame nor references anything, or references a
    later frame, is a ValueError."""
    out = np.zeros(len(complete), dtype=bool)
    for i in range(len(complete)):
        if complete[i] and not key[i]:
            _check_refs(refs[i], i)
        out[i] = bool(complete[i]) and (bool(key[i]) or all(out[r] for r in refs[i]))
    return out


def ready_refs(arrival, refs, ok):
    """When each decodable frame (ok) could be decoded: the latest of its
    own last piece's arrival and its references' ready times; NaN for a
    frame that is not decodable."""
    out = np.full(len(arrival), np.nan)
    for i in range(len(arrival)):
        if ok[i]:
            out[i] = max([arrival[i]] + [out[r] for r in refs[i]])
    return out


def shown_frames(key, refs, arrival, deadline):
    """What a receiver that plays out each frame at its deadline decodes
    and shows, from each frame's last piece's arrival (NaN when a piece
    was lost or the capture was not coded).  It decodes every decodable
    frame (decodable_refs(), a frame complete when all its pieces
    arrived, however late), and shows those ready (ready_refs()) by their
    deadline: a frame that came too late to be shown is still decoded, so
    the frames that reference it are shown if they and it arrived by
    their deadline.  Returns (decoded, shown, ready)."""
    arrival = np.asarray(arrival, dtype=float)
    decoded = decodable_refs(~np.isnan(arrival), key, refs)
    ready = ready_refs(arrival, refs, decoded)
    with np.errstate(invalid="ignore"):
        shown = decoded & (ready <= np.asarray(deadline, dtype=float))
    return decoded, shown, ready


def call_quality(capture_s, coded, key, shown, screen, psnr, ssim, playout_s, interval_s,
                 since=-math.inf):
    """The VP8 call's per-flow metrics over the capture slots at or after
    since (the warm-up's end).  Arrays per capture index k = 0..N-1:
    capture_s (s), coded, key, shown (shown_frames()), and the screen at
    slot k as vp8-score saw it: screen (the capture index on screen, -1
    for black), psnr and ssim.  Slot k is displayed at capture_s[k] +
    playout_s, a frame rendered at its capture + playout_s; interval_s is
    the camera's frame interval.
      frames_shown_pct: frames shown over frames coded, captured after
        the warm-up (%); coded_fps: frames coded per second of call;
      freezes, freeze_s_per_min: call_freezes() over the renders, the
        call running from the first slot's display to one interval after
        the last's;
      ssim_mean, psnr_mean: means over the slots;
      frame_delay_p95_ms: p95() of the age of the picture on screen at
        each slot (its display time - the shown frame's capture; inf for
        black), Salsify's delay;
      key_frames: key frames coded."""
    capture_s = np.asarray(capture_s, dtype=float)
    coded, key, shown = (np.asarray(x, dtype=bool) for x in (coded, key, shown))
    screen = np.asarray(screen, dtype=int)
    psnr, ssim = np.asarray(psnr, dtype=float), np.asarray(ssim, dtype=float)
    sel = capture_s >= since
    n = int(sel.sum())
    if n == 0:
        return dict.fromkeys(("frames_shown_pct", "coded_fps", "freezes", "freeze_s_per_min",
                              "ssim_mean", "psnr_mean", "frame_delay_p95_ms", "key_frames"),
                             math.nan)
    t = capture_s[sel]
    span = t[-1] - t[0] + interval_s
    n_coded = int((coded & sel).sum())
    count, seconds = call_freezes(capture_s[shown & sel] + playout_s, t[0] + playout_s,
                                  t[-1] + interval_s + playout_s, interval_s)
    age = np.where(screen >= 0, capture_s - capture_s[np.maximum(screen, 0)] + playout_s,
                   np.inf)[sel]
    return {"frames_shown_pct": (100 * float((shown & sel).sum()) / n_coded if n_coded
                                 else math.nan),
            "coded_fps": n_coded / float(span),
            "freezes": count, "freeze_s_per_min": float(seconds / (span / 60)),
            "ssim_mean": float(ssim[sel].mean()), "psnr_mean": float(psnr[sel].mean()),
            "frame_delay_p95_ms": p95(age) * 1000,
            "key_frames": int((key & coded & sel).sum())}

# ---- voice: the ITU-T G.107 E-model ------------------------------------------

# G.107 (06/2015) table 1, default values.  mT and sT: the delay
# sensitivity of Idd, 100 ms and 1 by default (clause 7.4).
G107 = {"SLR": 8, "RLR": 2, "STMR": 15, "LSTR": 18, "Ds": 3, "TELR": 65,
        "WEPL": 110, "qdu": 1, "Nc": -70, "Nfor": -64, "Ps": 35, "Pr": 35,
        "A": 0, "mT": 100, "sT": 1}
# The codec: G.711 with the packet loss concealment of its appendix I,
# Ie = 0 and Bpl = 25.1 (ITU-T G.113 appendix I, table I.3).  The Ekiga
# model's 214-byte audio packets are G.711's 20 ms frames with their
# headers (Documentation/traffic.rst).
CODEC = {"name": "G.711 with PLC (G.711 appendix I)", "Ie": 0.0, "Bpl": 25.1}


def _lg(x):
    return math.log10(x)


def noise_no(p=G107):
    """No, the total noise power (dBm0p), clause 7.1."""
    olr = p["SLR"] + p["RLR"]
    nos = p["Ps"] - p["SLR"] - p["Ds"] - 100 + 0.004 * (p["Ps"] - olr - p["Ds"] - 14) ** 2
    pre = p["Pr"] + 10 * _lg(1 + 10 ** ((10 - p["LSTR"]) / 10))
    nor = p["RLR"] - 121 + pre + 0.008 * (pre - 35) ** 2
    nfo = p["Nfor"] + p["RLR"]
    return 10 * _lg(sum(10 ** (x / 10) for x in (p["Nc"], nos, nor, nfo)))


def ro(p=G107):
    """Ro = 15 - 1.5 (SLR + No), the basic signal-to-noise ratio."""
    return 15 - 1.5 * (p["SLR"] + noise_no(p))


def impairment_is(T=0.0, p=G107):
    """Is = Iolr + Ist + Iq, the simultaneous impairments (clause 7.2);
    T, the mean one-way delay of the echo path (ms), enters STMRo."""
    no, r0 = noise_no(p), ro(p)
    xolr = p["SLR"] + p["RLR"] + 0.2 * (64 + no - p["RLR"])
    iolr = 20 * ((1 + (xolr / 8) ** 8) ** (1 / 8) - xolr / 8)
    stmro = -10 * _lg(10 ** (-p["STMR"] / 10) + math.exp(-T / 4) * 10 ** (-p["TELR"] / 10))
    ist = (12 * (1 + ((stmro - 13) / 6) ** 8) ** (1 / 8)
           - 28 * (1 + ((stmro + 1) / 19.4) ** 35) ** (1 / 35)
           - 13 * (1 + ((stmro - 3) / 33) ** 13) ** (1 / 13) + 29)
    q = 37 - 15 * _lg(p["qdu"])
    g = 1.07 + 0.258 * q + 0.0602 * q * q
    y = (r0 - 100) / 15 + 46 / 8.4 - g / 9
    z = 46 / 30 - g / 40
    iq = 15 * _lg(1 + 10 ** y + 10 ** z)
    return iolr + ist + iq


def idte(T, p=G107):
    """Talker echo, clause 7.3: T the one-way delay of the echo path, ms."""
    roe = -1.5 * (noise_no(p) - p["RLR"])
    terv = p["TELR"] - 40 * _lg((1 + T / 10) / (1 + T / 150)) + 6 * math.exp(-0.3 * T * T)
    re_ = 80 + 2.5 * (terv - 14)
    d = roe - re_
    return (d / 2 + math.sqrt(d * d / 4 + 100) - 1) * (1 - math.exp(-T))


def idle(Tr, p=G107):
    """Listener echo, clause 7.3: Tr the round-trip delay of the 4-wire loop, ms."""
    rle = 10.5 * (p["WEPL"] + 7) * (Tr + 1) ** -0.25
    d = ro(p) - rle
    return d / 2 + math.sqrt(d * d / 4 + 169)


def idd(Ta, p=G107):
    """Too-long absolute delay Ta (ms), clause 7.3: 0 up to mT, then
    25 {(1 + X^6s)^(1/6s) - 3 (1 + (X/3)^6s)^(1/6s) + 2}, X = lg(Ta/mT)/lg 2."""
    if Ta <= p["mT"]:
        return 0.0
    x, s6 = _lg(Ta / p["mT"]) / _lg(2), 6 * p["sT"]
    return 25 * ((1 + x ** s6) ** (1 / s6) - 3 * (1 + (x / 3) ** s6) ** (1 / s6) + 2)


# The largest Ie-eff: the limit of clause 7.5's formula as Ppl grows
# under random loss (BurstR = 1), where every packet is lost.  With
# BurstR > 1 the formula passes it once Ppl > Bpl BurstR / (BurstR - 1)
# (50 % for G.711 with PLC at BurstR 2) and grows without bound, an
# extrapolation G.107 does not define; Documentation/statistics.rst.
IE_EFF_MAX = 95.0


def ie_eff(ppl, burst_r=1.0, ie=CODEC["Ie"], bpl=CODEC["Bpl"]):
    """Ie-eff = Ie + (95 - Ie) Ppl / (Ppl / BurstR + Bpl), clause 7.5;
    Ppl in percent; at most IE_EFF_MAX."""
    return min(ie + (95 - ie) * ppl / (ppl / burst_r + bpl), IE_EFF_MAX)


def r_factor(Ta, ppl=0.0, burst_r=1.0, ie=CODEC["Ie"], bpl=CODEC["Bpl"], T=None,
             Tr=None, p=G107):
    """R = Ro - Is - Id - Ie-eff + A with G.107's defaults, for an absolute
    one-way delay Ta (ms; the echo path's T = Ta and the loop's Tr = 2 Ta
    unless given) and a packet loss of ppl percent."""
    T = Ta if T is None else T
    Tr = 2 * Ta if Tr is None else Tr
    i_d = idte(T, p) + idle(Tr, p) + idd(Ta, p)
    return ro(p) - impairment_is(T, p) - i_d - ie_eff(ppl, burst_r, ie, bpl) + p["A"]


def r_scale(r):
    """R on G.107's transmission rating scale, 0 to 100 (annex B maps
    the MOS over it: R < 0 is MOS 1, R > 100 MOS 4.5): R clamped to it."""
    if math.isnan(r):
        return math.nan
    return min(max(r, 0.0), 100.0)


def mos(r):
    """MOS (conversational quality, estimated) from R, G.107 annex B."""
    if math.isnan(r):
        return math.nan
    if r <= 0:
        return 1.0
    if r >= 100:
        return 4.5
    return 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6


def burst_ratio(lost):
    """BurstR (G.107 clause 7.5): the mean length of the observed bursts
    of lost packets over the mean expected for random loss, 1 / (1 -
    Ppl); for a two-state Markov loss model this is 1 / (p + q).  1 when
    nothing or everything was lost."""
    lost = np.asarray(lost, dtype=bool)
    n, k = len(lost), int(lost.sum())
    if k == 0 or k == n:
        return 1.0
    starts = int(lost[0]) + int((lost[1:] & ~lost[:-1]).sum())
    return (k / starts) * (1 - k / n)


def audio_quality(d, buffer_s, codec=CODEC):
    """The E-model for a flow's audio delays d (s, schedule order, NaN =
    lost) with a fixed jitter buffer of buffer_s: playout at base +
    buffer_s after sending (base = the minimum delay), so Ta = base +
    buffer_s; a packet later than that or lost is lost after the buffer
    (Ppl, %), and BurstR comes from their pattern.  Returns ta_ms, ppl,
    burst_r, r (on G.107's 0..100 scale, r_scale()), mos and clamped
    (1 when Ie-eff reached IE_EFF_MAX or R fell below 0: the E-model
    left its range and r is its floor; NaN when nothing arrived)."""
    d = np.asarray(d, dtype=float)
    if not np.isfinite(d).any():
        return {"ta_ms": math.nan, "ppl": math.nan, "burst_r": math.nan,
                "r": math.nan, "mos": math.nan, "clamped": math.nan}
    base = float(np.nanmin(d))
    with np.errstate(invalid="ignore"):
        lost = ~(d <= base + buffer_s)
    ta = (base + buffer_s) * 1000
    ppl = 100 * lost.mean()
    br = burst_ratio(lost)
    r = r_factor(ta, ppl, br, codec["Ie"], codec["Bpl"])
    capped = ie_eff(ppl, br, codec["Ie"], codec["Bpl"]) >= IE_EFF_MAX
    return {"ta_ms": ta, "ppl": ppl, "burst_r": br, "r": r_scale(r), "mos": mos(r),
            "clamped": float(capped or r < 0)}
