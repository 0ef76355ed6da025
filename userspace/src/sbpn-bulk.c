// SPDX-License-Identifier: GPL-2.0
/*
 * sbpn-bulk - a long-lived TCP flow that competes with the call, and its
 * sink.  It does the job iperf3 did in the testbed for a fraction of the
 * CPU: the sender wakes only when half of its send buffer has drained, the
 * sink only when SO_RCVLOWAT bytes have arrived, and neither reports while
 * running.
 *
 * Contract: "--listen ADDR:PORT" accepts one connection and reads until the
 * peer closes it (exit 0).  "--connect ADDR:PORT" writes --write-bytes
 * blocks for --time seconds as fast as TCP takes them, then closes; every
 * --interval-ms it writes one record (Documentation/records.rst, "sbpn-tcp")
 * with the bytes written and those acknowledged, from TCP_INFO, the first at
 * the connection's start and the last at its end, then "complete: 1".
 * SIGINT/SIGTERM: the records so far are kept, "interrupted: INT" (or TERM)
 * instead of "complete", exit 1.
 * Exit: 0 ok, 1 runtime failure or signal, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/tcp.h>

#include "config.h"
#include "records.h"
#include "util.h"

#define SINK_BUF	(64 * 1024)	/* bytes per read */
#define SINK_LOWAT	(16 * 1024)	/* the sink wakes for this much */
#define SEND_BURST	(1 << 20)	/* bytes written before the clock is read */

static struct {
	const char *listen, *connect, *out, *flow, *cc, *ready_file;
	uint64_t time_s, write_bytes, mss, interval_ms;
} cfg = { .flow = "tcp", .cc = "reno", .write_bytes = 519, .interval_ms = 500 };

static void usage(FILE *f)
{
	fprintf(f,
"usage: sbpn-bulk --listen ADDR:PORT [--ready-file FILE]\n"
"       sbpn-bulk --connect ADDR:PORT --time S --out FILE [options]\n"
"\n"
"  --listen ADDR:PORT     accept one connection and read it to its end\n"
"  --ready-file FILE      create FILE once listening (for scripts)\n"
"  --connect ADDR:PORT    send to this sink (numeric IPv4, or [IPv6]:PORT)\n"
"  --time S               seconds to send, 1..86400\n"
"  --out FILE             records (Documentation/records.rst, sbpn-tcp)\n"
"  --flow NAME            flow name in the records (default 'tcp')\n"
"  --cc NAME              TCP congestion control (default reno)\n"
"  --write-bytes N        bytes per send(), 1..1048576 (default 519)\n"
"  --mss N                TCP_MAXSEG before connecting (default: the kernel's)\n"
"  --interval-ms N        one record every N ms, 10..60000 (default 500)\n"
"  --help                 this text\n"
"\n"
"exit status: 0 ok, 1 runtime failure or interrupted, 2 usage error\n");
}

static void die(const char *what)
{
	fprintf(stderr, "sbpn-bulk: %s: %s\n", what, strerror(errno));
	exit(EXIT_RUNTIME);
}

static void parse_num(const char *opt, const char *arg, uint64_t lo,
		      uint64_t hi, uint64_t *out)
{
	char msg[96];

	if (parse_u64(arg, hi, out) || *out < lo) {
		snprintf(msg, sizeof(msg), "--%s: expected an integer %llu..%llu, got '%%s'",
			 opt, (unsigned long long)lo, (unsigned long long)hi);
		die_usage(msg, arg);
	}
}

static void parse_args(int argc, char **argv)
{
	enum { O_LISTEN = 256, O_READY, O_CONNECT, O_TIME, O_OUT, O_FLOW, O_CC,
	       O_WRITE, O_MSS, O_INTERVAL, O_HELP };
	static const struct option opts[] = {
		{ "listen", required_argument, 0, O_LISTEN },
		{ "ready-file", required_argument, 0, O_READY },
		{ "connect", required_argument, 0, O_CONNECT },
		{ "time", required_argument, 0, O_TIME },
		{ "out", required_argument, 0, O_OUT },
		{ "flow", required_argument, 0, O_FLOW },
		{ "cc", required_argument, 0, O_CC },
		{ "write-bytes", required_argument, 0, O_WRITE },
		{ "mss", required_argument, 0, O_MSS },
		{ "interval-ms", required_argument, 0, O_INTERVAL },
		{ "help", no_argument, 0, O_HELP },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: cfg.listen = optarg; break;
		case O_READY: cfg.ready_file = optarg; break;
		case O_CONNECT: cfg.connect = optarg; break;
		case O_TIME: parse_num("time", optarg, 1, 86400, &cfg.time_s); break;
		case O_OUT: cfg.out = optarg; break;
		case O_FLOW: cfg.flow = optarg; break;
		case O_CC: cfg.cc = optarg; break;
		case O_WRITE: parse_num("write-bytes", optarg, 1, 1 << 20, &cfg.write_bytes); break;
		case O_MSS: parse_num("mss", optarg, 88, 65535, &cfg.mss); break;
		case O_INTERVAL: parse_num("interval-ms", optarg, 10, 60000, &cfg.interval_ms); break;
		case O_HELP: usage(stdout); exit(0);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!cfg.listen == !cfg.connect)
		die_usage("%s", "exactly one of --listen and --connect is required");
	if (cfg.connect && !cfg.time_s)
		die_usage("%s", "--time S is required with --connect");
	if (cfg.connect && !cfg.out)
		die_usage("%s", "--out FILE is required with --connect");
}

static int sink(void)
{
	struct sockaddr_storage ss;
	int lfd, fd, one = 1, lowat = SINK_LOWAT;
	static char buf[SINK_BUF];
	socklen_t slen;
	ssize_t n;

	if (parse_hostport(cfg.listen, &ss, &slen))
		die_usage("--listen: expected ADDR:PORT (numeric), got '%s'", cfg.listen);
	lfd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, slen) || listen(lfd, 1))
		die(cfg.listen);
	if (cfg.ready_file) {
		FILE *f = fopen(cfg.ready_file, "w");

		if (!f || fclose(f))
			die(cfg.ready_file);
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)))
		die("SO_RCVLOWAT");
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno != EINTR)
			die("read");
		if (stop_signal)
			return EXIT_RUNTIME;
	}
	close(fd);
	return 0;
}

static void sample(struct recfile *r, int fd, uint64_t written)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		die("TCP_INFO");
	fprintf(r->f, "%llu\t%llu\t%llu\t%u\t%u\t%u\t%u\n",
		(unsigned long long)now_ns(), (unsigned long long)written,
		(unsigned long long)ti.tcpi_bytes_acked, ti.tcpi_rtt,
		ti.tcpi_min_rtt, ti.tcpi_snd_cwnd, ti.tcpi_total_retrans);
}

static int source(void)
{
	uint64_t written = 0, next, end, interval = cfg.interval_ms * 1000000;
	struct sockaddr_storage ss;
	struct recfile rec;
	char kernel[128];
	socklen_t slen;
	char *buf;
	int fd, mss = (int)cfg.mss;

	if (parse_hostport(cfg.connect, &ss, &slen))
		die_usage("--connect: expected ADDR:PORT (numeric), got '%s'", cfg.connect);
	buf = calloc(1, cfg.write_bytes);
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (!buf || fd < 0)
		die("socket");
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cfg.cc, strlen(cfg.cc)))
		die(cfg.cc);
	if (mss && setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)))
		die("TCP_MAXSEG");
	rec.path = cfg.out;
	rec.f = fopen(cfg.out, "w");
	if (!rec.f)
		die(cfg.out);
	kernel_release(kernel, sizeof(kernel));
	fputs("# sbpn-tcp 1\n", rec.f);
	rec_meta(&rec, "role", "send");
	rec_meta(&rec, "flow", "%s", cfg.flow);
	rec_meta(&rec, "transport", "tcp");
	rec_meta(&rec, "tool", "sbpn-bulk %s", SBPN_TOOL_VERSION);
	rec_meta(&rec, "kernel", "%s", kernel);
	rec_meta(&rec, "clock", "CLOCK_MONOTONIC");
	rec_meta(&rec, "cc", "%s", cfg.cc);
	rec_meta(&rec, "write_bytes", "%llu", (unsigned long long)cfg.write_bytes);
	rec_meta(&rec, "time_s", "%llu", (unsigned long long)cfg.time_s);
	if (connect(fd, (struct sockaddr *)&ss, slen))
		die(cfg.connect);
	if (fcntl(fd, F_SETFL, O_NONBLOCK))
		die("O_NONBLOCK");
	rec_meta(&rec, "start_ns", "%llu", (unsigned long long)now_ns());
	rec_columns(&rec, "t_ns\tbytes_written\tbytes_acked\trtt_us\tmin_rtt_us\tcwnd\tretrans");
	sample(&rec, fd, 0);
	next = now_ns() + interval;
	end = now_ns() + cfg.time_s * 1000000000ull;
	while (!stop_signal) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		uint64_t t = now_ns(), due = next < end ? next : end, burst;
		ssize_t n;

		if (t >= end)
			break;
		if (t >= next) {
			sample(&rec, fd, written);
			next += interval;
			continue;
		}
		if (poll(&p, 1, (int)((due - t + 999999) / 1000000)) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p.revents & (POLLERR | POLLHUP)) {
			errno = ECONNRESET;
			die(cfg.connect);
		}
		if (!(p.revents & POLLOUT))
			continue;
		/* A send() into a nearly full buffer writes part of a block:
		 * the next one finishes it, so blocks stay whole.
		 */
		for (burst = 0; burst < SEND_BURST; burst += (uint64_t)n) {
			uint64_t off = written % cfg.write_bytes;

			n = send(fd, buf + off, cfg.write_bytes - off, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				die("send");
			if (n <= 0)
				break;
			written += (uint64_t)n;
		}
	}
	sample(&rec, fd, written);
	if (stop_signal)
		rec_trailer(&rec, "interrupted", "%s", sigabbrev_np(stop_signal));
	else
		rec_trailer(&rec, "complete", "1");
	close(fd);
	free(buf);
	if (rec_close(&rec))
		die(cfg.out);
	return stop_signal ? EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	install_stop_handlers();
	return cfg.listen ? sink() : source();
}
