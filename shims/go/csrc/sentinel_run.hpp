/* The sentinel's work, once started: shared by the sup-sentinel program
 * (sup-sentinel.c) and by the library's own entry in a re-executed host
 * (sentinel_entry.cpp). Plain C declarations: sup-sentinel.c includes it. */
#ifndef SUP_SENTINEL_RUN_HPP
#define SUP_SENTINEL_RUN_HPP

#ifdef __cplusplus
extern "C" {
#endif

/* Forks; the first half returns ready_status at once (so that the second is
 * nobody's child in the host), the second leads a session of its own,
 * reads the host's records on fd 0 until the host's end closes, ends
 * everything still listed (lib/sentinel.hpp) and returns 0; either half
 * returns 1 on failure. The caller exits with what it returns. */
int sup_sentinel_run(int ready_status);

#ifdef __cplusplus
}
#endif

#endif
