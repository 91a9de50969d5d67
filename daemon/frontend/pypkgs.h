/* pypkgs.h: which data-science packages a python runtime's interpreter sees. */
#ifndef AIRLOCKD_PYPKGS_H
#define AIRLOCKD_PYPKGS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define PYPKGS_MAX 4 /* numpy, pandas, matplotlib, scipy */

/*
 * For a Python runtime (its language, config.h; not its name): the packages of
 * numpy, pandas, matplotlib, scipy (static strings, in that order) that its
 * interpreter would import, found without running it. False for any other
 * runtime (not looked at).
 */
bool pypkgs_scan(const struct config_runtime *rt, const char *ret_pkgs[PYPKGS_MAX], size_t *ret_n);

#endif
