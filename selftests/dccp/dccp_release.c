// SPDX-License-Identifier: GPL-2.0
/*
 * A finished connection lets go of its module at once (patch "dccp: stop the
 * TX CCID's timers when the connection is over").
 *
 * A CCID3 sender in namespace A, whose route to B sets rto_min to RTO_MIN_S
 * (ip locks it, so that CCID3's t_RTO = max(4 * RTT, rto_min) takes it),
 * sends a few messages and waits for feedback: its nofeedback timer is then
 * armed for at least RTO_MIN_S, holding a reference on the socket.  The
 * sender aborts the connection (SO_LINGER with a zero timeout: a Reset, no
 * TIME-WAIT of its own), the receiver closes too, and both namespaces are
 * deleted, which purges the TIME-WAIT socket the Reset left in B.  Then the
 * test waits WAIT_S for dccp_ipv4's reference count to come back to what it
 * was before the sockets were opened.  Without the patch the sender's
 * socket, and the reference it holds, live until the timer fires, RTO_MIN_S
 * after the last feedback.
 *
 * The count is module-wide: DCCP sockets of earlier tests still closing
 * would lower it meanwhile, so the collection runs this program first.
 */
#include "dccp_test.h"

#define RTO_MIN_S	120
#define WAIT_S		10
#define MSGS		20
#define REFCNT		"/sys/module/dccp_ipv4/refcnt"

TEST(ccid3_idle_sender)
{
	static char msg[DT_PAYLOAD], buf[DT_MAX_PAYLOAD];
	struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };
	socklen_t len = sizeof(struct dt_tfrc_tx_info);
	struct dt_tfrc_tx_info ti = { 0 };
	int before, now, home, lfd, cfd, afd, i;
	char a[32], b[32];
	uint64_t start;

	snprintf(a, sizeof(a), "relA-%d", getpid());
	snprintf(b, sizeof(b), "relB-%d", getpid());
	home = open("/proc/self/ns/net", O_RDONLY);
	ASSERT_LE(0, home);
	dt_veth_pair(_metadata, a, b);
	dt_sh(_metadata, "ip -n %s route replace 10.9.0.0/24 dev va src 10.9.0.1 rto_min %ds",
	      a, RTO_MIN_S);
	before = dt_read_int(REFCNT);
	ASSERT_LE(0, before);

	dt_netns_switch(_metadata, b);
	lfd = dt_listen(_metadata, 3, "10.9.0.2", 4000);
	dt_netns_switch(_metadata, a);
	cfd = dt_socket(_metadata, 3, DCCPQ_POLICY_SIMPLE, 0);
	afd = dt_connect(_metadata, cfd, lfd, "10.9.0.2", 4000);

	/* Send until a feedback has set t_RTO from the route's rto_min. */
	start = dt_now_ns();
	for (i = 0; dt_now_ns() - start < 5000 * NSEC_PER_MSEC; i++) {
		if (i < MSGS)
			ASSERT_EQ(sizeof(msg), send(cfd, msg, sizeof(msg), 0));
		ASSERT_EQ(0, getsockopt(cfd, SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO, &ti, &len));
		if (ti.rto_us >= RTO_MIN_S * 1000000U)
			break;
		dt_sleep_ms(20);
	}
	TH_LOG("t_RTO %u us, t_ipi %u us, X %llu B/s; dccp_ipv4 refcnt %d before, %d open",
	       ti.rto_us, ti.ipi_us, (unsigned long long)ti.x >> 6, before, dt_read_int(REFCNT));
	/* otherwise the nofeedback timer may be short and the test proves nothing */
	ASSERT_LE(RTO_MIN_S * 1000000U, ti.rto_us);
	while (recv(afd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;

	ASSERT_EQ(0, setsockopt(cfd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close)));
	close(cfd);
	close(afd);
	close(lfd);
	ASSERT_EQ(0, setns(home, CLONE_NEWNET));
	close(home);
	dt_veth_pair_del(_metadata, a, b);

	start = dt_now_ns();
	while ((now = dt_read_int(REFCNT)) > before &&
	       dt_now_ns() - start < WAIT_S * 1000 * NSEC_PER_MSEC)
		dt_sleep_ms(100);
	TH_LOG("dccp_ipv4 refcnt %d after %llu ms", now,
	       (unsigned long long)((dt_now_ns() - start) / NSEC_PER_MSEC));
	EXPECT_GE(before, now);
}

TEST_HARNESS_MAIN
