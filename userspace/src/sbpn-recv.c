// SPDX-License-Identifier: GPL-2.0
/*
 * sbpn-recv - receive one flow of sbpn-send over DCCP, UDP or TCP and write
 * one record per packet (Documentation/records.rst).
 *
 * Contract: accept one connection (DCCP, TCP) or bind (UDP); record every
 * datagram that carries a valid payload header with the time recv()
 * returned; end when the sender closes the connection, when the UDP end
 * marker arrives, or after --idle-timeout-ms without packets (counted from
 * the first packet).  The trailer holds the one-way delay p50/p99/max and
 * the on-time count (recv_ns <= the payload's expiry_ns), then
 * "complete: 1".  With --keyframe-requests it follows each video frame's
 * reference chain (keyframe.h) and, when a frame cannot be decoded after
 * the reorder window, sends the sender a key-frame request over the same
 * connection (UDP: to the sender's address).  SIGINT/SIGTERM: the records so far are flushed, no
 * "complete", exit 1.  Exit: 0 ok, 1 runtime failure or signal, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/dccp.h>

#include "config.h"
#include "keyframe.h"
#include "records.h"
#include "sbpn.h"
#include "util.h"

#define SERVICE_CODE 0x5342504e		/* "SBPN", as sbpn-send */
#define BUF_LEN (2 * (SBPN_MAX_PAYLOAD + 4))

static struct {
	enum transport transport;
	const char *listen, *out, *flow, *ready_file;
	int ccid;
	long idle_ms;			/* -1: transport default */
	bool kf;			/* --keyframe-requests */
	unsigned int reorder_frames;
} cfg = { .transport = TR_DCCP, .flow = "unknown", .ccid = 3, .idle_ms = -1,
	  .reorder_frames = 2 };

static struct {
	struct recfile rec;
	int64_t *delay;
	size_t n, cap;
	size_t per_class[CLASS_COUNT], bad, on_time, late, no_expiry;
	const char *end;
	/* the key-frame loop: the chain tracker, and where requests go */
	struct kf_recv kf;
	int fd;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	size_t req_sent, req_failed;
} st;

static void usage(FILE *f)
{
	fprintf(f,
"usage: sbpn-recv --transport dccp|udp|tcp --listen ADDR:PORT --out FILE [options]\n"
"\n"
"  --transport T          dccp (default), udp or tcp\n"
"  --listen ADDR:PORT     where to listen (numeric IPv4, or [IPv6]:PORT)\n"
"  --out FILE             per-packet records (Documentation/records.rst)\n"
"  --flow NAME            flow name in the records (default 'unknown')\n"
"  --ccid N               DCCP CCID preference, 2 or 3 (default 3)\n"
"  --idle-timeout-ms N    end after N ms without a packet, counted from the\n"
"                         first packet; 0 = never (default: udp 5000, else 0)\n"
"  --ready-file FILE      create FILE once listening (for scripts)\n"
"  --keyframe-requests    ask the sender for a key frame (SBPN_CLASS_PLI) when a\n"
"                         video frame cannot be decoded (sbpn-send --keyframe-on-loss)\n"
"  --reorder-frames N     frame intervals to wait for a missing piece before a\n"
"                         frame counts as lost (default 2)\n"
"  --help                 this text\n"
"\n"
"Ends when the sender closes the connection (dccp, tcp), when the end marker\n"
"arrives (udp), or at the idle timeout.\n"
"exit status: 0 ok, 1 runtime failure or interrupted, 2 usage error\n");
}

static void parse_args(int argc, char **argv)
{
	enum { O_TRANSPORT = 256, O_LISTEN, O_OUT, O_FLOW, O_CCID, O_IDLE, O_READY, O_KF,
	       O_REORDER, O_HELP };
	static const struct option opts[] = {
		{ "transport", required_argument, 0, O_TRANSPORT },
		{ "listen", required_argument, 0, O_LISTEN },
		{ "out", required_argument, 0, O_OUT },
		{ "flow", required_argument, 0, O_FLOW },
		{ "ccid", required_argument, 0, O_CCID },
		{ "idle-timeout-ms", required_argument, 0, O_IDLE },
		{ "ready-file", required_argument, 0, O_READY },
		{ "keyframe-requests", no_argument, 0, O_KF },
		{ "reorder-frames", required_argument, 0, O_REORDER },
		{ "help", no_argument, 0, O_HELP },
		{ 0 }
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_TRANSPORT:
			if (parse_transport(optarg, &cfg.transport))
				die_usage("--transport: expected dccp, udp or tcp, got '%s'", optarg);
			break;
		case O_LISTEN: cfg.listen = optarg; break;
		case O_OUT: cfg.out = optarg; break;
		case O_FLOW: cfg.flow = optarg; break;
		case O_CCID:
			if (strcmp(optarg, "2") && strcmp(optarg, "3"))
				die_usage("--ccid: expected 2 or 3, got '%s'", optarg);
			cfg.ccid = atoi(optarg);
			break;
		case O_IDLE:
			if (parse_u64(optarg, 86400000, &v))
				die_usage("--idle-timeout-ms: expected an integer 0..86400000, got '%s'", optarg);
			cfg.idle_ms = (long)v;
			break;
		case O_READY: cfg.ready_file = optarg; break;
		case O_KF: cfg.kf = true; break;
		case O_REORDER:
			if (parse_u64(optarg, 100, &v) || !v)
				die_usage("--reorder-frames: expected an integer 1..100, got '%s'", optarg);
			cfg.reorder_frames = (unsigned int)v;
			break;
		case O_HELP: usage(stdout); exit(0);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!cfg.listen)
		die_usage("%s", "--listen ADDR:PORT is required");
	if (!cfg.out)
		die_usage("%s", "--out FILE is required");
	if (cfg.idle_ms < 0)
		cfg.idle_ms = cfg.transport == TR_UDP ? 5000 : 0;
}

static int open_listener(void)
{
	struct sockaddr_storage ss;
	socklen_t slen;
	int fd, one = 1, type;

	if (parse_hostport(cfg.listen, &ss, &slen))
		die_usage("--listen: expected ADDR:PORT (numeric), got '%s'", cfg.listen);
	type = cfg.transport == TR_DCCP ? SOCK_DCCP :
	       cfg.transport == TR_UDP ? SOCK_DGRAM : SOCK_STREAM;
	fd = socket(ss.ss_family, type, cfg.transport == TR_DCCP ? IPPROTO_DCCP : 0);
	if (fd < 0) {
		fprintf(stderr, "sbpn-recv: socket(%s): %s%s\n", transport_name(cfg.transport),
			strerror(errno), cfg.transport == TR_DCCP ?
			" (no DCCP in this kernel? modprobe -a dccp_ipv4 dccp_ipv6)" : "");
		exit(EXIT_RUNTIME);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (cfg.transport == TR_DCCP) {
		uint32_t svc = htonl(SERVICE_CODE);

		if (setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_SERVICE, &svc, sizeof(svc)) ||
		    sbpn_set_ccid(fd, (uint8_t)cfg.ccid)) {
			fprintf(stderr, "sbpn-recv: setting DCCP service/CCID %d: %s\n", cfg.ccid,
				strerror(errno));
			exit(EXIT_RUNTIME);
		}
	}
	if (bind(fd, (struct sockaddr *)&ss, slen)) {
		fprintf(stderr, "sbpn-recv: bind %s: %s\n", cfg.listen, strerror(errno));
		exit(EXIT_RUNTIME);
	}
	if (cfg.transport != TR_UDP && listen(fd, 1)) {
		fprintf(stderr, "sbpn-recv: listen: %s\n", strerror(errno));
		exit(EXIT_RUNTIME);
	}
	if (cfg.ready_file) {
		FILE *f = fopen(cfg.ready_file, "w");

		if (f)
			fclose(f);
	}
	return fd;
}

/* One datagram (or TCP record) arrived at recv_ns; false: the end marker. */
static bool record(const unsigned char *p, size_t len, uint64_t recv_ns)
{
	struct sbpn_hdr h;

	if (hdr_decode(p, len, &h)) {
		st.bad++;
		return true;
	}
	if (h.cls == SBPN_CLASS_END)
		return false;
	if (h.cls == SBPN_CLASS_PLI) {	/* not ours to receive */
		st.bad++;
		return true;
	}
	if (cfg.kf && h.cls == CLASS_VIDEO && (h.fi & SBPN_FI_FRAME))
		kf_recv_packet(&st.kf, h.frame, h.pieces, h.fi & SBPN_FI_KEY, h.fi, h.expiry_ns,
			       recv_ns);
	fprintf(st.rec.f, "%u\t%s\t%zu\t%llu\t%llu\n", h.seq, class_name(h.cls), len,
		(unsigned long long)h.sent_ns, (unsigned long long)recv_ns);
	st.per_class[h.cls]++;
	if (!h.expiry_ns)
		st.no_expiry++;
	else if (recv_ns <= h.expiry_ns)
		st.on_time++;
	else
		st.late++;
	if (st.n == st.cap) {
		size_t cap = st.cap ? 2 * st.cap : 8192;
		int64_t *nd = realloc(st.delay, cap * sizeof(*nd));

		if (!nd) {
			perror("sbpn-recv");
			exit(EXIT_RUNTIME);
		}
		st.delay = nd;
		st.cap = cap;
	}
	st.delay[st.n++] = (int64_t)(recv_ns - h.sent_ns);
	return true;
}

/* Judge the frames that can be judged now; send a request if one is due. */
static void keyframe_poll(void)
{
	unsigned char msg[4 + SBPN_HDR_LEN];
	struct sbpn_hdr h = { .cls = SBPN_CLASS_PLI };
	int64_t frame;
	ssize_t n;

	if (!cfg.kf || !kf_recv_poll(&st.kf, now_ns(), &frame))
		return;
	h.seq = (uint32_t)frame;	/* the first frame it could not decode */
	h.sent_ns = now_ns();
	hdr_encode(msg + 4, &h);
	if (cfg.transport == TR_TCP) {
		msg[0] = SBPN_HDR_LEN;
		msg[1] = msg[2] = msg[3] = 0;
		n = send(st.fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL);
	} else if (cfg.transport == TR_UDP) {
		n = st.peer_len ? sendto(st.fd, msg + 4, SBPN_HDR_LEN, MSG_DONTWAIT,
					 (struct sockaddr *)&st.peer, st.peer_len) : -1;
	} else {
		n = send(st.fd, msg + 4, SBPN_HDR_LEN, MSG_DONTWAIT);
	}
	if (n < 0)
		st.req_failed++;	/* a full buffer: the next undecodable frame asks again */
	else
		st.req_sent++;
}

/*
 * Wait for data on fd.  1: readable; 0: idle timeout; -1: signal.
 * The idle clock runs only once the first packet has arrived.  With the
 * key-frame loop, a frame whose reorder window ends is judged on the way.
 */
static int wait_readable(int fd, bool started)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t idle_end = started && cfg.idle_ms ? now_ns() + cfg.idle_ms * 1000000ull : UINT64_MAX;

	for (;;) {
		uint64_t now = now_ns(), due = cfg.kf ? kf_recv_deadline(&st.kf) : UINT64_MAX;
		uint64_t until = due < idle_end ? due : idle_end;
		int to = until == UINT64_MAX ? -1 : until <= now ? 0 :
			 (int)((until - now + 999999) / 1000000);
		int r = poll(&pfd, 1, to);

		if (stop_signal)
			return -1;
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
		if (r == 0 && now_ns() >= idle_end)
			return 0;
		if (r == 0)
			keyframe_poll();
	}
}

static int receive(int lfd)
{
	static unsigned char buf[BUF_LEN];
	size_t have = 0;	/* TCP: bytes buffered */
	int fd = lfd;

	if (cfg.transport != TR_UDP) {
		fd = -1;
		while (fd < 0) {
			if (wait_readable(lfd, false) < 0)
				return -1;
			fd = accept(lfd, NULL, NULL);
			if (fd < 0 && errno != EINTR) {
				perror("sbpn-recv: accept");
				return -1;
			}
		}
	}
	for (;;) {
		int w = wait_readable(fd, st.n > 0 || st.bad > 0);
		ssize_t n;
		uint64_t t;

		if (w < 0)
			return -1;
		if (w == 0) {
			st.end = "idle-timeout";
			return 0;
		}
		if (cfg.transport == TR_UDP) {
			st.peer_len = sizeof(st.peer);
			n = recvfrom(fd, buf + have, sizeof(buf) - have, MSG_DONTWAIT,
				     (struct sockaddr *)&st.peer, &st.peer_len);
		} else {
			n = recv(fd, buf + have, sizeof(buf) - have, MSG_DONTWAIT);
		}
		t = now_ns();
		st.fd = fd;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			if (errno == ECONNRESET) {
				st.end = "reset";
				return 0;
			}
			perror("sbpn-recv: recv");
			return -1;
		}
		if (n == 0 && cfg.transport != TR_UDP) {
			st.end = have ? "close (partial TCP record dropped)" : "close";
			return 0;
		}
		if (cfg.transport != TR_TCP) {
			if (!record(buf, (size_t)n, t)) {
				st.end = "marker";
				return 0;
			}
			keyframe_poll();
			continue;
		}
		/* TCP: u32 little-endian length, then the datagram */
		have += (size_t)n;
		for (;;) {
			uint32_t len;

			if (have < 4)
				break;
			len = buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24;
			if (len > SBPN_MAX_PAYLOAD) {
				fprintf(stderr, "sbpn-recv: TCP record length %u: stream corrupt\n", len);
				return -1;
			}
			if (have < 4 + (size_t)len)
				break;
			record(buf + 4, len, t);
			memmove(buf, buf + 4 + len, have - 4 - len);
			have -= 4 + len;
		}
		keyframe_poll();
	}
}

int main(int argc, char **argv)
{
	char kernel[128];
	int lfd, rc;

	parse_args(argc, argv);
	kf_recv_init(&st.kf, cfg.reorder_frames);
	install_stop_handlers();
	kernel_release(kernel, sizeof(kernel));
	if (rec_open(&st.rec, cfg.out)) {
		fprintf(stderr, "sbpn-recv: %s: %s\n", cfg.out, strerror(errno));
		return EXIT_RUNTIME;
	}
	lfd = open_listener();
	rec_meta(&st.rec, "role", "recv");
	rec_meta(&st.rec, "flow", "%s", cfg.flow);
	rec_meta(&st.rec, "transport", "%s", transport_name(cfg.transport));
	rec_meta(&st.rec, "tool", "sbpn-recv %s", SBPN_TOOL_VERSION);
	rec_meta(&st.rec, "kernel", "%s", kernel);
	rec_meta(&st.rec, "clock", "CLOCK_MONOTONIC");
	rec_meta(&st.rec, "start_ns", "%llu", (unsigned long long)now_ns());
	if (cfg.transport == TR_DCCP)
		rec_meta(&st.rec, "ccid", "%d", cfg.ccid);
	rec_meta(&st.rec, "listen", "%s", cfg.listen);
	rec_meta(&st.rec, "idle_timeout_ms", "%ld", cfg.idle_ms);
	if (cfg.kf) {
		rec_meta(&st.rec, "keyframe_requests", "1");
		rec_meta(&st.rec, "reorder_frames", "%u", cfg.reorder_frames);
	}
	rec_columns(&st.rec, "seq\tclass\tsize\tsent_ns\trecv_ns");
	fflush(st.rec.f);

	rc = receive(lfd) ? EXIT_RUNTIME : 0;

	sort_i64(st.delay, st.n);
	rec_trailer(&st.rec, "received", "%zu", st.n);
	rec_trailer(&st.rec, "received_audio", "%zu", st.per_class[CLASS_AUDIO]);
	rec_trailer(&st.rec, "received_video", "%zu", st.per_class[CLASS_VIDEO]);
	rec_trailer(&st.rec, "received_data", "%zu", st.per_class[CLASS_DATA]);
	rec_trailer(&st.rec, "malformed", "%zu", st.bad);
	rec_trailer(&st.rec, "on_time", "%zu", st.on_time);
	rec_trailer(&st.rec, "late", "%zu", st.late);
	rec_trailer(&st.rec, "no_expiry", "%zu", st.no_expiry);
	rec_trailer(&st.rec, "delay_p50_ns", "%lld", (long long)quantile_sorted(st.delay, st.n, 0.5));
	rec_trailer(&st.rec, "delay_p99_ns", "%lld", (long long)quantile_sorted(st.delay, st.n, 0.99));
	rec_trailer(&st.rec, "delay_max_ns", "%lld", st.n ? (long long)st.delay[st.n - 1] : 0LL);
	if (cfg.kf) {
		rec_trailer(&st.rec, "frames_judged", "%zu", st.kf.judged);
		rec_trailer(&st.rec, "frames_lost", "%zu", st.kf.lost);
		rec_trailer(&st.rec, "frames_undecodable", "%zu", st.kf.undecodable);
		rec_trailer(&st.rec, "keyframe_requests_sent", "%zu", st.req_sent);
		rec_trailer(&st.rec, "keyframe_requests_failed", "%zu", st.req_failed);
	}
	if (stop_signal) {
		rec_trailer(&st.rec, "interrupted", "%s", sigabbrev_np(stop_signal));
		rc = EXIT_RUNTIME;
	} else if (!rc) {
		rec_trailer(&st.rec, "end", "%s", st.end);
		rec_trailer(&st.rec, "complete", "1");
	}
	if (rec_close(&st.rec)) {
		fprintf(stderr, "sbpn-recv: writing %s failed\n", cfg.out);
		rc = EXIT_RUNTIME;
	}
	fprintf(stderr, "sbpn-recv: %s: %zu received (%zu on time, %zu late), %zu malformed, "
		"delay p50 %.2f ms, p99 %.2f ms%s\n", cfg.flow, st.n, st.on_time, st.late, st.bad,
		quantile_sorted(st.delay, st.n, 0.5) / 1e6, quantile_sorted(st.delay, st.n, 0.99) / 1e6,
		stop_signal ? ", interrupted" : "");
	return rc;
}
