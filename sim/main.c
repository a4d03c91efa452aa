#include <stdio.h>
#include "isa/isa.h"
int main(void) { isa_init(); printf("ipusim\n"); return 0; }
