/* sup-timeout: GNU timeout's command line, under libsup's supervision. */
#include "sup-run.h"

int main(int argc, char **argv) { return supervise(argc, argv, FRONTEND_TIMEOUT); }
