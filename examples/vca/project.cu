// project.cu: each pixel of a block projected on the cube's basis (CUDA
// C; project.cl is the same in OpenCL C), the arithmetic of Project in
// algo.go. Input y: n pixels × L bands; basis: mode, SNR, d, pixels, the
// mean (L), p rows of L (projection vectors), u (p). Output proj: one
// block of p+1 tokens per pixel.
//   mode 0 (projective): x = Uᵀ(y − mean) in the first d = p−1 tokens,
//                        ‖x‖ in token d, 0 in token p;
//   mode 1 (subspace):   x = Uᵀy, s = uᵀx; x / s in tokens 0…p−1, s in p.
void FIRE() {
	TOKEN_Y_t *y = CAPTURE(PORT_y);
	TOKEN_BASIS_t *bs = CAPTURE(PORT_basis);
	const int P = BLOCK_PROJ_SIZE - 1;
	const int L = TOKEN_Y_RATE / BLOCK_PROJ_COUNT;
	const int mode = (int)bs[0];
	const int d = (int)bs[2];
	TOKEN_BASIS_t *mean = bs + 4;
	TOKEN_BASIS_t *u = bs + 4 + L;
	TOKEN_BASIS_t *um = bs + 4 + L + P * L;
	FOREACH(i IN PORT_proj) {
		TOKEN_Y_t *px = y + i * L;
		TOKEN_PROJ_t *o = RESERVE(PORT_proj, i);
		if (mode == 0) {
			float nrm = 0.0f;
			for (int k = 0; k < d; k++) {
				float t = 0.0f;
				for (int b = 0; b < L; b++)
					t += u[k * L + b] * (px[b] - mean[b]);
				o[k] = t;
				nrm += t * t;
			}
			o[d] = sqrtf(nrm);
			o[P] = 0.0f;
		} else {
			float x[8];
			float s = 0.0f;
			for (int k = 0; k < P; k++) {
				float t = 0.0f;
				for (int b = 0; b < L; b++)
					t += u[k * L + b] * px[b];
				x[k] = t;
				s += um[k] * t;
			}
			for (int k = 0; k < P; k++)
				o[k] = x[k] / s;
			o[P] = s;
		}
	}
}
