// SPDX-License-Identifier: GPL-2.0
/*
 * picture.c - the call's camera (picture.h): a deterministic moving scene.
 *
 * Everything is integer or a pure function of (n, fps, seed) evaluated the
 * same way on every machine: the sender and the host scorer must draw the
 * same pixels.  The background is a value-noise texture (a fixed lattice
 * of hashed values, bilinearly interpolated, two octaves, repeating every
 * TEX pixels and made once per scene) that pans slowly by whole pixels; a head (an ellipse with a striped collar and two eyes) sways and
 * nods at speaking pace; two discs with rings cross the frame.  The time
 * of frame n is n / fps, so a lower frame rate samples the same motion.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "picture.h"

#define TEX	512	/* the background repeats every TEX pixels */

size_t picture_size(int w, int h)
{
	return (size_t)w * h + 2 * (size_t)((w + 1) / 2) * ((h + 1) / 2);
}

int picture_alloc(struct picture *p, int w, int h)
{
	size_t cw = (w + 1) / 2, ch = (h + 1) / 2;

	memset(p, 0, sizeof(*p));
	if (w < 16 || h < 16 || w > 4096 || h > 4096) {
		errno = EINVAL;
		return -1;
	}
	p->buf = malloc(picture_size(w, h));
	if (!p->buf)
		return -1;
	p->w = w;
	p->h = h;
	p->y = p->buf;
	p->u = p->y + (size_t)w * h;
	p->v = p->u + cw * ch;
	return 0;
}

void picture_free(struct picture *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/* A 32-bit hash of a lattice point and the scene (xorshift-multiply). */
static uint32_t hash3(int32_t x, int32_t y, uint64_t seed)
{
	uint64_t k = (uint64_t)(uint32_t)x * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(uint32_t)y * 0xc2b2ae3d27d4eb4full ^ seed * 0x165667b19e3779f9ull;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Value noise 0..255 at pixel (x, y), lattice step 1 << shift pixels,
 * periodic over TEX pixels so that one texture serves every pan. */
static int noise(int x, int y, int shift, uint64_t seed)
{
	int cells = TEX >> shift, mask = (1 << shift) - 1;
	int cx = x >> shift, cy = y >> shift, cx1 = (cx + 1) % cells, cy1 = (cy + 1) % cells;
	int fx = ((x & mask) << 8) >> shift, fy = ((y & mask) << 8) >> shift;
	int a = hash3(cx, cy, seed) & 255, b = hash3(cx1, cy, seed) & 255;
	int c = hash3(cx, cy1, seed) & 255, d = hash3(cx1, cy1, seed) & 255;
	int top = a * (256 - fx) + b * fx, bot = c * (256 - fx) + d * fx;

	return (top * (256 - fy) + bot * fy) >> 16;
}

/* The background texture of a scene: two octaves of noise, 40..190,
 * made once per seed. */
static const uint8_t *texture(uint64_t seed)
{
	static uint8_t tex[TEX * TEX];
	static uint64_t made = ~0ull;

	if (made != seed) {
		for (int y = 0; y < TEX; y++)
			for (int x = 0; x < TEX; x++)
				tex[y * TEX + x] = (uint8_t)(40 + ((noise(x, y, 4, seed) * 5 +
							       noise(x, y, 1, seed ^ 1) * 3) / 8) *
							     150 / 255);
		made = seed;
	}
	return tex;
}

static uint8_t clip(int v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

/* Scene geometry at time t (s), in pixels of a w x h picture. */
struct scene {
	int pan_x, pan_y;		/* background offset, whole pixels */
	int hx, hy, hrx, hry;		/* head centre and radii */
	int dx[2], dy[2], dr[2];	/* discs */
};

static void scene_at(struct scene *s, double t, int w, int h)
{
	const double pi = 3.14159265358979323846;

	s->pan_x = (int)lround(t * 9.0);	/* 9 px/s to the right */
	s->pan_y = (int)lround(sin(t * 2 * pi / 13.0) * 12.0) + TEX;
	s->hrx = w / 7;
	s->hry = h / 4;
	s->hx = w / 2 + (int)lround(sin(t * 2 * pi / 3.1) * w / 10.0);
	s->hy = h / 2 + (int)lround(sin(t * 2 * pi / 0.9) * h / 40.0);	/* nodding */
	for (int i = 0; i < 2; i++) {
		/* each disc crosses the frame and comes back: a triangle wave */
		double period = i ? 7.0 : 4.5, ph = fmod(t / period + i * 0.37, 1.0);
		double u = ph < 0.5 ? 2 * ph : 2 - 2 * ph;

		s->dr[i] = h / (i ? 9 : 7);
		s->dx[i] = (int)lround(-s->dr[i] + u * (w + 2 * s->dr[i]));
		s->dy[i] = i ? h / 4 : 3 * h / 4;
	}
}

void picture_draw(struct picture *p, uint64_t n, double fps, uint64_t seed)
{
	int w = p->w, h = p->h, cw = (w + 1) / 2, ch = (h + 1) / 2;
	double t = fps > 0 ? (double)n / fps : 0;
	const uint8_t *tex = texture(seed);
	struct scene s;

	scene_at(&s, t, w, h);
	for (int y = 0; y < h; y++) {
		const uint8_t *row = tex + ((y + s.pan_y) & (TEX - 1)) * TEX;
		/* rows the head, its collar or a disc may reach */
		bool near_head = y >= s.hy - s.hry && (y <= s.hy + s.hry || y > s.hy + s.hry * 9 / 10);
		bool near_disc = abs(y - s.dy[0]) <= s.dr[0] || abs(y - s.dy[1]) <= s.dr[1];

		for (int x = 0; x < w; x++) {
			int v = row[(x + s.pan_x) & (TEX - 1)];
			long ex = x - s.hx, ey = y - s.hy;
			long rx2 = (long)s.hrx * s.hrx, ry2 = (long)s.hry * s.hry;

			if (!near_head && !near_disc) {
				p->y[(size_t)y * w + x] = (uint8_t)v;
				continue;
			}
			if (ex * ex * ry2 + ey * ey * rx2 <= rx2 * ry2) {	/* the head */
				long eye = (labs(ex) - s.hrx / 3) * (labs(ex) - s.hrx / 3) +
					   (ey + s.hry / 4) * (ey + s.hry / 4);

				v = eye < (long)(s.hrx / 7 + 1) * (s.hrx / 7 + 1) ? 30 :
				    170 + (int)(ey * 30 / (s.hry + 1));
			} else if (ey > s.hry * 9 / 10 && labs(ex) < s.hrx * 2) {	/* collar */
				v = ((y - s.hy) / 3) & 1 ? 220 : 60;
			}
			for (int i = 0; i < 2; i++) {
				long dx = x - s.dx[i], dy = y - s.dy[i];
				long d2 = dx * dx + dy * dy, r = s.dr[i];

				if (d2 <= r * r)
					v = (int)(sqrt((double)d2) / 3) & 1 ? 235 : 110 + 40 * i;
			}
			p->y[(size_t)y * w + x] = clip(v);
		}
	}
	for (int y = 0; y < ch; y++) {
		for (int x = 0; x < cw; x++) {
			int X = 2 * x, Y = 2 * y;
			long ex = X - s.hx, ey = Y - s.hy;
			long rx2 = (long)s.hrx * s.hrx, ry2 = (long)s.hry * s.hry;
			int u = 128 + (X * 40 / w) - 20, v = 128 + (Y * 30 / h) - 15;

			if (ex * ex * ry2 + ey * ey * rx2 <= rx2 * ry2) {	/* skin */
				u = 110;
				v = 150;
			}
			for (int i = 0; i < 2; i++) {
				long dx = X - s.dx[i], dy = Y - s.dy[i];

				if (dx * dx + dy * dy <= (long)s.dr[i] * s.dr[i]) {
					u = i ? 200 : 70;
					v = i ? 90 : 190;
				}
			}
			p->u[(size_t)y * cw + x] = clip(u);
			p->v[(size_t)y * cw + x] = clip(v);
		}
	}
}

/* Bilinear resampling of one plane, pixel centres aligned. */
static void scale_plane(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
	for (int y = 0; y < dh; y++) {
		/* source position in 1/256 px */
		long sy = ((2L * y + 1) * sh * 256 / (2L * dh)) - 128;
		int y0, fy;

		if (sy < 0)
			sy = 0;
		y0 = (int)(sy >> 8);
		fy = (int)(sy & 255);
		if (y0 >= sh - 1) {
			y0 = sh - 1;
			fy = 0;
		}
		for (int x = 0; x < dw; x++) {
			long sx = ((2L * x + 1) * sw * 256 / (2L * dw)) - 128;
			int x0, fx, x1, y1, top, bot;

			if (sx < 0)
				sx = 0;
			x0 = (int)(sx >> 8);
			fx = (int)(sx & 255);
			if (x0 >= sw - 1) {
				x0 = sw - 1;
				fx = 0;
			}
			x1 = x0 + (fx ? 1 : 0);
			y1 = y0 + (fy ? 1 : 0);
			top = src[(size_t)y0 * sw + x0] * (256 - fx) + src[(size_t)y0 * sw + x1] * fx;
			bot = src[(size_t)y1 * sw + x0] * (256 - fx) + src[(size_t)y1 * sw + x1] * fx;
			dst[(size_t)y * dw + x] = (uint8_t)((top * (256 - fy) + bot * fy + 32768) >> 16);
		}
	}
}

void picture_scale(const struct picture *src, struct picture *dst)
{
	if (src->w == dst->w && src->h == dst->h) {
		memcpy(dst->buf, src->buf, picture_size(src->w, src->h));
		return;
	}
	scale_plane(src->y, src->w, src->h, dst->y, dst->w, dst->h);
	scale_plane(src->u, (src->w + 1) / 2, (src->h + 1) / 2, dst->u, (dst->w + 1) / 2,
		    (dst->h + 1) / 2);
	scale_plane(src->v, (src->w + 1) / 2, (src->h + 1) / 2, dst->v, (dst->w + 1) / 2,
		    (dst->h + 1) / 2);
}
