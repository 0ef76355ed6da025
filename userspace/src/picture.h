/* SPDX-License-Identifier: GPL-2.0 */
/*
 * picture.h - the video call's camera: a deterministic moving picture.
 *
 * Frame n of a scene depends only on (n, width, height, fps, seed), so the
 * sender that encodes it and the host that scores what was decoded make
 * the same picture without a file between them.  The scene is a textured
 * background that pans, a "head" that sways and nods, and two bright
 * objects that cross the frame: enough detail and motion that the encoder's
 * rate decides what the viewer sees (Documentation/traffic.rst, "The VP8
 * call").
 */
#ifndef SBPN_PICTURE_H
#define SBPN_PICTURE_H

#include <stdint.h>

/* An I420 picture: planes y (w x h), u and v ((w+1)/2 x (h+1)/2), tightly
 * packed one after the other in buf. */
struct picture {
	int w, h;
	uint8_t *buf;
	uint8_t *y, *u, *v;
};

/* 0, or -1 (errno ENOMEM / EINVAL: w or h not in 16..4096). */
int picture_alloc(struct picture *p, int w, int h);
void picture_free(struct picture *p);
/* Bytes of an I420 picture of w x h. */
size_t picture_size(int w, int h);

/* Draw frame n (captured at n / fps seconds) of the scene seed. */
void picture_draw(struct picture *p, uint64_t n, double fps, uint64_t seed);

/* Scale src to dst's size (bilinear, each plane), as a player shows a
 * smaller picture full size. */
void picture_scale(const struct picture *src, struct picture *dst);

#endif /* SBPN_PICTURE_H */
