// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_QPOLICY_F_FRAME over CCID 3: the packets of one priority that
 * carry one frame id (DCCP_SCM_FRAME), or without an id share an expiry,
 * are a frame.  With the flag, once one of them is
 * evicted, refused or discarded as expired, the frame is given up: its
 * queued packets are discarded at once, and those sent later are discarded
 * as they arrive (sendmsg succeeds), each counted in "frame" and, with
 * DCCP_QPOLICY_F_NOTIFY, notified with DCCP_QPOLICY_EE_FRAME.  A
 * packet without expiry is a frame of its own.  Without the flag every
 * packet is judged alone.
 *
 * SBPN1, tx_qlen 4, on a path whose feedback takes 2 s (as in sbpn_newest):
 * until the first feedback CCID 3 sends one packet per 500 ms and judges
 * with an RTT of 0, so after the first packet, which leaves at once, the
 * others wait in the queue.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 2000ms limit 10000", NULL)

/* Expiries in ms after the first packet, one per frame; 0: none */
enum { SOON = 700, A = 10000, B = 20000, C = 25000, AUDIO = 30000 };

FIXTURE(frame) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(frame) {
	int on;
};

FIXTURE_VARIANT_ADD(frame, off) { .on = 0 };
FIXTURE_VARIANT_ADD(frame, on) { .on = 1 };

FIXTURE_SETUP(frame)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 4);
}

FIXTURE_TEARDOWN(frame)
{
}

/*
 * Video frames A (1, 2) and B (3, 4) fill the queue; audio 5 evicts 4, the
 * packet sent last.  With the flag B is given up: 3 goes with 4, B's
 * late piece 6 is dropped on arrival, and a new frame C (7) finds room.
 * Without it 3 stays, and 6 and 7 are refused by the full queue.
 */
TEST_F(frame, evicted)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 0, A }, { 2, 0, A }, { 3, 0, B }, { 4, 0, B },
		{ 5, 1, AUDIO }, { 6, 0, B }, { 7, 0, C },
	};
	static const uint32_t off[] = { 0, 5, 1, 2, 3 };
	static const uint32_t on[] = { 0, 5, 1, 2, 7 };
	struct dccp_qpolicy_stats s;
	int refused;

	sbpn_set_flag(_metadata, self->c.cfd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_FRAME, variant->on);
	s = sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(variant->on ? 0 : 2, refused);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(variant->on ? 2 : 0, s.frame);
	EXPECT_EQ(4, s.qlen);
	s = sbpn_expect_order(_metadata, &self->c, variant->on ? on : off,
			      ARRAY_SIZE(off));
	EXPECT_EQ(0, s.expired + s.expired_sent);
	EXPECT_EQ(variant->on ? 2 : 0, s.frame);
}

/*
 * The case above with one expiry for every video piece, the frames named by
 * their ids (DCCP_SCM_FRAME): A (1, 2: id 1) and B (3, 4: id 2) fill the
 * queue; audio 5 evicts 4.  With the flag only B is given up (3, and 6 on
 * arrival), and frame C (7: id 3), of the same expiry, finds room.  Frames
 * told apart by expiry alone would all be one: A, B and C given up.
 */
TEST_F(frame, ids)
{
	/* tag, priority, frame id (0: none), expiry (ms from the start) */
	static const struct {
		uint32_t tag, prio, id;
		unsigned int due_ms;
	} p[] = {
		{ 1, 0, 1, A }, { 2, 0, 1, A }, { 3, 0, 2, A }, { 4, 0, 2, A },
		{ 5, 1, 0, AUDIO }, { 6, 0, 2, A }, { 7, 0, 3, A },
	};
	static const uint32_t off[] = { 0, 5, 1, 2, 3 };
	static const uint32_t on[] = { 0, 5, 1, 2, 7 };
	int fd = self->c.cfd, refused = 0;
	uint64_t start = sbpn_in_ms(0);
	struct dccp_qpolicy_stats s;

	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_FRAME, variant->on));
	ASSERT_EQ(0, dt_send(fd, 0, 1, 1, 0, 0, MSG_DONTWAIT));
	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		uint64_t expiry = start + p[i].due_ms * NSEC_PER_MSEC;
		int rc = p[i].id ?
			 sbpn_send_framed(fd, p[i].tag, p[i].prio, expiry,
					  p[i].id) :
			 dt_send(fd, p[i].tag, 1, p[i].prio, 1, expiry,
				 MSG_DONTWAIT);

		if (rc == -EAGAIN)
			refused++;
		else
			ASSERT_EQ(0, rc);
	}
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "queued", &s);
	ASSERT_EQ(1, s.sent);
	EXPECT_EQ(variant->on ? 0 : 2, refused);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(variant->on ? 2 : 0, s.frame);
	s = sbpn_expect_order(_metadata, &self->c, variant->on ? on : off,
			      ARRAY_SIZE(off));
	EXPECT_EQ(0, s.expired + s.expired_sent);
	EXPECT_EQ(variant->on ? 2 : 0, s.frame);
}

/*
 * A frame id used again once its frame is over: A (1, 2: id 1, due 4 s)
 * and B (3, 4: id 2, due 4.1 s) fill the queue; audio 5 evicts 4, which
 * with the flag gives up B (3 goes too).  At 4.2 s, B's expiry past, a new
 * frame takes id 2 again (6, due 10 s): it is a frame of its own and is
 * sent (the first feedback, at about 2 s, makes RTT/2 1 s: 3 still leaves
 * in time without the flag).  Were frames with an id remembered beyond their expiry, 6 would be
 * discarded as a piece of B.
 */
TEST_F(frame, id_used_again)
{
	static const uint32_t off[] = { 0, 5, 1, 2, 3, 6 };
	static const uint32_t on[] = { 0, 5, 1, 2, 6 };
	int fd = self->c.cfd;
	uint64_t start = sbpn_in_ms(0), now;
	struct dccp_qpolicy_stats s;

	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_FRAME, variant->on));
	ASSERT_EQ(0, dt_send(fd, 0, 1, 1, 0, 0, MSG_DONTWAIT));
	ASSERT_EQ(0, sbpn_send_framed(fd, 1, 0, start + 4000 * NSEC_PER_MSEC, 1));
	ASSERT_EQ(0, sbpn_send_framed(fd, 2, 0, start + 4000 * NSEC_PER_MSEC, 1));
	ASSERT_EQ(0, sbpn_send_framed(fd, 3, 0, start + 4100 * NSEC_PER_MSEC, 2));
	ASSERT_EQ(0, sbpn_send_framed(fd, 4, 0, start + 4100 * NSEC_PER_MSEC, 2));
	ASSERT_EQ(0, dt_send(fd, 5, 1, 1, 1, start + AUDIO * NSEC_PER_MSEC,
			     MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "queued", &s);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(variant->on ? 1 : 0, s.frame);
	now = sbpn_in_ms(0);
	if (start + 4200 * NSEC_PER_MSEC > now)
		usleep((start + 4200 * NSEC_PER_MSEC - now) / 1000);
	ASSERT_EQ(0, sbpn_send_framed(fd, 6, 0, sbpn_in_ms(10000), 2));
	s = sbpn_expect_order(_metadata, &self->c, variant->on ? on : off,
			      variant->on ? ARRAY_SIZE(on) : ARRAY_SIZE(off));
	EXPECT_EQ(variant->on ? 1 : 0, s.frame);
	EXPECT_EQ(0, s.expired + s.expired_sent);
}

/*
 * A (1, 2) and B (3, 4) fill the queue; B's third piece 5 would be sent
 * last and is refused.  With the flag that gives up B: 3 and 4 are
 * discarded, and frame C (6) finds room.  Without it B's two pieces stay
 * and C is refused.
 */
TEST_F(frame, refused)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 0, A }, { 2, 0, A }, { 3, 0, B }, { 4, 0, B },
		{ 5, 0, B }, { 6, 0, C },
	};
	static const uint32_t off[] = { 0, 1, 2, 3, 4 };
	static const uint32_t on[] = { 0, 1, 2, 6 };
	struct dccp_qpolicy_stats s;
	int refused;

	ASSERT_EQ(0, sbpn_set_qflag(self->c.cfd, DCCP_QPOLICY_F_FRAME,
				    variant->on));
	s = sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(variant->on ? 1 : 2, refused);
	EXPECT_EQ(variant->on ? 1 : 2, s.refused);
	EXPECT_EQ(0, s.evicted);
	EXPECT_EQ(variant->on ? 2 : 0, s.frame);
	s = sbpn_expect_order(_metadata, &self->c, variant->on ? on : off,
			      variant->on ? ARRAY_SIZE(on) : ARRAY_SIZE(off));
	EXPECT_EQ(0, s.expired + s.expired_sent);
}

/*
 * Frame A (1, 2, 3) is due in 700 ms: 1 leaves at 500 ms, and at 1 s 2 is
 * found expired.  With the flag 3 goes with it, given up with its frame;
 * without it 3 is found expired on its own.  Frame B (4) is sent.
 */
TEST_F(frame, expired)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 0, SOON }, { 2, 0, SOON }, { 3, 0, SOON }, { 4, 0, B },
	};
	static const uint32_t want[] = { 0, 1, 4 };
	struct dccp_qpolicy_stats s;
	int refused;

	ASSERT_EQ(0, sbpn_set_qflag(self->c.cfd, DCCP_QPOLICY_F_FRAME,
				    variant->on));
	sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(0, refused);
	s = sbpn_expect_order(_metadata, &self->c, want, ARRAY_SIZE(want));
	EXPECT_EQ(variant->on ? 1 : 2, s.expired);
	EXPECT_EQ(variant->on ? 1 : 0, s.frame);
}

/*
 * Two frames of one priority given up, the newer first: audio 5 evicts 4,
 * which gives up frame B (3 goes with it); at 1 s frame SOON (1, 2) is found
 * expired at dequeue and given up too.  B's late piece 6, sent after that,
 * must still be discarded on arrival: giving up an older frame must not
 * make the policy forget a newer one whose pieces can still come.  C (7)
 * is sent.  Without the flag 1 and 2 expire alone and 3, 6 and 7 are sent.
 */
TEST_F(frame, older_after_newer)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 0, SOON }, { 2, 0, SOON }, { 3, 0, B }, { 4, 0, B },
		{ 5, 1, AUDIO },
	};
	static const uint32_t off[] = { 0, 5, 3, 6, 7 };
	static const uint32_t on[] = { 0, 5, 7 };
	uint64_t start = sbpn_in_ms(0);
	struct dccp_qpolicy_stats s;
	int fd = self->c.cfd, refused;

	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_FRAME, variant->on);
	s = sbpn_send_pkts_at(_metadata, fd, start, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(0, refused);
	EXPECT_EQ(1, s.evicted);
	/* 5 leaves at 500 ms, SOON is found expired at 1 s */
	dt_sleep_ms(1400);
	ASSERT_EQ(0, dt_send(fd, 6, 1, 0, 1, start + B * NSEC_PER_MSEC,
			     MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, 7, 1, 0, 1, start + C * NSEC_PER_MSEC,
			     MSG_DONTWAIT));
	s = sbpn_expect_order(_metadata, &self->c, variant->on ? on : off,
			      variant->on ? ARRAY_SIZE(on) : ARRAY_SIZE(off));
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(variant->on ? 1 : 2, s.expired);
	EXPECT_EQ(variant->on ? 3 : 0, s.frame);
}

/*
 * Packets without expiry are each a frame of their own: audio 5 evicts 4
 * alone, with the flag or without.
 */
TEST_F(frame, no_expiry)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 }, { 4, 0, 0 },
		{ 5, 1, AUDIO },
	};
	static const uint32_t want[] = { 0, 5, 1, 2, 3 };
	struct dccp_qpolicy_stats s;
	int refused;

	ASSERT_EQ(0, sbpn_set_qflag(self->c.cfd, DCCP_QPOLICY_F_FRAME,
				    variant->on));
	s = sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(0, refused);
	EXPECT_EQ(1, s.evicted);
	s = sbpn_expect_order(_metadata, &self->c, want, ARRAY_SIZE(want));
	EXPECT_EQ(0, s.frame);
}

FIXTURE(frame_notices) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(frame_notices)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 4);
}

FIXTURE_TEARDOWN(frame_notices)
{
}

/*
 * With notices, as in frame.evicted with the flag: 4 comes back evicted,
 * 3 and 6 given up with their frame, each with B's expiry.
 */
TEST_F(frame_notices, evicted)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 0, A }, { 2, 0, A }, { 3, 0, B }, { 4, 0, B },
		{ 5, 1, AUDIO }, { 6, 0, B }, { 7, 0, C },
	};
	static const struct { uint32_t tag; uint8_t code; } want[] = {
		{ 4, DCCP_QPOLICY_EE_EVICTED }, { 3, DCCP_QPOLICY_EE_FRAME },
		{ 6, DCCP_QPOLICY_EE_FRAME },
	};
	uint64_t expiry = 0;
	int fd = self->c.cfd, refused;

	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_FRAME |
				    DCCP_QPOLICY_F_NOTIFY, 1));
	sbpn_send_pkts(_metadata, fd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(0, refused);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct sbpn_notice n;

		ASSERT_EQ(0, sbpn_read_notice(fd, &n));
		EXPECT_EQ(want[i].tag, n.tag);
		EXPECT_EQ(want[i].code, n.ee.ee_code);
		EXPECT_EQ(ECANCELED, n.ee.ee_errno);
		if (i == 0)
			expiry = sbpn_notice_expiry(&n);
		else
			EXPECT_EQ(expiry, sbpn_notice_expiry(&n));
	}
	EXPECT_EQ(-EAGAIN, sbpn_read_notice(fd, &(struct sbpn_notice){ 0 }));
}

TEST_HARNESS_MAIN
