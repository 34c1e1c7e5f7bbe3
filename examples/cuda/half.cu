// half.cu: w = z / 2, one token per block.
void FIRE() {
	TOKEN_Z_t *z = CAPTURE(PORT_z);
	FOREACH(i IN PORT_w) {
		TOKEN_W_t *w = RESERVE(PORT_w, i);
		w[0] = 0.5f * z[i];
	}
}
