// SPDX-License-Identifier: GPL-2.0
/*
 * sbpn-send - replay a video-call (or CBR audio, or a recorded trace)
 * schedule over DCCP, UDP or TCP and record every packet.
 *
 * Contract (Documentation/traffic.rst, Documentation/records.rst):
 *   - the schedule comes from a model file or a trace; a seed fixes it;
 *   - each packet is sent at its planned time (absolute CLOCK_MONOTONIC
 *     sleeps); packets due at the same instant go back to back;
 *   - every scheduled packet gets one line in --out, whatever sendmsg()
 *     said; EAGAIN (queue full) drops the packet, as the paper's application
 *     did; the trailer has the counts, how late the sends were against the
 *     schedule (p50/p99/max) and, last, "complete: 1" on a normal end only;
 *   - --cc-log samples CCID3's state and the qpolicy counters;
 *   - --notices records each packet the kernel's policy discarded after
 *     admitting it, from the socket's error queue (DCCP drop notices);
 *   - --keyframe-on-loss makes the next video frame a key frame when the
 *     receiver reports a broken reference chain or a drop notice says a
 *     video packet was discarded (keyframe.h; traffic.rst).
 * Exit: 0 ok, 1 runtime failure or signal, 2 usage or input error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/dccp.h>

#include "config.h"
#include "keyframe.h"
#include "records.h"
#include "sbpn.h"
#include "schedule.h"
#include "util.h"

#define SERVICE_CODE 0x5342504e		/* "SBPN", both ends set it */

static struct {
	enum transport transport;
	const char *to, *out, *flow, *model_path, *trace_path, *cc_log, *notices;
	const char *source;
	int policy, ccid;
	long tx_qlen;			/* -1: kernel default */
	double duration_s;		/* <0: model's */
	double lifetime_ms;		/* <0: model's */
	uint64_t seed;
	bool silence, dry_run, stats, faster_restart, size_pacing, predict, last_rtt, owd, edf,
	     newest, frame;
	uint64_t cc_interval_ms, linger_ms;
	long flow_id;			/* -1: hash of the flow name */
	const char *keyframe_on_loss;	/* normalised, NULL: off */
	unsigned int kf;		/* KF_BIT(KF_RECEIVER) | KF_BIT(KF_NOTICE) */
} cfg = {
	.transport = TR_DCCP, .source = "ekiga", .policy = SBPN_POLICY_SIMPLE,
	.ccid = 3, .tx_qlen = -1, .duration_s = -1, .lifetime_ms = -1, .seed = 1,
	.cc_interval_ms = 100, .linger_ms = 1000, .flow_id = -1,
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: sbpn-send --transport dccp|udp|tcp --to ADDR:PORT --out FILE --flow NAME [options]\n"
"       sbpn-send --stats [--source ...] [--model FILE] [--duration SEC] [--seed N]\n"
"\n"
"  --transport T          dccp (default), udp or tcp\n"
"  --to ADDR:PORT         the receiver (numeric IPv4, or [IPv6]:PORT)\n"
"  --out FILE             per-packet records (Documentation/records.rst)\n"
"  --flow NAME            flow name in the records\n"
"  --flow-id N            16-bit flow id in the payload (default: hash of NAME)\n"
"  --source S             ekiga (default), cbr or trace\n"
"  --model FILE           model file (default: built-in = userspace/models/ekiga.model)\n"
"  --trace FILE           trace file for --source trace (format in traffic.rst)\n"
"  --duration SEC         schedule length (default: model's duration_s = 60;\n"
"                         for a trace: the whole trace)\n"
"  --seed N               random seed for the Ekiga model (default 1)\n"
"  --policy P             DCCP queueing policy: simple (default), prio, sbpn1,\n"
"                         sbpn2, sbpn3\n"
"  --ccid N               DCCP CCID, 2 or 3 (default 3)\n"
"  --tx-qlen N            DCCP tx queue length, 0 = unbounded (default: kernel's)\n"
"  --faster-restart       CCID3 TFRC Faster Restart (DCCP_TX_CCID_F_FASTER_RESTART)\n"
"  --size-pacing          CCID3 spaces packets by their size (DCCP_TX_CCID_F_SIZE_PACING)\n"
"  --predict              SBPN judges expiry at the predicted departure\n"
"                         (DCCP_QPOLICY_F_PREDICT)\n"
"  --last-rtt             after CCID3's nofeedback timer, judge expiry by the\n"
"                         last RTT, not 0 (DCCP_QPOLICY_F_LAST_RTT)\n"
"  --owd                  judge expiry by a one-way delay of RTT - min RTT/2,\n"
"                         not RTT/2 (DCCP_QPOLICY_F_OWD)\n"
"  --edf                  SBPN sends the earliest expiry first, priority decides\n"
"                         only what a full queue drops (DCCP_QPOLICY_ORDER_EDF)\n"
"  --newest               SBPN sends each priority's newest packet first, a full\n"
"                         queue drops its oldest (DCCP_QPOLICY_ORDER_NEWEST)\n"
"  --frame                SBPN gives up a frame (the packets of one instant) whole\n"
"                         when one is dropped (DCCP_QPOLICY_F_FRAME)\n"
"  --lifetime-ms MS       expiry = creation + MS; 0 = none (default: model's 200)\n"
"  --silence-suppression  no audio during quiet phases of the call pattern\n"
"  --cc-log FILE          sample CCID state and qpolicy counters (DCCP only)\n"
"  --cc-interval-ms MS    sampling interval of --cc-log (default 100)\n"
"  --notices FILE         record the kernel's drop notices (DCCP_QPOLICY_F_NOTIFY):\n"
"                         each packet expired, evicted, dropped with its frame or\n"
"                         on a CCID error\n"
"  --keyframe-on-loss L   make the next video frame a key frame on a loss that\n"
"                         one of L (receiver, notice; comma-separated) reports:\n"
"                         the receiver's request (sbpn-recv --keyframe-requests)\n"
"                         or a drop notice of video (DCCP); needs coding dependencies\n"
"  --linger-ms MS         wait after the last packet before closing (default 1000)\n"
"  --dry-run              write the schedule's records without a socket (result dry)\n"
"  --stats                print the schedule's packet and bit rates with header\n"
"                         accounting; with no --out, only that\n"
"  --help                 this text\n"
"\n"
"exit status: 0 ok, 1 runtime failure or interrupted, 2 usage or input error\n");
}

static double parse_nonneg(const char *opt, const char *s)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || !*s || *end || !isfinite(d) || d < 0) {
		fprintf(stderr, "sbpn-send: %s: expected a number >= 0, got '%s'\n", opt, s);
		exit(EXIT_USAGE);
	}
	return d;
}

static uint64_t parse_uint_opt(const char *opt, const char *s, uint64_t max)
{
	uint64_t v;

	if (parse_u64(s, max, &v)) {
		fprintf(stderr, "sbpn-send: %s: expected an integer 0..%llu, got '%s'\n",
			opt, (unsigned long long)max, s);
		exit(EXIT_USAGE);
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	enum { O_TRANSPORT = 256, O_TO, O_OUT, O_FLOW, O_FLOWID, O_SOURCE, O_MODEL,
	       O_TRACE, O_DURATION, O_SEED, O_POLICY, O_CCID, O_QLEN, O_LIFE,
	       O_SILENCE, O_CCLOG, O_CCINT, O_LINGER, O_DRY, O_STATS, O_FR, O_SP, O_PREDICT, O_LAST_RTT, O_OWD, O_EDF,
	       O_NEWEST, O_FRAME,
	       O_NOTICES, O_KF,
	       O_HELP };
	static const struct option opts[] = {
		{ "transport", required_argument, 0, O_TRANSPORT },
		{ "to", required_argument, 0, O_TO },
		{ "out", required_argument, 0, O_OUT },
		{ "flow", required_argument, 0, O_FLOW },
		{ "flow-id", required_argument, 0, O_FLOWID },
		{ "source", required_argument, 0, O_SOURCE },
		{ "model", required_argument, 0, O_MODEL },
		{ "trace", required_argument, 0, O_TRACE },
		{ "duration", required_argument, 0, O_DURATION },
		{ "seed", required_argument, 0, O_SEED },
		{ "policy", required_argument, 0, O_POLICY },
		{ "ccid", required_argument, 0, O_CCID },
		{ "tx-qlen", required_argument, 0, O_QLEN },
		{ "faster-restart", no_argument, 0, O_FR },
		{ "size-pacing", no_argument, 0, O_SP },
		{ "predict", no_argument, 0, O_PREDICT },
		{ "last-rtt", no_argument, 0, O_LAST_RTT },
		{ "owd", no_argument, 0, O_OWD },
		{ "edf", no_argument, 0, O_EDF },
		{ "newest", no_argument, 0, O_NEWEST },
		{ "frame", no_argument, 0, O_FRAME },
		{ "lifetime-ms", required_argument, 0, O_LIFE },
		{ "silence-suppression", no_argument, 0, O_SILENCE },
		{ "cc-log", required_argument, 0, O_CCLOG },
		{ "cc-interval-ms", required_argument, 0, O_CCINT },
		{ "notices", required_argument, 0, O_NOTICES },
		{ "keyframe-on-loss", required_argument, 0, O_KF },
		{ "linger-ms", required_argument, 0, O_LINGER },
		{ "dry-run", no_argument, 0, O_DRY },
		{ "stats", no_argument, 0, O_STATS },
		{ "help", no_argument, 0, O_HELP },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_TRANSPORT:
			if (parse_transport(optarg, &cfg.transport))
				die_usage("--transport: expected dccp, udp or tcp, got '%s'", optarg);
			break;
		case O_TO: cfg.to = optarg; break;
		case O_OUT: cfg.out = optarg; break;
		case O_FLOW: cfg.flow = optarg; break;
		case O_FLOWID: cfg.flow_id = (long)parse_uint_opt("--flow-id", optarg, 65535); break;
		case O_SOURCE:
			if (strcmp(optarg, "ekiga") && strcmp(optarg, "cbr") && strcmp(optarg, "trace"))
				die_usage("--source: expected ekiga, cbr or trace, got '%s'", optarg);
			cfg.source = optarg;
			break;
		case O_MODEL: cfg.model_path = optarg; break;
		case O_TRACE: cfg.trace_path = optarg; break;
		case O_DURATION:
			cfg.duration_s = parse_nonneg("--duration", optarg);
			if (cfg.duration_s <= 0)
				die_usage("--duration: must be > 0, got '%s'", optarg);
			break;
		case O_SEED: cfg.seed = parse_uint_opt("--seed", optarg, UINT64_MAX); break;
		case O_POLICY:
			cfg.policy = sbpn_policy_from_name(optarg);
			if (cfg.policy < 0)
				die_usage("--policy: expected simple, prio, sbpn1, sbpn2 or sbpn3, got '%s'", optarg);
			break;
		case O_CCID:
			if (strcmp(optarg, "2") && strcmp(optarg, "3"))
				die_usage("--ccid: expected 2 or 3, got '%s'", optarg);
			cfg.ccid = atoi(optarg);
			break;
		case O_QLEN: cfg.tx_qlen = (long)parse_uint_opt("--tx-qlen", optarg, 1000000); break;
		case O_LIFE: cfg.lifetime_ms = parse_nonneg("--lifetime-ms", optarg); break;
		case O_SILENCE: cfg.silence = true; break;
		case O_FR: cfg.faster_restart = true; break;
		case O_SP: cfg.size_pacing = true; break;
		case O_PREDICT: cfg.predict = true; break;
		case O_LAST_RTT: cfg.last_rtt = true; break;
		case O_OWD: cfg.owd = true; break;
		case O_EDF: cfg.edf = true; break;
		case O_NEWEST: cfg.newest = true; break;
		case O_FRAME: cfg.frame = true; break;
		case O_CCLOG: cfg.cc_log = optarg; break;
		case O_NOTICES: cfg.notices = optarg; break;
		case O_KF:
			if (kf_parse_sources(optarg, &cfg.kf))
				die_usage("--keyframe-on-loss: expected receiver, notice or "
					  "receiver,notice (each at most once, no empty item), "
					  "got '%s'", optarg);
			cfg.keyframe_on_loss = kf_sources_name(cfg.kf);
			break;
		case O_CCINT:
			cfg.cc_interval_ms = parse_uint_opt("--cc-interval-ms", optarg, 3600000);
			if (!cfg.cc_interval_ms)
				die_usage("--cc-interval-ms: must be > 0, got '%s'", optarg);
			break;
		case O_LINGER: cfg.linger_ms = parse_uint_opt("--linger-ms", optarg, 3600000); break;
		case O_DRY: cfg.dry_run = true; break;
		case O_STATS: cfg.stats = true; break;
		case O_HELP: usage(stdout); exit(0);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!cfg.stats || cfg.out) {
		if (!cfg.out)
			die_usage("%s", "--out FILE is required");
		if (!cfg.flow)
			die_usage("%s", "--flow NAME is required");
		if (!cfg.dry_run && !cfg.to)
			die_usage("%s", "--to ADDR:PORT is required (or --dry-run)");
	}
	if (!strcmp(cfg.source, "trace") != !!cfg.trace_path)
		die_usage("%s", "--trace FILE goes with --source trace, and only with it");
	if (cfg.transport != TR_DCCP &&
	    (cfg.policy != SBPN_POLICY_SIMPLE || cfg.tx_qlen >= 0 || cfg.cc_log ||
	     cfg.faster_restart || cfg.size_pacing || cfg.predict || cfg.last_rtt ||
	     cfg.owd || cfg.edf || cfg.newest || cfg.frame || cfg.notices))
		die_usage("--policy, --tx-qlen, --faster-restart, --size-pacing, --predict, "
			  "--last-rtt, --owd, --edf, --newest, --frame, --cc-log and --notices need "
			  "--transport dccp (transport is %s)",
			  transport_name(cfg.transport));
	if ((cfg.kf & KF_BIT(KF_NOTICE)) && cfg.transport != TR_DCCP)
		die_usage("--keyframe-on-loss notice: drop notices need --transport dccp "
			  "(transport is %s)", transport_name(cfg.transport));
	if (cfg.edf && cfg.newest)
		die_usage("--edf and --newest are two send orders: give %s", "one");
	if ((cfg.cc_log || cfg.notices) && cfg.dry_run)
		die_usage("%s", "--cc-log and --notices need a connection, not --dry-run");
	if (cfg.policy >= SBPN_POLICY_SBPN1 && !sbpn_policy_built(cfg.policy)) {
		fprintf(stderr, "sbpn-send: --policy %s: this program was built against a linux/dccp.h "
			"without the SBPN policies (stock header); run 'make' at the top level to "
			"install the patched header and rebuild\n", sbpn_policy_name(cfg.policy));
		exit(EXIT_USAGE);
	}
}

/* ---- statistics of the schedule ------------------------------------- */

static void print_stats(const struct schedule *s, const struct model *m)
{
	double dur = (double)s->duration_ns / 1e9;
	uint64_t pk[CLASS_COUNT + 1] = { 0 }, by[CLASS_COUNT + 1] = { 0 };
	static const char *const level[] = { "payload", "+transport", "+IPv4",
					      "+Ethernet", "+wire" };
	uint32_t per_pkt[5] = { 0, transport_overhead(cfg.transport), IPV4_HDR,
				ETH_HDR, ETH_WIRE_EXTRA };

	for (size_t i = 0; i < s->n; i++) {
		pk[s->p[i].cls]++;
		by[s->p[i].cls] += s->p[i].size;
		pk[CLASS_COUNT]++;
		by[CLASS_COUNT] += s->p[i].size;
	}
	printf("schedule: source %s, %.3f s, %zu packets, seed %llu\n", cfg.source, dur, s->n,
	       (unsigned long long)cfg.seed);
	printf("header bytes per packet (%s): transport %u, IPv4 %u, Ethernet %u, "
	       "FCS+preamble+IFG %u\n", transport_name(cfg.transport), per_pkt[1],
	       per_pkt[2], per_pkt[3], per_pkt[4]);
	printf("%-6s %8s %8s %9s", "class", "packets", "pkt/s", "mean_B");
	for (int l = 0; l < 5; l++)
		printf(" %11s", level[l]);
	printf("   (kbit/s, 1 kbit = 1000 bit)\n");
	for (int c = 0; c <= CLASS_COUNT; c++) {
		double over = 0;

		if (c < CLASS_COUNT && !pk[c])
			continue;
		printf("%-6s %8llu %8.2f %9.1f", c < CLASS_COUNT ? class_name(c) : "total",
		       (unsigned long long)pk[c], pk[c] / dur, pk[c] ? (double)by[c] / pk[c] : 0);
		for (int l = 0; l < 5; l++) {
			over += per_pkt[l];
			printf(" %11.1f", ((double)by[c] + over * pk[c]) * 8 / dur / 1000);
		}
		printf("\n");
	}
	if (!strcmp(cfg.source, "ekiga")) {
		for (int mo = 1; mo >= 0; mo--)
			if (s->frames[mo])
				printf("video frames, %s: %zu, mean %.1f B (model mean %.0f sd %.0f)\n",
				       mo ? "motion" : "still", s->frames[mo],
				       (double)s->frame_bytes[mo] / s->frames[mo],
				       mo ? m->motion_high_mean : m->motion_low_mean,
				       mo ? m->motion_high_sd : m->motion_low_sd);
		printf("frames clamped to %llu B: %zu; pieces padded to the %d-byte header: %zu\n",
		       (unsigned long long)m->video_frame_min, s->clamped, SBPN_HDR_LEN, s->padded);
		printf("paper (McDonald & Nelson 3.2): audio 86, video 289, total 374 kbit/s "
		       "\"including all packet overheads\"\n");
	}
	if (s->coded)
		printf("coding dependencies: %zu video frames, %zu key frames (video_gop %llu, "
		       "keyframe_ratio %g), each other frame references the one before\n",
		       s->nframes, s->keyframes, (unsigned long long)m->video_gop,
		       m->keyframe_ratio);
}

/* ---- the connection -------------------------------------------------- */

static int open_socket(void)
{
	struct sockaddr_storage ss;
	socklen_t slen;
	int fd, one = 1;

	if (parse_hostport(cfg.to, &ss, &slen))
		die_usage("--to: expected ADDR:PORT (numeric), got '%s'", cfg.to);
	if (cfg.transport == TR_DCCP) {
		/* the per-socket options that sbpn-send's flags turn on */
		const struct {
			bool on;
			int (*set)(int fd, int on);
			const char *flag, *opt, *needs;
		} flags[] = {
			{ cfg.notices || (cfg.kf & KF_BIT(KF_NOTICE)), sbpn_set_notify,
			  cfg.notices ? "--notices" : "--keyframe-on-loss notice",
			  "DCCP_QPOLICY_F_NOTIFY", "DCCP modules and header" },
			{ cfg.faster_restart, sbpn_set_faster_restart, "--faster-restart",
			  "DCCP_TX_CCID_F_FASTER_RESTART", "DCCP modules" },
			{ cfg.size_pacing, sbpn_set_size_pacing, "--size-pacing",
			  "DCCP_TX_CCID_F_SIZE_PACING", "DCCP modules" },
			{ cfg.predict, sbpn_set_predict, "--predict",
			  "DCCP_QPOLICY_F_PREDICT", "DCCP modules" },
			{ cfg.last_rtt, sbpn_set_last_rtt, "--last-rtt",
			  "DCCP_QPOLICY_F_LAST_RTT", "DCCP modules" },
			{ cfg.owd, sbpn_set_owd, "--owd",
			  "DCCP_QPOLICY_F_OWD", "DCCP modules" },
			{ cfg.edf, sbpn_set_edf, "--edf",
			  "DCCP_QPOLICY_ORDER_EDF", "DCCP modules" },
			{ cfg.newest, sbpn_set_newest, "--newest",
			  "DCCP_QPOLICY_ORDER_NEWEST", "DCCP modules" },
			{ cfg.frame, sbpn_set_frame, "--frame",
			  "DCCP_QPOLICY_F_FRAME", "DCCP modules" },
		};
		uint32_t svc = htonl(SERVICE_CODE);

		fd = socket(ss.ss_family, SOCK_DCCP, IPPROTO_DCCP);
		if (fd < 0) {
			fprintf(stderr, "sbpn-send: socket(SOCK_DCCP): %s%s\n", strerror(errno),
				errno == ESOCKTNOSUPPORT || errno == EPROTONOSUPPORT ?
				" (no DCCP in this kernel: modprobe -a dccp_ipv4 dccp_ipv6)" : "");
			exit(EXIT_RUNTIME);
		}
		if (setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_SERVICE, &svc, sizeof(svc)) ||
		    sbpn_set_ccid(fd, (uint8_t)cfg.ccid)) {
			fprintf(stderr, "sbpn-send: setting DCCP service/CCID %d: %s\n", cfg.ccid,
				strerror(errno));
			exit(EXIT_RUNTIME);
		}
		if (sbpn_set_policy(fd, cfg.policy)) {
			int e = errno;

			if (e == EINVAL && cfg.policy >= SBPN_POLICY_SBPN1 && !sbpn_kernel_has_modules())
				fprintf(stderr, "sbpn-send: --policy %s: the running kernel's DCCP "
					"does not have the SBPN policies (stock modules: "
					"/sys/module/dccp/version is absent); load the project's "
					"modules (make load, or run under scripts/vm-run)\n",
					sbpn_policy_name(cfg.policy));
			else if (e == EINVAL && cfg.policy >= SBPN_POLICY_SBPN1)
				fprintf(stderr, "sbpn-send: --policy %s: the loaded DCCP modules do not "
					"know this policy (EINVAL from DCCP_SOCKOPT_QPOLICY_ID); they are "
					"older than this program's header: reload them (make load)\n",
					sbpn_policy_name(cfg.policy));
			else
				fprintf(stderr, "sbpn-send: --policy %s: setsockopt(DCCP_SOCKOPT_QPOLICY_ID): %s\n",
					sbpn_policy_name(cfg.policy), strerror(e));
			exit(EXIT_RUNTIME);
		}
		if (cfg.tx_qlen >= 0 && sbpn_set_qlen(fd, (unsigned int)cfg.tx_qlen)) {
			fprintf(stderr, "sbpn-send: --tx-qlen %ld: %s\n", cfg.tx_qlen, strerror(errno));
			exit(EXIT_RUNTIME);
		}
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			if (!flags[i].on || !flags[i].set(fd, 1))
				continue;
			fprintf(stderr, "sbpn-send: %s: %s: %s (needs this project's %s)\n",
				flags[i].flag, flags[i].opt, strerror(errno), flags[i].needs);
			exit(EXIT_RUNTIME);
		}
	} else {
		fd = socket(ss.ss_family, cfg.transport == TR_UDP ? SOCK_DGRAM : SOCK_STREAM, 0);
		if (fd < 0) {
			perror("sbpn-send: socket");
			exit(EXIT_RUNTIME);
		}
		if (cfg.transport == TR_TCP)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	if (connect(fd, (struct sockaddr *)&ss, slen)) {
		fprintf(stderr, "sbpn-send: connect to %s over %s: %s\n", cfg.to,
			transport_name(cfg.transport), strerror(errno));
		exit(EXIT_RUNTIME);
	}
	return fd;
}

/* Send one TCP record (length prefix + payload); blocking, whole or error. */
static int tcp_send_all(int fd, const unsigned char *buf, uint32_t len)
{
	unsigned char pre[4] = { len, len >> 8, len >> 16, len >> 24 };
	struct iovec iov[2] = { { pre, 4 }, { (void *)buf, len } };
	size_t left = 4 + (size_t)len;

	while (left) {
		ssize_t n = writev(fd, iov, 2);

		if (n < 0) {
			if (errno == EINTR && !stop_signal)
				continue;
			return -1;
		}
		left -= (size_t)n;
		for (int i = 0; i < 2 && n > 0; i++) {
			size_t take = (size_t)n < iov[i].iov_len ? (size_t)n : iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + take;
			iov[i].iov_len -= take;
			n -= (ssize_t)take;
		}
	}
	return 0;
}

/* ---- the DCCP logs: CCID state and drop notices ---------------------- */

/* The format line and the metadata both DCCP logs start with. */
static void dccp_log_head(struct recfile *r, const char *format_line, uint64_t start_ns,
			  const char *kernel)
{
	fputs(format_line, r->f);
	rec_meta(r, "role", "send");
	rec_meta(r, "flow", "%s", cfg.flow);
	rec_meta(r, "transport", "dccp");
	rec_meta(r, "tool", "sbpn-send %s", SBPN_TOOL_VERSION);
	rec_meta(r, "kernel", "%s", kernel);
	rec_meta(r, "clock", "CLOCK_MONOTONIC");
	rec_meta(r, "start_ns", "%llu", (unsigned long long)start_ns);
	rec_meta(r, "policy", "%s", sbpn_policy_name(cfg.policy));
}

static struct recfile cclog;

static void cc_open(uint64_t start_ns, const char *kernel)
{
	cclog.path = cfg.cc_log;
	cclog.f = fopen(cfg.cc_log, "w");
	if (!cclog.f) {
		fprintf(stderr, "sbpn-send: --cc-log %s: %s\n", cfg.cc_log, strerror(errno));
		exit(EXIT_RUNTIME);
	}
	dccp_log_head(&cclog, "# sbpn-cc 1\n", start_ns, kernel);
	rec_meta(&cclog, "ccid", "%d", cfg.ccid);
	rec_meta(&cclog, "interval_ms", "%llu", (unsigned long long)cfg.cc_interval_ms);
	rec_meta(&cclog, "missing", "- (CCID 2 has no tx info; qpolicy counters need the SBPN kernel)");
	rec_columns(&cclog, "t_ns\tx_Bps\tx_recv_Bps\tx_calc_Bps\trtt_us\tp\trto_us\tipi_us\t"
		    "q_queued\tq_sent\tq_expired\tq_expired_sent\tq_evicted\tq_refused\t"
		    "q_purged\tq_ccid_err\tq_qlen\tq_frame");
}

static void cc_sample(int fd)
{
	struct sbpn_tx_info ti;
	struct sbpn_qstats q;
	uint64_t t = now_ns();

	fprintf(cclog.f, "%llu", (unsigned long long)t);
	if (sbpn_get_tx_info(fd, &ti) == 0)
		fprintf(cclog.f, "\t%.2f\t%.2f\t%u\t%u\t%.6f\t%u\t%u", ti.x_Bps, ti.x_recv_Bps,
			ti.x_calc_Bps, ti.rtt_us, ti.p, ti.rto_us, ti.ipi_us);
	else
		fputs("\t-\t-\t-\t-\t-\t-\t-", cclog.f);
	if (sbpn_get_qstats(fd, &q) == 0)
		fprintf(cclog.f, "\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu",
			(unsigned long long)q.queued, (unsigned long long)q.sent,
			(unsigned long long)q.expired, (unsigned long long)q.expired_sent,
			(unsigned long long)q.evicted, (unsigned long long)q.refused,
			(unsigned long long)q.purged, (unsigned long long)q.ccid_err,
			(unsigned long long)q.qlen, (unsigned long long)q.frame);
	else
		fputs("\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-", cclog.f);
	fputc('\n', cclog.f);
}

static struct recfile notices;
static size_t n_notices[SBPN_DROP_COUNT];

static void notices_open(uint64_t start_ns, const char *kernel)
{
	notices.path = cfg.notices;
	notices.f = fopen(cfg.notices, "w");
	if (!notices.f) {
		fprintf(stderr, "sbpn-send: --notices %s: %s\n", cfg.notices, strerror(errno));
		exit(EXIT_RUNTIME);
	}
	dccp_log_head(&notices, "# sbpn-notices 1\n", start_ns, kernel);
	rec_columns(&notices, "seq\tclass\treason\texpiry_ns\tnotice_ns");
}

/* The key-frame loop (keyframe.h): its state, and the frame last built */
static struct kf_send kf;
static int64_t kf_cur_frame = -1;

/* Record every notice waiting on the error queue (to --notices FILE, if
 * given) and, with --keyframe-on-loss notice, report each video packet's
 * frame as lost; -1 on a socket error. */
static int notices_drain(int fd, unsigned char *buf)
{
	struct sbpn_notice n;
	struct sbpn_hdr h;
	int r;

	while ((r = sbpn_read_notice(fd, buf, SBPN_MAX_PAYLOAD, &n)) == 1) {
		if (hdr_decode(buf, n.len, &h)) {
			fprintf(stderr, "sbpn-send: a drop notice without our payload header\n");
			return -1;
		}
		if (notices.f)
			fprintf(notices.f, "%u\t%s\t%s\t%llu\t%llu\n", h.seq, class_name(h.cls),
				sbpn_drop_reason_name(n.reason), (unsigned long long)n.expiry_ns,
				(unsigned long long)now_ns());
		n_notices[n.reason]++;
		if ((cfg.kf & KF_BIT(KF_NOTICE)) && h.cls == CLASS_VIDEO && (h.fi & SBPN_FI_FRAME))
			kf_send_report(&kf, kf_extend(kf_cur_frame, h.frame), KF_NOTICE);
	}
	if (r < 0)
		fprintf(stderr, "sbpn-send: reading drop notices: %s\n", strerror(errno));
	return r;
}

/* One message from the receiver: a key-frame request (SBPN_CLASS_PLI,
 * seq = the first frame it could not decode). */
static void feedback_one(const unsigned char *p, size_t len)
{
	struct sbpn_hdr h;

	if (hdr_decode(p, len, &h) || h.cls != SBPN_CLASS_PLI)
		return;
	kf_send_report(&kf, (int64_t)h.seq, KF_RECEIVER);
}

/* Read what the receiver sent back on the connection (UDP: to our
 * address) without blocking; -1 on a broken TCP stream. */
static int feedback_drain(int fd)
{
	static unsigned char fb[2 * (SBPN_MAX_PAYLOAD + 4)];
	static size_t have;

	for (;;) {
		ssize_t n = recv(fd, fb + have, sizeof(fb) - have, MSG_DONTWAIT);

		if (n <= 0)	/* nothing waiting, the receiver closed, or an ICMP error */
			return 0;
		if (cfg.transport != TR_TCP) {
			feedback_one(fb, (size_t)n);
			continue;
		}
		have += (size_t)n;
		while (have >= 4) {
			uint32_t len = fb[0] | fb[1] << 8 | fb[2] << 16 | (uint32_t)fb[3] << 24;

			if (len > SBPN_MAX_PAYLOAD) {
				fprintf(stderr, "sbpn-send: feedback record length %u: stream corrupt\n", len);
				return -1;
			}
			if (have < 4 + (size_t)len)
				break;
			feedback_one(fb + 4, len);
			memmove(fb, fb + 4 + len, have - 4 - len);
			have -= 4 + len;
		}
	}
}

/* One packet to send at this instant: the schedule's, or a piece of a
 * frame the loop re-cut as a key frame. */
struct out_pkt {
	struct sched_pkt p;
	uint32_t pieces;	/* packets of its frame */
	int forced;		/* enum kf_why */
};

static int push_out(struct out_pkt **v, size_t *n, size_t *cap, const struct sched_pkt *p,
		    int forced)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct out_pkt *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[*n].p = *p;
	(*v)[*n].forced = forced;
	(*v)[(*n)++].pieces = 1;
	return 0;
}

/*
 * The packets of the instant s->p[start..end): the schedule's, except that
 * with the loop each frame's key flag is the loop's decision, and an Ekiga
 * frame that turns key is re-cut at the key-frame size of its draw.  Audio
 * or data between a frame's packets (a trace's order) is no part of the
 * frame: it keeps its place and does not count among the frame's pieces.
 */
static int build_instant(const struct schedule *s, const struct model *m, size_t start, size_t end,
			 struct out_pkt **v, size_t *n, size_t *cap)
{
	int32_t frame = -1;	/* the frame decided last, its key and why */
	int key = -1, forced = KF_NONE;
	bool recut = false;

	*n = 0;
	for (size_t i = start; i < end; i++) {
		const struct sched_pkt *p = &s->p[i];
		struct sched_pkt q = *p;

		if (p->cls != CLASS_VIDEO || p->frame < 0) {	/* audio, data, video without frames */
			if (push_out(v, n, cap, p, KF_NONE))
				return -1;
			continue;
		}
		if (p->frame != frame) {	/* the frame's first packet */
			frame = p->frame;
			forced = KF_NONE;
			key = p->key;
			if (cfg.kf) {
				key = kf_send_frame(&kf, p->frame, p->key, &forced);
				kf_cur_frame = p->frame;
			}
			recut = key != p->key && s->draw;
			if (recut) {
				bool clamped;
				uint64_t left = frame_bytes_of(m, s->draw[p->frame], key, &clamped);

				q.key = (int8_t)key;
				while (left) {
					q.size = left > m->video_max_packet ? (uint32_t)m->video_max_packet
									    : (uint32_t)left;
					if (q.size < SBPN_HDR_LEN)
						q.size = SBPN_HDR_LEN;
					left -= left > m->video_max_packet ? m->video_max_packet : left;
					if (push_out(v, n, cap, &q, forced))
						return -1;
				}
				continue;
			}
		}
		if (recut)	/* re-cut whole at its first packet */
			continue;
		q.key = (int8_t)key;
		if (push_out(v, n, cap, &q, forced))
			return -1;
	}
	/* each frame's piece count: its packets in this instant */
	for (size_t j = 0; j < *n; j++) {
		uint32_t pieces = 0;

		if ((*v)[j].p.cls != CLASS_VIDEO || (*v)[j].p.frame < 0)
			continue;
		for (size_t k = 0; k < *n; k++)
			pieces += (*v)[k].p.cls == CLASS_VIDEO && (*v)[k].p.frame == (*v)[j].p.frame;
		(*v)[j].pieces = pieces;
	}
	return 0;
}

static int push_i64(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 4096;
		int64_t *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* Sleep until abs, taking the CCID samples that fall due before it. */
static int wait_until(int fd, uint64_t abs, uint64_t *next_cc)
{
	while (cclog.f && *next_cc <= abs) {
		if (sleep_until(*next_cc))
			return -1;
		cc_sample(fd);
		*next_cc += cfg.cc_interval_ms * 1000000ull;
	}
	return sleep_until(abs);
}

/* ---- main ------------------------------------------------------------ */

int main(int argc, char **argv)
{
	struct model m;
	struct schedule s;
	struct recfile rec = { 0 };
	char kernel[128];
	unsigned char *buf;
	int64_t *late = NULL, *wake = NULL;
	struct out_pkt *inst = NULL;
	size_t nlate = 0, nwake = 0, n_ok = 0, n_eagain = 0, n_err = 0, sent_upto = 0;
	size_t cap_late = 0, cap_wake = 0, ninst = 0, cap_inst = 0, seq = 0, sched_done = 0;
	uint64_t start, next_cc, life_ns;
	unsigned int cmsgs = 0, qlen = 0;
	int fr = 0, sp = 0, pd = 0, lr = 0, ow = 0, ed = 0, nw = 0, fm = 0;
	uint32_t cbr_payload = 0;
	uint16_t flow_id;
	int fd = -1, rc = 0;
	bool fatal = false;

	parse_args(argc, argv);
	model_defaults(&m);
	if (cfg.model_path && model_load(&m, cfg.model_path))
		return EXIT_USAGE;
	if (cfg.duration_s > 0)
		m.duration_s = cfg.duration_s;
	if (cfg.lifetime_ms >= 0)
		m.lifetime_ms = cfg.lifetime_ms;
	if (cfg.silence)
		m.silence_suppression = true;
	life_ns = (uint64_t)llround(m.lifetime_ms * 1e6);

	if (!strcmp(cfg.source, "ekiga"))
		rc = sched_ekiga(&s, &m, cfg.seed);
	else if (!strcmp(cfg.source, "cbr"))
		rc = sched_cbr(&s, &m, cfg.transport, &cbr_payload);
	else
		rc = sched_trace(&s, cfg.trace_path, &m, life_ns,
				 cfg.duration_s > 0 ? (uint64_t)llround(cfg.duration_s * 1e9) : 0);
	if (rc) {
		if (strcmp(cfg.source, "trace"))
			perror("sbpn-send: building the schedule");
		return EXIT_USAGE;
	}
	if (cfg.kf && !s.coded) {	/* --stats without --out too */
		fprintf(stderr, "sbpn-send: --keyframe-on-loss needs coding dependencies: a model "
			"with video_gop > 0 (userspace/models/ekiga-gop.model) or a trace with key "
			"marks\n");
		return EXIT_USAGE;
	}
	if (cfg.stats)
		print_stats(&s, &m);
	if (!cfg.out)
		return 0;
	/* the GOP restarts at a forced key frame (Ekiga); a trace keeps its marks */
	kf_send_init(&kf, m.video_gop, !strcmp(cfg.source, "ekiga"));

	install_stop_handlers();
	/* wake-ups on time to the microsecond, not the default 50 us slack */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	kernel_release(kernel, sizeof(kernel));
	flow_id = cfg.flow_id >= 0 ? (uint16_t)cfg.flow_id : flow_id_of(cfg.flow);
	if (!cfg.dry_run) {
		fd = open_socket();
		if (cfg.transport == TR_DCCP) {
			cmsgs = sbpn_policy_cmsgs(cfg.policy);
			if (sbpn_get_qlen(fd, &qlen))
				qlen = 0;
			/* a stock kernel refuses the option: it is off there */
			if (sbpn_get_faster_restart(fd, &fr))
				fr = 0;
			if (sbpn_get_size_pacing(fd, &sp))
				sp = 0;
			if (sbpn_get_predict(fd, &pd))
				pd = 0;
			if (sbpn_get_last_rtt(fd, &lr))
				lr = 0;
			if (sbpn_get_owd(fd, &ow))
				ow = 0;
			if (sbpn_get_edf(fd, &ed))
				ed = 0;
			if (sbpn_get_newest(fd, &nw))
				nw = 0;
			if (sbpn_get_frame(fd, &fm))
				fm = 0;
		}
	} else if (cfg.transport == TR_DCCP) {
		cmsgs = sbpn_policy_cmsgs(cfg.policy);
		qlen = cfg.tx_qlen >= 0 ? (unsigned int)cfg.tx_qlen : 5;
		fr = cfg.faster_restart;
		sp = cfg.size_pacing;
		pd = cfg.predict;
		lr = cfg.last_rtt;
		ow = cfg.owd;
		ed = cfg.edf;
		nw = cfg.newest;
		fm = cfg.frame;
	}
	buf = calloc(1, SBPN_MAX_PAYLOAD);
	if (!buf || rec_open(&rec, cfg.out)) {
		fprintf(stderr, "sbpn-send: %s: %s\n", cfg.out, strerror(errno));
		return EXIT_RUNTIME;
	}
	/* start on a whole millisecond a little ahead, so packet 0 is not late */
	start = (now_ns() / 1000000 + 5) * 1000000;
	rec_meta(&rec, "role", "send");
	rec_meta(&rec, "flow", "%s", cfg.flow);
	rec_meta(&rec, "transport", "%s", transport_name(cfg.transport));
	rec_meta(&rec, "tool", "sbpn-send %s", SBPN_TOOL_VERSION);
	rec_meta(&rec, "kernel", "%s", kernel);
	rec_meta(&rec, "clock", "CLOCK_MONOTONIC");
	rec_meta(&rec, "start_ns", "%llu", (unsigned long long)start);
	if (cfg.transport == TR_DCCP) {
		rec_meta(&rec, "policy", "%s", sbpn_policy_name(cfg.policy));
		rec_meta(&rec, "ccid", "%d", cfg.ccid);
		rec_meta(&rec, "tx_qlen", "%u", qlen);
		rec_meta(&rec, "faster_restart", "%d", fr);
		rec_meta(&rec, "size_pacing", "%d", sp);
		rec_meta(&rec, "predict", "%d", pd);
		rec_meta(&rec, "last_rtt", "%d", lr);
		rec_meta(&rec, "owd", "%d", ow);
		rec_meta(&rec, "edf", "%d", ed);
		rec_meta(&rec, "newest", "%d", nw);
		rec_meta(&rec, "frame", "%d", fm);
	} else {
		rec_meta(&rec, "policy", "none");
		rec_meta(&rec, "ccid", "none");
		rec_meta(&rec, "tx_qlen", "none");
		rec_meta(&rec, "faster_restart", "none");
		rec_meta(&rec, "size_pacing", "none");
		rec_meta(&rec, "predict", "none");
		rec_meta(&rec, "last_rtt", "none");
		rec_meta(&rec, "owd", "none");
		rec_meta(&rec, "edf", "none");
		rec_meta(&rec, "newest", "none");
		rec_meta(&rec, "frame", "none");
	}
	rec_meta(&rec, "source", "%s", cfg.source);
	rec_meta(&rec, "seed", "%llu", (unsigned long long)cfg.seed);
	if (!strcmp(cfg.source, "trace"))
		rec_meta(&rec, "trace", "%s", cfg.trace_path);
	else
		rec_meta(&rec, "model", "%s", cfg.model_path ? cfg.model_path : "builtin");
	rec_meta(&rec, "lifetime_ns", "%llu", (unsigned long long)life_ns);
	rec_meta(&rec, "duration_ns", "%llu", (unsigned long long)s.duration_ns);
	rec_meta(&rec, "flow_id", "%u", flow_id);
	rec_meta(&rec, "to", "%s", cfg.dry_run ? "none" : cfg.to);
	rec_meta(&rec, "silence_suppression", "%d", m.silence_suppression);
	rec_meta(&rec, "priority_cmsg", "%d", !!(cmsgs & SBPN_CMSG_PRIORITY));
	rec_meta(&rec, "expiry_cmsg", "%d", !!(cmsgs & SBPN_CMSG_EXPIRY));
	rec_meta(&rec, "frame_cmsg", "%d", !!(cmsgs & SBPN_CMSG_FRAME));
	if (!strcmp(cfg.source, "cbr"))
		rec_meta(&rec, "cbr_payload", "%u", cbr_payload);
	if (s.coded) {
		/* coding dependencies: two more columns (records.rst) */
		rec_meta(&rec, "video_gop", "%llu", (unsigned long long)m.video_gop);
		if (!strcmp(cfg.source, "ekiga"))
			rec_meta(&rec, "keyframe_ratio", "%g", m.keyframe_ratio);
		if (cfg.kf) {
			/* the key-frame loop: which frames it made key, and why */
			rec_meta(&rec, "keyframe_on_loss", "%s", cfg.keyframe_on_loss);
			rec_columns(&rec, "seq\tclass\tsize\tprio\tplanned_ns\tsent_ns\texpiry_ns\t"
				    "result\tframe\tkey\tforced");
		} else {
			rec_columns(&rec, "seq\tclass\tsize\tprio\tplanned_ns\tsent_ns\texpiry_ns\t"
				    "result\tframe\tkey");
		}
	} else {
		rec_columns(&rec, "seq\tclass\tsize\tprio\tplanned_ns\tsent_ns\texpiry_ns\tresult");
	}

	if (cfg.cc_log)
		cc_open(start, kernel);
	if (cfg.notices)
		notices_open(start, kernel);
	next_cc = start;
	for (size_t i = 0; i < s.n && !fatal; ) {
		uint64_t t = s.p[i].t_ns;
		size_t end = i;

		if (!cfg.dry_run && wait_until(fd, start + t, &next_cc))
			break;
		/* the receiver's requests so far decide this instant's frame */
		if ((cfg.kf & KF_BIT(KF_RECEIVER)) && !cfg.dry_run && feedback_drain(fd) < 0)
			fatal = true;
		while (end < s.n && s.p[end].t_ns == t)
			end++;
		if (build_instant(&s, &m, i, end, &inst, &ninst, &cap_inst)) {
			perror("sbpn-send");
			fatal = true;
			break;
		}
		sched_done = end;
		i = end;
		for (size_t o = 0; o < ninst; o++, seq++) {
			const struct sched_pkt *p = &inst[o].p;
			uint64_t planned = start + p->t_ns;
			uint64_t expiry = p->lifetime_ns ? planned + p->lifetime_ns : 0;
			struct sbpn_hdr h = { .seq = (uint32_t)seq, .cls = p->cls,
					      .flow_id = flow_id, .expiry_ns = expiry };
			uint64_t sent = 0;
			const char *result = "dry";

			if (s.coded && p->frame >= 0) {
				h.frame = (uint16_t)p->frame;
				h.pieces = (uint8_t)inst[o].pieces;
				h.fi = SBPN_FI_FRAME | (p->key == 1 ? SBPN_FI_KEY : 0);
			}
			if (!cfg.dry_run) {
				int r;

				sent = now_ns();
				h.sent_ns = sent;
				hdr_encode(buf, &h);
				/* a video frame's pieces name it: its index + 1 */
				if (cfg.transport == TR_DCCP)
					r = sbpn_send_frame(fd, buf, p->size, p->prio, expiry,
							    p->frame >= 0 ? (uint32_t)p->frame + 1 : 0,
							    cmsgs, MSG_DONTWAIT) < 0 ? -1 : 0;
				else if (cfg.transport == TR_UDP)
					r = send(fd, buf, p->size, MSG_DONTWAIT) < 0 ? -1 : 0;
				else
					r = tcp_send_all(fd, buf, p->size);
				if (push_i64(&late, &nlate, &cap_late, (int64_t)(sent - planned)) ||
				    (o == 0 && push_i64(&wake, &nwake, &cap_wake,
							(int64_t)(sent - planned)))) {
					perror("sbpn-send");
					fatal = true;
				}
				if (r == 0) {
					result = "ok";
					n_ok++;
				} else {
					int e = errno;

					result = errno_name(e);
					if (e == EAGAIN)
						n_eagain++;
					else
						n_err++;
					if (e == EPIPE || e == ECONNRESET || e == ENOTCONN ||
					    (e == EINTR && stop_signal)) {
						fprintf(stderr, "sbpn-send: packet %zu: %s\n", seq, strerror(e));
						fatal = true;
					}
				}
			}
			fprintf(rec.f, "%zu\t%s\t%u\t%u\t%llu\t%llu\t%llu\t%s", seq,
				class_name(p->cls), p->size, p->prio,
				(unsigned long long)planned, (unsigned long long)sent,
				(unsigned long long)expiry, result);
			if (s.coded && p->frame >= 0)
				fprintf(rec.f, "\t%d\t%d", (int)p->frame, (int)p->key);
			else if (s.coded)
				fputs("\t-\t-", rec.f);
			if (cfg.kf)
				fprintf(rec.f, "\t%s", kf_why_name(inst[o].forced));
			fputc('\n', rec.f);
			sent_upto = seq + 1;
			if (fatal)
				break;
		}
		if ((notices.f || (cfg.kf & KF_BIT(KF_NOTICE))) && !cfg.dry_run &&
		    notices_drain(fd, buf) < 0)
			fatal = true;
	}

	if (!cfg.dry_run && !stop_signal && !fatal) {
		uint64_t end = now_ns() + cfg.linger_ms * 1000000ull;

		if (cfg.transport == TR_UDP) {
			/* the end marker, three times in case of loss */
			struct sbpn_hdr h = { .seq = (uint32_t)s.n, .cls = SBPN_CLASS_END,
					      .flow_id = flow_id };

			for (int k = 0; k < 3 && !stop_signal; k++) {
				if (wait_until(fd, now_ns() + (k ? 20000000ull : 0), &next_cc))
					break;
				h.sent_ns = now_ns();
				hdr_encode(buf, &h);
				send(fd, buf, SBPN_HDR_LEN, MSG_DONTWAIT);
			}
		} else {
			wait_until(fd, end, &next_cc);
		}
	}
	/* what expired while the queue drained during the linger */
	if (notices.f && !stop_signal && !fatal && notices_drain(fd, buf) < 0)
		fatal = true;

	sort_i64(late, nlate);
	sort_i64(wake, nwake);
	/* with the loop, re-cut frames change the count: what was made, and
	 * the schedule's rest */
	rec_trailer(&rec, "packets", "%zu", cfg.kf ? seq + (s.n - sched_done) : s.n);
	rec_trailer(&rec, "recorded", "%zu", sent_upto);
	if (cfg.kf) {
		rec_trailer(&rec, "keyframes_forced_receiver", "%zu", kf.forced[KF_RECEIVER]);
		rec_trailer(&rec, "keyframes_forced_notice", "%zu", kf.forced[KF_NOTICE]);
		rec_trailer(&rec, "loss_reports_receiver", "%zu", kf.reports[KF_RECEIVER]);
		rec_trailer(&rec, "loss_reports_notice", "%zu", kf.reports[KF_NOTICE]);
		rec_trailer(&rec, "loss_reports_ignored", "%zu",
			    kf.ignored[KF_RECEIVER] + kf.ignored[KF_NOTICE]);
	}
	if (!cfg.dry_run) {
		struct sbpn_qstats q;

		rec_trailer(&rec, "sent_ok", "%zu", n_ok);
		rec_trailer(&rec, "eagain", "%zu", n_eagain);
		rec_trailer(&rec, "errors", "%zu", n_err);
		rec_trailer(&rec, "lateness_p50_ns", "%lld", (long long)quantile_sorted(late, nlate, 0.5));
		rec_trailer(&rec, "lateness_p99_ns", "%lld", (long long)quantile_sorted(late, nlate, 0.99));
		rec_trailer(&rec, "lateness_max_ns", "%lld", nlate ? (long long)late[nlate - 1] : 0LL);
		/* the first packet of each instant: how late the wake-up was */
		rec_trailer(&rec, "wakeup_p50_ns", "%lld", (long long)quantile_sorted(wake, nwake, 0.5));
		rec_trailer(&rec, "wakeup_p99_ns", "%lld", (long long)quantile_sorted(wake, nwake, 0.99));
		rec_trailer(&rec, "wakeup_max_ns", "%lld", nwake ? (long long)wake[nwake - 1] : 0LL);
		if (cfg.transport == TR_DCCP && sbpn_get_qstats(fd, &q) == 0) {
			rec_trailer(&rec, "qpolicy_queued", "%llu", (unsigned long long)q.queued);
			rec_trailer(&rec, "qpolicy_sent", "%llu", (unsigned long long)q.sent);
			rec_trailer(&rec, "qpolicy_expired", "%llu", (unsigned long long)q.expired);
			rec_trailer(&rec, "qpolicy_expired_sent", "%llu", (unsigned long long)q.expired_sent);
			rec_trailer(&rec, "qpolicy_evicted", "%llu", (unsigned long long)q.evicted);
			rec_trailer(&rec, "qpolicy_refused", "%llu", (unsigned long long)q.refused);
			rec_trailer(&rec, "qpolicy_purged", "%llu", (unsigned long long)q.purged);
			rec_trailer(&rec, "qpolicy_ccid_err", "%llu", (unsigned long long)q.ccid_err);
			rec_trailer(&rec, "qpolicy_qlen", "%llu", (unsigned long long)q.qlen);
			rec_trailer(&rec, "qpolicy_xmit_err", "%llu", (unsigned long long)q.xmit_err);
			rec_trailer(&rec, "qpolicy_frame", "%llu", (unsigned long long)q.frame);
		}
		fprintf(stderr, "sbpn-send: %s %s: %zu scheduled, %zu ok, %zu EAGAIN, %zu other errors; "
			"lateness p50 %.1f us, p99 %.1f us, max %.1f us (wake-ups: p50 %.1f, p99 %.1f, max %.1f us)\n", cfg.flow,
			transport_name(cfg.transport), s.n, n_ok, n_eagain, n_err,
			quantile_sorted(late, nlate, 0.5) / 1e3,
			quantile_sorted(late, nlate, 0.99) / 1e3,
			nlate ? late[nlate - 1] / 1e3 : 0.0,
			quantile_sorted(wake, nwake, 0.5) / 1e3, quantile_sorted(wake, nwake, 0.99) / 1e3,
			nwake ? wake[nwake - 1] / 1e3 : 0.0);
	}
	if (stop_signal)
		rec_trailer(&rec, "interrupted", "%s", sigabbrev_np(stop_signal));
	rc = stop_signal || fatal ? EXIT_RUNTIME : 0;
	if (!rc)
		rec_trailer(&rec, "complete", "1");
	if (rec_close(&rec)) {
		fprintf(stderr, "sbpn-send: writing %s failed\n", cfg.out);
		rc = EXIT_RUNTIME;
	}
	if (cclog.f) {
		if (!rc)
			rec_trailer(&cclog, "complete", "1");
		if (rec_close(&cclog))
			rc = EXIT_RUNTIME;
	}
	if (notices.f) {
		for (int r = 0; r < SBPN_DROP_COUNT; r++)
			rec_trailer(&notices, sbpn_drop_reason_name(r), "%zu", n_notices[r]);
		if (!rc)
			rec_trailer(&notices, "complete", "1");
		if (rec_close(&notices))
			rc = EXIT_RUNTIME;
	}
	if (fd >= 0) {
		if (cfg.transport == TR_TCP)
			shutdown(fd, SHUT_WR);
		close(fd);
	}
	if (stop_signal)
		fprintf(stderr, "sbpn-send: stopped by SIG%s, records partial\n",
			sigabbrev_np(stop_signal));
	free(buf);
	free(late);
	free(wake);
	free(inst);
	sched_free(&s);
	return rc;
}
