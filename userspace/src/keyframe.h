/* SPDX-License-Identifier: GPL-2.0 */
/*
 * keyframe.h - the key-frame loop: the decisions only, no I/O
 * (Documentation/traffic.rst, "The key-frame loop").
 *
 * Sender (struct kf_send): a loss of video frame F reported by the
 * receiver or by a drop notice makes the next frame a key frame, unless
 * a key frame after F was already sent (the loss is repaired; a lost
 * key frame F is not repaired by itself) or one is already pending (the
 * first report wins).  With restart_gop the
 * GOP counter restarts at a forced key frame, as encoders do (the next
 * periodic key frame is video_gop frames after it); without it the
 * schedule's own key marks are kept (traces).
 *
 * Receiver (struct kf_recv): frames are judged in order.  A frame is
 * complete when all its pieces arrived, decodable when complete and a
 * key frame or the last frame that later ones reference is decodable: a
 * frame marked droppable (a temporal layer nothing references) neither
 * breaks nor repairs the chain, and its loss asks for nothing; a frame of
 * which nothing arrived is droppable if the next frame says so
 * (SBPN_FI_PREV_DROPPABLE), else it counts as referenced.  A frame still incomplete
 * a reorder window after the first packet of a later frame arrived is
 * lost.  A frame judged undecodable asks for a key frame (a picture
 * loss indication, as RTCP PLI, RFC 4585 6.3.1) unless one is
 * outstanding: a request stays outstanding until a key frame is judged
 * or ten frame intervals pass.
 */
#ifndef SBPN_KEYFRAME_H
#define SBPN_KEYFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kf_why { KF_NONE, KF_RECEIVER, KF_NOTICE, KF_WHY_COUNT };
const char *kf_why_name(int why);		/* "-", "receiver", "notice" */

/*
 * "receiver,notice" -> KF_BIT(KF_RECEIVER) | ...; -1 for an unknown, empty
 * or repeated item (so "" too: off is the option's absence)
 */
#define KF_BIT(w) (1u << (w))
int kf_parse_sources(const char *s, unsigned int *mask);
/* the mask as a list in one order: "receiver", "notice", "receiver,notice" */
const char *kf_sources_name(unsigned int mask);

struct kf_send {
	uint64_t gop;		/* key-frame interval in frames, 0: none */
	uint64_t since_key;	/* frames since the last key frame */
	bool restart_gop;
	int pending;		/* enum kf_why of the report waiting, KF_NONE */
	int64_t last_key;	/* the last frame sent as a key frame, -1 none */
	size_t forced[KF_WHY_COUNT], reports[KF_WHY_COUNT], ignored[KF_WHY_COUNT];
};

void kf_send_init(struct kf_send *k, uint64_t gop, bool restart_gop);
/* A loss of frame `frame` reported by `why`: 1 if it makes the next frame
 * a key frame, 0 if ignored (repaired already, or a report pending). */
int kf_send_report(struct kf_send *k, int64_t frame, int why);
/* Frame idx is about to be sent; sched_key is the schedule's mark.
 * Returns 1 for a key frame, 0 for a P-frame; *forced says why a frame
 * that would have been a P-frame is a key frame (KF_NONE otherwise). */
int kf_send_frame(struct kf_send *k, int64_t idx, int sched_key, int *forced);

#define KF_RING 128
struct kf_recv_frame {
	int64_t idx;		/* -1: slot free */
	uint32_t got, pieces;	/* pieces arrived, pieces in the frame (mod 256) */
	bool key, known;	/* known: a packet of it arrived */
	bool droppable;		/* no later frame references it (SBPN_FI_DROPPABLE) */
	bool prev_droppable;	/* nor frame idx - 1 (SBPN_FI_PREV_DROPPABLE) */
	uint64_t first_ns;	/* its first packet's arrival */
};

struct kf_recv {
	unsigned int reorder_frames;	/* the window in frame intervals */
	uint64_t interval_ns;		/* frame interval, from expiry steps */
	int64_t next;			/* the oldest frame not judged, -1 none yet */
	int64_t hi;			/* the highest frame seen */
	int64_t last_exp_idx;
	uint64_t last_exp;
	bool chain_ok, outstanding;
	uint64_t last_req_ns;
	size_t judged, lost, undecodable, requests;
	struct kf_recv_frame ring[KF_RING];
};

void kf_recv_init(struct kf_recv *r, unsigned int reorder_frames);
/* A packet of frame `wire` (16 bits on the wire) arrived at now. */
void kf_recv_packet(struct kf_recv *r, uint16_t wire, uint8_t pieces, bool key,
		    unsigned int fi, uint64_t expiry_ns, uint64_t now);
/* Judge what can be judged at now: 1 and *frame (the first undecodable
 * frame) when a key frame should be requested, else 0. */
int kf_recv_poll(struct kf_recv *r, uint64_t now, int64_t *frame);
/* When kf_recv_poll could next judge a frame: UINT64_MAX if only a
 * packet can make progress. */
uint64_t kf_recv_deadline(const struct kf_recv *r);
/* A 16-bit frame number near ref as a full index (serial arithmetic). */
int64_t kf_extend(int64_t ref, uint16_t wire);

#endif /* SBPN_KEYFRAME_H */
