// SPDX-License-Identifier: GPL-2.0
/*
 * Drop notices (DCCP_QPOLICY_F_NOTIFY) that the application never
 * reads must not make the socket drop what it receives.
 *
 * A notice is the discarded packet itself, charged to sk_rmem_alloc
 * (sock_queue_err_skb()), and sk_rmem_alloc is also what the receive path
 * compares with sk_rcvbuf before it takes a packet in: __sk_receive_skb()
 * drops a packet while the backlog plus sk_rmem_alloc exceed sk_rcvbuf, and
 * sk_add_backlog() does the same while the application holds the socket.
 * Drops are counted in sk_drops, which SO_MEMINFO reports.
 *
 * two_way: a sender that also receives, as a call does.  SBPN1 over CCID 2
 * on a path without delay, SO_RCVBUF 64 KB (sk_rcvbuf 128 KB), notices on:
 * 400 packets already past their deadline are discarded and come back as
 * notices, which are never read.  Then the peer sends 10 packets, 20 ms
 * apart, and the sender reads them 300 ms later.  The notices must have
 * taken at most half of sk_rcvbuf, all 10 packets must arrive and nothing
 * may be dropped.  Before the fix the notices fill sk_rcvbuf to within one
 * packet: the peer's first packet is queued beyond it and every packet
 * after it, data and Acks of our data alike, is dropped until the
 * application reads (drops >= 8, at most 2 packets received).
 *
 * one_way: a sender whose only incoming packets are feedback.  SBPN1 over
 * CCID 3, sk_rcvbuf 8 MB: 3000 packets past their deadline leave thousands
 * of notices unread; then it sends a packet every 10 ms for 3 s.  Its
 * feedback keeps arriving: nothing is dropped, CCID 3 measures the RTT and
 * the receive rate and keeps X above the rate the sender achieved (without
 * feedback its nofeedback timer would halve X until packets queue), and
 * every packet arrives.  A packet that carries only feedback is processed and freed, never
 * queued, and the notices alone stop short of sk_rcvbuf: this passes before
 * the fix as well, unless two packets reach the socket while the sender
 * holds it in sendmsg(), when the second finds the backlog full.
 */
#include "sbpn_test.h"

#include <linux/sock_diag.h>

#define N_LATE		400	/* two_way: packets discarded, notified */
#define N_PEER		10	/* two_way: packets the peer sends */
#define N_LATE_1	3000	/* one_way: packets discarded, notified */
#define SEND_MS		3000	/* one_way: how long it sends */
#define EVERY_MS	10	/* one_way: one packet per 10 ms */

SBPN_TOPOLOGY(NULL, NULL, NULL, NULL)

FIXTURE(notices) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(notices)
{
}

FIXTURE_TEARDOWN(notices)
{
}

/* SO_MEMINFO of @fd */
static void meminfo(struct __test_metadata *_metadata, int fd,
		    uint32_t mi[SK_MEMINFO_VARS])
{
	socklen_t len = sizeof(uint32_t) * SK_MEMINFO_VARS;

	memset(mi, 0, len);
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len));
}

/* Queue @n packets due a second ago: each is discarded, a notice queued */
static void send_late(struct __test_metadata *_metadata, int fd, int n)
{
	uint64_t past = dt_now_ns() - 1000 * NSEC_PER_MSEC;

	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, dt_send(fd, 0x1000 + i, 1, 1, 1, past,
				     MSG_DONTWAIT));
}

/* Read the error queue of @fd empty; returns the number of notices */
static int count_notices(int fd)
{
	struct sock_extended_err ee;
	char payload[DT_PAYLOAD];
	int n = 0;

	while (sbpn_read_errqueue(fd, payload, sizeof(payload), &ee) >= 0)
		n++;
	return n;
}

TEST_F(notices, two_way)
{
	int fd, rcvbuf = 65536, got = 0;
	uint32_t mi[SK_MEMINFO_VARS];
	struct dccp_qpolicy_stats s;
	char buf[2048];

	sbpn_connect(_metadata, &self->c, 1, 2, DCCPQ_POLICY_SBPN1, 0);
	fd = self->c.cfd;
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_NOTIFY, 1);
	send_late(_metadata, fd, N_LATE);
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "notices queued", &s);
	ASSERT_EQ(N_LATE, s.expired);
	meminfo(_metadata, fd, mi);
	TH_LOG("notices: rmem_alloc %u of rcvbuf %u, drops %u",
	       mi[SK_MEMINFO_RMEM_ALLOC], mi[SK_MEMINFO_RCVBUF],
	       mi[SK_MEMINFO_DROPS]);
	ASSERT_EQ(0, mi[SK_MEMINFO_DROPS]);
	EXPECT_LT(0, mi[SK_MEMINFO_RMEM_ALLOC]);
	EXPECT_GT(mi[SK_MEMINFO_RCVBUF] / 2, mi[SK_MEMINFO_RMEM_ALLOC]);

	/* the peer sends; the sender reads only when all have come */
	for (int i = 0; i < N_PEER; i++) {
		ASSERT_EQ(0, sbpn_send(self->c.afd, DCCPQ_POLICY_SIMPLE, i, 0,
				       0, MSG_DONTWAIT));
		dt_sleep_ms(20);
	}
	dt_sleep_ms(300);
	meminfo(_metadata, fd, mi);
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		got++;
	TH_LOG("peer's packets: %d of %d received, rmem_alloc %u of rcvbuf %u unread, drops %u",
	       got, N_PEER, mi[SK_MEMINFO_RMEM_ALLOC], mi[SK_MEMINFO_RCVBUF],
	       mi[SK_MEMINFO_DROPS]);
	EXPECT_EQ(0, mi[SK_MEMINFO_DROPS]);
	EXPECT_EQ(N_PEER, got);
	TH_LOG("%d notices were waiting", count_notices(fd));
}

TEST_F(notices, one_way)
{
	int fd, rcvbuf = 4 << 20, n = 0, notices;
	uint32_t mi[SK_MEMINFO_VARS], got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	struct dt_tfrc_tx_info ti;
	uint64_t start, end, rate;

	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 0);
	fd = self->c.cfd;
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
				sizeof(rcvbuf)));
	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_NOTIFY, 1));
	send_late(_metadata, fd, N_LATE_1);
	meminfo(_metadata, fd, mi);
	TH_LOG("notices: rmem_alloc %u of rcvbuf %u",
	       mi[SK_MEMINFO_RMEM_ALLOC], mi[SK_MEMINFO_RCVBUF]);

	start = dt_now_ns();
	end = start + SEND_MS * NSEC_PER_MSEC;
	while (dt_now_ns() < end && n < SBPN_MAX_TAGS) {
		ASSERT_EQ(0, dt_send(fd, n++, 1, 1, 0, 0, MSG_DONTWAIT));
		dt_sleep_ms(EVERY_MS);
	}
	/* the rate it sent at, in bytes/s (TCG sleeps longer than asked) */
	rate = n * DT_PAYLOAD * 1000000000ULL / (dt_now_ns() - start);
	s = sbpn_drain(_metadata, fd);
	sbpn_stats_log(_metadata, "sender", &s);
	ti = sbpn_tx_info(_metadata, fd);
	meminfo(_metadata, fd, mi);
	TH_LOG("CCID 3 after %d packets: X %llu B/s, X_recv %llu B/s, RTT %u us, p %u; drops %u",
	       n, (unsigned long long)ti.x >> 6,
	       (unsigned long long)ti.x_recv >> 6, ti.rtt_us, ti.p,
	       mi[SK_MEMINFO_DROPS]);
	EXPECT_EQ(n, sbpn_recv(self->c.afd, got, n, 0));
	EXPECT_EQ(0, mi[SK_MEMINFO_DROPS]);
	EXPECT_LT(0, ti.rtt_us);
	EXPECT_LT(0, ti.x_recv >> 6);
	/* without feedback X would fall below the rate it was sending at */
	TH_LOG("sent at %llu B/s", (unsigned long long)rate);
	EXPECT_LE(rate, ti.x >> 6);
	notices = count_notices(fd);
	TH_LOG("%d notices were waiting", notices);
	EXPECT_LE(1000, notices);
}

TEST_HARNESS_MAIN
