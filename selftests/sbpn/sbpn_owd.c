// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_QPOLICY_F_OWD, over CCID 3: expiry is judged by a one-way
 * delay of RTT/2 by default and of RTT - min RTT/2 with the flag on.
 *
 * SBPN1 on a path whose feedback takes 100 ms (netem on the receiver's
 * side), then 500 ms: CCID 3's smallest sample stays near 100 ms while its
 * smoothed RTT R climbs as packets keep coming back.  Once R is 300 ms, a
 * packet is queued whose deadline lies halfway between R/2 and R - 60 ms
 * from now: by RTT/2 it can arrive in time and is sent, by RTT - min RTT/2
 * it cannot and is discarded as expired.  The last RTT
 * (DCCP_QPOLICY_F_LAST_RTT) is on in both variants, so that a
 * nofeedback timeout while the delay grows cannot make the RTT 0.
 */
#include "sbpn_test.h"

#define SHORT	"netem delay 100ms limit 10000"
#define LONG	"netem delay 500ms limit 10000"

SBPN_TOPOLOGY(NULL, NULL, SHORT, NULL)

FIXTURE(owd) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(owd) {
	int on;
};

FIXTURE_VARIANT_ADD(owd, off) { .on = 0 };
FIXTURE_VARIANT_ADD(owd, on) { .on = 1 };

FIXTURE_SETUP(owd)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 0);
}

FIXTURE_TEARDOWN(owd)
{
	sbpn_set_ack_qdisc(_metadata, SHORT);
}

TEST_F(owd, queue_grew)
{
	int fd = self->c.cfd;
	struct dccp_qpolicy_stats s0, s;
	struct dt_tfrc_tx_info ti;
	unsigned int due_ms;
	uint32_t tag = 0;

	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_OWD, variant->on);
	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_LAST_RTT, 1));

	/* the smallest sample: about 100 ms */
	sbpn_measure_rtt(_metadata, &self->c, 100);
	ti = sbpn_tx_info(_metadata, fd);
	ASSERT_GT(250000, ti.rtt_us);

	/* the feedback's queue grows */
	s0 = sbpn_grow_rtt(_metadata, fd, 1, LONG, 300000, &tag);

	ti = sbpn_tx_info(_metadata, fd);
	due_ms = (ti.rtt_us / 2 + ti.rtt_us - 60000) / 2 / 1000;
	TH_LOG("R %u us, deadline in %u ms", ti.rtt_us, due_ms);
	ASSERT_EQ(0, dt_send(fd, 7, 1, 1, 1, sbpn_in_ms(due_ms), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after the packet", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(variant->on, s.expired - s0.expired);
	EXPECT_EQ(!variant->on, s.sent - s0.sent);
}

TEST_HARNESS_MAIN
