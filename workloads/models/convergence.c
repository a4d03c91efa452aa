/*
 * convergence.c — MLPerf's reference convergence points, read by global
 * batch (convergence.h).
 */
#include "workloads/models/convergence.h"

#include <string.h>

typedef struct point {
    const char *family;
    double batch, amount;
} point;

static const point points[] = {
#define CONVERGENCE(family, batch, amount) { family, batch, amount },
#include "workloads/models/convergence.def"
#undef CONVERGENCE
};

/* ImageNet's training set (MLPerf Training rules); BERT's amounts are in samples. */
static const struct {
    const char *family, *target, *dataset;
    double dataset_samples;
    bool in_epochs;
} families[] = {
    { "resnet50", "75.9% top-1", "ImageNet (1,281,167 training images)", 1281167, true },
    { "bert", "0.720 masked-LM accuracy", "samples of the Wikipedia pre-training data (MLPerf counts samples)", 0,
      false },
};

const char *convergence_family(const char *model)
{
    if (!strncmp(model, "resnet50", 8) && (!model[8] || model[8] == ':'))
        return "resnet50";
    if (!strncmp(model, "bert-base", 9) || !strncmp(model, "bert-large", 10))
        return "bert";
    return NULL;
}

bool convergence_at(const char *family, double global_batch, convergence *out)
{
    size_t f = 0, nf = sizeof families / sizeof families[0];
    while (f < nf && strcmp(families[f].family, family))
        f++;
    if (f == nf || !(global_batch > 0))
        return false;
    const point *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        const point *p = &points[i];
        if (strcmp(p->family, family))
            continue;
        if (p->batch <= global_batch && (!lo || p->batch > lo->batch))
            lo = p;
        if (p->batch >= global_batch && (!hi || p->batch < hi->batch))
            hi = p;
    }
    if (!lo && !hi)
        return false;
    double amount;
    if (!lo || !hi || lo == hi) {
        const point *p = lo ? lo : hi;
        amount = p->amount;
        out->batch_lo = out->batch_hi = p->batch;
        out->how = lo == hi ? "the reference point" : "the nearest reference point";
    } else {
        double t = (global_batch - lo->batch) / (hi->batch - lo->batch);
        amount = lo->amount + t * (hi->amount - lo->amount);
        out->batch_lo = lo->batch;
        out->batch_hi = hi->batch;
        out->how = "interpolated between reference points";
    }
    out->family = families[f].family;
    out->target = families[f].target;
    out->dataset = families[f].dataset;
    out->dataset_samples = families[f].dataset_samples;
    if (families[f].in_epochs) {
        out->epochs = amount;
        out->samples = amount * families[f].dataset_samples;
    } else {
        out->samples = amount;
        out->epochs = 0;
    }
    return true;
}
