// worker: reads one 4-byte token and writes four 1-byte tokens, in two
// independent blocks of two (each block computed by its own work-item).
void INIT() {}

void FIRE() {
  TOKEN_IN1_t *rbuf = CAPTURE(PORT_in1);
  int v = *(const int *)rbuf;
  FOREACH(blk IN PORT_out1) {
    TOKEN_OUT1_t *wbuf = RESERVE(PORT_out1, blk);
    for (int i = 0; i < 2; i++) {
      int k = blk * 2 + i;                      // byte k of the input word
      ((unsigned char *)wbuf)[i] = (unsigned char)(v >> (8 * k));
    }
  }
}
