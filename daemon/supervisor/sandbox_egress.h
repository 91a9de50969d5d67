/*
 * sandbox_egress.h: the supervisor's part of network egress
 * (docs/design-egress.md): a listening socket inside the run's network
 * namespace, handed to the frontend's proxy on the lifeline.
 */
#ifndef AIRLOCKD_SANDBOX_EGRESS_H
#define AIRLOCKD_SANDBOX_EGRESS_H

#include <stdint.h>

/*
 * Listen at 127.0.0.1:port (lo is up) and send the socket to the frontend
 * as SUP_EGRESS on lifeline, then close our copy: the code never holds it.
 * Between clone and exec: no allocation. Fails the run (SANDBOX_STEP_EGRESS)
 * on error.
 */
void sandbox_egress_listen(int lifeline, uint16_t port);

#endif
