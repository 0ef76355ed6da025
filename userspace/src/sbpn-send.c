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
 *     video packet was discarded (keyframe.h; traffic.rst);
 *   - --source vp8 makes each video frame with a VP8 encoder (vp8enc.h)
 *     whose rate follows what CCID3 allows, sends its bitstream, and
 *     writes each capture to --frames and each coded frame to --bitstream.
 * Exit: 0 ok, 1 runtime failure or signal, 2 usage or input error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/dccp.h>
#include <vpx/vpx_codec.h>

#include "config.h"
#include "keyframe.h"
#include "records.h"
#include "sbpn.h"
#include "schedule.h"
#include "util.h"
#include "vp8enc.h"

#define SERVICE_CODE 0x5342504e		/* "SBPN", both ends set it */

static struct {
	enum transport transport;
	const char *to, *out, *flow, *model_path, *trace_path, *cc_log, *notices;
	const char *source;
	const char *frames_out, *bitstream;	/* --source vp8 */
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
"  --source S             ekiga (default), cbr, trace or vp8 (the model's audio and\n"
"                         a VP8 encoder's video at the rate CCID3 allows)\n"
"  --frames FILE          --source vp8: one line per camera capture (records.rst)\n"
"  --bitstream FILE       --source vp8: every coded frame, as IVF\n"
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
	       O_NOTICES, O_KF, O_FRAMES, O_BITSTREAM,
	       O_HELP };
	static const struct option opts[] = {
		{ "transport", required_argument, 0, O_TRANSPORT },
		{ "to", required_argument, 0, O_TO },
		{ "out", required_argument, 0, O_OUT },
		{ "flow", required_argument, 0, O_FLOW },
		{ "flow-id", required_argument, 0, O_FLOWID },
		{ "source", required_argument, 0, O_SOURCE },
		{ "model", required_argument, 0, O_MODEL },
		{ "frames", required_argument, 0, O_FRAMES },
		{ "bitstream", required_argument, 0, O_BITSTREAM },
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
			if (strcmp(optarg, "ekiga") && strcmp(optarg, "cbr") && strcmp(optarg, "trace") &&
			    strcmp(optarg, "vp8"))
				die_usage("--source: expected ekiga, cbr, trace or vp8, got '%s'", optarg);
			cfg.source = optarg;
			break;
		case O_FRAMES: cfg.frames_out = optarg; break;
		case O_BITSTREAM: cfg.bitstream = optarg; break;
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
	if (strcmp(cfg.source, "vp8") && (cfg.frames_out || cfg.bitstream))
		die_usage("%s", "--frames and --bitstream go with --source vp8");

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
		if ((cfg.kf & KF_BIT(KF_NOTICE)) && h.cls == CLASS_VIDEO && (h.fi & SBPN_FI_FRAME) &&
		    !(h.fi & SBPN_FI_DROPPABLE))
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
	const uint8_t *data;	/* bitstream after the header (--source vp8), or NULL */
	uint32_t data_len;
	int64_t wire;		/* the header's frame number if not p.frame (vp8), or -1 */
	uint8_t fi;		/* SBPN_FI_DROPPABLE, SBPN_FI_PREV_DROPPABLE */
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
	(*v)[*n].data = NULL;
	(*v)[*n].data_len = 0;
	(*v)[*n].wire = -1;
	(*v)[*n].fi = 0;
	(*v)[(*n)++].pieces = 1;
	return 0;
}

/* ---- the VP8 call ----------------------------------------------------- */

static struct vp8enc *enc;
static struct recfile frames_rec;
static FILE *ivf;
static uint32_t ivf_frames;
static int ivf_w, ivf_h;
static double ivf_fps;
static uint64_t vp8_start;	/* the run's start_ns */
static double vp8_allowed_bps;	/* what CCID3 leaves the video, 0: not known */
static size_t vp8_status_count[4];
/* The header numbers coded frames 0, 1, ... so that a receiver sees a lost
 * frame as a gap; the records keep the capture index. */
static int64_t vp8_coded;
static bool vp8_prev_droppable;

static int vp8_open(const struct model *m, uint64_t start, const char *kernel)
{
	struct vp8_params vp = {
		.width = (int)m->vp8_width, .height = (int)m->vp8_height, .fps = m->video_fps,
		.layers = (int)m->vp8_layers, .min_kbps = (uint32_t)m->vp8_min_kbps,
		.max_kbps = (uint32_t)m->vp8_max_kbps, .start_kbps = (uint32_t)m->vp8_start_kbps,
		.cpu_used = (int)m->vp8_cpu_used, .seed = cfg.seed, .ladder = m->vp8_ladder,
	};

	enc = vp8enc_new(&vp);
	if (!enc)
		return -1;
	vp8_start = start;
	ivf_w = vp.width;
	ivf_h = vp.height;
	ivf_fps = vp.fps;
	if (cfg.bitstream) {
		ivf = fopen(cfg.bitstream, "wb");
		if (!ivf || ivf_write_header(ivf, vp.width, vp.height, vp.fps, 0)) {
			fprintf(stderr, "sbpn-send: --bitstream %s: %s\n", cfg.bitstream, strerror(errno));
			return -1;
		}
	}
	if (!cfg.frames_out)
		return 0;
	frames_rec.path = cfg.frames_out;
	frames_rec.f = fopen(cfg.frames_out, "w");
	if (!frames_rec.f) {
		fprintf(stderr, "sbpn-send: --frames %s: %s\n", cfg.frames_out, strerror(errno));
		return -1;
	}
	fputs("# sbpn-frames 1\n", frames_rec.f);
	rec_meta(&frames_rec, "role", "send");
	rec_meta(&frames_rec, "flow", "%s", cfg.flow);
	rec_meta(&frames_rec, "tool", "sbpn-send %s", SBPN_TOOL_VERSION);
	rec_meta(&frames_rec, "kernel", "%s", kernel);
	rec_meta(&frames_rec, "clock", "CLOCK_MONOTONIC");
	rec_meta(&frames_rec, "start_ns", "%llu", (unsigned long long)start);
	rec_meta(&frames_rec, "codec", "vp8");
	rec_meta(&frames_rec, "libvpx", "%s", vpx_codec_version_str());
	rec_meta(&frames_rec, "width", "%d", vp.width);
	rec_meta(&frames_rec, "height", "%d", vp.height);
	rec_meta(&frames_rec, "fps", "%g", vp.fps);
	rec_meta(&frames_rec, "layers", "%d", vp.layers);
	rec_meta(&frames_rec, "scene_seed", "%llu", (unsigned long long)vp.seed);
	rec_meta(&frames_rec, "min_kbps", "%u", vp.min_kbps);
	rec_meta(&frames_rec, "max_kbps", "%u", vp.max_kbps);
	rec_meta(&frames_rec, "start_kbps", "%u", vp.start_kbps);
	rec_meta(&frames_rec, "cpu_used", "%d", vp.cpu_used);
	rec_meta(&frames_rec, "ladder", "%d", vp.ladder);
	rec_columns(&frames_rec, "frame\tcapture_ns\tstatus\tkey\tlayer\trefs\tbytes\tpieces\t"
		    "width\theight\ttarget_kbps\tallowed_kbps\tq\tencode_us");
	return 0;
}

/* The rate CCID3 allows the video: X less the audio's payload rate, less
 * our header's share of each full piece (X counts payload bytes).  The
 * encoder is told it with the next capture (vp8_prepare()), when it is
 * idle. */
static void vp8_rate(int fd, const struct model *m)
{
	struct sbpn_tx_info ti;
	double audio_bps = m->audio_payload * 8 * 1000.0 / m->audio_interval_ms;
	double piece = (double)m->video_max_packet;

	/* before its first RTT sample CCID3's X is a start value, not a word
	 * about the path: the encoder keeps its start rate until then */
	if (cfg.transport != TR_DCCP || fd < 0 || sbpn_get_tx_info(fd, &ti) || ti.x_Bps <= 0 ||
	    !ti.rtt_us)
		return;
	vp8_allowed_bps = (ti.x_Bps * 8 - audio_bps) * (piece - SBPN_HDR_LEN) / piece;
	if (vp8_allowed_bps < 1)
		vp8_allowed_bps = 1;
}

static uint32_t layer_prio(const struct model *m, int layer)
{
	return (uint32_t)(layer == 0 ? m->video_priority :
			  layer == 1 ? m->video_priority_t1 : m->video_priority_t2);
}

/* One capture for the encoder, and what it made of it. */
struct vp8_job {
	struct sched_pkt p;	/* the capture's placeholder in the schedule */
	double allowed_bps;	/* what CCID3 allowed the video when it was taken */
	struct vp8_frame f;
	enum vp8_status st;
	int err;
	uint64_t took_ns;
};

/* Before a capture goes to the encoder (sending thread, encoder idle):
 * the rate CCID3 allows, and a key frame if a reported loss asks for one. */
static void vp8_prepare(struct vp8_job *j, const struct sched_pkt *p)
{
	j->p = *p;
	j->allowed_bps = vp8_allowed_bps;
	vp8enc_set_rate(enc, vp8_allowed_bps);
	if (cfg.kf) {	/* a loss reported: the next coded frame is a key frame */
		int forced;

		if (kf_send_frame(&kf, vp8_coded, 0, &forced))
			vp8enc_request_key(enc);
		kf_cur_frame = vp8_coded;
	}
}

/* Draw and encode the capture (the encoder's thread, or inline). */
static void vp8_encode(struct vp8_job *j)
{
	uint64_t t0 = now_ns();

	j->err = vp8enc_capture(enc, (uint64_t)j->p.frame, &j->f, &j->st);
	j->took_ns = now_ns() - t0;
}

/* Cut what the encoder made into packets (appended to *v) and record the
 * capture; -1 on an error. */
static int vp8_packetise(const struct vp8_job *j, const struct model *m,
			 struct out_pkt **v, size_t *n, size_t *cap)
{
	static const char *const status_name[] = { "coded", "skipped", "dropped", "busy" };
	uint32_t chunk = (uint32_t)m->video_max_packet - SBPN_HDR_LEN, pieces = 0;
	const struct vp8_frame *f = &j->f;
	char refs[64] = "-";

	if (j->err)
		return -1;
	vp8_status_count[j->st]++;
	if (j->st == VP8_CODED) {
		struct sched_pkt q = j->p;
		size_t off = 0, len = 0;

		q.key = f->key;
		q.prio = f->key ? (uint32_t)m->video_priority : layer_prio(m, f->layer);
		do {
			uint32_t c = f->len - off > chunk ? chunk : (uint32_t)(f->len - off);

			q.size = SBPN_HDR_LEN + c;
			if (push_out(v, n, cap, &q, KF_NONE))
				return -1;
			(*v)[*n - 1].data = f->data + off;
			(*v)[*n - 1].data_len = c;
			(*v)[*n - 1].wire = vp8_coded;
			(*v)[*n - 1].fi = (f->droppable ? SBPN_FI_DROPPABLE : 0) |
					  (vp8_prev_droppable ? SBPN_FI_PREV_DROPPABLE : 0);
			off += c;
			pieces++;
		} while (off < f->len);
		for (size_t k = *n - pieces; k < *n; k++)
			(*v)[k].pieces = pieces;
		for (int i = 0; i < VP8_REFS; i++) {
			bool seen = false;

			if (f->refs[i] < 0)
				continue;
			for (int k = 0; k < i; k++)
				seen |= f->refs[k] == f->refs[i];
			if (!seen)
				len += (size_t)snprintf(refs + len, sizeof(refs) - len, "%s%lld",
							len ? "," : "", (long long)f->refs[i]);
		}
		if (ivf && ivf_write_frame(ivf, f->n, f->data, f->len))
			return -1;
		ivf_frames++;
		vp8_coded++;
		vp8_prev_droppable = f->droppable;
	}
	if (!frames_rec.f)
		return 0;
	fprintf(frames_rec.f, "%d\t%llu\t%s\t", j->p.frame,
		(unsigned long long)(vp8_start + j->p.t_ns), status_name[j->st]);
	if (j->st == VP8_CODED)
		fprintf(frames_rec.f, "%d\t%d\t%s\t%zu\t%u\t", f->key, f->layer, refs, f->len, pieces);
	else
		fputs("-\t-\t-\t0\t0\t", frames_rec.f);
	if (j->st == VP8_BUSY)
		fputs("-\t-\t-\t", frames_rec.f);
	else
		fprintf(frames_rec.f, "%d\t%d\t%u\t", f->width, f->height, f->target_kbps);
	if (j->allowed_bps > 0)
		fprintf(frames_rec.f, "%.1f\t", j->allowed_bps / 1000);
	else
		fputs("-\t", frames_rec.f);
	if (j->st == VP8_CODED)
		fprintf(frames_rec.f, "%d\t", f->q);
	else
		fputs("-\t", frames_rec.f);
	if (j->st == VP8_BUSY)
		fputs("-\n", frames_rec.f);
	else
		fprintf(frames_rec.f, "%llu\n", (unsigned long long)(j->took_ns / 1000));
	return 0;
}

static void vp8_thread_stop(void);

/* Close the VP8 call's files; rc so far in, rc out. */
static int vp8_close(int rc)
{
	vp8_thread_stop();
	if (ivf) {
		if (ivf_write_header(ivf, ivf_w, ivf_h, ivf_fps,
				     ivf_frames) || fclose(ivf)) {
			fprintf(stderr, "sbpn-send: writing %s failed\n", cfg.bitstream);
			rc = EXIT_RUNTIME;
		}
		ivf = NULL;
	}
	if (frames_rec.f) {
		rec_trailer(&frames_rec, "coded", "%zu", vp8_status_count[VP8_CODED]);
		rec_trailer(&frames_rec, "skipped", "%zu", vp8_status_count[VP8_SKIPPED]);
		rec_trailer(&frames_rec, "dropped", "%zu", vp8_status_count[VP8_DROPPED]);
		if (!rc)
			rec_trailer(&frames_rec, "complete", "1");
		if (rec_close(&frames_rec))
			rc = EXIT_RUNTIME;
	}
	vp8enc_free(enc);
	enc = NULL;
	return rc;
}

static int vp8_capture(const struct sched_pkt *p, const struct model *m,
		       struct out_pkt **v, size_t *n, size_t *cap);

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

		if (enc && p->cls == CLASS_VIDEO) {	/* a capture for the encoder */
			if (vp8_capture(p, m, v, n, cap))
				return -1;
			continue;
		}
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

/* The send path's state: main() sets it up; send_pkts() sends what the
 * schedule makes at each instant and what the encoder's thread finishes. */
static struct {
	int fd;
	unsigned char *buf;
	uint64_t start;
	uint16_t flow_id;
	unsigned int cmsgs;
	bool coded;
	struct recfile *rec;
	int64_t *late, *wake;
	size_t nlate, nwake, cap_late, cap_wake;
	size_t n_ok, n_eagain, n_err, seq, sent_upto;
	bool fatal;
} tx = { .fd = -1 };

/* Send (or, dry, only record) inst[0..ninst); with wakeup the first one's
 * lateness is the wake-up's.  A broken connection sets tx.fatal. */
static void send_pkts(const struct out_pkt *inst, size_t ninst, bool wakeup)
{
	for (size_t o = 0; o < ninst; o++, tx.seq++) {
		const struct sched_pkt *p = &inst[o].p;
		uint64_t planned = tx.start + p->t_ns;
		uint64_t expiry = p->lifetime_ns ? planned + p->lifetime_ns : 0;
		struct sbpn_hdr h = { .seq = (uint32_t)tx.seq, .cls = p->cls,
				      .flow_id = tx.flow_id, .expiry_ns = expiry };
		uint64_t sent = 0;
		const char *result = "dry";

		if (tx.coded && p->frame >= 0) {
			h.frame = (uint16_t)p->frame;
			h.pieces = (uint8_t)inst[o].pieces;
			h.fi = SBPN_FI_FRAME | (p->key == 1 ? SBPN_FI_KEY : 0) | inst[o].fi;
			if (inst[o].wire >= 0)
				h.frame = (uint16_t)inst[o].wire;
		}
		if (inst[o].data)
			memcpy(tx.buf + SBPN_HDR_LEN, inst[o].data, inst[o].data_len);
		if (!cfg.dry_run) {
			int r;

			sent = now_ns();
			h.sent_ns = sent;
			hdr_encode(tx.buf, &h);
			/* a video frame's pieces name it: its index + 1 */
			if (cfg.transport == TR_DCCP)
				r = sbpn_send_frame(tx.fd, tx.buf, p->size, p->prio, expiry,
						    p->frame >= 0 ? (uint32_t)p->frame + 1 : 0,
						    tx.cmsgs, MSG_DONTWAIT) < 0 ? -1 : 0;
			else if (cfg.transport == TR_UDP)
				r = send(tx.fd, tx.buf, p->size, MSG_DONTWAIT) < 0 ? -1 : 0;
			else
				r = tcp_send_all(tx.fd, tx.buf, p->size);
			if (push_i64(&tx.late, &tx.nlate, &tx.cap_late, (int64_t)(sent - planned)) ||
			    (wakeup && o == 0 && push_i64(&tx.wake, &tx.nwake, &tx.cap_wake,
						(int64_t)(sent - planned)))) {
				perror("sbpn-send");
				tx.fatal = true;
			}
			if (r == 0) {
				result = "ok";
				tx.n_ok++;
			} else {
				int e = errno;

				result = errno_name(e);
				if (e == EAGAIN)
					tx.n_eagain++;
				else
					tx.n_err++;
				if (e == EPIPE || e == ECONNRESET || e == ENOTCONN ||
				    (e == EINTR && stop_signal)) {
					fprintf(stderr, "sbpn-send: packet %zu: %s\n", tx.seq, strerror(e));
					tx.fatal = true;
				}
			}
		}
		fprintf(tx.rec->f, "%zu\t%s\t%u\t%u\t%llu\t%llu\t%llu\t%s", tx.seq,
			class_name(p->cls), p->size, p->prio,
			(unsigned long long)planned, (unsigned long long)sent,
			(unsigned long long)expiry, result);
		if (tx.coded && p->frame >= 0)
			fprintf(tx.rec->f, "\t%d\t%d", (int)p->frame, (int)p->key);
		else if (tx.coded)
			fputs("\t-\t-", tx.rec->f);
		if (cfg.kf)
			fprintf(tx.rec->f, "\t%s", kf_why_name(inst[o].forced));
		fputc('\n', tx.rec->f);
		tx.sent_upto = tx.seq + 1;
		if (tx.fatal)
			break;
	}
}

/* ---- the encoder's thread ---------------------------------------------- */

/*
 * A real call encodes beside its audio: here the encoder runs in a thread
 * of its own, so that audio due while a frame is coded leaves on time and
 * a frame leaves when it is coded, as from a camera pipeline.  One capture
 * at a time: a capture that falls due while the one before is still being
 * coded is not coded (busy), as a real-time encoder drops frames it cannot
 * take.  --dry-run codes each capture at its instant, in line.
 */
static struct {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int pipe[2];		/* the thread -> the sender: a capture is done */
	bool running, posted, done, quit;
	struct vp8_job job;
	uint8_t *copy;		/* the coded frame's bytes, the sender's to send */
	size_t copy_cap;
	const struct model *m;
} ew = { .pipe = { -1, -1 } };

static void *vp8_thread(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&ew.mu);
		while (!ew.posted && !ew.quit)
			pthread_cond_wait(&ew.cv, &ew.mu);
		if (ew.quit) {
			pthread_mutex_unlock(&ew.mu);
			return NULL;
		}
		pthread_mutex_unlock(&ew.mu);
		vp8_encode(&ew.job);
		if (!ew.job.err && ew.job.st == VP8_CODED) {
			if (ew.job.f.len > ew.copy_cap) {
				uint8_t *c = realloc(ew.copy, ew.job.f.len);

				if (c) {
					ew.copy = c;
					ew.copy_cap = ew.job.f.len;
				} else {
					ew.job.err = -1;
				}
			}
			if (!ew.job.err) {
				memcpy(ew.copy, ew.job.f.data, ew.job.f.len);
				ew.job.f.data = ew.copy;
			}
		}
		pthread_mutex_lock(&ew.mu);
		ew.posted = false;
		ew.done = true;
		pthread_mutex_unlock(&ew.mu);
		if (write(ew.pipe[1], "", 1) < 0 && errno != EAGAIN)
			ew.job.err = -1;
	}
}

static int vp8_thread_start(const struct model *m)
{
	ew.m = m;
	if (pipe2(ew.pipe, O_CLOEXEC | O_NONBLOCK) || pthread_mutex_init(&ew.mu, NULL) ||
	    pthread_cond_init(&ew.cv, NULL) || pthread_create(&ew.tid, NULL, vp8_thread, NULL)) {
		perror("sbpn-send: the encoder's thread");
		return -1;
	}
	ew.running = true;
	return 0;
}

static void vp8_thread_stop(void)
{
	if (!ew.running)
		return;
	pthread_mutex_lock(&ew.mu);
	ew.quit = true;
	pthread_cond_signal(&ew.cv);
	pthread_mutex_unlock(&ew.mu);
	pthread_join(ew.tid, NULL);
	ew.running = false;
	close(ew.pipe[0]);
	close(ew.pipe[1]);
	free(ew.copy);
}

/* Send what the thread finished, if anything; -1 on an error. */
static int vp8_collect(void)
{
	static struct out_pkt *v;
	static size_t cap;
	struct vp8_job j;
	size_t n = 0;
	char b[16];
	bool done;

	while (read(ew.pipe[0], b, sizeof(b)) > 0)
		;
	pthread_mutex_lock(&ew.mu);
	done = ew.done;
	ew.done = false;
	j = ew.job;
	pthread_mutex_unlock(&ew.mu);
	if (!done)
		return 0;
	if (vp8_packetise(&j, ew.m, &v, &n, &cap))
		return -1;
	send_pkts(v, n, false);
	return 0;
}

/* A capture falls due: coded in line (--dry-run), its packets joining the
 * instant's, or handed to the thread, whose packets leave when coded. */
static int vp8_capture(const struct sched_pkt *p, const struct model *m,
		       struct out_pkt **v, size_t *n, size_t *cap)
{
	struct vp8_job j = { 0 };
	bool busy;

	if (!ew.running) {
		vp8_prepare(&j, p);
		vp8_encode(&j);
		return vp8_packetise(&j, m, v, n, cap);
	}
	pthread_mutex_lock(&ew.mu);
	busy = ew.posted || ew.done;
	if (!busy) {
		vp8_prepare(&ew.job, p);
		ew.posted = true;
		pthread_cond_signal(&ew.cv);
	}
	pthread_mutex_unlock(&ew.mu);
	if (!busy)
		return 0;
	j.p = *p;
	j.st = VP8_BUSY;
	j.allowed_bps = vp8_allowed_bps;
	return vp8_packetise(&j, m, v, n, cap);
}

/* Wait until abs or until the thread finishes a capture: 1 for the
 * capture, 0 at abs, -1 if a signal stopped the run. */
static int vp8_wait(uint64_t abs)
{
	for (;;) {
		struct pollfd pfd = { .fd = ew.pipe[0], .events = POLLIN };
		uint64_t now = now_ns();
		struct timespec ts;
		int r;

		if (stop_signal)
			return -1;
		if (now >= abs)
			return 0;
		ts.tv_sec = (time_t)((abs - now) / 1000000000ull);
		ts.tv_nsec = (long)((abs - now) % 1000000000ull);
		r = ppoll(&pfd, 1, &ts, NULL);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* Sleep until abs, taking the CCID samples that fall due before it and
 * sending the frames the encoder's thread finishes meanwhile. */
static int wait_until(int fd, uint64_t abs, uint64_t *next_cc)
{
	for (;;) {
		bool cc = cclog.f && *next_cc <= abs;
		uint64_t due = cc ? *next_cc : abs;

		if (ew.running) {
			int r = vp8_wait(due);

			if (r < 0)
				return -1;
			if (r == 1) {
				if (vp8_collect())
					tx.fatal = true;
				continue;
			}
		} else if (sleep_until(due)) {
			return -1;
		}
		if (!cc)
			return 0;
		cc_sample(fd);
		*next_cc += cfg.cc_interval_ms * 1000000ull;
	}
}

/* ---- main ------------------------------------------------------------ */

int main(int argc, char **argv)
{
	struct model m;
	struct schedule s;
	struct recfile rec = { 0 };
	char kernel[128];
	unsigned char *buf;
	struct out_pkt *inst = NULL;
	size_t ninst = 0, cap_inst = 0, sched_done = 0;
	uint64_t start, next_cc, life_ns;
	unsigned int cmsgs = 0, qlen = 0;
	int fr = 0, sp = 0, pd = 0, lr = 0, ow = 0, ed = 0, nw = 0, fm = 0;
	uint32_t cbr_payload = 0;
	uint16_t flow_id;
	int fd = -1, rc = 0;

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
	else if (!strcmp(cfg.source, "vp8"))
		rc = sched_vp8(&s, &m, cfg.seed);
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

	tx.fd = fd;
	tx.buf = buf;
	tx.start = start;
	tx.flow_id = flow_id;
	tx.cmsgs = cmsgs;
	tx.coded = s.coded;
	tx.rec = &rec;
	if (cfg.cc_log)
		cc_open(start, kernel);
	if (!strcmp(cfg.source, "vp8") &&
	    (vp8_open(&m, start, kernel) || (!cfg.dry_run && vp8_thread_start(&m))))
		tx.fatal = true;
	if (cfg.notices)
		notices_open(start, kernel);
	next_cc = start;
	for (size_t i = 0; i < s.n && !tx.fatal; ) {
		uint64_t t = s.p[i].t_ns;
		size_t end = i;

		if (!cfg.dry_run && wait_until(fd, start + t, &next_cc))
			break;
		/* the receiver's requests so far decide this instant's frame */
		if ((cfg.kf & KF_BIT(KF_RECEIVER)) && !cfg.dry_run && feedback_drain(fd) < 0)
			tx.fatal = true;
		while (end < s.n && s.p[end].t_ns == t)
			end++;
		if (enc && !cfg.dry_run)
			vp8_rate(fd, &m);
		if (build_instant(&s, &m, i, end, &inst, &ninst, &cap_inst)) {
			perror("sbpn-send");
			tx.fatal = true;
			break;
		}
		sched_done = end;
		i = end;
		send_pkts(inst, ninst, true);
		if ((notices.f || (cfg.kf & KF_BIT(KF_NOTICE))) && !cfg.dry_run &&
		    notices_drain(fd, buf) < 0)
			tx.fatal = true;
	}

	if (!cfg.dry_run && !stop_signal && !tx.fatal) {
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
	vp8_thread_stop();
	/* what expired while the queue drained during the linger */
	if (notices.f && !stop_signal && !tx.fatal && notices_drain(fd, buf) < 0)
		tx.fatal = true;

	sort_i64(tx.late, tx.nlate);
	sort_i64(tx.wake, tx.nwake);
	/* with the loop, re-cut frames change the count: what was made, and
	 * the schedule's rest */
	rec_trailer(&rec, "packets", "%zu", cfg.kf || !strcmp(cfg.source, "vp8") ?
		    tx.seq + (s.n - sched_done) : s.n);
	rec_trailer(&rec, "recorded", "%zu", tx.sent_upto);
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

		rec_trailer(&rec, "sent_ok", "%zu", tx.n_ok);
		rec_trailer(&rec, "eagain", "%zu", tx.n_eagain);
		rec_trailer(&rec, "errors", "%zu", tx.n_err);
		rec_trailer(&rec, "lateness_p50_ns", "%lld", (long long)quantile_sorted(tx.late, tx.nlate, 0.5));
		rec_trailer(&rec, "lateness_p99_ns", "%lld", (long long)quantile_sorted(tx.late, tx.nlate, 0.99));
		rec_trailer(&rec, "lateness_max_ns", "%lld", tx.nlate ? (long long)tx.late[tx.nlate - 1] : 0LL);
		/* the first packet of each instant: how late the wake-up was */
		rec_trailer(&rec, "wakeup_p50_ns", "%lld", (long long)quantile_sorted(tx.wake, tx.nwake, 0.5));
		rec_trailer(&rec, "wakeup_p99_ns", "%lld", (long long)quantile_sorted(tx.wake, tx.nwake, 0.99));
		rec_trailer(&rec, "wakeup_max_ns", "%lld", tx.nwake ? (long long)tx.wake[tx.nwake - 1] : 0LL);
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
			transport_name(cfg.transport), s.n, tx.n_ok, tx.n_eagain, tx.n_err,
			quantile_sorted(tx.late, tx.nlate, 0.5) / 1e3,
			quantile_sorted(tx.late, tx.nlate, 0.99) / 1e3,
			tx.nlate ? tx.late[tx.nlate - 1] / 1e3 : 0.0,
			quantile_sorted(tx.wake, tx.nwake, 0.5) / 1e3, quantile_sorted(tx.wake, tx.nwake, 0.99) / 1e3,
			tx.nwake ? tx.wake[tx.nwake - 1] / 1e3 : 0.0);
	}
	if (stop_signal)
		rec_trailer(&rec, "interrupted", "%s", sigabbrev_np(stop_signal));
	rc = stop_signal || tx.fatal ? EXIT_RUNTIME : 0;
	if (!rc)
		rec_trailer(&rec, "complete", "1");
	if (rec_close(&rec)) {
		fprintf(stderr, "sbpn-send: writing %s failed\n", cfg.out);
		rc = EXIT_RUNTIME;
	}
	if (enc)
		rc = vp8_close(rc);
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
	free(tx.late);
	free(tx.wake);
	free(inst);
	sched_free(&s);
	return rc;
}
