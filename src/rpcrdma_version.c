/*
 * rpcrdma_version.c - the library's version query.
 *
 * Lets a program check which librpcrdma the dynamic linker chose, which
 * matters when the library is brought in with LD_PRELOAD.
 */
#include "config.h"

#include <rpc/rpcrdma.h>

#include "compiler.h"

RPCRDMA_EXPORT const char *rpcrdma_version(void)
{
	return PACKAGE_VERSION;
}
