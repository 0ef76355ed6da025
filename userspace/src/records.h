/* SPDX-License-Identifier: GPL-2.0 */
/*
 * records.h - the per-packet record files and the payload header, exactly
 * as Documentation/records.rst (format version 1) defines them.
 */
#ifndef SBPN_RECORDS_H
#define SBPN_RECORDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SBPN_MAGIC		0x4e504253u	/* "SBPN" little-endian */
#define SBPN_PAYLOAD_VERSION	1
#define SBPN_HDR_LEN		32		/* every datagram is at least this */
#define SBPN_MAX_PAYLOAD	65507		/* largest UDP/IPv4 payload */
/* Class byte of the UDP end marker (see Documentation/traffic.rst). */
#define SBPN_CLASS_END		0xff
#define SBPN_CLASS_PLI		0xfe		/* receiver -> sender: a key frame, please */

/* Bytes 12-15 of the header (reserved before the key-frame loop): the
 * video frame a packet belongs to, when the flow has coding dependencies */
#define SBPN_FI_FRAME		0x01		/* frame, pieces and the flags are valid */
#define SBPN_FI_KEY		0x02		/* the frame is a key frame */
#define SBPN_FI_DROPPABLE	0x04		/* no later frame references it */
#define SBPN_FI_PREV_DROPPABLE	0x08		/* nor the frame before it (frame - 1) */

enum pkt_class { CLASS_AUDIO, CLASS_VIDEO, CLASS_DATA, CLASS_COUNT };

struct sbpn_hdr {
	uint32_t seq;
	uint8_t cls;
	uint8_t version;
	uint16_t flow_id;
	uint16_t frame;		/* frame index, low 16 bits (SBPN_FI_FRAME) */
	uint8_t pieces;		/* the frame's packets, mod 256 */
	uint8_t fi;		/* SBPN_FI_*; 0 for audio, data, uncoded video */
	uint64_t sent_ns;
	uint64_t expiry_ns;
};

const char *class_name(int cls);
int class_from_name(const char *s);	/* -1 if unknown */

/* buf must hold SBPN_HDR_LEN bytes. */
void hdr_encode(unsigned char *buf, const struct sbpn_hdr *h);
/* 0 if buf (len bytes) starts with a valid header, -1 otherwise. */
int hdr_decode(const unsigned char *buf, size_t len, struct sbpn_hdr *h);

/* One record file: the format line, metadata, column header, rows, trailer. */
struct recfile {
	FILE *f;
	const char *path;
};

int rec_open(struct recfile *r, const char *path);
void rec_meta(struct recfile *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rec_columns(struct recfile *r, const char *tab_separated);
/* Trailer lines: same form as metadata, after the rows. */
#define rec_trailer rec_meta
/* 0 if everything reached the file. */
int rec_close(struct recfile *r);

#endif /* SBPN_RECORDS_H */
