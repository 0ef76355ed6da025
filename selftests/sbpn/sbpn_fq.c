// SPDX-License-Identifier: GPL-2.0
/*
 * The expiry an SBPN packet carries while queued must not leak below DCCP
 * as a departure time: sch_fq reads a non-zero skb->tstamp as the earliest
 * departure time, holding a packet until then, or dropping it when that
 * is beyond its horizon (10 s by default).  (The expiry was kept in
 * skb->tstamp and scrubbed at pop; it now lives in the control block.)
 *
 * The sender's interface va1 has fq.  First a control: a UDP datagram with
 * SO_TXTIME 1.5 s ahead is held by this fq for at least 1 s, so the test can
 * see a leak.  Then SBPN packets due 8 s ahead (held 8 s if leaked) and
 * 60 s ahead (dropped at the horizon if leaked) must all arrive at once,
 * and fq must report no horizon drops.
 */
#include <linux/net_tstamp.h>

#include "sbpn_test.h"

#define N_EACH	20

SBPN_TOPOLOGY("fq", NULL, NULL, NULL)

FIXTURE(fq) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(fq) {
	int policy;
};

FIXTURE_VARIANT_ADD(fq, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(fq, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(fq)
{
}

FIXTURE_TEARDOWN(fq)
{
}

/* Print va1's qdisc counters (run in A); expect fq without horizon drops. */
static void expect_fq_no_drops(struct __test_metadata *_metadata)
{
	int is_fq = 0, drops = 0;
	char line[512];
	FILE *p = popen("tc -s qdisc show dev va1", "r");

	ASSERT_NE(NULL, p);
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		TH_LOG("%s", line);
		is_fq |= !strncmp(line, "qdisc fq ", 9);
		drops |= strstr(line, "horizon_drops") && !strstr(line, "horizon_drops 0");
	}
	ASSERT_EQ(0, pclose(p));
	EXPECT_TRUE(is_fq);
	EXPECT_FALSE(drops);
}

/* A UDP datagram with a departure time 1.5 s ahead; ms until it arrived. */
static uint64_t udp_txtime_delay_ms(struct __test_metadata *_metadata)
{
	struct sock_txtime cfg = { .clockid = CLOCK_MONOTONIC };
	struct sockaddr_in b = dt_addr(sbpn_ip_b[1], 4999);
	char control[CMSG_SPACE(sizeof(uint64_t))] = { 0 }, buf[16] = "txtime";
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_name = &b, .msg_namelen = sizeof(b), .msg_iov = &iov,
		.msg_iovlen = 1, .msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct pollfd pfd = { .events = POLLIN };
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
	uint64_t t0, txtime;
	int rfd, sfd;

	sbpn_switch(_metadata, sbpn_ns_b);
	rfd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_EQ(0, bind(rfd, (struct sockaddr *)&b, sizeof(b)));
	sbpn_switch(_metadata, sbpn_ns_a);
	sfd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_EQ(0, setsockopt(sfd, SOL_SOCKET, SO_TXTIME, &cfg, sizeof(cfg)));

	t0 = dt_now_ns();
	txtime = t0 + 1500 * NSEC_PER_MSEC;
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_TXTIME;
	cmsg->cmsg_len = CMSG_LEN(sizeof(txtime));
	memcpy(CMSG_DATA(cmsg), &txtime, sizeof(txtime));
	ASSERT_EQ(sizeof(buf), sendmsg(sfd, &msg, 0));
	pfd.fd = rfd;
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	close(sfd);
	close(rfd);
	return (dt_now_ns() - t0) / NSEC_PER_MSEC;
}

TEST_F_TIMEOUT(fq, no_tstamp_leak, 60)
{
	uint32_t got[SBPN_MAX_TAGS];
	uint64_t held_ms, t0, took_ms;
	struct dccp_qpolicy_stats s;
	int n_got;

	held_ms = udp_txtime_delay_ms(_metadata);
	TH_LOG("control: fq held a UDP datagram with SO_TXTIME +1500 ms for %llu ms",
	       (unsigned long long)held_ms);
	ASSERT_LE(1000, held_ms);

	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 0);
	t0 = dt_now_ns();
	for (int i = 0; i < 2 * N_EACH; i++)
		ASSERT_EQ(0, dt_send(self->c.cfd, i, 1, 1, 1,
				     sbpn_in_ms(i < N_EACH ? 8000 : 60000), 0));
	n_got = sbpn_recv(self->c.afd, got, 2 * N_EACH, 1);
	took_ms = (dt_now_ns() - t0) / NSEC_PER_MSEC;
	TH_LOG("%d of %d packets due in 8 s and 60 s arrived within %llu ms",
	       n_got, 2 * N_EACH, (unsigned long long)took_ms);
	EXPECT_EQ(2 * N_EACH, n_got);
	/* not a timing bound: a leak holds them for 8 s or forever */
	EXPECT_GT(8000, took_ms);
	s = sbpn_drain(_metadata, self->c.cfd);
	EXPECT_EQ(2 * N_EACH, s.sent);
	expect_fq_no_drops(_metadata);
}

TEST_HARNESS_MAIN
