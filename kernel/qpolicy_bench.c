// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark of the DCCP TX queueing policies: the cost of one enqueue plus
 * one dequeue, per packet, measured on the policy code of this dccp.ko.
 * It is linked into dccp.ko only by `make bench` (see kernel/Kbuild); the
 * modules of a normal build do not contain it.
 *
 * Writing "POLICY QLEN PACKETS PATTERN" to /sys/kernel/debug/dccp_qpolicy_bench
 * runs one measurement in the writer's context; reading the file gives its
 * result as one line of key=value pairs (or the reason the run failed):
 *
 *   policy=sbpn1 qlen=1000 packets=20000 pattern=random ns_per_packet=3181.2
 *   mean_ns_per_packet=4672.9 sent=20000 evicted=0 refused=0 expired=0
 *   qlen_end=999
 *
 * A measurement:
 * - creates a kernel DCCP socket (dccp_ipv4 must be loaded), sets POLICY
 *   and tx_qlen = QLEN through dccp_setsockopt() as an application would;
 *   the socket is never connected, so there is no CCID and the RTT the SBPN
 *   policies add to "now" to judge expiry is 0;
 * - with the socket locked, as in sendmsg, queues QLEN - 1 packets (not
 *   timed), then PACKETS times does what dccp_sendmsg() does with a packet,
 *   dccp_qpolicy_full() and dccp_qpolicy_push(), and what dccp_xmit_packet()
 *   does, dccp_qpolicy_top() and dccp_qpolicy_pop().
 *
 * So the queue holds QLEN - 1 packets before each push and is never full:
 * every policy admits, queues, selects and dequeues exactly one packet per
 * iteration, and none evicts or refuses one.  This is the steady state that
 * compares fairly (on a full queue SIMPLE refuses the packet, PRIO and SBPN
 * evict one).  A run that leaves it (a refusal, an empty queue) fails.
 *
 * The queue is filled with the pattern's packets of its lowest priority
 * only: as the better packets always leave first, that is what a long run
 * of the pattern leaves queued, and it stays so during the timed loop, at
 * every QLEN alike (a fill with all priorities would take PRIO or SBPN many
 * times QLEN packets to drain, and long queues would be measured in another
 * state than short ones).
 *
 * Only the policy calls are timed: the popped packet is reused as the next
 * new one, so no sk_buff is allocated (the bands SBPN allocates are part
 * of its cost), and the priorities and expiries of a chunk of packets are
 * drawn before the chunk's clock starts.  Each chunk of BENCH_CHUNK packets is timed apart:
 * ns_per_packet is the median over the chunks, robust against the chunks
 * that an interrupt or the host (the VM shares its CPUs) slowed down;
 * mean_ns_per_packet is the total time divided by PACKETS.  Between chunks
 * the loop calls cond_resched(), untimed, so that a long run cannot trip
 * the soft-lockup detector.
 *
 * Patterns (the same packets, from a fixed seed, for every policy):
 * - inorder: a video call; every third packet is audio (priority 1, expiry
 *   arrival + 100 ms), the others video (priority 0, arrival + 150 ms), with
 *   one arrival per microsecond: within a priority, expiries increase;
 * - random: priority 0..7 and expiry anywhere in a 1 s window, both random;
 * - reorder: one priority, expiry arrival + a random jitter of up to QLEN
 *   arrivals, so that each new packet lands at a random place among those
 *   queued: the out-of-order case, without the bands of random.
 * All expiries lie an hour ahead, so no packet expires during a run.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sockptr.h>
#include <linux/sort.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "dccp.h"
#include "qpolicy_bench.h"

#define BENCH_QLEN_MAX		100000
#define BENCH_PACKETS_MAX	10000000
#define BENCH_CMD_MAX		64
#define BENCH_CHUNK		32	/* packets timed together */
#define BENCH_SEED		0x5b9e	/* the same packets for every run */
#define BENCH_HORIZON_NS	(3600 * NSEC_PER_SEC)	/* expiries lie ahead */
#define BENCH_ARRIVAL_NS	NSEC_PER_USEC	/* between two arrivals */
#define BENCH_SKB_SIZE		128	/* bytes; the policies never look */

enum bench_pattern {
	BENCH_INORDER,
	BENCH_RANDOM,
	BENCH_REORDER,
	BENCH_PATTERN_MAX
};

static const char * const bench_patterns[BENCH_PATTERN_MAX] = {
	[BENCH_INORDER]	= "inorder",
	[BENCH_RANDOM]	= "random",
	[BENCH_REORDER]	= "reorder",
};

static const char * const bench_policies[DCCPQ_POLICY_MAX] = {
	[DCCPQ_POLICY_SIMPLE]	= "simple",
	[DCCPQ_POLICY_PRIO]	= "prio",
	[DCCPQ_POLICY_SBPN1]	= "sbpn1",
	[DCCPQ_POLICY_SBPN2]	= "sbpn2",
	[DCCPQ_POLICY_SBPN3]	= "sbpn3",
};

/* What a packet carries into the policy */
struct bench_stamp {
	u32	priority;
	u64	expiry;		/* ns, CLOCK_MONOTONIC */
};

/**
 * struct bench_run - one measurement
 * @policy: DCCPQ_POLICY_*
 * @qlen: tx_qlen; the queue holds @qlen - 1 packets before each push
 * @packets: number of timed iterations
 * @pattern: BENCH_INORDER, BENCH_RANDOM or BENCH_REORDER
 * @rnd: random state of the random and reorder patterns
 * @base: arrival time of the first packet, in ns (an hour ahead)
 * @arrivals: packets stamped so far
 * @stamps: the stamps of the chunk being timed
 * @chunk_tenths: per chunk, tenths of a ns per packet
 * @total_ns: time of all chunks
 */
struct bench_run {
	int			policy;
	u32			qlen;
	u32			packets;
	int			pattern;
	struct rnd_state	rnd;
	u64			base;
	u64			arrivals;
	struct bench_stamp	stamps[BENCH_CHUNK];
	u64			*chunk_tenths;
	u64			total_ns;
};

static DEFINE_MUTEX(bench_lock);	/* one run at a time; guards below */
static char bench_result[256] = "no run yet: write \"POLICY QLEN PACKETS PATTERN\"\n";
static struct dentry *bench_file;

static __printf(2, 3) int bench_fail(int err, const char *fmt, ...)
{
	va_list args;
	int n;

	n = scnprintf(bench_result, sizeof(bench_result), "error: ");
	va_start(args, fmt);
	n += vscnprintf(bench_result + n, sizeof(bench_result) - n, fmt, args);
	va_end(args);
	scnprintf(bench_result + n, sizeof(bench_result) - n, "\n");
	return err;
}

static void bench_next(struct bench_run *r, struct bench_stamp *s)
{
	u64 arrival = r->base + r->arrivals * BENCH_ARRIVAL_NS;

	switch (r->pattern) {
	case BENCH_INORDER:
		if (r->arrivals % 3 == 0) {
			s->priority = 1;
			s->expiry = arrival + 100 * NSEC_PER_MSEC;
		} else {
			s->priority = 0;
			s->expiry = arrival + 150 * NSEC_PER_MSEC;
		}
		break;
	case BENCH_RANDOM:
		s->priority = prandom_u32_state(&r->rnd) % 8;
		s->expiry = r->base + prandom_u32_state(&r->rnd) % NSEC_PER_SEC;
		break;
	case BENCH_REORDER:
		s->priority = 0;
		s->expiry = arrival + (u64)(prandom_u32_state(&r->rnd) %
					    r->qlen) * BENCH_ARRIVAL_NS;
		break;
	}
	r->arrivals++;
}

static void bench_apply(struct sk_buff *skb, const struct bench_stamp *s)
{
	skb->priority = s->priority;
	dccp_qpolicy_set_expiry(skb, s->expiry);
}

/* Queue @r->qlen - 1 packets of priority 0, as sendmsg would */
static int bench_fill(struct sock *sk, struct bench_run *r)
{
	struct bench_stamp s;
	struct sk_buff *skb;
	u32 i;
	int err;

	for (i = 0; i + 1 < r->qlen; i++) {
		do {
			bench_next(r, &s);
		} while (s.priority);
		skb = alloc_skb(BENCH_SKB_SIZE, GFP_KERNEL);
		if (!skb)
			return bench_fail(-ENOMEM, "no memory for packet %u", i);
		bench_apply(skb, &s);
		if (dccp_qpolicy_full(sk, skb)) {
			kfree_skb(skb);
			return bench_fail(-EBUSY, "queue full after %u packets",
					  i);
		}
		err = dccp_qpolicy_push(sk, skb);
		if (err) {
			kfree_skb(skb);
			return bench_fail(err, "push failed (%d) at packet %u",
					  err, i);
		}
		if (i % BENCH_CHUNK == 0)
			cond_resched();
	}
	return 0;
}

/*
 * The timed loop: push @*skbp, then pop the policy's top, which becomes the
 * next packet to push.  On return *skbp is the packet in hand (not queued),
 * which the caller frees.
 */
static int bench_steady(struct sock *sk, struct bench_run *r,
			struct sk_buff **skbp)
{
	struct sk_buff *skb = *skbp;
	u32 done = 0, chunk = 0, n, i;
	u64 ns;
	int err = 0;

	r->total_ns = 0;
	while (done < r->packets && !err) {
		n = min_t(u32, r->packets - done, BENCH_CHUNK);
		for (i = 0; i < n; i++)
			bench_next(r, &r->stamps[i]);

		ns = ktime_get_ns();
		for (i = 0; i < n; i++) {
			bench_apply(skb, &r->stamps[i]);
			if (dccp_qpolicy_full(sk, skb)) {
				err = -EBUSY;
				break;
			}
			err = dccp_qpolicy_push(sk, skb);
			if (err)
				break;
			skb = dccp_qpolicy_top(sk);
			if (!skb) {
				err = -ENODATA;
				break;
			}
			dccp_qpolicy_pop(sk, skb);
		}
		ns = ktime_get_ns() - ns;
		r->total_ns += ns;
		if (i)
			r->chunk_tenths[chunk++] = div_u64(ns * 10, i);
		done += i;
		cond_resched();
	}
	*skbp = skb;

	switch (err) {
	case 0:
		return 0;
	case -EBUSY:
		return bench_fail(err, "packet %u refused at occupancy %u",
				  done, r->qlen - 1);
	case -ENODATA:
		return bench_fail(err, "no packet to send after %u packets",
				  done);
	default:
		return bench_fail(err, "push failed (%d) after %u packets",
				  err, done);
	}
}

static int bench_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Median over the chunks, in tenths of a ns per packet */
static u64 bench_median_tenths(struct bench_run *r)
{
	u32 n = DIV_ROUND_UP(r->packets, BENCH_CHUNK);

	sort(r->chunk_tenths, n, sizeof(u64), bench_cmp_u64, NULL);
	if (n % 2)
		return r->chunk_tenths[n / 2];
	return (r->chunk_tenths[n / 2 - 1] + r->chunk_tenths[n / 2]) / 2;
}

static int bench_setsockopt(struct sock *sk, int optname, int val)
{
	return dccp_setsockopt(sk, SOL_DCCP, optname, KERNEL_SOCKPTR(&val),
			       sizeof(val));
}

static int bench_run(struct bench_run *r)
{
	const struct dccp_qpolicy_stats *stats;
	struct sk_buff *skb = NULL;
	struct socket *sock;
	struct sock *sk;
	u64 median, mean;
	int err;

	err = sock_create_kern(&init_net, PF_INET, SOCK_DCCP, IPPROTO_DCCP,
			       &sock);
	if (err)
		return bench_fail(err, "cannot create a DCCP socket (%d): load dccp_ipv4 first",
				  err);
	sk = sock->sk;
	err = bench_setsockopt(sk, DCCP_SOCKOPT_QPOLICY_ID, r->policy);
	if (err) {
		bench_fail(err, "setting the policy failed (%d)", err);
		goto out_release;
	}
	err = bench_setsockopt(sk, DCCP_SOCKOPT_QPOLICY_TXQLEN, r->qlen);
	if (err) {
		bench_fail(err, "setting tx_qlen failed (%d)", err);
		goto out_release;
	}

	prandom_seed_state(&r->rnd, BENCH_SEED);
	r->base = ktime_get_ns() + BENCH_HORIZON_NS;
	r->arrivals = 0;

	lock_sock(sk);
	err = bench_fill(sk, r);
	if (err)
		goto out_unlock;
	skb = alloc_skb(BENCH_SKB_SIZE, GFP_KERNEL);
	if (!skb) {
		err = bench_fail(-ENOMEM, "no memory for a packet");
		goto out_unlock;
	}
	err = bench_steady(sk, r, &skb);
	if (err)
		goto out_unlock;

	stats = &dccp_sk(sk)->dccps_qpolicy_stats;
	median = bench_median_tenths(r);
	mean = div_u64(r->total_ns * 10, r->packets);
	scnprintf(bench_result, sizeof(bench_result),
		  "policy=%s qlen=%u packets=%u pattern=%s ns_per_packet=%llu.%llu mean_ns_per_packet=%llu.%llu sent=%llu evicted=%llu refused=%llu expired=%llu qlen_end=%u\n",
		  bench_policies[r->policy], r->qlen, r->packets,
		  bench_patterns[r->pattern], median / 10, median % 10,
		  mean / 10, mean % 10, stats->sent, stats->evicted,
		  stats->refused, stats->expired, dccp_qpolicy_len(sk));
out_unlock:
	release_sock(sk);
	kfree_skb(skb);
out_release:
	/* closing the never-connected socket purges the queue */
	sock_release(sock);
	return err;
}

static int bench_lookup(const char * const *names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	return -1;
}

static int bench_parse(char *cmd, struct bench_run *r)
{
	char policy[16], pattern[16], extra;

	if (sscanf(cmd, "%15s %u %u %15s %c", policy, &r->qlen, &r->packets,
		   pattern, &extra) != 4)
		return bench_fail(-EINVAL, "expected \"POLICY QLEN PACKETS PATTERN\", got \"%s\"",
				  strim(cmd));
	r->policy = bench_lookup(bench_policies, DCCPQ_POLICY_MAX, policy);
	if (r->policy < 0)
		return bench_fail(-EINVAL, "unknown policy \"%s\" (simple, prio, sbpn1..3)",
				  policy);
	if (r->qlen < 1 || r->qlen > BENCH_QLEN_MAX)
		return bench_fail(-EINVAL, "QLEN %u out of range 1..%u",
				  r->qlen, BENCH_QLEN_MAX);
	if (r->packets < 1 || r->packets > BENCH_PACKETS_MAX)
		return bench_fail(-EINVAL, "PACKETS %u out of range 1..%u",
				  r->packets, BENCH_PACKETS_MAX);
	r->pattern = bench_lookup(bench_patterns, BENCH_PATTERN_MAX, pattern);
	if (r->pattern < 0)
		return bench_fail(-EINVAL, "unknown pattern \"%s\" (inorder, random, reorder)",
				  pattern);
	return 0;
}

static ssize_t bench_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	struct bench_run *r;
	u32 chunks;
	char *cmd;
	int err;

	if (mutex_lock_interruptible(&bench_lock))
		return -EINTR;
	if (len > BENCH_CMD_MAX) {
		err = bench_fail(-EINVAL, "command longer than %d bytes",
				 BENCH_CMD_MAX);
		goto out_unlock;
	}
	cmd = memdup_user_nul(ubuf, len);
	if (IS_ERR(cmd)) {
		err = PTR_ERR(cmd);
		goto out_unlock;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	err = r ? bench_parse(cmd, r) : -ENOMEM;
	if (!err) {
		chunks = DIV_ROUND_UP(r->packets, BENCH_CHUNK);
		r->chunk_tenths = kvmalloc_array(chunks, sizeof(u64),
						 GFP_KERNEL);
		err = r->chunk_tenths ? bench_run(r) : -ENOMEM;
		kvfree(r->chunk_tenths);
	}
	kfree(r);
	kfree(cmd);
out_unlock:
	mutex_unlock(&bench_lock);
	return err ? err : (ssize_t)len;
}

static ssize_t bench_read(struct file *file, char __user *ubuf, size_t len,
			  loff_t *ppos)
{
	ssize_t ret;

	if (mutex_lock_interruptible(&bench_lock))
		return -EINTR;
	ret = simple_read_from_buffer(ubuf, len, ppos, bench_result,
				      strlen(bench_result));
	mutex_unlock(&bench_lock);
	return ret;
}

static const struct file_operations bench_fops = {
	.owner	= THIS_MODULE,
	.write	= bench_write,
	.read	= bench_read,
	.llseek	= default_llseek,
};

/* These wrap the entry points of proto.c: see qpolicy_bench.h */
static int __init dccp_bench_init(void)
{
	int err = dccp_proto_init_module();

	if (err)
		return err;
	bench_file = debugfs_create_file("dccp_qpolicy_bench", 0600, NULL,
					 NULL, &bench_fops);
	return 0;
}

static void __exit dccp_bench_exit(void)
{
	debugfs_remove(bench_file);
	dccp_proto_cleanup_module();
}

module_init(dccp_bench_init);
module_exit(dccp_bench_exit);
