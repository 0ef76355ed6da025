/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.h - small shared pieces of sbpn-send, sbpn-recv and sbpn-bulk:
 * clocks, addresses, percentiles, signals, exit codes, usage errors.
 */
#ifndef SBPN_UTIL_H
#define SBPN_UTIL_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#define EXIT_RUNTIME	1	/* a system call failed, interrupted run */
#define EXIT_USAGE	2	/* bad flag, bad model/trace file */

enum transport { TR_DCCP, TR_UDP, TR_TCP };

extern volatile sig_atomic_t stop_signal;	/* signal number, 0 while running */

uint64_t now_ns(void);				/* CLOCK_MONOTONIC */
/* Sleep until abs_ns (CLOCK_MONOTONIC); -1 if a signal stopped the run. */
int sleep_until(uint64_t abs_ns);
void install_stop_handlers(void);
/* "TOOL: " fmt (with arg), "(try --help)" on stderr; exit EXIT_USAGE. */
void die_usage(const char *fmt, const char *arg) __attribute__((noreturn));
const char *errno_name(int err);
int parse_transport(const char *s, enum transport *t);
const char *transport_name(enum transport t);
/* "ADDR:PORT" or "[ADDR6]:PORT", numeric only. */
int parse_hostport(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* Strict unsigned parse of a whole string; -1 if not a number in range. */
int parse_u64(const char *s, uint64_t max, uint64_t *out);
/* Sort v (n values) in place and return the q quantile (0..1), nearest rank. */
int64_t quantile_sorted(const int64_t *v, size_t n, double q);
void sort_i64(int64_t *v, size_t n);
uint16_t flow_id_of(const char *name);		/* FNV-1a folded to 16 bits */
void kernel_release(char *buf, size_t len);

#endif /* SBPN_UTIL_H */
