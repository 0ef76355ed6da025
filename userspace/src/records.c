// SPDX-License-Identifier: GPL-2.0
/*
 * records.c - write record files and encode/decode the payload header
 * (Documentation/records.rst, format version 1).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

static const char *const class_names[CLASS_COUNT] = { "audio", "video", "data" };

const char *class_name(int cls)
{
	return cls >= 0 && cls < CLASS_COUNT ? class_names[cls] : "?";
}

int class_from_name(const char *s)
{
	for (int i = 0; i < CLASS_COUNT; i++)
		if (!strcmp(s, class_names[i]))
			return i;
	return -1;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void hdr_encode(unsigned char *buf, const struct sbpn_hdr *h)
{
	put_le(buf + 0, SBPN_MAGIC, 4);
	put_le(buf + 4, h->seq, 4);
	buf[8] = h->cls;
	buf[9] = SBPN_PAYLOAD_VERSION;
	put_le(buf + 10, h->flow_id, 2);
	put_le(buf + 12, h->frame, 2);
	buf[14] = h->pieces;
	buf[15] = h->fi;
	put_le(buf + 16, h->sent_ns, 8);
	put_le(buf + 24, h->expiry_ns, 8);
}

int hdr_decode(const unsigned char *buf, size_t len, struct sbpn_hdr *h)
{
	if (len < SBPN_HDR_LEN || get_le(buf, 4) != SBPN_MAGIC ||
	    buf[9] != SBPN_PAYLOAD_VERSION)
		return -1;
	h->seq = (uint32_t)get_le(buf + 4, 4);
	h->cls = buf[8];
	h->version = buf[9];
	h->flow_id = (uint16_t)get_le(buf + 10, 2);
	h->frame = (uint16_t)get_le(buf + 12, 2);
	h->pieces = buf[14];
	h->fi = buf[15];
	h->sent_ns = get_le(buf + 16, 8);
	h->expiry_ns = get_le(buf + 24, 8);
	if (h->cls >= CLASS_COUNT && h->cls != SBPN_CLASS_END && h->cls != SBPN_CLASS_PLI)
		return -1;
	return 0;
}

int rec_open(struct recfile *r, const char *path)
{
	r->path = path;
	r->f = fopen(path, "w");
	if (!r->f)
		return -1;
	setvbuf(r->f, NULL, _IOFBF, 1 << 16);
	fputs("# sbpn-records 1\n", r->f);
	return 0;
}

void rec_meta(struct recfile *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	fprintf(r->f, "# %s: ", key);
	va_start(ap, fmt);
	vfprintf(r->f, fmt, ap);
	va_end(ap);
	fputc('\n', r->f);
}

void rec_columns(struct recfile *r, const char *tab_separated)
{
	fprintf(r->f, "%s\n", tab_separated);
}

int rec_close(struct recfile *r)
{
	int bad = ferror(r->f);

	if (fclose(r->f))
		bad = 1;
	r->f = NULL;
	return bad ? -1 : 0;
}
