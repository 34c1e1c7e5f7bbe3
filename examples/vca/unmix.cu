// unmix.cu: the abundances of each pixel of a block (CUDA C; unmix.cl is
// the same in OpenCL C), the arithmetic of Unmix in algo.go. Input y: n
// pixels × L bands; w: the unmixing matrix (EᵀE)⁻¹Eᵀ, p rows of L. Output
// ab: one block of p tokens per pixel: a = w·y (unconstrained least
// squares), negatives clipped to 0, then scaled to sum to one.
void FIRE() {
	TOKEN_Y_t *y = CAPTURE(PORT_y);
	TOKEN_W_t *w = CAPTURE(PORT_w);
	const int P = BLOCK_AB_SIZE;
	const int L = TOKEN_Y_RATE / BLOCK_AB_COUNT;
	FOREACH(i IN PORT_ab) {
		TOKEN_Y_t *px = y + i * L;
		TOKEN_AB_t *o = RESERVE(PORT_ab, i);
		float s = 0.0f;
		for (int k = 0; k < P; k++) {
			float t = 0.0f;
			for (int b = 0; b < L; b++)
				t += w[k * L + b] * px[b];
			t = t > 0.0f ? t : 0.0f;
			o[k] = t;
			s += t;
		}
		if (s > 0.0f)
			for (int k = 0; k < P; k++)
				o[k] = o[k] / s;
	}
}
