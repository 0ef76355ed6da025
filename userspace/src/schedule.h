/* SPDX-License-Identifier: GPL-2.0 */
/*
 * schedule.h - what the sender sends when: the Ekiga video-call model, CBR
 * audio, or a recorded trace, turned into one list of packets.
 */
#ifndef SBPN_SCHEDULE_H
#define SBPN_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define MODEL_MAX_PHASES 16

/* Model file parameters; defaults are the paper's (model_defaults()). */
struct model {
	uint64_t audio_payload;		/* bytes per audio packet */
	double audio_interval_ms;
	uint64_t audio_priority;
	uint64_t video_priority;
	uint64_t data_priority;
	bool silence_suppression;	/* no audio in quiet phases */
	double video_fps;
	uint64_t video_max_packet;	/* bytes; a frame is cut into these */
	double motion_high_mean, motion_high_sd;	/* bytes per frame */
	double motion_low_mean, motion_low_sd;
	uint64_t video_frame_min;	/* clamp for the Normal draw, bytes */
	double lifetime_ms;		/* expiry = creation + this; 0: none */
	double duration_s;
	uint64_t cbr_ip_size;		/* CBR audio: IPv4 packet bytes */
	double cbr_interval_ms;
	/* Coding dependencies (off at 0): every video_gop-th frame is a key
	 * frame, the others are P-frames that reference the previous frame;
	 * a key frame is keyframe_ratio times a P-frame's size, the mean
	 * frame size unchanged (traffic.rst, "Coding dependencies"). */
	uint64_t video_gop;
	double keyframe_ratio;
	/* The VP8 call (--source vp8; traffic.rst, "The VP8 call"): the
	 * camera, the encoder's bounds and temporal layers, and the priority
	 * of each layer above the base (video_priority is the base's and the
	 * key frames'). */
	uint64_t vp8_width, vp8_height;
	uint64_t vp8_layers;
	uint64_t vp8_min_kbps, vp8_max_kbps, vp8_start_kbps;
	double vp8_cpu_used;
	bool vp8_ladder;
	uint64_t video_priority_t1, video_priority_t2;
	int nphases;
	bool phase_active[MODEL_MAX_PHASES];	/* talking+motion, else silence+still */
	double phase_s[MODEL_MAX_PHASES];
};

struct sched_pkt {
	uint64_t t_ns;		/* planned send time from the start */
	uint64_t lifetime_ns;	/* 0: no expiry */
	uint32_t size;		/* transport payload bytes */
	uint32_t prio;
	uint8_t cls;
	int8_t key;		/* video with coding dependencies: 1 key frame, 0 P; else -1 */
	int32_t frame;		/* video: the frame's index from 0; else -1 */
};

struct schedule {
	struct sched_pkt *p;
	size_t n, cap;
	uint64_t duration_ns;
	size_t padded;		/* packets raised to SBPN_HDR_LEN bytes */
	size_t frames[2];	/* video frames: [0] still, [1] motion */
	uint64_t frame_bytes[2];
	size_t clamped;		/* frame sizes raised to video_frame_min */
	size_t nframes;		/* video frames (instants with video) */
	size_t keyframes;	/* of them key frames (coded only) */
	bool coded;		/* coding dependencies: the records say frame and key */
	double *draw;		/* Ekiga: each frame's Normal draw before scaling */
	size_t draw_cap;
};

void model_defaults(struct model *m);
/* Errors name the file, line and field on stderr; -1 then. */
int model_load(struct model *m, const char *path);
bool model_active_at(const struct model *m, uint64_t t_ns);

int sched_ekiga(struct schedule *s, const struct model *m, uint64_t seed);
/* The VP8 call: the Ekiga model's audio, and one placeholder video packet
 * (frame = capture index) per frame of the camera at video_fps, which the
 * sender replaces by what the encoder makes of that capture. */
int sched_vp8(struct schedule *s, const struct model *m, uint64_t seed);
int sched_cbr(struct schedule *s, const struct model *m, enum transport tr,
	      uint32_t *payload);
/* Trace: '-' lifetime means default_lifetime_ns; stops at limit_ns if >0.
 * An optional sixth field marks key frames; m->video_gop applies to the
 * frames it leaves unmarked. */
int sched_trace(struct schedule *s, const char *path, const struct model *m,
		uint64_t default_lifetime_ns, uint64_t limit_ns);
void sched_free(struct schedule *s);
/* An Ekiga frame's bytes from its draw: scaled for a key frame or a
 * P-frame (video_gop > 0), rounded, raised to video_frame_min (*clamped
 * set when it was). */
uint64_t frame_bytes_of(const struct model *m, double draw, int key, bool *clamped);

/* Header bytes below the payload, per transport (see traffic.rst). */
uint32_t transport_overhead(enum transport tr);
#define IPV4_HDR	20
#define ETH_HDR		14	/* what tcpdump counts as the frame */
#define ETH_WIRE_EXTRA	24	/* FCS 4 + preamble/SFD 8 + inter-frame gap 12 */

#endif /* SBPN_SCHEDULE_H */
