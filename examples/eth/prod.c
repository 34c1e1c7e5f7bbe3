// prod: produces one 4-byte token (a running counter) per firing.
// Written against the ETH actor API (INIT / FIRE / RESERVE / FOREACH).
static int counter;

void INIT() { counter = 0; }

void FIRE() {
  FOREACH(blk IN PORT_out1) {
    TOKEN_OUT1_t *wbuf = RESERVE(PORT_out1, blk);
    *(int *)wbuf = counter++;
  }
}
