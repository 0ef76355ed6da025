// SPDX-License-Identifier: GPL-2.0
/*
 * util.c - clocks, addresses, percentiles and signals for the sbpn tools.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "util.h"

volatile sig_atomic_t stop_signal;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sleep_until(uint64_t abs_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(abs_ns / 1000000000ull),
		.tv_nsec = (long)(abs_ns % 1000000000ull),
	};

	while (!stop_signal) {
		int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (rc == 0)
			return 0;
		if (rc != EINTR)
			return -1;
	}
	return -1;
}

static void on_stop(int sig)
{
	stop_signal = sig;
}

void install_stop_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;	/* no SA_RESTART: blocking calls return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", program_invocation_short_name);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(try --help)\n");
	exit(EXIT_USAGE);
}

const char *errno_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "EUNKNOWN";
}

int parse_transport(const char *s, enum transport *t)
{
	if (!strcmp(s, "dccp"))
		*t = TR_DCCP;
	else if (!strcmp(s, "udp"))
		*t = TR_UDP;
	else if (!strcmp(s, "tcp"))
		*t = TR_TCP;
	else
		return -1;
	return 0;
}

const char *transport_name(enum transport t)
{
	return t == TR_DCCP ? "dccp" : t == TR_UDP ? "udp" : "tcp";
}

int parse_hostport(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[256];
	const char *port;
	struct addrinfo hints, *res;
	size_t hl;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || e[1] != ':')
			return -1;
		hl = (size_t)(e - s - 1);
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s + 1, hl);
		port = e + 2;
	} else {
		const char *c = strrchr(s, ':');

		if (!c)
			return -1;
		hl = (size_t)(c - s);
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s, hl);
		port = c + 1;
	}
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	if (!*port || getaddrinfo(host, port, &hints, &res))
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

void sort_i64(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
}

int64_t quantile_sorted(const int64_t *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	/* nearest rank: the smallest value with at least q of the samples <= it */
	i = (size_t)(q * (double)n + 0.999999999);
	if (i < 1)
		i = 1;
	if (i > n)
		i = n;
	return v[i - 1];
}

uint16_t flow_id_of(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return (uint16_t)(h ^ (h >> 16));
}

void kernel_release(char *buf, size_t len)
{
	struct utsname u;

	if (uname(&u) == 0)
		snprintf(buf, len, "%s", u.release);
	else
		snprintf(buf, len, "unknown");
}
