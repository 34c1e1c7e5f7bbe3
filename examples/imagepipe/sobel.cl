// sobel.cl: Sobel gradient magnitude of one 320×240 u8 frame per firing
// (OpenCL C; sobel.cu is the same): min(255, floor(sqrt(gx² + gy²)) >> 2),
// the float square root corrected to the exact integer one, edges clamped.
// The magnitude goes to y (this frame, for motion) and d (the channel that
// delays it by one frame: motion's previous frame).
#define IMG_W 320
#define IMG_H 240

void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(i IN PORT_y) {
		int px = i % IMG_W, py = i / IMG_W;
		int xm = max(px - 1, 0), xp = min(px + 1, IMG_W - 1);
		int ra = max(py - 1, 0) * IMG_W, rb = py * IMG_W, rc = min(py + 1, IMG_H - 1) * IMG_W;
		int a00 = x[ra + xm], a01 = x[ra + px], a02 = x[ra + xp];
		int a10 = x[rb + xm], a12 = x[rb + xp];
		int a20 = x[rc + xm], a21 = x[rc + px], a22 = x[rc + xp];
		int gx = (a02 + 2 * a12 + a22) - (a00 + 2 * a10 + a20);
		int gy = (a20 + 2 * a21 + a22) - (a00 + 2 * a01 + a02);
		int s = gx * gx + gy * gy;
		int r = (int)sqrt((float)s);
		while (r * r > s) r--;
		while ((r + 1) * (r + 1) <= s) r++;
		int m = min(r >> 2, 255);
		TOKEN_Y_t *y = RESERVE(PORT_y, i);
		TOKEN_D_t *d = RESERVE(PORT_d, i);
		y[0] = (TOKEN_Y_t)m;
		d[0] = (TOKEN_D_t)m;
	}
}
