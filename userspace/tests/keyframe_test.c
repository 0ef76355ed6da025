// SPDX-License-Identifier: GPL-2.0
/*
 * keyframe_test - unit tests of the key-frame loop's decisions
 * (src/keyframe.c), KTAP on stdout; run by tests/host_tests.py.
 */
#include <stdio.h>
#include <string.h>

#include "keyframe.h"
#include "records.h"

#define MS 1000000ull
static int failed, n;

#define CHECK(cond, ...) do { if (!(cond)) { printf("# " __VA_ARGS__); printf("\n"); ok = 0; } } while (0)

static void report(int ok, const char *name)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++n, name);
	failed += !ok;
}

/* frames of 2 pieces every 100 ms, expiry = planned + 200 ms */
static void frame(struct kf_recv *r, int idx, int pieces_sent, int key, uint64_t t)
{
	for (int p = 0; p < pieces_sent; p++)
		kf_recv_packet(r, (uint16_t)idx, 2, key, 0, (uint64_t)idx * 100 * MS + 200 * MS, t);
}

static void sender_forces_next_frame_and_restarts_gop(void)
{
	struct kf_send k;
	int ok = 1, forced, keys[40];

	kf_send_init(&k, 10, true);
	for (int i = 0; i < 40; i++) {
		if (i == 13)	/* a loss of frame 12 reported before frame 13 */
			CHECK(kf_send_report(&k, 12, KF_RECEIVER) == 1, "report of frame 12 ignored");
		if (i == 14) {	/* the same loss, told again: key frame 13, after it, repaired it */
			CHECK(kf_send_report(&k, 12, KF_NOTICE) == 0, "a repaired loss forced again");
		}
		keys[i] = kf_send_frame(&k, i, i % 10 == 0, &forced);
		CHECK((i == 13) == (forced == KF_RECEIVER), "frame %d forced %d", i, forced);
	}
	/* 0 and 10 as scheduled, 13 forced, then every 10th after it */
	for (int i = 0; i < 40; i++)
		CHECK(keys[i] == (i == 0 || i == 10 || i == 13 || i == 23 || i == 33),
		      "frame %d key %d", i, keys[i]);
	CHECK(k.forced[KF_RECEIVER] == 1 && k.ignored[KF_NOTICE] == 1, "counters");
	/* a lost key frame is not repaired by itself: only a key frame after it */
	kf_send_init(&k, 10, true);
	CHECK(kf_send_frame(&k, 0, 1, &forced) == 1, "frame 0 not key");
	CHECK(kf_send_report(&k, 0, KF_NOTICE) == 1, "the loss of key frame 0 ignored");
	CHECK(kf_send_frame(&k, 1, 0, &forced) == 1 && forced == KF_NOTICE, "frame 1 not forced");
	report(ok, "sender_forces_next_frame_and_restarts_gop");
}

static void sender_first_report_wins_and_keeps_trace_marks(void)
{
	struct kf_send k;
	int ok = 1, forced;

	kf_send_init(&k, 0, false);	/* a trace: its own marks */
	CHECK(kf_send_frame(&k, 0, 1, &forced) == 1 && forced == KF_NONE, "trace key frame 0");
	CHECK(kf_send_frame(&k, 1, 0, &forced) == 0, "trace P-frame 1");
	CHECK(kf_send_report(&k, 1, KF_NOTICE) == 1, "notice first");
	CHECK(kf_send_report(&k, 1, KF_RECEIVER) == 0, "receiver second must be ignored");
	CHECK(kf_send_frame(&k, 2, 0, &forced) == 1 && forced == KF_NOTICE, "frame 2 forced by notice");
	/* a report of a frame before the last key frame: repaired already */
	CHECK(kf_send_report(&k, 1, KF_RECEIVER) == 0, "stale report accepted");
	/* the key frame itself lost: repair again */
	CHECK(kf_send_report(&k, 2, KF_RECEIVER) == 1, "lost key frame not repaired");
	/* a frame the trace marks key anyway is not counted as forced */
	CHECK(kf_send_frame(&k, 3, 1, &forced) == 1 && forced == KF_NONE, "marked key counted forced");
	CHECK(kf_send_frame(&k, 4, 0, &forced) == 0, "frame 4 P");
	report(ok, "sender_first_report_wins_and_keeps_trace_marks");
}

static void receiver_waits_the_reorder_window(void)
{
	struct kf_recv r;
	int64_t f = -1;
	int ok = 1;

	kf_recv_init(&r, 2);
	frame(&r, 0, 2, 1, 0);
	frame(&r, 1, 2, 0, 100 * MS);
	CHECK(kf_recv_poll(&r, 100 * MS, &f) == 0 && r.judged == 2, "0 and 1 decodable");
	frame(&r, 2, 1, 0, 200 * MS);		/* one piece of 2 lost */
	frame(&r, 3, 2, 0, 300 * MS);
	CHECK(r.interval_ns == 100 * MS, "interval %llu", (unsigned long long)r.interval_ns);
	/* window: 2 intervals after frame 3's first packet */
	CHECK(kf_recv_deadline(&r) == 500 * MS, "deadline %llu", (unsigned long long)kf_recv_deadline(&r));
	CHECK(kf_recv_poll(&r, 499 * MS, &f) == 0 && r.judged == 2, "judged before the window ended");
	/* the late piece would have saved it; it did not come */
	CHECK(kf_recv_poll(&r, 500 * MS, &f) == 1 && f == 2, "no request at the window's end (%lld)",
	      (long long)f);
	CHECK(r.lost == 1 && r.undecodable == 2 && r.judged == 4, "lost %zu undecodable %zu",
	      r.lost, r.undecodable);
	/* P-frames after it: undecodable, but the request is outstanding */
	frame(&r, 4, 2, 0, 400 * MS);
	CHECK(kf_recv_poll(&r, 510 * MS, &f) == 0, "asked twice");
	/* the key frame repairs the chain */
	frame(&r, 5, 2, 1, 520 * MS);
	frame(&r, 6, 2, 0, 600 * MS);
	CHECK(kf_recv_poll(&r, 600 * MS, &f) == 0 && r.chain_ok && r.undecodable == 3, "repair");
	report(ok, "receiver_waits_the_reorder_window");
}

static void receiver_reordered_piece_is_no_loss(void)
{
	struct kf_recv r;
	int64_t f;
	int ok = 1;

	kf_recv_init(&r, 2);
	frame(&r, 0, 2, 1, 0);
	frame(&r, 1, 1, 0, 100 * MS);
	frame(&r, 2, 2, 0, 200 * MS);
	CHECK(kf_recv_poll(&r, 250 * MS, &f) == 0, "asked inside the window");
	frame(&r, 1, 1, 0, 260 * MS);		/* the missing piece, reordered */
	CHECK(kf_recv_poll(&r, 260 * MS, &f) == 0 && r.lost == 0 && r.chain_ok && r.judged == 3,
	      "reordered piece counted lost");
	report(ok, "receiver_reordered_piece_is_no_loss");
}

static void receiver_whole_frame_lost_and_repeat(void)
{
	struct kf_recv r;
	int64_t f;
	int ok = 1;

	kf_recv_init(&r, 2);
	frame(&r, 0, 2, 1, 0);
	frame(&r, 2, 2, 0, 200 * MS);		/* frame 1 never came */
	CHECK(kf_recv_poll(&r, 399 * MS, &f) == 0, "early");
	CHECK(kf_recv_poll(&r, 400 * MS, &f) == 1 && f == 1, "a missing frame not requested");
	/* no key frame for ten intervals (1 s): the next undecodable frame
	 * asks again; frames 4-13 are judged lost at 1400 + 200 ms */
	frame(&r, 3, 2, 0, 300 * MS);
	CHECK(kf_recv_poll(&r, 1390 * MS, &f) == 0, "repeated too soon");
	frame(&r, 14, 2, 0, 1400 * MS);
	CHECK(kf_recv_poll(&r, 1599 * MS, &f) == 0, "judged inside the window");
	CHECK(kf_recv_poll(&r, 1600 * MS, &f) == 1 && f == 4, "not repeated after 10 intervals");
	/* 16-bit wrap: frame 65536 is 0 on the wire */
	CHECK(kf_extend(65535, 0) == 65536 && kf_extend(65536, 65535) == 65535 &&
	      kf_extend(-1, 7) == 7, "kf_extend");
	report(ok, "receiver_whole_frame_lost_and_repeat");
}

/* frames of 2 pieces with fi flags (temporal layers) */
static void frame_fi(struct kf_recv *r, int idx, int pieces_sent, int key, unsigned int fi,
		     uint64_t t)
{
	for (int p = 0; p < pieces_sent; p++)
		kf_recv_packet(r, (uint16_t)idx, 2, key, fi, (uint64_t)idx * 100 * MS + 200 * MS, t);
}

static void receiver_droppable_frames_break_nothing(void)
{
	struct kf_recv r;
	int64_t f = -1;
	int ok = 1;

	/* L1T2: even frames referenced, odd ones droppable */
	kf_recv_init(&r, 2);
	frame_fi(&r, 0, 2, 1, 0, 0);
	frame_fi(&r, 1, 1, 0, SBPN_FI_DROPPABLE, 100 * MS);	/* a piece lost */
	frame_fi(&r, 2, 2, 0, SBPN_FI_PREV_DROPPABLE, 200 * MS);
	/* frame 3 never came; frame 4 says it was droppable */
	frame_fi(&r, 4, 2, 0, SBPN_FI_PREV_DROPPABLE, 400 * MS);
	frame_fi(&r, 5, 2, 0, SBPN_FI_DROPPABLE, 500 * MS);
	CHECK(kf_recv_poll(&r, 1000 * MS, &f) == 0, "a droppable frame's loss asked for a key frame");
	CHECK(r.judged == 6 && r.lost == 2 && r.undecodable == 2 && r.chain_ok,
	      "judged %zu lost %zu undecodable %zu chain %d", r.judged, r.lost, r.undecodable,
	      r.chain_ok);
	/* a referenced frame lost whole (the next frame does not vouch for it) */
	frame_fi(&r, 7, 2, 0, 0, 700 * MS);
	CHECK(kf_recv_poll(&r, 1100 * MS, &f) == 1 && f == 6, "a lost reference not requested");
	CHECK(!r.chain_ok, "the chain survived a lost reference");
	report(ok, "receiver_droppable_frames_break_nothing");
}

static void sources_parse(void)
{
	unsigned int m;
	int ok = 1;

	CHECK(kf_parse_sources("receiver,notice", &m) == 0 &&
	      m == (KF_BIT(KF_RECEIVER) | KF_BIT(KF_NOTICE)), "both");
	CHECK(kf_parse_sources("notice", &m) == 0 && m == KF_BIT(KF_NOTICE), "notice");
	CHECK(kf_parse_sources("notice,receiver", &m) == 0 &&
	      !strcmp(kf_sources_name(m), "receiver,notice"), "normalised");
	CHECK(!strcmp(kf_sources_name(KF_BIT(KF_NOTICE)), "notice"), "notice's name");
	CHECK(kf_parse_sources("receiver,pli", &m) == -1, "pli accepted");
	/* nothing, an empty item or one twice is an error, not "off" */
	CHECK(kf_parse_sources("", &m) == -1, "empty accepted");
	CHECK(kf_parse_sources("receiver,,notice", &m) == -1, "empty item accepted");
	CHECK(kf_parse_sources("receiver,", &m) == -1, "trailing comma accepted");
	CHECK(kf_parse_sources(",notice", &m) == -1, "leading comma accepted");
	CHECK(kf_parse_sources("receiver,receiver", &m) == -1, "duplicate accepted");
	report(ok, "sources_parse");
}

int main(void)
{
	printf("TAP version 13\n1..7\n");
	sender_forces_next_frame_and_restarts_gop();
	sender_first_report_wins_and_keeps_trace_marks();
	receiver_waits_the_reorder_window();
	receiver_reordered_piece_is_no_loss();
	receiver_whole_frame_lost_and_repeat();
	receiver_droppable_frames_break_nothing();
	sources_parse();
	return failed ? 1 : 0;
}
