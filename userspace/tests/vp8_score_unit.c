// SPDX-License-Identifier: GPL-2.0
/*
 * vp8_score_unit.c - unit tests of vp8-score's PSNR and SSIM on pictures
 * whose scores are worked by hand, run by vp8_score_test.py.  It includes
 * vp8-score.c itself (its main renamed) to reach its static functions.
 * Prints "ok"/"not ok" lines; exit 1 if one failed.
 */
#define main vp8_score_main
#include "../src/vp8-score.c"
#undef main

static int failed;

static void near(double got, double want, double tol, const char *what)
{
	int ok = fabs(got - want) <= tol;

	printf("%s %s: %.9f, want %.9f\n", ok ? "ok" : "not ok", what, got, want);
	failed |= !ok;
}

int main(void)
{
	struct picture a, b;

	if (picture_alloc(&a, 16, 16) || picture_alloc(&b, 16, 16))
		return 1;
	picture_draw(&a, 3, 30, 1);
	memcpy(b.buf, a.buf, picture_size(16, 16));
	/* identical pictures: SSIM exactly 1, PSNR capped */
	near(ssim_y(&a, &b), 1.0, 0, "identical: ssim");
	near(psnr_y(&a, &b), 100.0, 0, "identical: psnr capped at 100");

	/* flat 100 against flat 110: every window has no variance, so SSIM =
	 * (2 100 110 + C1) / (100^2 + 110^2 + C1) = 22006.5025 / 22106.5025
	 * = 0.995476444; MSE 100, PSNR = 10 lg(255^2 / 100) = 28.130803609 */
	memset(a.y, 100, 256);
	memset(b.y, 110, 256);
	near(ssim_y(&a, &b), 0.995476444, 1e-9, "flat 100 vs 110: ssim");
	near(psnr_y(&a, &b), 28.130803609, 1e-9, "flat 100 vs 110: psnr");

	/* flat 128, and the same with pixel (0,0) at 192: only the window at
	 * (0,0) differs: my = 129, sy^2 = (63 128^2 + 192^2) / 64 - 129^2 =
	 * 63, sxy = 0: SSIM = (2 128 129 + C1) C2 / ((128^2 + 129^2 + C1)
	 * (63 + C2)) = 0.481562906.  libvpx's windows on a 16x16 picture: 3 x 3
	 * (corners 0, 4, 8), so the mean is (8 + 0.481562906) / 9 =
	 * 0.942395878 (windows of 8 on a step of 8, 2 x 2, would give
	 * 0.870390727).  MSE = 64^2 / 256 = 16: PSNR 36.089603782 */
	memset(a.y, 128, 256);
	memset(b.y, 128, 256);
	b.y[0] = 192;
	near(ssim_y(&a, &b), 0.942395878, 1e-9, "one pixel off: ssim over libvpx's windows");
	near(psnr_y(&a, &b), 36.089603782, 1e-9, "one pixel off: psnr");
	picture_free(&a);
	picture_free(&b);
	return failed;
}
