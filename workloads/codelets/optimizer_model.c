/*
 * optimizer_model.c — the bit-exact model of vtx_adam_updater_f32
 * (optimizer.h): the codelet's instructions on one element in its order,
 * with the tile's arithmetic (elementwise_model_*: operands and results
 * flushed from the denormal range, special cases as ISA2's pseudo-code).
 */
#include "optimizer.h"

#include "elementwise.h"

static float mul(float a, float b) { return elementwise_model_binary(ELEMENTWISE_MUL, a, b); }
static float add(float a, float b) { return elementwise_model_binary(ELEMENTWISE_ADD, a, b); }

float optimizer_model_adam(const adam_constants *k, float c1, float c2, float g, float *m, float *v, float w)
{
    float gw = g;
    if (k->flags & ADAM_FLAG_L2)
        gw = add(g, mul(w, k->weight_decay));
    float mn = add(mul(*m, k->beta1), mul(gw, k->one_minus_beta1));
    float vn = add(mul(*v, k->beta2), mul(mul(gw, gw), k->one_minus_beta2));
    *m = mn;
    *v = vn;
    float den = add(elementwise_model_unary(ELEMENTWISE_SQRT, mul(vn, c2), 0, 0), k->epsilon);
    float r = elementwise_model_binary(ELEMENTWISE_DIV, mul(mn, c1), den);
    if (k->flags & ADAM_FLAG_DECOUPLED)
        r = add(r, mul(w, k->weight_decay));
    return r;
}
