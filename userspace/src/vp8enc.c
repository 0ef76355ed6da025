// SPDX-License-Identifier: GPL-2.0
/*
 * vp8enc.c - the call's video encoder (vp8enc.h).
 *
 * libvpx's VP8 encoder configured as libwebrtc configures it for a real-time
 * call (modules/video_coding/codecs/vp8/libvpx_vp8_encoder.cc): one pass,
 * CBR, no lag, frame dropping at 30 % buffer, quantizer 2..56, undershoot
 * 100 %, overshoot 15 %, buffer 500/600/1000 ms, automatic key frames at
 * most every 3000 frames, error resilience with temporal layers, and key
 * frames capped by MaxIntraTarget(): half the optimal buffer's worth of
 * bits, at least 3 frames' (rc_max_intra_bitrate_pct).
 *
 * Temporal layers follow libvpx's examples/vpx_temporal_svc_encoder.c: L1T2
 * alternates a base frame (reads and writes LAST) with a frame nothing
 * references; L1T3 repeats base, top, middle (writes GOLDEN), top (reads
 * LAST and GOLDEN).  Each layer's share of the rate is libwebrtc's
 * (kLayerRateAllocation): 60/40 for two layers, 40/20/40 for three.
 *
 * Each frame's references are derived from its flags: the frame that last
 * wrote each buffer it may read.  A key frame reads nothing and writes all.
 *
 * The ladder (Skype's order of adaptation, Cicco et al.: frame rate first,
 * then picture size) keeps at least LADDER_BPP bits per coded pixel: below
 * it at the camera's rate the frame rate is halved, then thirded, then the
 * picture halved in each direction; a level is left upwards once the
 * rate would give LADDER_UP times that at the level above; one step a
 * second at most, so that one rate sample does not walk the whole ladder.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>

#include "vp8enc.h"

#define LADDER_BPP	0.05	/* bits per pixel at the coded rate and size */
#define LADDER_UP	1.25	/* hysteresis going back up */
#define RETARGET	0.05	/* reconfigure when the target moves this much */
#define LADDER_HOLD_S	1.0	/* at most one ladder step per this much capture time */

enum { REF_LAST, REF_GOLD, REF_ALT };

struct layer_pattern {
	int period;
	int layer[4];
	vpx_enc_frame_flags_t flags[4];
};

#define NO_REF_GA (VP8_EFLAG_NO_REF_GF | VP8_EFLAG_NO_REF_ARF)
#define NO_UPD_ALL (VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF)

static const struct layer_pattern patterns[VP8_MAX_LAYERS] = {
	/* L1T1: every frame reads and writes LAST */
	{ 1, { 0 }, { NO_REF_GA | VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF } },
	/* L1T2 */
	{ 2, { 0, 1 }, {
		NO_REF_GA | VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF,
		NO_REF_GA | NO_UPD_ALL } },
	/* L1T3 */
	{ 4, { 0, 2, 1, 2 }, {
		NO_REF_GA | VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF,
		NO_REF_GA | NO_UPD_ALL,
		NO_REF_GA | VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_ARF,
		VP8_EFLAG_NO_REF_ARF | NO_UPD_ALL } },
};

/* libwebrtc's kLayerRateAllocation, cumulative per layer */
static const double layer_share[VP8_MAX_LAYERS][VP8_MAX_LAYERS] = {
	{ 1.0 }, { 0.6, 1.0 }, { 0.4, 0.6, 1.0 },
};

/* Ladder levels: frame-rate divisor and picture scale divisor. */
static const struct { int fdiv, sdiv; } ladder[] = { { 1, 1 }, { 2, 1 }, { 3, 1 }, { 3, 2 } };
#define LADDER_LEVELS ((int)(sizeof(ladder) / sizeof(ladder[0])))

struct vp8enc {
	struct vp8_params p;
	vpx_codec_ctx_t codec;
	vpx_codec_enc_cfg_t cfg;
	bool open;
	struct picture cam, coded;	/* the camera's picture, and scaled */
	vpx_image_t img;
	int level;			/* ladder */
	int64_t level_n;		/* the capture of its last step, -1 none */
	int w, h;			/* coded size */
	uint32_t target_kbps;		/* configured */
	double rate_bps;		/* the transport's word, 0: none yet */
	bool want_key;
	int phase;			/* position in the layer pattern */
	int64_t writer[VP8_REFS];	/* frame that last wrote each buffer */
};

static int even(int v)
{
	return v & ~1;
}

static uint32_t clamp_kbps(const struct vp8enc *e, double bps)
{
	double k = bps / 1000;

	if (k < e->p.min_kbps)
		k = e->p.min_kbps;
	if (k > e->p.max_kbps)
		k = e->p.max_kbps;
	return (uint32_t)lround(k);
}

static void set_layer_rates(vpx_codec_enc_cfg_t *c, int layers, uint32_t kbps)
{
	c->rc_target_bitrate = kbps;
	for (int i = 0; i < layers; i++)
		c->ts_target_bitrate[i] = (unsigned int)lround(kbps * layer_share[layers - 1][i]);
}

/* libwebrtc's MaxIntraTarget(): scalePar 0.5 of the optimal buffer, in
 * percent of a frame's bits, at least 300 %. */
static unsigned int max_intra_pct(unsigned int optimal_buf_ms, double fps)
{
	unsigned int pct = (unsigned int)(optimal_buf_ms * 0.5 * fps / 10);

	return pct < 300 ? 300 : pct;
}

static void codec_error(struct vp8enc *e, const char *what)
{
	const char *detail = vpx_codec_error_detail(&e->codec);

	fprintf(stderr, "vp8enc: %s: %s%s%s\n", what, vpx_codec_error(&e->codec),
		detail ? ": " : "", detail ? detail : "");
}

/* (Re)open libvpx at the ladder's current size; the next frame is a key frame. */
static int codec_open(struct vp8enc *e)
{
	const struct layer_pattern *lp = &patterns[e->p.layers - 1];
	vpx_codec_enc_cfg_t *c = &e->cfg;

	if (e->open) {
		vpx_codec_destroy(&e->codec);
		e->open = false;
	}
	picture_free(&e->coded);
	e->w = even(e->p.width / ladder[e->level].sdiv);
	e->h = even(e->p.height / ladder[e->level].sdiv);
	if (picture_alloc(&e->coded, e->w, e->h)) {
		perror("vp8enc: picture");
		return -1;
	}
	vpx_img_wrap(&e->img, VPX_IMG_FMT_I420, e->w, e->h, 1, e->coded.buf);
	if (vpx_codec_enc_config_default(vpx_codec_vp8_cx(), c, 0)) {
		fprintf(stderr, "vp8enc: no default configuration\n");
		return -1;
	}
	c->g_w = e->w;
	c->g_h = e->h;
	c->g_timebase.num = 1000;
	c->g_timebase.den = (int)lround(e->p.fps * 1000);
	c->g_threads = 1;
	c->g_lag_in_frames = 0;
	c->g_pass = VPX_RC_ONE_PASS;
	c->g_error_resilient = e->p.layers > 1 ? VPX_ERROR_RESILIENT_DEFAULT : 0;
	c->rc_end_usage = VPX_CBR;
	c->rc_dropframe_thresh = 30;
	c->rc_resize_allowed = 0;
	c->rc_min_quantizer = 2;
	c->rc_max_quantizer = 56;
	c->rc_undershoot_pct = 100;
	c->rc_overshoot_pct = 15;
	c->rc_buf_initial_sz = 500;
	c->rc_buf_optimal_sz = 600;
	c->rc_buf_sz = 1000;
	c->kf_mode = VPX_KF_AUTO;
	c->kf_min_dist = 0;
	c->kf_max_dist = 3000;
	if (e->p.layers > 1) {
		c->ts_number_layers = (unsigned int)e->p.layers;
		c->ts_periodicity = (unsigned int)lp->period;
		for (int i = 0; i < lp->period; i++)
			c->ts_layer_id[i] = (unsigned int)lp->layer[i];
		for (int i = 0; i < e->p.layers; i++)
			c->ts_rate_decimator[i] = 1u << (e->p.layers - 1 - i);
	}
	set_layer_rates(c, e->p.layers, e->target_kbps);
	if (vpx_codec_enc_init(&e->codec, vpx_codec_vp8_cx(), c, 0)) {
		codec_error(e, "init");
		return -1;
	}
	e->open = true;
	if (vpx_codec_control(&e->codec, VP8E_SET_CPUUSED, e->p.cpu_used) ||
	    vpx_codec_control(&e->codec, VP8E_SET_STATIC_THRESHOLD, 1u) ||
	    vpx_codec_control(&e->codec, VP8E_SET_NOISE_SENSITIVITY, 0u) ||
	    vpx_codec_control(&e->codec, VP8E_SET_TOKEN_PARTITIONS, 0) ||
	    vpx_codec_control(&e->codec, VP8E_SET_MAX_INTRA_BITRATE_PCT,
			      max_intra_pct(c->rc_buf_optimal_sz, e->p.fps))) {
		codec_error(e, "control");
		return -1;
	}
	e->want_key = true;
	return 0;
}

struct vp8enc *vp8enc_new(const struct vp8_params *p)
{
	struct vp8enc *e;

	if (p->layers < 1 || p->layers > VP8_MAX_LAYERS || p->fps <= 0 || p->width < 32 ||
	    p->height < 32 || !p->min_kbps || p->min_kbps > p->max_kbps) {
		fprintf(stderr, "vp8enc: bad parameters (layers 1..%d, fps > 0, size >= 32, "
			"0 < min_kbps <= max_kbps)\n", VP8_MAX_LAYERS);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->p = *p;
	e->target_kbps = clamp_kbps(e, p->start_kbps * 1000.0);
	e->level_n = -1;
	for (int i = 0; i < VP8_REFS; i++)
		e->writer[i] = -1;
	if (picture_alloc(&e->cam, p->width, p->height) || codec_open(e)) {
		vp8enc_free(e);
		return NULL;
	}
	return e;
}

void vp8enc_free(struct vp8enc *e)
{
	if (!e)
		return;
	if (e->open)
		vpx_codec_destroy(&e->codec);
	picture_free(&e->cam);
	picture_free(&e->coded);
	free(e);
}

void vp8enc_set_rate(struct vp8enc *e, double bps)
{
	if (bps > 0)
		e->rate_bps = bps;
}

void vp8enc_request_key(struct vp8enc *e)
{
	e->want_key = true;
}

int vp8enc_rate_divisor(const struct vp8enc *e)
{
	return ladder[e->level].fdiv;
}

/* The rate a level needs: LADDER_BPP bits per coded pixel. */
static double level_bps(const struct vp8enc *e, int level)
{
	double w = even(e->p.width / ladder[level].sdiv), h = even(e->p.height / ladder[level].sdiv);

	return LADDER_BPP * w * h * e->p.fps / ladder[level].fdiv;
}

/* Walk the ladder one step at most per LADDER_HOLD_S; 1 if the size changed. */
static int ladder_step(struct vp8enc *e, uint64_t n)
{
	int old = e->level;

	if (!e->p.ladder || e->rate_bps <= 0 ||
	    (e->level_n >= 0 && (double)(n - (uint64_t)e->level_n) < LADDER_HOLD_S * e->p.fps))
		return 0;
	if (e->level + 1 < LADDER_LEVELS && e->rate_bps < level_bps(e, e->level))
		e->level++;
	else if (e->level > 0 && e->rate_bps >= LADDER_UP * level_bps(e, e->level - 1))
		e->level--;
	if (e->level != old)
		e->level_n = (int64_t)n;
	return ladder[e->level].sdiv != ladder[old].sdiv;
}

int vp8enc_capture(struct vp8enc *e, uint64_t n, struct vp8_frame *f, enum vp8_status *st)
{
	const struct layer_pattern *lp = &patterns[e->p.layers - 1];
	vpx_enc_frame_flags_t flags;
	const vpx_codec_cx_pkt_t *pkt;
	vpx_codec_iter_t it = NULL;
	uint32_t kbps;
	int layer, resized;
	bool key;

	memset(f, 0, sizeof(*f));
	f->n = n;
	for (int i = 0; i < VP8_REFS; i++)
		f->refs[i] = -1;
	resized = ladder_step(e, n);
	if (resized && codec_open(e))
		return -1;
	f->width = e->w;
	f->height = e->h;
	/* the frame-rate ladder codes every fdiv-th capture */
	if (n % (uint64_t)ladder[e->level].fdiv) {
		*st = VP8_SKIPPED;
		f->target_kbps = e->target_kbps;
		return 0;
	}
	kbps = e->rate_bps > 0 ? clamp_kbps(e, e->rate_bps) : e->target_kbps;
	if (fabs((double)kbps - e->target_kbps) >= RETARGET * e->target_kbps) {
		e->target_kbps = kbps;
		set_layer_rates(&e->cfg, e->p.layers, kbps);
		if (vpx_codec_enc_config_set(&e->codec, &e->cfg)) {
			codec_error(e, "rate");
			return -1;
		}
	}
	f->target_kbps = e->target_kbps;

	picture_draw(&e->cam, n, e->p.fps, e->p.seed);
	picture_scale(&e->cam, &e->coded);

	if (e->want_key)
		e->phase = 0;
	layer = lp->layer[e->phase];
	flags = lp->flags[e->phase];
	if (e->want_key)
		flags = VPX_EFLAG_FORCE_KF;
	if (e->p.layers > 1 &&
	    vpx_codec_control(&e->codec, VP8E_SET_TEMPORAL_LAYER_ID, layer)) {
		codec_error(e, "layer");
		return -1;
	}
	/*
	 * One capture interval, whatever came before: libvpx measures the
	 * time between frames from one frame's end (pts + duration) to the
	 * next one's, so a capture not coded is a later pts, not a longer
	 * duration.  A frame after a gap given the gap as its duration ends
	 * after the next one does; libvpx then takes a negative interval for
	 * the frame rate, its per-frame budget turns negative, and it drops
	 * every frame from then on.
	 */
	if (vpx_codec_encode(&e->codec, &e->img, (vpx_codec_pts_t)n, 1, flags,
			     VPX_DL_REALTIME)) {
		codec_error(e, "encode");
		return -1;
	}
	e->phase = (e->phase + 1) % lp->period;
	*st = VP8_DROPPED;
	key = false;
	while ((pkt = vpx_codec_get_cx_data(&e->codec, &it))) {
		if (pkt->kind != VPX_CODEC_CX_FRAME_PKT)
			continue;
		f->data = pkt->data.frame.buf;
		f->len = pkt->data.frame.sz;
		key = pkt->data.frame.flags & VPX_FRAME_IS_KEY;
		*st = VP8_CODED;
	}
	if (*st != VP8_CODED)
		return 0;
	f->key = key;
	f->layer = key ? 0 : layer;
	if (key) {
		e->want_key = false;
		for (int i = 0; i < VP8_REFS; i++)
			e->writer[i] = (int64_t)n;
		e->phase = 1 % lp->period;
	} else {
		/* what it read, then what it wrote */
		if (!(flags & VP8_EFLAG_NO_REF_LAST))
			f->refs[REF_LAST] = e->writer[REF_LAST];
		if (!(flags & VP8_EFLAG_NO_REF_GF))
			f->refs[REF_GOLD] = e->writer[REF_GOLD];
		if (!(flags & VP8_EFLAG_NO_REF_ARF))
			f->refs[REF_ALT] = e->writer[REF_ALT];
		if (!(flags & VP8_EFLAG_NO_UPD_LAST))
			e->writer[REF_LAST] = (int64_t)n;
		if (!(flags & VP8_EFLAG_NO_UPD_GF))
			e->writer[REF_GOLD] = (int64_t)n;
		if (!(flags & VP8_EFLAG_NO_UPD_ARF))
			e->writer[REF_ALT] = (int64_t)n;
	}
	f->droppable = !key && (flags & NO_UPD_ALL) == NO_UPD_ALL;
	vpx_codec_control(&e->codec, VP8E_GET_LAST_QUANTIZER_64, &f->q);
	return 0;
}

static void put_le(uint8_t *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

int ivf_write_header(FILE *f, int w, int h, double fps, uint32_t frames)
{
	uint8_t b[32] = { 'D', 'K', 'I', 'F' };

	put_le(b + 4, 0, 2);		/* version */
	put_le(b + 6, 32, 2);		/* header size */
	memcpy(b + 8, "VP80", 4);
	put_le(b + 12, (uint64_t)w, 2);
	put_le(b + 14, (uint64_t)h, 2);
	put_le(b + 16, (uint64_t)lround(fps * 1000), 4);	/* timebase: rate */
	put_le(b + 20, 1000, 4);				/* and scale */
	put_le(b + 24, frames, 4);
	if (fseek(f, 0, SEEK_SET) || fwrite(b, sizeof(b), 1, f) != 1)
		return -1;
	return fseek(f, 0, SEEK_END);
}

int ivf_write_frame(FILE *f, uint64_t pts, const uint8_t *data, size_t len)
{
	uint8_t b[12];

	put_le(b, len, 4);
	put_le(b + 4, pts, 8);
	if (fwrite(b, sizeof(b), 1, f) != 1 || (len && fwrite(data, len, 1, f) != 1))
		return -1;
	return 0;
}
