#include "harness.h"
int main(void){return TH_DONE();}
