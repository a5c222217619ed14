/*
 * compiler.h - small compiler helpers shared by every layer.
 *
 * The library is built with -fvisibility=hidden; only functions marked
 * RPCRDMA_EXPORT (and listed in librpcrdma.map) are visible to programs.
 */
#ifndef RPCRDMA_COMPILER_H
#define RPCRDMA_COMPILER_H

#define RPCRDMA_EXPORT __attribute__((visibility("default")))

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#endif /* RPCRDMA_COMPILER_H */
