/* sup-run: run a command under libsup's supervision from the shell. */
#include "sup-run.h"

int main(int argc, char **argv) { return supervise(argc, argv, FRONTEND_RUN); }
