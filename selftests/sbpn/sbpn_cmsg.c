// SPDX-License-Identifier: GPL-2.0
/*
 * Every EINVAL path of the qpolicy cmsgs and options, under all five
 * policies: a wrong length for DCCP_SCM_PRIORITY (a __u32),
 * DCCP_SCM_EXPIRY (a __u64) or DCCP_SCM_FRAME (a __u32, not 0), a cmsg the
 * policy does not accept (priority under SIMPLE, expiry and frame under
 * SIMPLE and PRIO), unknown types, and a bad
 * cmsg next to a good one.  None of them may queue anything or touch the
 * counters, and none reaches the receiver.  On a full queue a bad cmsg
 * still gives EINVAL, not EAGAIN (cmsgs are parsed before admission).
 * Also the EINVAL cases of DCCP_SOCKOPT_QPOLICY_ID and _STATS.
 *
 * Path 1 has no delay; path 2 a 1 s RTT, to keep a queue full.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, NULL, "netem delay 1000ms limit 10000")

FIXTURE(cmsg) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(cmsg) {
	int policy;
};

FIXTURE_VARIANT_ADD(cmsg, simple) { .policy = DCCPQ_POLICY_SIMPLE };
FIXTURE_VARIANT_ADD(cmsg, prio) { .policy = DCCPQ_POLICY_PRIO };
FIXTURE_VARIANT_ADD(cmsg, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(cmsg, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };
FIXTURE_VARIANT_ADD(cmsg, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(cmsg)
{
}

FIXTURE_TEARDOWN(cmsg)
{
}

static void expect_untouched(struct __test_metadata *_metadata, int fd)
{
	struct dccp_qpolicy_stats s = sbpn_stats(_metadata, fd), zero;

	memset(&zero, 0, sizeof(zero));
	if (memcmp(&s, &zero, sizeof(s)))
		sbpn_stats_log(_metadata, "counters", &s);
	EXPECT_EQ(0, memcmp(&s, &zero, sizeof(s)));
}

/* A priority cmsg followed by an expiry cmsg of @exp_len data bytes. */
static int send_prio_then_expiry(int fd, size_t exp_len)
{
	char control[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(16)] = { 0 };
	char buf[DT_PAYLOAD] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
		.msg_controllen = CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(exp_len),
	};
	uint64_t expiry[2] = { sbpn_in_ms(10000) };
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
	uint32_t prio = 1;

	cmsg = dt_put_cmsg(&msg, cmsg, DCCP_SCM_PRIORITY, &prio, sizeof(prio));
	dt_put_cmsg(&msg, cmsg, DCCP_SCM_EXPIRY, expiry, exp_len);
	return sendmsg(fd, &msg, MSG_DONTWAIT) < 0 ? -errno : 0;
}

TEST_F(cmsg, einval_queues_nothing)
{
	static const int unknown[] = {
		0, 3, 8, 0x8000, DCCP_SCM_QPOLICY_MAX, DCCP_SCM_QPOLICY_MAX + 1,
	};
	int prio_ok = variant->policy != DCCPQ_POLICY_SIMPLE;
	int expiry_ok = variant->policy >= DCCPQ_POLICY_SBPN1;
	int fd;
	uint32_t got[SBPN_MAX_TAGS];

	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 0);
	fd = self->c.cfd;

	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_PRIORITY, 2));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_PRIORITY, 8));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_EXPIRY, 4));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_EXPIRY, 16));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_FRAME, 2));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_FRAME, 8));
	/* the right length, but frame id 0 (the raw cmsg's data is 0) */
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_FRAME, 4));
	/* the right lengths, but not accepted by this policy */
	if (!prio_ok)
		EXPECT_EQ(-EINVAL, dt_send(fd, 1, 1, 1, 0, 0, MSG_DONTWAIT));
	if (!expiry_ok) {
		EXPECT_EQ(-EINVAL, dt_send(fd, 1, 0, 0, 1, sbpn_in_ms(10000),
					   MSG_DONTWAIT));
		EXPECT_EQ(-EINVAL, sbpn_send_framed(fd, 1, 1, sbpn_in_ms(10000),
						    7));
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(unknown); i++) {
		EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, unknown[i], 4)) {
			TH_LOG("cmsg type %#x", unknown[i]);
		}
	}
	/* a good priority, then a bad expiry: the packet is not queued */
	EXPECT_EQ(-EINVAL, send_prio_then_expiry(fd, 4));
	EXPECT_EQ(-EINVAL, send_prio_then_expiry(fd, 0));
	expect_untouched(_metadata, fd);

	/* socket options: a policy once connected; a short optlen */
	EXPECT_EQ(-1, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, DCCPQ_POLICY_SIMPLE));
	EXPECT_EQ(EISCONN, errno);
	for (socklen_t len = 0; len < sizeof(int); len++) {
		struct dccp_qpolicy_stats s;
		socklen_t l = len;

		EXPECT_EQ(-1, getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, &s, &l));
		EXPECT_EQ(EINVAL, errno);
	}
	expect_untouched(_metadata, fd);
	EXPECT_EQ(0, dt_recv_tags(self->c.afd, got, SBPN_MAX_TAGS, SBPN_QUIET_MS));

	/* the first packet the receiver sees is the first good one */
	ASSERT_EQ(0, sbpn_send(fd, variant->policy, 42, 1, sbpn_in_ms(10000), 0));
	ASSERT_EQ(1, sbpn_recv(self->c.afd, got, 1, 1));
	EXPECT_EQ(42, got[0]);
	/* the SBPN policies take a frame id with the other two */
	if (expiry_ok) {
		ASSERT_EQ(0, sbpn_send_framed(fd, 43, 1, sbpn_in_ms(10000), 7));
		ASSERT_EQ(1, sbpn_recv(self->c.afd, got, 1, 1));
		EXPECT_EQ(43, got[0]);
	}
}

TEST_F(cmsg, policy_id_checked)
{
	int fd = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
	int id = -1;
	socklen_t len = sizeof(id);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, DCCPQ_POLICY_MAX));
	EXPECT_EQ(EINVAL, errno);
	/* below MAX but without a policy: multipath DCCP's 2 and 3, 4-7 free */
	for (int gap = DCCPQ_POLICY_PRIO + 1; gap < DCCPQ_POLICY_SBPN1; gap++) {
		EXPECT_EQ(-1, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, gap));
		EXPECT_EQ(EINVAL, errno) TH_LOG("policy ID %d", gap);
	}
	EXPECT_EQ(-1, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, -1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, variant->policy));
	EXPECT_EQ(0, getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_ID, &id, &len));
	EXPECT_EQ(variant->policy, id);
	close(fd);
}

/* tx_qlen 1 and the window full: the queue is full, cmsgs still checked. */
TEST_F(cmsg, einval_before_eagain)
{
	struct dccp_qpolicy_stats s;
	int fd, err;

	sbpn_connect(_metadata, &self->c, 2, 2, variant->policy, 1);
	fd = self->c.cfd;
	sbpn_block(_metadata, &self->c, 0);

	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_PRIORITY, 2));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, DCCP_SCM_EXPIRY, 4));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(fd, SOL_DCCP, 3, 4));
	s = sbpn_stats(_metadata, fd);
	EXPECT_EQ(0, s.refused);
	EXPECT_EQ(0, s.evicted);

	/*
	 * A good packet no better than the queued filler (priority 0): EAGAIN,
	 * except under PRIO, which only refuses a strictly lower priority
	 * and evicts the filler instead.
	 */
	err = sbpn_send(fd, variant->policy, 7, 0, 0, MSG_DONTWAIT);
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after a good packet", &s);
	sbpn_check_invariant(_metadata, &s);
	if (variant->policy == DCCPQ_POLICY_PRIO) {
		EXPECT_EQ(0, err);
		EXPECT_EQ(0, s.refused);
		EXPECT_EQ(1, s.evicted);
	} else {
		EXPECT_EQ(-EAGAIN, err);
		EXPECT_EQ(1, s.refused);
		EXPECT_EQ(0, s.evicted);
	}
	EXPECT_EQ(1, s.qlen);
}

TEST_HARNESS_MAIN
