// mix.cl: z = 2·x + y (examples/predict/mixed.yaml; 2·x is exact, so a
// fused multiply-add gives the built-in saxpy's float32 result), one firing
// per work-group; each work-item computes blocks of BLOCK_Z_SIZE tokens.
void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	TOKEN_Y_t *y = CAPTURE(PORT_y);
	FOREACH(blk IN PORT_z) {
		TOKEN_Z_t *z = RESERVE(PORT_z, blk);
		for (int j = 0; j < BLOCK_Z_SIZE; j++) {
			int i = blk * BLOCK_Z_SIZE + j;
			z[j] = 2.0f * x[i] + y[i];
		}
	}
}
