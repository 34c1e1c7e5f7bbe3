// stats.cl: the partial statistics of one block of pixels (OpenCL C;
// stats.cu is the same in CUDA C). Input y: n pixels × L bands, by pixel.
// Output part, one token per block: token k < L·L is Σ y[i]·y[j] over the
// block's pixels (i = k / L, j = k mod L), token L·L + j is Σ y[j]. The
// output rate is (L+1)·L, from which L follows. Accumulates in float; the
// Go version (Stats in algo.go) in double.
void FIRE() {
	TOKEN_Y_t *y = CAPTURE(PORT_y);
	const int L = (int)((sqrt(4.0f * (float)TOKEN_PART_RATE + 1.0f) - 1.0f) * 0.5f + 0.5f);
	const int n = TOKEN_Y_RATE / L;
	FOREACH(k IN PORT_part) {
		TOKEN_PART_t *o = RESERVE(PORT_part, k);
		int i = k / L, j = k % L;
		float s = 0.0f;
		if (i < L) {
			for (int q = 0; q < n; q++)
				s += y[q * L + i] * y[q * L + j];
		} else {
			for (int q = 0; q < n; q++)
				s += y[q * L + j];
		}
		o[0] = s;
	}
}
