// SPDX-License-Identifier: GPL-2.0
/*
 * A DCCP connection across a veth pair between two network namespaces
 * transfers data intact, for the SIMPLE and PRIO policies and CCIDs 2 and 3.
 *
 * The sender (in namespace A, behind 5 ms of netem delay) sends N messages
 * with blocking sendmsg() and tx_qlen 0 (unbounded: nothing is dropped
 * locally); under PRIO each carries a DCCP_SCM_PRIORITY cmsg.  The receiver
 * (namespace B) checks that every message arrives exactly once, in order,
 * with its sequence number and byte pattern intact; it reads on after a
 * wrong one and then reports which messages were missing, duplicated or
 * out of order.
 *
 * The order is the sender's: a veth delivers each packet through the
 * backlog of the CPU that sent it, so with two CPUs two packets can overtake
 * each other before they reach DCCP, which keeps no order of its own.  RPS
 * on vb steers every packet through one CPU's backlog, so that the order of
 * arrival is the order of transmission.
 *
 * two_way sends in both directions at once (5 ms of delay each way), so that
 * each end sends Data, DataAck and, with nothing queued, pure Acks.  Every
 * message must arrive, and the kernel must not log a "BUG: " line: 6.1's
 * CCID3 receiver took those Acks (CCVal 0) for RTT samples and printed
 * "BUG: please report to dccp@vger.kernel.org => prev = 0, last = 0" within
 * seconds (patch "dccp: tfrc: do not sample the RTT from non-data packets").
 */
#include "dccp_test.h"

#define N_MSGS	300
#define N_TWO_WAY	200	/* messages each way */
#define MSG_LEN	1000

FIXTURE(veth) {
	char a[32], b[32];
};

FIXTURE_VARIANT(veth) {
	int policy;
	int ccid;
};

FIXTURE_VARIANT_ADD(veth, simple_ccid2) { .policy = DCCPQ_POLICY_SIMPLE, .ccid = 2 };
FIXTURE_VARIANT_ADD(veth, simple_ccid3) { .policy = DCCPQ_POLICY_SIMPLE, .ccid = 3 };
FIXTURE_VARIANT_ADD(veth, prio_ccid2) { .policy = DCCPQ_POLICY_PRIO, .ccid = 2 };
FIXTURE_VARIANT_ADD(veth, prio_ccid3) { .policy = DCCPQ_POLICY_PRIO, .ccid = 3 };

FIXTURE_SETUP(veth)
{
	snprintf(self->a, sizeof(self->a), "dtA-%d", getpid());
	snprintf(self->b, sizeof(self->b), "dtB-%d", getpid());
	dt_veth_pair(_metadata, self->a, self->b);
	dt_sh(_metadata, "ip netns exec %s tc qdisc add dev va root netem delay 5ms", self->a);
	dt_one_backlog(_metadata, self->b, "vb");
}

FIXTURE_TEARDOWN(veth)
{
	dt_veth_pair_del(_metadata, self->a, self->b);
}

static void fill(unsigned char *buf, uint32_t seq)
{
	memcpy(buf, &seq, sizeof(seq));
	for (int i = sizeof(seq); i < MSG_LEN; i++)
		buf[i] = (unsigned char)(seq * 31 + i);
}

/*
 * Check a received message of @len bytes against messages 0..@n-1 and set
 * *@seq to its sequence number.  Returns 0, -EMSGSIZE for a wrong length or
 * sequence number (*@seq is then what the header says), or -EBADMSG for a
 * corrupted payload.
 */
static int check_msg(const unsigned char *buf, ssize_t len, uint32_t n,
		     uint32_t *seq)
{
	unsigned char want[MSG_LEN];

	memcpy(seq, buf, sizeof(*seq));
	if (len != MSG_LEN || *seq >= n)
		return -EMSGSIZE;
	fill(want, *seq);
	return memcmp(buf, want, MSG_LEN) ? -EBADMSG : 0;
}

/*
 * In a child: send messages 0..@n-1 with blocking sendmsg(), under PRIO with
 * a DCCP_SCM_PRIORITY cmsg, let the queue drain and exit 0 (1 on an error).
 */
static pid_t send_msgs(int fd, int policy, uint32_t n)
{
	unsigned char buf[MSG_LEN];
	pid_t pid = fork();

	if (pid)
		return pid;
	for (uint32_t seq = 0; seq < n; seq++) {
		char control[CMSG_SPACE(sizeof(uint32_t))] = { 0 };
		struct iovec iov = { .iov_base = buf, .iov_len = MSG_LEN };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		uint32_t prio = 1;

		fill(buf, seq);
		if (policy == DCCPQ_POLICY_PRIO) {
			struct cmsghdr *cmsg;

			msg.msg_control = control;
			msg.msg_controllen = sizeof(control);
			cmsg = CMSG_FIRSTHDR(&msg);
			dt_put_cmsg(&msg, cmsg, DCCP_SCM_PRIORITY, &prio,
				    sizeof(prio));
		}
		if (sendmsg(fd, &msg, 0) != MSG_LEN) {
			fprintf(stderr, "sendmsg %u: %s\n", seq, strerror(errno));
			_exit(1);
		}
	}
	/* Let the queue drain before close() purges it. */
	dt_sleep_ms(2000);
	_exit(0);
}

/* Log the first few sequence numbers of @what, e.g. the missing ones. */
static void log_seqs(struct __test_metadata *_metadata, const char *what,
		     const uint32_t *seqs, int n)
{
	char line[256];
	int off = 0;

	line[0] = 0;
	for (int i = 0; i < n && off < (int)sizeof(line) - 16; i++)
		off += snprintf(line + off, sizeof(line) - off, " %u", seqs[i]);
	TH_LOG("%d %s:%s%s", n, what, line, off >= (int)sizeof(line) - 16 ? " ..." : "");
}

TEST_F_TIMEOUT(veth, transfer, 120)
{
	struct timeval tv = { .tv_sec = 15 };
	unsigned char buf[MSG_LEN + 1];
	int rcvbuf = 16 << 20;	/* bytes, far above N_MSGS * skb truesize */
	uint32_t seq, got, late[N_MSGS], missing[N_MSGS], dup[N_MSGS];
	int times[N_MSGS] = { 0 };
	int n_late = 0, n_missing = 0, n_dup = 0, n_bad = 0, n = 0;
	int lfd, cfd, afd, status, err;
	int64_t highest = -1;
	pid_t pid;

	dt_netns_switch(_metadata, self->b);
	lfd = dt_listen(_metadata, variant->ccid, "10.9.0.2", 4000);
	dt_netns_switch(_metadata, self->a);
	cfd = dt_socket(_metadata, variant->ccid, variant->policy, 0);
	afd = dt_connect(_metadata, cfd, lfd, "10.9.0.2", 4000);
	ASSERT_EQ(0, setsockopt(afd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	/* DCCP is unreliable: a receive buffer that could fill up while the
	 * (emulated, slow) receiver is descheduled would drop messages.  Make
	 * it hold the whole transfer.
	 */
	ASSERT_EQ(0, setsockopt(afd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)));

	pid = send_msgs(cfd, variant->policy, N_MSGS);
	ASSERT_LE(0, pid);

	/* Every message once (or until 15 s pass without one); judge after. */
	while (n < N_MSGS) {
		ssize_t r = recv(afd, buf, sizeof(buf), 0);

		if (r < 0) {
			TH_LOG("after %d messages: recv: %s", n, strerror(errno));
			break;
		}
		n++;
		err = check_msg(buf, r, N_MSGS, &got);
		if (err == -EMSGSIZE) {
			TH_LOG("message %d of the transfer: %zd bytes, sequence number %u",
			       n, r, got);
			n_bad++;
			continue;
		}
		if (err) {
			TH_LOG("message %u: payload corrupted", got);
			n_bad++;
		}
		if (times[got]++)
			dup[n_dup++] = got;
		else if ((int64_t)got < highest)
			late[n_late++] = got;
		else
			highest = got;
	}
	for (seq = 0; seq < N_MSGS; seq++)
		if (!times[seq])
			missing[n_missing++] = seq;
	TH_LOG("%d received, %d missing, %d duplicated, %d after a later one, %d malformed",
	       n, n_missing, n_dup, n_late, n_bad);
	if (n_missing)
		log_seqs(_metadata, "missing", missing, n_missing);
	if (n_dup)
		log_seqs(_metadata, "duplicated", dup, n_dup);
	if (n_late)
		log_seqs(_metadata, "after a later one", late, n_late);
	EXPECT_EQ(0, n_missing);
	EXPECT_EQ(0, n_dup);
	EXPECT_EQ(0, n_late);
	EXPECT_EQ(0, n_bad);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	close(afd);
	close(cfd);
	close(lfd);
}

/*
 * Receive on @fd while it has data; count each valid message in @times.
 * Returns the number of malformed messages.
 */
static int recv_ready(int fd, int *times, uint32_t n)
{
	unsigned char buf[MSG_LEN + 1];
	int bad = 0;
	uint32_t got;
	ssize_t r;

	while ((r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		if (check_msg(buf, r, n, &got))
			bad++;
		else
			times[got]++;
	}
	return bad;
}

TEST_F_TIMEOUT(veth, two_way, 120)
{
	int rcvbuf = 16 << 20;	/* bytes: holds the whole transfer */
	int to_b[N_TWO_WAY] = { 0 }, to_a[N_TWO_WAY] = { 0 };
	int n_bad = 0, once_b = 0, once_a = 0, kmsg, lfd, cfd, afd, status;
	uint64_t quiet_since = dt_now_ns();
	pid_t pid_a, pid_b;

	kmsg = dt_kmsg_open(_metadata);
	dt_netns_switch(_metadata, self->b);
	lfd = dt_listen(_metadata, variant->ccid, "10.9.0.2", 4000);
	dt_sh(_metadata, "tc qdisc add dev vb root netem delay 5ms");
	dt_netns_switch(_metadata, self->a);
	cfd = dt_socket(_metadata, variant->ccid, variant->policy, 0);
	afd = dt_connect(_metadata, cfd, lfd, "10.9.0.2", 4000);
	ASSERT_EQ(0, setsockopt(afd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)));
	ASSERT_EQ(0, setsockopt(cfd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)));

	pid_a = send_msgs(cfd, variant->policy, N_TWO_WAY);
	ASSERT_LE(0, pid_a);
	/* the accepted socket has the listener's policy, SIMPLE */
	pid_b = send_msgs(afd, DCCPQ_POLICY_SIMPLE, N_TWO_WAY);
	ASSERT_LE(0, pid_b);

	/* Until every message arrived each way, or 15 s pass without one. */
	while (dt_now_ns() - quiet_since < 15000 * NSEC_PER_MSEC) {
		struct pollfd p[2] = { { .fd = afd, .events = POLLIN },
				       { .fd = cfd, .events = POLLIN } };

		if (once_b == N_TWO_WAY && once_a == N_TWO_WAY)
			break;
		if (poll(p, 2, 100) <= 0)
			continue;
		n_bad += recv_ready(afd, to_b, N_TWO_WAY);
		n_bad += recv_ready(cfd, to_a, N_TWO_WAY);
		once_b = 0;
		once_a = 0;
		for (int i = 0; i < N_TWO_WAY; i++) {
			once_b += to_b[i] == 1;
			once_a += to_a[i] == 1;
		}
		quiet_since = dt_now_ns();
	}
	TH_LOG("A to B: %d of %d once; B to A: %d of %d once; %d malformed",
	       once_b, N_TWO_WAY, once_a, N_TWO_WAY, n_bad);
	EXPECT_EQ(N_TWO_WAY, once_b);
	EXPECT_EQ(N_TWO_WAY, once_a);
	EXPECT_EQ(0, n_bad);
	ASSERT_EQ(pid_a, waitpid(pid_a, &status, 0));
	EXPECT_EQ(0, status);
	ASSERT_EQ(pid_b, waitpid(pid_b, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, dt_kmsg_count(_metadata, kmsg, "BUG: "));
	close(afd);
	close(cfd);
	close(lfd);
	close(kmsg);
}

TEST_HARNESS_MAIN
