// SPDX-License-Identifier: GPL-2.0
/*
 * schedule.c - build the sender's packet list.
 *
 * Ekiga model (McDonald & Nelson, sections 3.2 and 4.1-4.2): one audio
 * packet every audio_interval_ms; video_fps frames per second, each frame's
 * size drawn from Normal(mean, sd) of the current motion state, clamped
 * below at video_frame_min, cut into video_max_packet pieces plus the
 * remainder, all due at the frame's instant (queued back to back).  When an
 * audio packet and a frame fall due at the same instant a coin decides
 * which goes first.  The call pattern (active = talking + motion, quiet =
 * silence + still) repeats.  One seeded generator (splitmix64) drives every
 * random choice in schedule order, so a seed fixes the whole schedule.
 *
 * Coding dependencies (video_gop > 0): frame k is a key frame when
 * k % video_gop == 0, else a P-frame referencing frame k - 1; the drawn
 * size is scaled so that a key frame is keyframe_ratio times a P-frame and
 * a GOP's mean frame is the drawn mean (no extra random draws: the same
 * seed gives the same coin flips and draws with the option on or off).
 *
 * CBR: fixed-size packets at a fixed interval, size derived from an IPv4
 * packet size.  Trace: a text file, format in Documentation/traffic.rst.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "schedule.h"

/* ---- the model file -------------------------------------------------- */

void model_defaults(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->audio_payload = 214;
	m->audio_interval_ms = 20;
	m->audio_priority = 2;
	m->video_priority = 1;
	m->data_priority = 0;
	m->silence_suppression = false;
	m->video_fps = 10;
	m->video_max_packet = 1026;
	m->motion_high_mean = 4450;
	m->motion_high_sd = 1000;
	m->motion_low_mean = 1075;
	m->motion_low_sd = 475;
	m->video_frame_min = SBPN_HDR_LEN;
	m->lifetime_ms = 200;
	m->duration_s = 60;
	m->cbr_ip_size = 80;
	m->cbr_interval_ms = 20;
	m->video_gop = 0;		/* no coding dependencies */
	m->keyframe_ratio = 5;		/* used only with video_gop > 0 */
	m->vp8_width = 320;
	m->vp8_height = 240;
	m->vp8_layers = 1;
	m->vp8_min_kbps = 30;
	m->vp8_max_kbps = 1000;
	m->vp8_start_kbps = 300;
	m->vp8_cpu_used = -8;
	m->vp8_ladder = true;
	m->video_priority_t1 = 1;
	m->video_priority_t2 = 1;
	m->nphases = 3;
	m->phase_active[0] = true;
	m->phase_s[0] = 10;
	m->phase_active[1] = false;
	m->phase_s[1] = 5;
	m->phase_active[2] = true;
	m->phase_s[2] = 5;
}

enum ktype { K_UINT, K_REAL, K_BOOL };

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	double min, max;
};

#define KEY(n, t, lo, hi) { #n, t, offsetof(struct model, n), lo, hi }
static const struct key model_keys[] = {
	KEY(audio_payload, K_UINT, SBPN_HDR_LEN, SBPN_MAX_PAYLOAD),
	KEY(audio_interval_ms, K_REAL, 0.1, 60000),
	KEY(audio_priority, K_UINT, 0, 4294967295.0),
	KEY(video_priority, K_UINT, 0, 4294967295.0),
	KEY(data_priority, K_UINT, 0, 4294967295.0),
	KEY(silence_suppression, K_BOOL, 0, 1),
	KEY(video_fps, K_REAL, 0.01, 1000),
	KEY(video_max_packet, K_UINT, SBPN_HDR_LEN, SBPN_MAX_PAYLOAD),
	KEY(motion_high_mean, K_REAL, 0, 1e7),
	KEY(motion_high_sd, K_REAL, 0, 1e7),
	KEY(motion_low_mean, K_REAL, 0, 1e7),
	KEY(motion_low_sd, K_REAL, 0, 1e7),
	KEY(video_frame_min, K_UINT, SBPN_HDR_LEN, 1e7),
	KEY(lifetime_ms, K_REAL, 0, 3600e3),
	KEY(duration_s, K_REAL, 0.001, 86400),
	KEY(cbr_ip_size, K_UINT, 1, 65535),
	KEY(cbr_interval_ms, K_REAL, 0.1, 60000),
	KEY(video_gop, K_UINT, 0, 1000000),
	KEY(keyframe_ratio, K_REAL, 1, 1000),
	KEY(vp8_width, K_UINT, 32, 1920),
	KEY(vp8_height, K_UINT, 32, 1088),
	KEY(vp8_layers, K_UINT, 1, 3),
	KEY(vp8_min_kbps, K_UINT, 1, 100000),
	KEY(vp8_max_kbps, K_UINT, 1, 100000),
	KEY(vp8_start_kbps, K_UINT, 1, 100000),
	KEY(vp8_cpu_used, K_REAL, -16, 16),
	KEY(vp8_ladder, K_BOOL, 0, 1),
	KEY(video_priority_t1, K_UINT, 0, 4294967295.0),
	KEY(video_priority_t2, K_UINT, 0, 4294967295.0),
};

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_real(const char *s, double *out)
{
	char *end;

	if (!*s)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	if (errno || *end || !isfinite(*out))
		return -1;
	return 0;
}

static int parse_pattern(struct model *m, char *val, const char *path, int line)
{
	char *save = NULL, *tok;

	m->nphases = 0;
	for (tok = strtok_r(val, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		char *colon = strchr(tok, ':');
		double sec;

		if (m->nphases == MODEL_MAX_PHASES) {
			fprintf(stderr, "%s:%d: field 'pattern': more than %d phases\n",
				path, line, MODEL_MAX_PHASES);
			return -1;
		}
		if (colon)
			*colon = '\0';
		if (!colon || (strcmp(tok, "active") && strcmp(tok, "quiet")) ||
		    parse_real(colon + 1, &sec) || sec <= 0) {
			fprintf(stderr, "%s:%d: field 'pattern': expected phases like 'active:10 quiet:5', got '%s%s%s'\n",
				path, line, tok, colon ? ":" : "", colon ? colon + 1 : "");
			return -1;
		}
		m->phase_active[m->nphases] = !strcmp(tok, "active");
		m->phase_s[m->nphases++] = sec;
	}
	if (!m->nphases) {
		fprintf(stderr, "%s:%d: field 'pattern': no phases\n", path, line);
		return -1;
	}
	return 0;
}

int model_load(struct model *m, const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	int line = 0;

	if (!f) {
		fprintf(stderr, "%s: cannot open model file: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *hash, *eq, *key, *val;
		const struct key *k = NULL;

		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			fprintf(stderr, "%s:%d: line too long\n", path, line);
			goto fail;
		}
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		key = trim(buf);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			fprintf(stderr, "%s:%d: expected 'key = value', got '%s'\n", path, line, key);
			goto fail;
		}
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		if (!strcmp(key, "pattern")) {
			if (parse_pattern(m, val, path, line))
				goto fail;
			continue;
		}
		for (size_t i = 0; i < sizeof(model_keys) / sizeof(model_keys[0]); i++)
			if (!strcmp(key, model_keys[i].name))
				k = &model_keys[i];
		if (!k) {
			fprintf(stderr, "%s:%d: field '%s': unknown key\n", path, line, key);
			goto fail;
		}
		if (k->type == K_BOOL) {
			bool b;

			if (!strcmp(val, "1") || !strcmp(val, "yes") || !strcmp(val, "true"))
				b = true;
			else if (!strcmp(val, "0") || !strcmp(val, "no") || !strcmp(val, "false"))
				b = false;
			else {
				fprintf(stderr, "%s:%d: field '%s': expected 0 or 1, got '%s'\n",
					path, line, key, val);
				goto fail;
			}
			*(bool *)((char *)m + k->off) = b;
		} else if (k->type == K_UINT) {
			uint64_t u;

			if (parse_u64(val, (uint64_t)k->max, &u) || u < (uint64_t)k->min) {
				fprintf(stderr, "%s:%d: field '%s': expected an integer %.0f..%.0f, got '%s'\n",
					path, line, key, k->min, k->max, val);
				goto fail;
			}
			*(uint64_t *)((char *)m + k->off) = u;
		} else {
			double d;

			if (parse_real(val, &d) || d < k->min || d > k->max) {
				fprintf(stderr, "%s:%d: field '%s': expected a number %g..%g, got '%s'\n",
					path, line, key, k->min, k->max, val);
				goto fail;
			}
			*(double *)((char *)m + k->off) = d;
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		goto fail;
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	return -1;
}

bool model_active_at(const struct model *m, uint64_t t_ns)
{
	double period = 0, t;

	for (int i = 0; i < m->nphases; i++)
		period += m->phase_s[i];
	t = fmod((double)t_ns / 1e9, period);
	for (int i = 0; i < m->nphases; i++) {
		if (t < m->phase_s[i])
			return m->phase_active[i];
		t -= m->phase_s[i];
	}
	return m->phase_active[m->nphases - 1];
}

/* ---- the schedule ---------------------------------------------------- */

static int sched_add(struct schedule *s, uint64_t t_ns, uint32_t size, int cls,
		     uint32_t prio, uint64_t lifetime_ns)
{
	struct sched_pkt *p;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		struct sched_pkt *np = realloc(s->p, cap * sizeof(*np));

		if (!np)
			return -1;
		s->p = np;
		s->cap = cap;
	}
	if (size < SBPN_HDR_LEN) {
		size = SBPN_HDR_LEN;	/* every datagram carries the header */
		s->padded++;
	}
	p = &s->p[s->n++];
	p->t_ns = t_ns;
	p->size = size;
	p->cls = (uint8_t)cls;
	p->prio = prio;
	p->lifetime_ns = lifetime_ns;
	p->key = -1;
	p->frame = -1;
	return 0;
}

void sched_free(struct schedule *s)
{
	free(s->p);
	free(s->draw);
	memset(s, 0, sizeof(*s));
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t rng_next(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *st)	/* (0, 1) */
{
	return ((double)(rng_next(st) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(uint64_t *st, double mean, double sd)
{
	double u1 = rng_uniform(st), u2 = rng_uniform(st);

	return mean + sd * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static uint64_t lifetime_ns_of(const struct model *m)
{
	return (uint64_t)llround(m->lifetime_ms * 1e6);
}

uint64_t frame_bytes_of(const struct model *m, double draw, int key, bool *clamped)
{
	if (m->video_gop) {
		/* a GOP of G frames, one key frame of r P-frames: G - 1 + r
		 * P-frames in all, so a P-frame is G / (G - 1 + r) of the mean */
		double g = (double)m->video_gop;
		double p_share = g / (g - 1 + m->keyframe_ratio);

		draw *= key == 1 ? m->keyframe_ratio * p_share : p_share;
	}
	draw = round(draw);
	*clamped = draw < (double)m->video_frame_min;
	if (*clamped)
		draw = (double)m->video_frame_min;
	return (uint64_t)draw;
}

static int add_frame(struct schedule *s, const struct model *m, uint64_t t,
		     uint64_t *rng)
{
	bool motion = model_active_at(m, t);
	double mean = motion ? m->motion_high_mean : m->motion_low_mean;
	double sd = motion ? m->motion_high_sd : m->motion_low_sd;
	double draw = rng_normal(rng, mean, sd);
	size_t idx = s->nframes++, first = s->n;
	int key = -1;
	bool clamped;
	uint64_t left;

	if (idx == s->draw_cap) {
		size_t cap = s->draw_cap ? 2 * s->draw_cap : 1024;
		double *nd = realloc(s->draw, cap * sizeof(*nd));

		if (!nd)
			return -1;
		s->draw = nd;
		s->draw_cap = cap;
	}
	s->draw[idx] = draw;
	if (m->video_gop) {
		key = idx % m->video_gop == 0;
		s->keyframes += key;
	}
	left = frame_bytes_of(m, draw, key, &clamped);
	s->clamped += clamped;
	s->frames[motion]++;
	s->frame_bytes[motion] += left;
	while (left) {
		uint32_t piece = left > m->video_max_packet ?
				 (uint32_t)m->video_max_packet : (uint32_t)left;

		if (sched_add(s, t, piece, CLASS_VIDEO, (uint32_t)m->video_priority,
			      lifetime_ns_of(m)))
			return -1;
		left -= piece;
	}
	for (size_t i = first; i < s->n; i++) {
		s->p[i].frame = (int32_t)idx;
		s->p[i].key = (int8_t)key;
	}
	return 0;
}

static int add_audio(struct schedule *s, const struct model *m, uint64_t t)
{
	if (m->silence_suppression && !model_active_at(m, t))
		return 0;
	return sched_add(s, t, (uint32_t)m->audio_payload, CLASS_AUDIO,
			 (uint32_t)m->audio_priority, lifetime_ns_of(m));
}

/* The VP8 call's video at t: one placeholder, the capture's index as its frame. */
static int add_capture(struct schedule *s, const struct model *m, uint64_t t, uint64_t *rng)
{
	(void)rng;
	if (sched_add(s, t, SBPN_HDR_LEN, CLASS_VIDEO, (uint32_t)m->video_priority,
		      lifetime_ns_of(m)))
		return -1;
	s->p[s->n - 1].frame = (int32_t)s->nframes++;
	return 0;
}

/* Audio every audio_interval_ms and video every 1/video_fps s, each made by
 * add_video; a coin orders the two when they fall due together. */
static int sched_call(struct schedule *s, const struct model *m, uint64_t seed,
		      int (*add_video)(struct schedule *, const struct model *, uint64_t,
				       uint64_t *))
{
	uint64_t rng = seed, dur = (uint64_t)llround(m->duration_s * 1e9);
	uint64_t ka = 0, kv = 0;
	double a_ns = m->audio_interval_ms * 1e6, v_ns = 1e9 / m->video_fps;

	memset(s, 0, sizeof(*s));
	s->duration_ns = dur;
	s->coded = m->video_gop > 0;
	for (;;) {
		/* k-th event at round(k * interval): no drift over long runs */
		uint64_t ta = (uint64_t)llround((double)ka * a_ns);
		uint64_t tv = (uint64_t)llround((double)kv * v_ns);
		int rc = 0;

		if (ta >= dur && tv >= dur)
			break;
		if (ta < tv) {
			rc = add_audio(s, m, ta);
			ka++;
		} else if (tv < ta) {
			rc = add_video(s, m, tv, &rng);
			kv++;
		} else if (rng_next(&rng) & 1) {	/* same instant: coin */
			rc = add_audio(s, m, ta) ?: add_video(s, m, tv, &rng);
			ka++, kv++;
		} else {
			rc = add_video(s, m, tv, &rng) ?: add_audio(s, m, ta);
			ka++, kv++;
		}
		if (rc)
			return -1;
	}
	return 0;
}

int sched_ekiga(struct schedule *s, const struct model *m, uint64_t seed)
{
	return sched_call(s, m, seed, add_frame);
}

int sched_vp8(struct schedule *s, const struct model *m, uint64_t seed)
{
	if (m->vp8_min_kbps > m->vp8_max_kbps) {
		fprintf(stderr, "model: vp8_min_kbps %llu is above vp8_max_kbps %llu\n",
			(unsigned long long)m->vp8_min_kbps, (unsigned long long)m->vp8_max_kbps);
		errno = EINVAL;
		return -1;
	}
	if (sched_call(s, m, seed, add_capture))
		return -1;
	s->coded = true;
	return 0;
}

uint32_t transport_overhead(enum transport tr)
{
	switch (tr) {
	case TR_DCCP:
		return 16;	/* generic header, X=1 (48-bit seqno), DCCP-Data */
	case TR_UDP:
		return 8;
	default:
		return 20 + 12 + 4;	/* TCP + timestamp option + our length prefix */
	}
}

int sched_cbr(struct schedule *s, const struct model *m, enum transport tr,
	      uint32_t *payload)
{
	uint64_t dur = (uint64_t)llround(m->duration_s * 1e9);
	uint32_t over = IPV4_HDR + transport_overhead(tr);
	uint32_t size = m->cbr_ip_size > over + SBPN_HDR_LEN ?
			(uint32_t)m->cbr_ip_size - over : SBPN_HDR_LEN;

	memset(s, 0, sizeof(*s));
	s->duration_ns = dur;
	*payload = size;
	for (uint64_t k = 0;; k++) {
		uint64_t t = (uint64_t)llround((double)k * m->cbr_interval_ms * 1e6);

		if (t >= dur)
			break;
		if (sched_add(s, t, size, CLASS_AUDIO, (uint32_t)m->audio_priority,
			      lifetime_ns_of(m)))
			return -1;
	}
	return 0;
}

/* ---- traces ---------------------------------------------------------- */

static const char *const trace_fields[] = { "time", "size", "class", "prio", "lifetime", "key" };

int sched_trace(struct schedule *s, const char *path, const struct model *m,
		uint64_t default_lifetime_ns, uint64_t limit_ns)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	int line = 0;
	uint64_t last = 0, frame_t = 0;
	int frame_key = -1;		/* the current video frame's mark, -1 none yet */
	size_t frame_first = 0;		/* its first packet in s */
	bool marked = false;		/* any frame marked by the trace */

	memset(s, 0, sizeof(*s));
	if (!f) {
		fprintf(stderr, "%s: cannot open trace file: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *tok[7], *save = NULL, *p = buf;
		int nt = 0, cls, mark = -1;
		double t, life;
		uint64_t size, prio, t_ns, life_ns;

		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			fprintf(stderr, "%s:%d: line too long\n", path, line);
			goto fail;
		}
		if (line == 1) {
			int v;
			char extra;

			if (sscanf(buf, "# sbpn-trace %d %c", &v, &extra) != 1) {
				fprintf(stderr, "%s:1: expected the format line '# sbpn-trace 1'\n", path);
				goto fail;
			}
			if (v != 1) {
				fprintf(stderr, "%s:1: trace format version %d, this program reads version 1\n",
					path, v);
				goto fail;
			}
			continue;
		}
		p = trim(buf);
		if (!*p || *p == '#')
			continue;
		for (char *w = strtok_r(p, " \t", &save); w && nt < 7; w = strtok_r(NULL, " \t", &save))
			tok[nt++] = w;
		if (nt != 5 && nt != 6) {
			fprintf(stderr, "%s:%d: expected 5 fields (time size class prio lifetime) "
				"or 6 (and key), got %s%d\n",
				path, line, nt > 6 ? "more than " : "", nt > 6 ? 6 : nt);
			goto fail;
		}
#define BAD(i, what) do { \
		fprintf(stderr, "%s:%d: field '%s': %s, got '%s'\n", path, line, \
			trace_fields[i], what, tok[i]); goto fail; } while (0)
		if (parse_real(tok[0], &t) || t < 0 || t > 1e6)
			BAD(0, "expected seconds >= 0");
		t_ns = (uint64_t)llround(t * 1e9);
		if (t_ns < last)
			BAD(0, "time goes backwards");
		if (parse_u64(tok[1], SBPN_MAX_PAYLOAD, &size) || size < 1)
			BAD(1, "expected an integer 1..65507");
		cls = class_from_name(tok[2]);
		if (cls < 0)
			BAD(2, "expected audio, video or data");
		if (!strcmp(tok[3], "-"))
			prio = cls == CLASS_AUDIO ? m->audio_priority :
			       cls == CLASS_VIDEO ? m->video_priority : m->data_priority;
		else if (parse_u64(tok[3], 4294967295u, &prio))
			BAD(3, "expected '-' or an integer 0..4294967295");
		if (!strcmp(tok[4], "-"))
			life_ns = default_lifetime_ns;
		else if (parse_real(tok[4], &life) || life < 0 || life > 3600e3)
			BAD(4, "expected '-' or milliseconds >= 0");
		else
			life_ns = (uint64_t)llround(life * 1e6);
		if (nt == 6 && strcmp(tok[5], "-")) {
			if (strcmp(tok[5], "0") && strcmp(tok[5], "1"))
				BAD(5, "expected 1 (key frame), 0 (P-frame) or '-'");
			if (cls != CLASS_VIDEO)
				BAD(5, "only video packets belong to frames: expected '-'");
			mark = tok[5][0] - '0';
		}
		last = t_ns;
		if (limit_ns && t_ns >= limit_ns)
			continue;
		if (cls == CLASS_VIDEO && (!s->nframes || t_ns != frame_t)) {
			/* a new frame: the video packets of one instant */
			s->nframes++;
			frame_t = t_ns;
			frame_key = -1;
			frame_first = s->n;
		}
		if (mark >= 0) {
			if (frame_key >= 0 && frame_key != mark)
				BAD(5, "the frame's earlier packets say otherwise");
			frame_key = mark;
			marked = true;
		}
#undef BAD
		if (sched_add(s, t_ns, (uint32_t)size, cls, (uint32_t)prio, life_ns))
			goto fail;
		if (cls == CLASS_VIDEO) {
			size_t idx = s->nframes - 1;
			/* unmarked frames: the GOP option, else a P-frame */
			int key = frame_key >= 0 ? frame_key :
				  m->video_gop ? idx % m->video_gop == 0 : 0;

			/* only the instant's video: its audio and data stay '-' */
			for (size_t i = frame_first; i < s->n; i++) {
				if (s->p[i].cls != CLASS_VIDEO)
					continue;
				s->p[i].frame = (int32_t)idx;
				s->p[i].key = (int8_t)key;
			}
		}
	}
	s->coded = marked || m->video_gop > 0;
	int32_t last_frame = -1;

	for (size_t i = 0; i < s->n; i++) {
		if (!s->coded) {
			s->p[i].key = -1;
		} else if (s->p[i].frame >= 0 && s->p[i].frame != last_frame) {
			last_frame = s->p[i].frame;
			s->keyframes += s->p[i].key == 1;
		}
	}
	if (line == 0) {
		fprintf(stderr, "%s:1: empty trace (expected the format line '# sbpn-trace 1')\n", path);
		goto fail;
	}
	fclose(f);
	s->duration_ns = limit_ns ? limit_ns : last;
	return 0;
fail:
	fclose(f);
	sched_free(s);
	return -1;
}
