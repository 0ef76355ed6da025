// SPDX-License-Identifier: GPL-2.0
/*
 * vp8-score - what a viewer of the VP8 call saw, slot by slot, scored
 * against the camera (Documentation/statistics.rst, "The VP8 call").
 *
 *   vp8-score --ivf FILE --show FILE [--decode FILE] --frames N --fps F
 *             --width W --height H --seed S [--out FILE]
 *
 * --decode lists the capture indices of the frames the receiver decoded,
 * one a line, increasing; --show those of the frames it showed (decoded in
 * time), a subset of them; without --decode the frames shown are the frames
 * decoded.  The frames decoded, and only those, are decoded from the
 * sender's IVF in order (every decoded frame's references were decoded, so
 * the decoder's state is the sender's).  At capture slot k the screen holds
 * the newest shown frame with index <= k, scaled to W x H if it was coded
 * smaller, or black before the first: a frame decoded but not shown never
 * goes on screen.  Its luma is scored against picture_draw(k): PSNR (dB,
 * 100 when identical) and SSIM.
 * Output: a TSV, slot shown psnr_y ssim_y, "-" for a black screen.
 * Exit 2 on bad input, 1 on a decoder error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpx/vp8dx.h>
#include <vpx/vpx_decoder.h>

#include "picture.h"

#define PSNR_MAX 100.0

struct ivf_frame {
	uint64_t pts;
	long off;
	uint32_t len;
};

static const char *prog = "vp8-score";

static void __attribute__((noreturn, format(printf, 2, 3))) die(int rc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(rc);
}

static uint32_t le32(const uint8_t *b)
{
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint16_t le16(const uint8_t *b)
{
	return b[0] | b[1] << 8;
}

/* Index the IVF's frames (pts increasing); *n their count. */
static struct ivf_frame *ivf_index(FILE *f, const char *path, size_t *n)
{
	uint8_t h[32];
	struct ivf_frame *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (fread(h, 1, 32, f) != 32 || memcmp(h, "DKIF", 4))
		die(2, "%s: not an IVF file", path);
	if (memcmp(h + 8, "VP80", 4))
		die(2, "%s: fourcc %.4s, expected VP80", path, (const char *)h + 8);
	if (le16(h + 6) < 32 || fseek(f, le16(h + 6), SEEK_SET))
		die(2, "%s: bad header length %u", path, le16(h + 6));
	for (;;) {
		uint8_t fh[12];
		size_t got = fread(fh, 1, 12, f);

		if (got == 0 && feof(f))
			break;
		if (got != 12)
			die(2, "%s: truncated frame header after %zu frames", path, *n);
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				die(1, "out of memory");
		}
		v[*n].len = le32(fh);
		v[*n].pts = le32(fh + 4) | (uint64_t)le32(fh + 8) << 32;
		v[*n].off = ftell(f);
		if (*n && v[*n].pts <= v[*n - 1].pts)
			die(2, "%s: frame pts %" PRIu64 " after %" PRIu64 ": not increasing",
			    path, v[*n].pts, v[*n - 1].pts);
		if (fseek(f, v[*n].len, SEEK_CUR) || v[*n].off < 0)
			die(2, "%s: truncated frame %" PRIu64, path, v[*n].pts);
		(*n)++;
	}
	/* fseek past the end succeeds: the last frame must be whole */
	if (*n && ftell(f) != v[*n - 1].off + (long)v[*n - 1].len)
		die(2, "%s: truncated frame %" PRIu64, path, v[*n - 1].pts);
	return v;
}

/* A list of capture indices: increasing, each < frames; *n their count. */
static uint64_t *read_list(const char *path, uint64_t frames, size_t *n)
{
	FILE *f = fopen(path, "r");
	uint64_t *v = NULL;
	size_t cap = 0;
	char line[64];
	int lineno = 0;

	if (!f)
		die(2, "%s: %s", path, strerror(errno));
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long x;

		lineno++;
		errno = 0;
		x = strtoull(line, &end, 10);
		if (end == line || errno || (*end != '\n' && *end) || line[0] == '-')
			die(2, "%s:%d: expected a capture index, got %s", path, lineno, line);
		if (*n && x <= v[*n - 1])
			die(2, "%s:%d: index %llu after %" PRIu64 ": not increasing",
			    path, lineno, x, v[*n - 1]);
		if (x >= frames)
			die(2, "%s:%d: index %llu not below --frames %" PRIu64,
			    path, lineno, x, frames);
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				die(1, "out of memory");
		}
		v[(*n)++] = x;
	}
	fclose(f);
	return v;
}

static double psnr_y(const struct picture *a, const struct picture *b)
{
	size_t i, n = (size_t)a->w * a->h;
	double sse = 0, p;

	for (i = 0; i < n; i++) {
		int d = a->y[i] - b->y[i];

		sse += d * d;
	}
	if (sse == 0)
		return PSNR_MAX;
	p = 10 * log10(255.0 * 255.0 * n / sse);
	return p < PSNR_MAX ? p : PSNR_MAX;
}

/*
 * SSIM of the luma planes (Wang, Bovik, Sheikh and Simoncelli, "Image
 * quality assessment: from error visibility to structural similarity",
 * IEEE Trans. Image Processing 13(4), 2004):
 *   SSIM(x, y) = (2 mx my + C1)(2 sxy + C2) / ((mx^2 + my^2 + C1)(sx^2 + sy^2 + C2))
 * C1 = (0.01 255)^2, C2 = (0.03 255)^2, over windows, and the picture's
 * SSIM is the mean over windows.  The windows are libvpx's
 * (vpx_dsp/ssim.c, vpx_ssim2): 8x8 pixels, unweighted, with their top-left
 * corner on every 4th row and column while the window fits; means,
 * variances and covariance over the window's 64 pixels (divided by 64).
 */
static double ssim_y(const struct picture *a, const struct picture *b)
{
	const double c1 = 0.01 * 255 * 0.01 * 255, c2 = 0.03 * 255 * 0.03 * 255;
	double total = 0;
	long windows = 0;
	int r, c, i, j;

	for (r = 0; r + 8 <= a->h; r += 4) {
		for (c = 0; c + 8 <= a->w; c += 4) {
			uint32_t sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
			double mx, my, vx, vy, cxy;

			for (i = 0; i < 8; i++) {
				const uint8_t *x = a->y + (size_t)(r + i) * a->w + c;
				const uint8_t *y = b->y + (size_t)(r + i) * b->w + c;

				for (j = 0; j < 8; j++) {
					sx += x[j];
					sy += y[j];
					sxx += x[j] * x[j];
					syy += y[j] * y[j];
					sxy += x[j] * y[j];
				}
			}
			mx = sx / 64.0;
			my = sy / 64.0;
			vx = sxx / 64.0 - mx * mx;
			vy = syy / 64.0 - my * my;
			cxy = sxy / 64.0 - mx * my;
			total += (2 * mx * my + c1) * (2 * cxy + c2) /
				 ((mx * mx + my * my + c1) * (vx + vy + c2));
			windows++;
		}
	}
	return total / windows;
}

/* Copy the decoder's image into p (allocated to its size). */
static void from_image(const vpx_image_t *img, struct picture *p)
{
	int plane, r;

	if (p->buf && (p->w != (int)img->d_w || p->h != (int)img->d_h))
		picture_free(p);
	if (!p->buf && picture_alloc(p, img->d_w, img->d_h))
		die(1, "decoded frame of %ux%u: %s", img->d_w, img->d_h, strerror(errno));
	for (plane = 0; plane < 3; plane++) {
		uint8_t *dst = plane == 0 ? p->y : plane == 1 ? p->u : p->v;
		int w = plane ? (p->w + 1) / 2 : p->w, h = plane ? (p->h + 1) / 2 : p->h;

		for (r = 0; r < h; r++)
			memcpy(dst + (size_t)r * w, img->planes[plane] + (size_t)r * img->stride[plane], w);
	}
}

static long long num(const char *opt, const char *s, long long lo, long long hi)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (end == s || *end || errno || x < lo || x > hi)
		die(2, "--%s %s: expected an integer in %lld..%lld", opt, s, lo, hi);
	return x;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s --ivf FILE --show FILE [--decode FILE] --frames N --fps F "
		"--width W --height H --seed S [--out FILE]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ivf", required_argument, NULL, 'i' },
		{ "show", required_argument, NULL, 's' },
		{ "decode", required_argument, NULL, 'd' },
		{ "frames", required_argument, NULL, 'n' },
		{ "fps", required_argument, NULL, 'f' },
		{ "width", required_argument, NULL, 'w' },
		{ "height", required_argument, NULL, 'h' },
		{ "seed", required_argument, NULL, 'S' },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ivf = NULL, *show_path = NULL, *dec_path = NULL, *out_path = NULL;
	long long frames = -1, w = -1, h = -1;
	unsigned long long seed = 0;
	int have_seed = 0, o;
	double fps = 0;
	struct ivf_frame *idx;
	uint64_t *show, *decode, k;
	size_t nidx, nshow, ndec, si = 0, di = 0, fi = 0;
	struct picture screen, cam, dec = { 0 };
	vpx_codec_ctx_t codec;
	uint8_t *buf = NULL;
	long on_screen = -1;
	FILE *f, *out = stdout;
	char *end;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'i': ivf = optarg; break;
		case 's': show_path = optarg; break;
		case 'd': dec_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'n': frames = num("frames", optarg, 1, 100000000); break;
		case 'w': w = num("width", optarg, 16, 4096); break;
		case 'h': h = num("height", optarg, 16, 4096); break;
		case 'f':
			errno = 0;
			fps = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(fps > 0 && fps <= 1000))
				die(2, "--fps %s: expected a rate in (0, 1000]", optarg);
			break;
		case 'S':
			errno = 0;
			seed = strtoull(optarg, &end, 10);
			if (end == optarg || *end || errno || optarg[0] == '-')
				die(2, "--seed %s: expected an unsigned integer", optarg);
			have_seed = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !ivf || !show_path || frames < 0 || w < 0 || h < 0 ||
	    fps == 0 || !have_seed)
		usage();

	f = fopen(ivf, "rb");
	if (!f)
		die(2, "%s: %s", ivf, strerror(errno));
	idx = ivf_index(f, ivf, &nidx);
	show = read_list(show_path, frames, &nshow);
	decode = show;
	ndec = nshow;
	if (dec_path) {
		decode = read_list(dec_path, frames, &ndec);
		/* every shown frame must be decoded */
		for (si = 0, di = 0; si < nshow; si++) {
			while (di < ndec && decode[di] < show[si])
				di++;
			if (di == ndec || decode[di] != show[si])
				die(2, "%s: shown frame %" PRIu64 " is not in --decode %s",
				    show_path, show[si], dec_path);
		}
	}
	/* every decoded index must be a frame of the IVF */
	for (di = 0, fi = 0; di < ndec; di++) {
		while (fi < nidx && idx[fi].pts < decode[di])
			fi++;
		if (fi == nidx || idx[fi].pts != decode[di])
			die(2, "%s: %s frame %" PRIu64 " is not in %s", dec_path ?: show_path,
			    dec_path ? "decoded" : "shown", decode[di], ivf);
	}
	if (picture_alloc(&screen, w, h) || picture_alloc(&cam, w, h))
		die(1, "picture of %lldx%lld: %s", w, h, strerror(errno));
	memset(screen.y, 16, (size_t)w * h);
	memset(screen.u, 128, picture_size(w, h) - (size_t)w * h);
	if (vpx_codec_dec_init(&codec, vpx_codec_vp8_dx(), NULL, 0))
		die(1, "decoder init: %s", vpx_codec_error(&codec));
	if (out_path && !(out = fopen(out_path, "w")))
		die(2, "%s: %s", out_path, strerror(errno));
	fprintf(out, "slot\tshown\tpsnr_y\tssim_y\n");

	for (k = 0, si = 0, di = 0, fi = 0; k < (uint64_t)frames; k++) {
		for (; di < ndec && decode[di] <= k; di++) {
			vpx_codec_iter_t it = NULL;
			vpx_image_t *img;

			while (idx[fi].pts != decode[di])
				fi++;
			buf = realloc(buf, idx[fi].len ? idx[fi].len : 1);
			if (!buf)
				die(1, "out of memory");
			if (fseek(f, idx[fi].off, SEEK_SET) ||
			    fread(buf, 1, idx[fi].len, f) != idx[fi].len)
				die(2, "%s: cannot read frame %" PRIu64, ivf, idx[fi].pts);
			if (vpx_codec_decode(&codec, buf, idx[fi].len, NULL, 0))
				die(1, "frame %" PRIu64 ": %s: %s", decode[di],
				    vpx_codec_error(&codec), vpx_codec_error_detail(&codec) ?: "");
			if (si == nshow || show[si] != decode[di])
				continue;	/* decoded, not shown */
			img = vpx_codec_get_frame(&codec, &it);
			if (!img || img->fmt != VPX_IMG_FMT_I420)
				die(1, "frame %" PRIu64 ": no I420 picture out of the decoder",
				    show[si]);
			if ((int)img->d_w == w && (int)img->d_h == h) {
				from_image(img, &screen);
			} else {
				from_image(img, &dec);
				picture_scale(&dec, &screen);
			}
			on_screen = show[si++];
		}
		picture_draw(&cam, k, fps, seed);
		if (on_screen < 0)
			fprintf(out, "%" PRIu64 "\t-", k);
		else
			fprintf(out, "%" PRIu64 "\t%ld", k, on_screen);
		fprintf(out, "\t%.3f\t%.6f\n", psnr_y(&screen, &cam), ssim_y(&screen, &cam));
	}
	if (fflush(out) || ferror(out) || (out != stdout && fclose(out)))
		die(1, "%s: write error", out_path ? out_path : "stdout");
	vpx_codec_destroy(&codec);
	fclose(f);
	picture_free(&screen);
	picture_free(&cam);
	if (dec.buf)
		picture_free(&dec);
	free(idx);
	if (decode != show)
		free(decode);
	free(show);
	free(buf);
	return 0;
}
