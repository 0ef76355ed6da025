// SPDX-License-Identifier: GPL-2.0
/*
 * vp8enc_test - what --dry-run cannot show of the VP8 call's encoder
 * (vp8enc.h): the rate a transport sets reaches the bitstream, the ladder
 * lowers the frame rate first and then the size, one step a second, and
 * climbs back when the rate returns; a requested key frame comes next and
 * restarts the layer pattern; captures the caller did not give it (the
 * sender's encoder still busy) do not stop it coding.  KTAP; exit 1 if a
 * check failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vp8enc.h"

static int failed, num;

static void ok(int cond, const char *what)
{
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ++num, what);
	failed |= !cond;
}

/* Capture n0..n1-1 at rate bps: kbit/s coded, frames coded, last size. */
static void feed(struct vp8enc *e, uint64_t n0, uint64_t n1, double bps, double *kbps,
		 int *coded, int *w)
{
	struct vp8_frame f;
	enum vp8_status st;
	size_t bytes = 0;

	*coded = 0;
	for (uint64_t n = n0; n < n1; n++) {
		vp8enc_set_rate(e, bps);
		if (vp8enc_capture(e, n, &f, &st))
			exit(1);
		if (st == VP8_CODED) {
			bytes += f.len;
			(*coded)++;
		}
		*w = f.width;
	}
	*kbps = bytes * 8.0 / ((double)(n1 - n0) / 10) / 1000;
}

int main(void)
{
	struct vp8_params p = { .width = 320, .height = 240, .fps = 10, .layers = 3,
				.min_kbps = 30, .max_kbps = 1000, .start_kbps = 300,
				.cpu_used = -8, .seed = 1, .ladder = true };
	struct vp8enc *e = vp8enc_new(&p);
	struct vp8_frame f;
	enum vp8_status st;
	double hi, lo;
	int coded, w;

	printf("TAP version 13\n1..8\n");
	if (!e)
		return 1;
	feed(e, 0, 50, 400e3, &hi, &coded, &w);
	feed(e, 50, 100, 100e3, &lo, &coded, &w);
	ok(hi > 250 && hi < 520 && lo > 60 && lo < 140, "the bitstream follows the rate set");
	ok(coded >= 45 && w == 320, "100 kbit/s keeps 10 frames/s at 320x240");
	/* 0.05 bit/pixel: 38.4 kbit/s at 10 frames/s, 19.2 at 5, 12.8 at 3.3 */
	feed(e, 100, 110, 30e3, &lo, &coded, &w);
	ok(vp8enc_rate_divisor(e) == 2 && coded <= 5 && w == 320,
	   "30 kbit/s: every second capture, full size");
	feed(e, 110, 140, 5e3, &lo, &coded, &w);
	ok(vp8enc_rate_divisor(e) == 3 && w == 160, "5 kbit/s: every third capture, then half size");
	feed(e, 140, 150, 300e3, &lo, &coded, &w);
	ok(w == 320 && vp8enc_rate_divisor(e) == 3, "back up one step a second: full size first");
	feed(e, 150, 180, 300e3, &lo, &coded, &w);
	ok(vp8enc_rate_divisor(e) == 1 && w == 320, "and then the full frame rate");
	vp8enc_request_key(e);
	if (vp8enc_capture(e, 180, &f, &st))
		return 1;
	ok(st == VP8_CODED && f.key && f.layer == 0 && vp8enc_capture(e, 181, &f, &st) == 0 &&
	   f.layer == 2, "a requested key frame comes next and restarts the layers");
	vp8enc_free(e);

	/*
	 * Captures 1 and 2 never reach the encoder (the sender's thread was
	 * still coding 0), then the rate drops to 83 kbit/s: it must go on
	 * coding.  With the gap given to libvpx as frame 3's duration, frame 3
	 * ended after frame 4 began, libvpx's frame rate went negative and it
	 * dropped every capture after the sixth.
	 */
	e = vp8enc_new(&p);
	if (!e || vp8enc_capture(e, 0, &f, &st))
		return 1;
	feed(e, 3, 20, 83e3, &lo, &coded, &w);
	feed(e, 20, 60, 83e3, &lo, &coded, &w);
	ok(coded >= 20, "captures not given to it leave the encoder coding");
	if (coded < 20)
		printf("# %d of captures 20..59 coded at 83 kbit/s\n", coded);
	vp8enc_free(e);
	return failed;
}
