// SPDX-License-Identifier: GPL-2.0
/*
 * Ancillary data on DCCP sendmsg() with the stock policies: the PRIO policy
 * accepts DCCP_SCM_PRIORITY (exactly a __u32), SIMPLE rejects it, unknown
 * SOL_DCCP cmsgs are rejected, and cmsgs of other levels are ignored.
 * Each test uses a connection over lo in a fresh network namespace.
 */
#include "dccp_test.h"

static int conn(struct __test_metadata *_metadata, int policy, int *lfd, int *afd)
{
	int cfd;

	dt_netns_enter(_metadata);
	*lfd = dt_listen(_metadata, 0, "127.0.0.1", 4001);
	cfd = dt_socket(_metadata, 0, policy, 0);
	*afd = dt_connect(_metadata, cfd, *lfd, "127.0.0.1", 4001);
	return cfd;
}

TEST(prio_accepts_priority)
{
	int lfd, afd, cfd = conn(_metadata, DCCPQ_POLICY_PRIO, &lfd, &afd);
	uint32_t tag;

	ASSERT_EQ(0, dt_send(cfd, 7, 1, 3, 0, 0, 0));
	ASSERT_EQ(1, dt_recv_tags(afd, &tag, 1, 2000));
	EXPECT_EQ(7, tag);
}

TEST(simple_rejects_priority)
{
	int lfd, afd, cfd = conn(_metadata, DCCPQ_POLICY_SIMPLE, &lfd, &afd);
	uint32_t tag;

	EXPECT_EQ(-EINVAL, dt_send(cfd, 1, 1, 3, 0, 0, MSG_DONTWAIT));
	/* Nothing was queued: the next, plain packet is the first to arrive. */
	ASSERT_EQ(0, dt_send(cfd, 2, 0, 0, 0, 0, 0));
	ASSERT_EQ(1, dt_recv_tags(afd, &tag, 1, 2000));
	EXPECT_EQ(2, tag);
}

TEST(prio_rejects_wrong_length)
{
	int lfd, afd, cfd = conn(_metadata, DCCPQ_POLICY_PRIO, &lfd, &afd);

	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(cfd, SOL_DCCP, DCCP_SCM_PRIORITY, 2));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(cfd, SOL_DCCP, DCCP_SCM_PRIORITY, 8));
	EXPECT_EQ(0, dt_send_raw_cmsg(cfd, SOL_DCCP, DCCP_SCM_PRIORITY, 4));
}

TEST(unknown_types_rejected)
{
	int lfd, afd, cfd = conn(_metadata, DCCPQ_POLICY_PRIO, &lfd, &afd);

	/* Not a single bit, a bit no policy param uses, above the qpolicy range. */
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(cfd, SOL_DCCP, 3, 4));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(cfd, SOL_DCCP, 0x4000, 4));
	EXPECT_EQ(-EINVAL, dt_send_raw_cmsg(cfd, SOL_DCCP, DCCP_SCM_QPOLICY_MAX + 1, 4));
}

TEST(other_levels_ignored)
{
	int lfd, afd, cfd = conn(_metadata, DCCPQ_POLICY_SIMPLE, &lfd, &afd);
	uint32_t tag;

	EXPECT_EQ(0, dt_send_raw_cmsg(cfd, SOL_IP, IP_TOS, sizeof(int)));
	ASSERT_EQ(1, dt_recv_tags(afd, &tag, 1, 2000));
}

TEST_HARNESS_MAIN
