// SPDX-License-Identifier: GPL-2.0
/*
 * CCID 3 after its first loss event: the receiver seeds the loss history
 * with a synthesised interval I_1 (RFC 5348, 6.3.1) and must count the open
 * interval I_0 once it is the larger (5.4: I_mean = max(I_tot0, I_tot1) /
 * W_tot, with k = 1 max(I_0, I_1)), so that p falls as packets keep arriving
 * without loss.  A receiver that waits for a second loss event before it
 * lets I_0 count holds p, and with it the sender's X, at the first loss's
 * value for as long as nothing else is lost: a sender whose packets a
 * bottleneck does not drop (small ones, at a queue limited in bytes) can
 * stay at a few kB/s for a whole call.
 *
 * A path of 100 ms RTT (netem on both sides, no loss): the sender sends a
 * 100-byte packet every 10 ms for 2 s, pauses while netem drops everything
 * on the data path, sends one packet (lost), and sends on for 6 s with no
 * further loss.  The loss event rate p the sender has from the receiver's
 * feedback must fall to a third of its first value or less (the open
 * interval grows by tens of packets per second over a synthesised interval
 * of a few to a hundred packets), and X_calc must rise.  With p held until
 * a second loss event, p stays at its first value.
 */
#include "sbpn_test.h"

#define LEN		100	/* bytes per packet */
#define PERIOD_MS	10
#define WARM_MS		2000	/* before the loss: RTT samples, X_recv */
#define AFTER_MS	6000	/* after it, with no loss */
#define NETEM		"netem delay 50ms limit 10000"

SBPN_TOPOLOGY(NETEM, NULL, NETEM, NULL)

FIXTURE(open_interval) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(open_interval)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SIMPLE, 0);
}

FIXTURE_TEARDOWN(open_interval)
{
}

/* One packet of LEN bytes; a full send buffer (EAGAIN) is no error here. */
static void send_one(struct __test_metadata *_metadata, int fd, uint32_t *tag)
{
	int rc = dt_send_len(fd, LEN, (*tag)++, 0, 0, 0, 0, MSG_DONTWAIT);

	if (rc != -EAGAIN)
		ASSERT_EQ(0, rc);
}

TEST_F(open_interval, p_falls)
{
	struct dt_tfrc_tx_info first = { 0 }, ti = { 0 };
	int fd = self->c.cfd;
	uint32_t tag = 0;
	int ms;

	for (ms = 0; ms < WARM_MS; ms += PERIOD_MS) {
		send_one(_metadata, fd, &tag);
		dt_sleep_ms(PERIOD_MS);
		dt_recv_drop(self->c.afd);
	}
	ti = sbpn_tx_info(_metadata, fd);
	ASSERT_EQ(0, ti.p) {
		TH_LOG("a loss before the one the test makes: p %u", ti.p);
	}
	ASSERT_LT(0, ti.rtt_us);

	/* one packet lost: the queue is empty, so it leaves at once */
	dt_sh(_metadata, "ip netns exec %s tc qdisc change dev va1 root %s loss 100%%",
	      sbpn_ns_a, NETEM);
	send_one(_metadata, fd, &tag);
	dt_sh(_metadata, "ip netns exec %s tc qdisc change dev va1 root %s",
	      sbpn_ns_a, NETEM);

	for (ms = 0; ms < AFTER_MS; ms += PERIOD_MS) {
		send_one(_metadata, fd, &tag);
		dt_sleep_ms(PERIOD_MS);
		dt_recv_drop(self->c.afd);
		ti = sbpn_tx_info(_metadata, fd);
		if (!first.p && ti.p)
			first = ti;
		if (ms % 1000 == 0)
			TH_LOG("%d ms after the loss: p %u (1e-6), X_calc %u B/s, X %llu B/s",
			       ms, ti.p, ti.x_calc, (unsigned long long)(ti.x >> 6));
	}
	TH_LOG("first: p %u, X_calc %u B/s; last: p %u, X_calc %u B/s",
	       first.p, first.x_calc, ti.p, ti.x_calc);
	ASSERT_LT(0, first.p);		/* the loss was reported */
	EXPECT_GE(first.p / 3, ti.p);
	EXPECT_LT(first.x_calc, ti.x_calc);
}

TEST_HARNESS_MAIN
