// SPDX-License-Identifier: GPL-2.0
/*
 * keyframe.c - the key-frame loop's decisions (keyframe.h).
 */
#include <string.h>

#include "keyframe.h"
#include "records.h"

#define DEFAULT_INTERVAL_NS	100000000ull	/* 10 frames/s until measured */
#define REPEAT_FRAMES		10		/* a request outstanding this long */

const char *kf_why_name(int why)
{
	return why == KF_RECEIVER ? "receiver" : why == KF_NOTICE ? "notice" : "-";
}

int kf_parse_sources(const char *s, unsigned int *mask)
{
	*mask = 0;
	do {
		size_t len = strcspn(s, ",");
		unsigned int bit;

		if (len == 8 && !strncmp(s, "receiver", len))
			bit = KF_BIT(KF_RECEIVER);
		else if (len == 6 && !strncmp(s, "notice", len))
			bit = KF_BIT(KF_NOTICE);
		else
			return -1;	/* unknown or empty */
		if (*mask & bit)
			return -1;	/* twice */
		*mask |= bit;
		s += len;
	} while (*s++ == ',');
	return 0;
}

const char *kf_sources_name(unsigned int mask)
{
	switch (mask) {
	case KF_BIT(KF_RECEIVER): return "receiver";
	case KF_BIT(KF_NOTICE): return "notice";
	case KF_BIT(KF_RECEIVER) | KF_BIT(KF_NOTICE): return "receiver,notice";
	default: return "";
	}
}

void kf_send_init(struct kf_send *k, uint64_t gop, bool restart_gop)
{
	memset(k, 0, sizeof(*k));
	k->gop = gop;
	k->since_key = gop;	/* frame 0 is a key frame */
	k->restart_gop = restart_gop;
	k->last_key = -1;
}

int kf_send_report(struct kf_send *k, int64_t frame, int why)
{
	k->reports[why]++;
	if (k->pending || frame < k->last_key) {
		k->ignored[why]++;
		return 0;
	}
	k->pending = why;
	return 1;
}

int kf_send_frame(struct kf_send *k, int64_t idx, int sched_key, int *forced)
{
	int key = k->restart_gop ? (k->gop && k->since_key >= k->gop) : sched_key == 1;

	*forced = KF_NONE;
	if (k->pending && !key) {
		*forced = k->pending;
		k->forced[k->pending]++;
		key = 1;
	}
	k->pending = KF_NONE;
	if (key) {
		k->last_key = idx;
		k->since_key = 0;
	}
	k->since_key++;
	return key;
}

int64_t kf_extend(int64_t ref, uint16_t wire)
{
	if (ref < 0)
		return wire;
	return ref + (int16_t)(uint16_t)(wire - (uint16_t)ref);
}

void kf_recv_init(struct kf_recv *r, unsigned int reorder_frames)
{
	memset(r, 0, sizeof(*r));
	r->reorder_frames = reorder_frames;
	r->interval_ns = DEFAULT_INTERVAL_NS;
	r->next = r->hi = r->last_exp_idx = -1;
	for (int i = 0; i < KF_RING; i++)
		r->ring[i].idx = -1;
}

static struct kf_recv_frame *slot(struct kf_recv *r, int64_t idx)
{
	struct kf_recv_frame *f = &r->ring[idx % KF_RING];

	if (f->idx != idx) {
		memset(f, 0, sizeof(*f));
		f->idx = idx;
	}
	return f;
}

void kf_recv_packet(struct kf_recv *r, uint16_t wire, uint8_t pieces, bool key,
		    unsigned int fi, uint64_t expiry_ns, uint64_t now)
{
	int64_t idx = kf_extend(r->hi, wire);
	struct kf_recv_frame *f;

	if (idx < 0 || (r->next >= 0 && idx < r->next))
		return;		/* judged already: too late to matter */
	if (r->next < 0)
		r->next = idx;
	/* the frame interval, from the expiry (planned time + lifetime) steps */
	if (expiry_ns && idx > r->last_exp_idx) {
		if (r->last_exp_idx >= 0 && expiry_ns > r->last_exp)
			r->interval_ns = (expiry_ns - r->last_exp) / (uint64_t)(idx - r->last_exp_idx);
		r->last_exp_idx = idx;
		r->last_exp = expiry_ns;
	}
	if (idx > r->hi)
		r->hi = idx;
	f = slot(r, idx);
	if (!f->known) {
		f->known = true;
		f->first_ns = now;
	}
	f->got++;
	f->pieces = pieces;
	f->key = key;
	f->droppable = fi & SBPN_FI_DROPPABLE;
	f->prev_droppable = fi & SBPN_FI_PREV_DROPPABLE;
}

/* The earliest arrival of a frame after `after`: when the window opened. */
static uint64_t later_arrival(const struct kf_recv *r, int64_t after)
{
	uint64_t t = UINT64_MAX;

	for (int64_t i = after + 1; i <= r->hi && i - after < KF_RING; i++) {
		const struct kf_recv_frame *f = &r->ring[i % KF_RING];

		if (f->idx == i && f->known && f->first_ns < t)
			t = f->first_ns;
	}
	return t;
}

uint64_t kf_recv_deadline(const struct kf_recv *r)
{
	uint64_t t;

	if (r->next < 0 || r->next >= r->hi)
		return UINT64_MAX;
	t = later_arrival(r, r->next);
	return t == UINT64_MAX ? t : t + r->reorder_frames * r->interval_ns;
}

/* Whether frame idx + 1 arrived saying that idx is droppable. */
static bool next_says_droppable(const struct kf_recv *r, int64_t idx)
{
	const struct kf_recv_frame *n = &r->ring[(idx + 1) % KF_RING];

	return n->idx == idx + 1 && n->known && n->prev_droppable;
}

int kf_recv_poll(struct kf_recv *r, uint64_t now, int64_t *frame)
{
	int ask = 0;

	if (r->outstanding && now - r->last_req_ns >= REPEAT_FRAMES * r->interval_ns)
		r->outstanding = false;
	while (r->next >= 0 && r->next <= r->hi) {
		struct kf_recv_frame *f = slot(r, r->next);
		bool complete = f->known && (f->got & 0xff) == (f->pieces & 0xff) &&
				f->got >= (f->pieces ? 1u : 256u);
		bool ok, droppable;

		if (!complete) {
			/* too far behind for the ring, or its window is over */
			if (r->hi - r->next < KF_RING - 1 && kf_recv_deadline(r) > now)
				break;
			r->lost++;
		}
		ok = complete && (f->key || r->chain_ok);
		if (f->key)
			r->outstanding = false;	/* the sender answered, or its GOP did */
		droppable = f->known ? f->droppable : next_says_droppable(r, r->next);
		if (!droppable)
			r->chain_ok = ok;
		r->judged++;
		if (!ok) {
			r->undecodable++;
			if (!r->outstanding && !ask && !droppable) {
				ask = 1;
				*frame = r->next;
				r->outstanding = true;
				r->last_req_ns = now;
				r->requests++;
			}
		}
		f->idx = -1;
		r->next++;
	}
	return ask;
}
