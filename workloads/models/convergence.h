/*
 * convergence.h — how much a model must train to reach MLPerf's quality
 * target, from the reference convergence points (convergence.def), for
 * time-to-train estimates: ResNet-50 in epochs of ImageNet, BERT in
 * samples.
 */
#ifndef IPUSIM_CONVERGENCE_H
#define IPUSIM_CONVERGENCE_H

#include <stdbool.h>

typedef struct convergence {
    const char *family;           /* "resnet50", "bert" */
    const char *target;           /* the quality MLPerf asks for */
    const char *dataset;          /* what an epoch is */
    double dataset_samples;       /* samples in an epoch */
    double samples;               /* to converge at the global batch asked for */
    double epochs;                /* samples / dataset_samples */
    double batch_lo, batch_hi;    /* the reference points read (equal: one point) */
    const char *how;              /* "interpolated", "the nearest point" ... */
} convergence;

/* The training model's family from a built-in model's name ("resnet50...",
 * "bert-base...", "bert-large..."); NULL when MLPerf has no reference for it. */
const char *convergence_family(const char *model);

/* What the family needs at global batch global_batch: linear between the
 * two reference points around it, the nearest point's outside them. */
bool convergence_at(const char *family, double global_batch, convergence *out);

#endif
