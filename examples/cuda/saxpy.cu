// saxpy.cu: z = 2·x + y, one firing per thread block; each thread computes
// blocks of BLOCK_Z_SIZE tokens (the mapping sets G, I and whether a
// thread's blocks are strided or consecutive). The actor API is the one
// of the OpenCL kernel (../opencl/saxpy.cl): sluice turns FIRE into a
// CUDA kernel over the actor's ports.
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
