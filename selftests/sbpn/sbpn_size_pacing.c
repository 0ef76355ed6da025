// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_TX_CCID_F_SIZE_PACING over CCID 3: with it, a small packet waits for
 * the send interval its own bytes need at the allowed rate, not that of a
 * packet of mean size.
 *
 * A path whose feedback takes 2 s (netem on the receiver's side).  Until the
 * first feedback X is CCID 3's initial rate, 4 s / RTT for packets of up to
 * 1095 bytes (RFC 5348, 4.2, with the handshake's RTT), 2000 B/s for a first
 * packet of 1000 bytes: its interval is 500 ms.  Then five packets of 100
 * bytes and ten of 1000 are queued.  With the flag each 100-byte packet
 * takes 100 / X = 50 ms, and by 1 s the first packet, the five small ones
 * and one large one have left (7).  Without it each small packet takes the
 * interval of a packet of mean size, 300-500 ms: 2 or 3 have left.  Pacing
 * that ignored the size with the flag on would send as few: the mean of
 * the packets queued, which s is then, stays near 1000 bytes.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 2000ms limit 10000", NULL)

FIXTURE(size_pacing) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(size_pacing) {
	int on;
};

FIXTURE_VARIANT_ADD(size_pacing, off) { .on = 0 };
FIXTURE_VARIANT_ADD(size_pacing, on) { .on = 1 };

FIXTURE_SETUP(size_pacing)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SIMPLE, 100);
}

FIXTURE_TEARDOWN(size_pacing)
{
}

static int send_bytes(int fd, size_t len)
{
	char buf[1000] = { 0 };

	return send(fd, buf, len, MSG_DONTWAIT) == (ssize_t)len ? 0 : -errno;
}

TEST_F(size_pacing, small_after_large)
{
	int fd = self->c.cfd;
	struct dccp_qpolicy_stats s;
	struct dt_tfrc_tx_info ti;

	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_TX_CCID_FLAGS,
		      DCCP_TX_CCID_F_SIZE_PACING, variant->on);

	ASSERT_EQ(0, send_bytes(fd, 1000));
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, send_bytes(fd, 100));
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, send_bytes(fd, 1000));
	ti = sbpn_tx_info(_metadata, fd);
	TH_LOG("CCID 3: X %llu B/s, t_ipi %u us", (unsigned long long)ti.x >> 6, ti.ipi_us);
	dt_sleep_ms(1000);
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after 1 s", &s);
	sbpn_check_invariant(_metadata, &s);
	/* at least 6 of the 10 sent within 1 s with it, at most 4 without */
	EXPECT_TRUE(variant->on ? s.sent >= 6 : s.sent <= 4);
}

TEST_HARNESS_MAIN
