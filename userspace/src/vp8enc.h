/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vp8enc.h - the call's video encoder: libvpx VP8 in real-time mode, with
 * temporal layers, a target bitrate set before every frame, and the
 * frame-rate then picture-size ladder a rate too low for the picture walks
 * down (Documentation/traffic.rst, "The VP8 call").
 *
 * Every encoded frame says which earlier frames it references (from the
 * reference buffers its layer pattern reads, and which frame last wrote
 * each), so the host can decide exactly what a decoder could decode.
 */
#ifndef SBPN_VP8ENC_H
#define SBPN_VP8ENC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "picture.h"

#define VP8_MAX_LAYERS	3
#define VP8_REFS	3	/* LAST, GOLDEN, ALTREF */

struct vp8_params {
	int width, height;		/* the camera's picture */
	double fps;			/* the camera's frame rate */
	int layers;			/* temporal layers: 1, 2 (L1T2) or 3 (L1T3) */
	uint32_t min_kbps, max_kbps;	/* the codec's bounds on the target */
	uint32_t start_kbps;		/* before the transport says anything */
	int cpu_used;			/* libvpx speed, -16..16 (real time: >= 4) */
	uint64_t seed;			/* the scene */
	bool ladder;			/* reduce frame rate, then size, at low rates */
};

/* One frame out of the encoder. */
struct vp8_frame {
	uint64_t n;			/* capture index at the camera's rate */
	const uint8_t *data;		/* the bitstream frame (valid until the next call) */
	size_t len;
	bool key;
	bool droppable;			/* no later frame references it */
	int layer;			/* temporal layer, 0 = base */
	int64_t refs[VP8_REFS];		/* frames it references, -1: none */
	int width, height;		/* coded size */
	uint32_t target_kbps;		/* the encoder's target when it was coded */
	int q;				/* the quantizer libvpx used, 0..63 */
};

/* What happened to capture n. */
enum vp8_status {
	VP8_CODED,		/* a frame came out */
	VP8_SKIPPED,		/* the ladder's frame rate left it out */
	VP8_DROPPED,		/* libvpx's rate control dropped it */
	VP8_BUSY,		/* the caller's: not given to the encoder, still coding
				 * the capture before it (a real-time encoder's drop) */
};

struct vp8enc;

/* NULL on error, with the reason on stderr. */
struct vp8enc *vp8enc_new(const struct vp8_params *p);
void vp8enc_free(struct vp8enc *e);

/* The rate the transport allows the video now (bit/s; 0: unknown, keep
 * the last).  Applied at the next vp8enc_capture(). */
void vp8enc_set_rate(struct vp8enc *e, double bps);
/* The next frame coded is a key frame (a receiver's request). */
void vp8enc_request_key(struct vp8enc *e);

/* Capture frame n, encode it, and say what came out in *f.  -1 on a codec
 * error (reason on stderr). */
int vp8enc_capture(struct vp8enc *e, uint64_t n, struct vp8_frame *f, enum vp8_status *st);

/* The ladder's state, for the records: the frame-rate divisor (1, 2, 3)
 * and the coded size. */
int vp8enc_rate_divisor(const struct vp8enc *e);

/* IVF: the container libvpx's tools read.  The frame header's pts is the
 * capture index n.  ivf_write_header() again at the end fills the count. */
int ivf_write_header(FILE *f, int w, int h, double fps, uint32_t frames);
int ivf_write_frame(FILE *f, uint64_t pts, const uint8_t *data, size_t len);

#endif /* SBPN_VP8ENC_H */
