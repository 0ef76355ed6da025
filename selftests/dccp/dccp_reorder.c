// SPDX-License-Identifier: GPL-2.0
/*
 * A CCID3 receiver does not take reordering for loss (patch "dccp: ccid3:
 * do not record a late packet over the one that overtook it").
 *
 * Netem on the sender's veth delays every packet by DELAY_MS, except that
 * every fifth one is sent at once ("reorder 100% gap 5").  Packets leave
 * GAP_MS apart, so the undelayed packet overtakes exactly the one before
 * it (which arrives DELAY_MS - GAP_MS later) and nothing else (the one
 * before that arrived 2 * GAP_MS - DELAY_MS earlier).  Nothing is lost.
 * The receiver must see the reordering and every packet, and both ends
 * must report a loss event rate p of 0: one lost packet would make it
 * positive for the rest of the connection.
 */
#include "dccp_test.h"

#define N_PKT		50
#define DELAY_MS	100
#define GAP_MS		70

FIXTURE(reorder) {
	char a[32], b[32];
};

FIXTURE_SETUP(reorder)
{
	snprintf(self->a, sizeof(self->a), "roA-%d", getpid());
	snprintf(self->b, sizeof(self->b), "roB-%d", getpid());
	dt_veth_pair(_metadata, self->a, self->b);
	dt_sh(_metadata,
	      "ip netns exec %s tc qdisc add dev va root netem delay %dms reorder 100%% gap 5 limit 10000",
	      self->a, DELAY_MS);
	/* netem alone decides the order: no other reordering on the way */
	dt_one_backlog(_metadata, self->a, "va");
	dt_one_backlog(_metadata, self->b, "vb");
}

FIXTURE_TEARDOWN(reorder)
{
	dt_veth_pair_del(_metadata, self->a, self->b);
}

TEST_F_TIMEOUT(reorder, not_a_loss, 60)
{
	int rcvbuf = 1 << 20, lfd, cfd, afd, n, reordered = 0;
	struct dt_tfrc_tx_info ti;
	struct dt_tfrc_rx_info ri;
	uint32_t tags[N_PKT + 1];
	socklen_t len;

	dt_netns_switch(_metadata, self->b);
	lfd = dt_listen(_metadata, 3, "10.9.0.2", 4000);
	dt_netns_switch(_metadata, self->a);
	cfd = dt_socket(_metadata, 3, DCCPQ_POLICY_SIMPLE, 0);
	afd = dt_connect(_metadata, cfd, lfd, "10.9.0.2", 4000);
	ASSERT_EQ(0, setsockopt(afd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)));

	for (uint32_t i = 0; i < N_PKT; i++) {
		ASSERT_EQ(0, dt_send(cfd, i, 0, 0, 0, 0, 0));
		dt_sleep_ms(GAP_MS);
	}
	n = dt_recv_tags(afd, tags, N_PKT + 1, 2 * DELAY_MS + 500);
	for (int i = 1; i < n; i++)
		reordered += tags[i] < tags[i - 1];
	/* let the feedback for the last packets come back */
	dt_sleep_ms(4 * DELAY_MS);

	len = sizeof(ri);
	ASSERT_EQ(0, getsockopt(afd, SOL_DCCP, DCCP_SOCKOPT_CCID_RX_INFO, &ri, &len));
	len = sizeof(ti);
	ASSERT_EQ(0, getsockopt(cfd, SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO, &ti, &len));
	TH_LOG("%d of %d packets received, %d overtaken; receiver p %u, sender p %u (1e-6)",
	       n, N_PKT, reordered, ri.p, ti.p);

	/* the path reordered, and lost nothing */
	ASSERT_EQ(N_PKT, n);
	ASSERT_LE(N_PKT / 5 / 2, reordered);
	EXPECT_EQ(0, ri.p);
	EXPECT_EQ(0, ti.p);

	close(cfd);
	close(afd);
	close(lfd);
}

TEST_HARNESS_MAIN
