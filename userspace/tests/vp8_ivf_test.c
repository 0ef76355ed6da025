// SPDX-License-Identifier: GPL-2.0
/*
 * vp8_ivf_test.c - a small VP8 call for the tests of vp8-score and of the
 * analysis (userspace/tests/vp8_score_test.py, scripts/tests/test_vp8call.py).
 *
 *   vp8-ivf-test OUT.ivf K W H FPS SEED [CODED_W CODED_H]
 *
 * Encodes captures 0..K-1 of picture_draw(W x H, FPS, SEED), scaled to
 * CODED_W x CODED_H if given, with libvpx (real time, error resilient,
 * no frame dropping) in two temporal layers: capture 0 is the key frame;
 * an even capture n > 0 is layer 0 and references capture n - 2 (the last
 * layer-0 frame, in LAST); an odd one is layer 1, references capture n - 1
 * and updates no reference, so a decoder may skip it.  Writes the IVF
 * (camera size in the header, pts = n) and prints one line per frame:
 * n, key, layer, refs ("-" for the key frame), bytes, tab-separated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>

#include "picture.h"

static void put32(uint8_t *b, uint32_t x)
{
	b[0] = x;
	b[1] = x >> 8;
	b[2] = x >> 16;
	b[3] = x >> 24;
}

static void fail(const char *what, vpx_codec_ctx_t *c)
{
	fprintf(stderr, "vp8-ivf-test: %s: %s\n", what, c ? vpx_codec_error(c) : "bad arguments");
	exit(1);
}

int main(int argc, char **argv)
{
	struct picture cam, coded;
	vpx_codec_enc_cfg_t cfg;
	vpx_codec_ctx_t codec;
	vpx_image_t img;
	uint8_t h[32] = "DKIF";
	int k, w, ht, cw, ch, n;
	double fps;
	unsigned long long seed;
	FILE *out;

	if (argc != 7 && argc != 9)
		fail("usage: OUT.ivf K W H FPS SEED [CODED_W CODED_H]", NULL);
	k = atoi(argv[2]);
	w = atoi(argv[3]);
	ht = atoi(argv[4]);
	fps = atof(argv[5]);
	seed = strtoull(argv[6], NULL, 10);
	cw = argc == 9 ? atoi(argv[7]) : w;
	ch = argc == 9 ? atoi(argv[8]) : ht;
	if (k < 1 || fps <= 0 || picture_alloc(&cam, w, ht) || picture_alloc(&coded, cw, ch))
		fail("arguments", NULL);
	out = fopen(argv[1], "wb");
	if (!out)
		fail(argv[1], NULL);

	if (vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &cfg, 0))
		fail("config", NULL);
	cfg.g_w = cw;
	cfg.g_h = ch;
	cfg.g_timebase.num = 1;
	cfg.g_timebase.den = (int)fps;
	cfg.g_lag_in_frames = 0;
	cfg.g_error_resilient = VPX_ERROR_RESILIENT_DEFAULT;
	cfg.rc_end_usage = VPX_CBR;
	cfg.rc_target_bitrate = 800;
	cfg.rc_dropframe_thresh = 0;
	cfg.rc_min_quantizer = 2;
	cfg.rc_max_quantizer = 40;
	cfg.kf_mode = VPX_KF_DISABLED;
	if (vpx_codec_enc_init(&codec, vpx_codec_vp8_cx(), &cfg, 0))
		fail("encoder init", &codec);
	if (vpx_codec_control(&codec, VP8E_SET_CPUUSED, 8))
		fail("cpu_used", &codec);

	memcpy(h + 8, "VP80", 4);
	h[6] = 32;
	h[12] = w;
	h[13] = w >> 8;
	h[14] = ht;
	h[15] = ht >> 8;
	put32(h + 16, (uint32_t)fps);
	put32(h + 20, 1);
	put32(h + 24, k);
	fwrite(h, 1, 32, out);

	vpx_img_wrap(&img, VPX_IMG_FMT_I420, cw, ch, 1, coded.buf);
	for (n = 0; n < k; n++) {
		const vpx_codec_cx_pkt_t *pkt;
		vpx_codec_iter_t it = NULL;
		vpx_enc_frame_flags_t fl = VP8_EFLAG_NO_REF_GF | VP8_EFLAG_NO_REF_ARF |
					   VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF;
		int got = 0;

		if (n == 0)
			fl = VPX_EFLAG_FORCE_KF;
		else if (n % 2)
			fl |= VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_ENTROPY;
		picture_draw(&cam, n, fps, seed);
		if (cw == w && ch == ht)
			memcpy(coded.buf, cam.buf, picture_size(w, ht));
		else
			picture_scale(&cam, &coded);
		if (vpx_codec_encode(&codec, &img, n, 1, fl, VPX_DL_REALTIME))
			fail("encode", &codec);
		while ((pkt = vpx_codec_get_cx_data(&codec, &it))) {
			uint8_t fh[12];

			if (pkt->kind != VPX_CODEC_CX_FRAME_PKT)
				continue;
			put32(fh, pkt->data.frame.sz);
			put32(fh + 4, n);
			put32(fh + 8, 0);
			fwrite(fh, 1, 12, out);
			fwrite(pkt->data.frame.buf, 1, pkt->data.frame.sz, out);
			if (n == 0)
				printf("0\t1\t0\t-");
			else
				printf("%d\t0\t%d\t%d", n, n % 2, n % 2 ? n - 1 : n - 2);
			printf("\t%zu\n", pkt->data.frame.sz);
			got++;
		}
		if (got != 1)
			fail("not one frame out of the encoder", &codec);
	}
	vpx_codec_destroy(&codec);
	picture_free(&cam);
	picture_free(&coded);
	return fclose(out) ? 1 : 0;
}
