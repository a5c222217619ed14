/*
 * rt_reg_priv.h - what rt_reg.c offers the rest of src/transport besides
 * rt_reg.h: its setup and teardown with the connection.
 */
#ifndef RT_REG_PRIV_H
#define RT_REG_PRIV_H

#include "transport/rt_priv.h"
#include "transport/rt_reg.h"

int rt_reg_setup(struct rt_conn *c, struct rt_err *err);
void rt_reg_free(struct rt_conn *c);

/* The pool's buffers, sorted by address (rt_reg_buf_alloc/free). */
int rt_reg_regbuf_add(struct rt_conn *c, struct rt_lmem *m);
void rt_reg_regbuf_del(struct rt_conn *c, struct rt_lmem *m);

#endif /* RT_REG_PRIV_H */
